"""pytest plugin: ``python -m pytest -p tests.netguard`` blocks outbound network access for the
whole session (loopback allowed) and fails the run if anything tried to go out.

The guard itself is :mod:`logrerank.evaluation.netguard`.
"""

from __future__ import annotations

import sys

from logrerank.evaluation import netguard


def pytest_configure(config) -> None:
    netguard.install(allow_loopback=True)


def pytest_sessionfinish(session, exitstatus) -> None:
    guard = netguard.session_guard()
    if guard is not None and guard.attempts:
        sys.stderr.write(
            "\nnetguard: outbound network attempts were blocked:\n  "
            + "\n  ".join(guard.attempts[:20])
            + "\n"
        )
        session.exitstatus = 1
