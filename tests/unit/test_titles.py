"""Title conditions (``logrerank eval --titles``): only titles change, inputs are not mutated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank.cli import main
from logrerank.data.schema import Doc, Example
from logrerank.data.titles import TITLE_CONDITIONS, cut_title, with_titles
from tests.unit.test_user_eval import write_beir


def example() -> Example:
    docs = [
        Doc("a", "Metformin use and colorectal cancer risk in adults", ["S one.", "S two."]),
        Doc("b", "Sleep", ["Other text."]),
        Doc("c", "", ["No title here."]),
    ]
    return Example("q1", "does metformin lower cancer risk?", docs, ["a"], {"a": [1]})


def test_cut_title_by_hand() -> None:
    title = "Metformin use and colorectal cancer risk"
    assert cut_title(title, "full") == title
    assert cut_title(title, "first3") == "Metformin use and"
    assert cut_title("  Two   words ", "first3") == "Two words"
    assert cut_title(title, "none") == ""
    assert TITLE_CONDITIONS == ("full", "first3", "none")
    with pytest.raises(ValueError, match="titles must be one of"):
        cut_title(title, "short")


def test_with_titles_changes_only_titles_and_copies() -> None:
    ex = example()
    assert with_titles([ex], "full")[0] is ex
    (cut,) = with_titles([ex], "first3")
    assert [d.title for d in cut.candidates] == ["Metformin use and", "Sleep", ""]
    assert [d.sentences for d in cut.candidates] == [d.sentences for d in ex.candidates]
    assert cut.gold_doc_ids == ["a"] and cut.gold_sentences == {"a": [1]}
    assert cut.meta["titles"] == "first3" and "titles" not in ex.meta
    (none,) = with_titles([ex], "none")
    assert all(d.title == "" for d in none.candidates)
    assert ex.candidates[0].title.startswith("Metformin use and colorectal")  # unchanged


def test_eval_records_the_title_condition(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "beir")
    for cond in ("full", "none"):
        out = tmp_path / cond
        argv = ["eval", "--beir", str(root), "--rankers", "bm25", "--depth", "6", "--quiet"]
        assert main([*argv, "--titles", cond, "--out", str(out)]) == 0
        meta = json.loads((out / "results.json").read_text())["meta"]
        assert meta["titles"] == cond and meta["queries"] == 4
    with pytest.raises(SystemExit):
        main(["eval", "--beir", str(root), "--titles", "short"])
