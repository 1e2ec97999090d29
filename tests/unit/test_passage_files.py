"""The JSON shapes of a question with its passages that ``logrerank rerank -p`` (and the app's
upload) accept, and the one-line errors for the others (:mod:`logrerank.inputs.passages`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank import cli
from logrerank.inputs.passages import read_passages_file
from logrerank.types import InputError

Q = "Do statins reduce the risk of dementia?"
TEXTS = ["Statin users had a lower risk of dementia.", "Trials found no effect on cognition."]
MIXED = [TEXTS[0], {"title": "Trial", "text": TEXTS[1]}]


def _write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    text = data if isinstance(data, str) else json.dumps(data)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "data", "question"),
    [
        ("list.json", TEXTS, None),
        ("mixed.json", MIXED, None),
        ("passages.json", {"question": Q, "passages": MIXED}, Q),
        ("query.json", {"query": Q, "passages": TEXTS}, Q),
        ("ctxs.json", {"question": Q, "ctxs": MIXED}, Q),
        ("query_ctxs.json", {"query": Q, "ctxs": MIXED}, Q),
        ("no_question.json", {"passages": MIXED}, None),
        ("wrapped.json", [{"question": Q, "passages": MIXED}], Q),
        ("lines.jsonl", "\n".join(json.dumps(p) for p in MIXED) + "\n", None),
        ("one.jsonl", json.dumps({"id": "q1", "question": Q, "passages": MIXED}) + "\n", Q),
    ],
)
def test_accepted_shapes(tmp_path, name, data, question) -> None:
    q, passages = read_passages_file(_write(tmp_path, name, data))
    assert q == question
    assert [p.text for p in passages] == TEXTS


def test_titles_and_ids_are_kept(tmp_path) -> None:
    data = {"question": Q, "passages": [{"id": 7, "title": "Cohort", "text": TEXTS[0]}]}
    _, (p,) = read_passages_file(_write(tmp_path, "t.json", data))
    assert (p.title, p.pid, p.text) == ("Cohort", "7", TEXTS[0])


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "keys.json",
            {"question": Q, "docs": TEXTS},
            "'passages' or 'ctxs' (keys found: 'question', 'docs')",
        ),
        ("one_passage.json", {"title": "A", "text": "B"}, "accepted: a list of passages"),
        ("not_list.json", {"question": Q, "passages": "one passage"}, "'passages' must be a list"),
        ("bad_q.json", {"question": 3, "passages": TEXTS}, "'question' must be a string"),
        ("empty.json", {"question": Q, "passages": []}, "holds no passages"),
        ("scalar.json", 3, "must be a list of passages"),
        ("two.json", [{"question": Q, "passages": TEXTS}] * 2, "2 questions"),
        ("item.json", {"question": Q, "passages": [TEXTS[0], 5]}, "item 2: expected a string"),
        (
            "two.jsonl",
            "\n".join(json.dumps({"question": Q, "passages": TEXTS}) for _ in range(2)),
            "line 2 is a second question (the first is on line 1)",
        ),
        ("badline.jsonl", json.dumps(TEXTS[0]) + "\n7\n", "line 2: expected a string"),
    ],
)
def test_other_shapes_fail_with_one_clear_line(tmp_path, name, data, message) -> None:
    with pytest.raises(InputError) as err:
        read_passages_file(_write(tmp_path, name, data))
    assert message in str(err.value)
    assert "\n" not in str(err.value)
    assert name in str(err.value)  # the message names the file


def test_several_questions_point_to_rerank_batch(tmp_path) -> None:
    with pytest.raises(InputError, match="rerank-batch"):
        read_passages_file(_write(tmp_path, "two.json", [{"query": Q, "ctxs": TEXTS}] * 2))


def test_cli_takes_the_question_from_the_file_or_from_q(tiny_ckpt, tmp_path, capsys) -> None:
    src = _write(tmp_path, "p.json", {"question": Q, "passages": MIXED})
    assert cli.main(["rerank", "-p", str(src), "--checkpoint", str(tiny_ckpt), "--top", "1"]) == 0
    assert "Top 1 sentences" in capsys.readouterr().out
    bare = _write(tmp_path, "bare.json", MIXED)
    assert cli.main(["rerank", "-p", str(bare), "--checkpoint", str(tiny_ckpt)]) == 2
    assert "no question: pass --query" in capsys.readouterr().err
    argv = ["rerank", "-q", Q, "-p", str(bare), "--checkpoint", str(tiny_ckpt), "--top", "1"]
    assert cli.main(argv) == 0
