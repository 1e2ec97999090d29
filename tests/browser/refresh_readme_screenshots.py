"""Refresh the README screenshots (``assets/screenshot_*.png``) from the browser tests.

    python tests/browser/refresh_readme_screenshots.py

Runs the browser tests (``tests/browser/``, headless Debian Chromium) with their screenshots
going to a temporary folder, then copies the desktop views the README shows into ``assets/``.
This command is the only thing that writes ``assets/``; the test suite itself writes its
screenshots under a temporary or ``runs/`` folder. Exits with pytest's status (nothing is
copied when a test fails).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
README_SHOTS = {
    "screenshot_app.png": "ranking_desktop.png",
    "screenshot_ranking.png": "ranking_desktop.png",
    "screenshot_explain.png": "explain_desktop.png",
    "screenshot_graph.png": "graph_desktop.png",
    "screenshot_context.png": "context_desktop.png",
    "screenshot_comparison.png": "comparison_desktop.png",
    "screenshot_slope.png": "slope_desktop.png",
}
"""README file -> the browser tests' screenshot it is copied from."""


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="logrerank-shots-") as tmp:
        env = dict(os.environ, LOGRERANK_SHOTS=tmp, LOGRERANK_VIEW_SHOTS=tmp)
        env.setdefault("OMP_NUM_THREADS", "1")
        tests = [
            "tests/browser/test_app_browser.py::test_ranking_view_score_text_and_explain",
            "tests/browser/test_app_browser.py::test_graph_50_passages_readable",
            "tests/browser/test_app_browser.py::test_context_is_shorter_than_the_flat_passages",
            "tests/browser/test_app_browser.py::test_comparison_na_labels_and_arrows_against_log",
            "tests/browser/test_app_views.py::test_slope_chart_log_axis_and_labels_on_both_sides",
        ]
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
        status = subprocess.call(cmd, cwd=ROOT, env=env)
        if status != 0:
            print("browser tests failed: assets/ left as it was", file=sys.stderr)
            return status
        missing = [src for src in README_SHOTS.values() if not (Path(tmp) / src).is_file()]
        if missing:
            print(f"screenshots not written: {', '.join(sorted(set(missing)))}", file=sys.stderr)
            return 1
        for dst, src in README_SHOTS.items():
            shutil.copyfile(Path(tmp) / src, ASSETS / dst)
            print(f"assets/{dst} <- {src}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
