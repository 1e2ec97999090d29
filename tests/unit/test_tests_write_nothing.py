"""The test suite never writes a tracked file: screenshots go to a temp or ``runs/`` folder, and
only ``tests/browser/refresh_readme_screenshots.py`` (a command, not a test) writes ``assets/``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFRESH = ROOT / "tests" / "browser" / "refresh_readme_screenshots.py"


def test_only_the_refresh_command_names_the_assets_folder() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if path != REFRESH
        and re.search(r"""["']assets["'/]""", path.read_text("utf-8"))
        and path.name != Path(__file__).name
    ]
    assert not offenders, f"tests that may write assets/: {offenders}"


def test_the_refresh_command_covers_every_readme_screenshot() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\(assets/(screenshot_[a-z_]+\.png)\)", readme))
    refresh = REFRESH.read_text(encoding="utf-8")
    assert shown and all(f'"{name}"' in refresh for name in shown), shown
