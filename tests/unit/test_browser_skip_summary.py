"""When the browser tests skip, the end of the run says so loudly, with the reason and the fix
(``pytest_terminal_summary`` in ``tests/conftest.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from tests.conftest import browser_skip_line, browser_skip_reasons

ROOT = Path(__file__).resolve().parents[2]
MISSING = "/nonexistent/chromium"


def _report(nodeid: str, reason: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, longrepr=(nodeid, 1, f"Skipped: {reason}"))


def test_the_line_names_the_reason_once_and_the_fix() -> None:
    reports = [
        _report("tests/browser/test_app_browser.py", f"no chromium binary at {MISSING}"),
        _report("tests/browser/test_app_views.py", f"no chromium binary at {MISSING}"),
        _report("tests/unit/test_x.py::test_y", "needs ../shared/data"),
    ]
    reasons = browser_skip_reasons(reports)
    assert reasons == [f"no chromium binary at {MISSING}"]
    line = browser_skip_line(reasons)
    assert line.startswith(f"BROWSER TESTS SKIPPED: no chromium binary at {MISSING}")
    assert "apt-get install chromium" in line and "LOGRERANK_CHROMIUM" in line
    assert browser_skip_line([]) == ""
    assert "requirements-dev.txt" in browser_skip_line(["could not import 'playwright.sync_api'"])


def _pytest(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "LOGRERANK_REQUIRE_BROWSER"}
    environ.update(env, LOGRERANK_CHROMIUM=MISSING)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(cmd, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=300)


def test_a_run_without_chromium_says_so_at_the_end() -> None:
    proc = _pytest("tests/browser", "tests/unit/test_cli_help.py::test_version")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"BROWSER TESTS SKIPPED: no chromium binary at {MISSING}" in proc.stdout
    assert "apt-get install chromium" in proc.stdout


def test_it_can_fail_the_run_and_stays_quiet_when_deselected() -> None:
    args = ("tests/browser", "tests/unit/test_cli_help.py::test_version")
    assert _pytest(*args, LOGRERANK_REQUIRE_BROWSER="1").returncode == 1
    quiet = _pytest("-m", "not browser", *args, LOGRERANK_REQUIRE_BROWSER="1")
    assert quiet.returncode == 0 and "BROWSER TESTS SKIPPED" not in quiet.stdout
