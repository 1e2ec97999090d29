"""The README's first screen: what it is, a screenshot, the two commands within its first 40
lines, the CPU-torch line, a results table and the links; history lives in CHANGELOG.md."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
APP = "pip install -r requirements.txt && python app.py"
TESTS = "pip install -r requirements-dev.txt && python -m pytest -q"


def test_the_two_commands_are_within_the_first_40_lines() -> None:
    head = "\n".join(README.splitlines()[:40])
    assert APP in head and TESTS in head
    assert "--index-url https://download.pytorch.org/whl/cpu" in head  # the CPU build of torch
    assert "![" in head and "assets/screenshot_app.png" in head


def test_first_screen_has_a_results_table_and_links() -> None:
    first = README.split("\n## ")[0]
    assert "| benchmark |" in first and "**LoG**" in first and "bi-encoder" in first
    for link in ("docs/method.md", "docs/evaluation.md", "bench/README.md", "CHANGELOG.md"):
        assert f"({link})" in first, link
    assert len(first.splitlines()) <= 60


def test_the_screenshot_exists_and_history_is_in_the_changelog() -> None:
    assert (ROOT / "assets" / "screenshot_app.png").is_file()
    assert "> **Status.**" not in README  # the build history moved to CHANGELOG.md
    assert (ROOT / "CHANGELOG.md").is_file()
