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


def test_one_results_table_between_markers_on_the_first_screen() -> None:
    first = README.split("\n## ")[0]
    start, end = "<!-- results-table:start -->", "<!-- results-table:end -->"
    assert README.count(start) == 1 and README.count(end) == 1
    table = first[first.index(start) : first.index(end)]
    assert "| benchmark |" in table and "**LoG**" in table
    assert README.count("| benchmark |") == 1  # the detailed tables live in docs/evaluation.md
    evaluation = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    assert "## 9. Results in detail" in evaluation


def test_the_readme_stays_short_and_its_local_links_resolve() -> None:
    import re

    assert len(README.splitlines()) <= 250
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README):
        if target.startswith("http"):
            continue
        assert (ROOT / target).exists(), target


def test_the_cli_sample_is_a_logrerank_command_on_a_bundled_example() -> None:
    from tools.refresh_readme import parse_command, sample_block

    _, _, command, output = sample_block(README)
    env, args = parse_command(command)
    assert args[0] == "rerank" and "--device" in args and env.get("COLUMNS")
    assert (ROOT / args[args.index("-p") + 1]).is_file()
    assert "Top 3 sentences" in output and "timings:" not in output
    assert str(ROOT) not in output  # machine paths are written relative to the repository


def test_normalise_drops_timings_and_the_checkout_path() -> None:
    from tools.refresh_readme import ROOT as TOOL_ROOT
    from tools.refresh_readme import normalise

    raw = f"model: {TOOL_ROOT}/logrerank/checkpoints/x  \ntimings: total 1.0s\nend\n"
    assert normalise(raw) == "model: logrerank/checkpoints/x\nend\n"
