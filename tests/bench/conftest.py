"""The benchmark scripts of ``bench/`` import their siblings by name (``from speed_runs import
...``), as they do when run as ``python bench/<script>.py``: the folder goes on ``sys.path``."""

from __future__ import annotations

import sys

from tests.helpers import REPO_ROOT

if str(REPO_ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "bench"))
