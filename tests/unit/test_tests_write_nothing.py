"""The test suite never writes a tracked file: screenshots go to a temp or ``runs/`` folder, and
only ``tests/browser/refresh_readme_screenshots.py`` (a command, not a test) writes ``assets/``."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFRESH = ROOT / "tests" / "browser" / "refresh_readme_screenshots.py"


WRITES = re.compile(
    r"copyfile|shutil\.copy|\.screenshot\(|write_bytes|write_text|savefig|write_image"
)
ASSETS_PATH = re.compile(r"""["']assets["'/]""")


def test_only_the_refresh_command_writes_near_the_assets_folder() -> None:
    """No test module both names the assets folder in code and writes files."""
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if path != REFRESH and ASSETS_PATH.search(text) and WRITES.search(text):
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"tests that may write assets/: {offenders}"


def test_the_refresh_command_covers_every_readme_screenshot() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\(assets/(screenshot_[a-z_]+\.png)\)", readme))
    refresh = REFRESH.read_text(encoding="utf-8")
    assert shown and all(f'"{name}"' in refresh for name in shown), shown
