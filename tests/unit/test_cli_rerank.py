"""``logrerank rerank``: the text view (sort score shown, whole sentences, numbering legend,
intent in words) agrees with the JSON of ``--out``; bad input fails before torch loads."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from logrerank import cli
from logrerank.cli.rerank import format_ranking
from logrerank.config import ScoreConfig
from logrerank.ranking.selection import apply_selection, order_note

ROOT = Path(__file__).resolve().parents[2]
Q = "Do statins reduce the risk of dementia in older adults?"
LONG = (
    "Continuous statin users had a lower risk of dementia than non-users over eight years of "
    "follow-up in a cohort of twelve thousand adults (hazard ratio 0.82, 95% CI 0.74-0.91)."
)
PASSAGES = [
    {"title": "Cohort", "text": f"We followed older adults. {LONG}"},
    "Trials of statins found no effect on cognition. Adherence was high.",
    "Unrelated: coral reefs host a quarter of marine species.",
]


def _rows(text: str) -> list[list[str]]:
    """The table's first lines per sentence: [rank, score, local, global, p.s, role, ...]."""
    return [line.split() for line in text.splitlines() if re.match(r"^\s+\d+\s+\d\.\d{3}\s", line)]


def test_table_shows_the_sort_score_and_whole_sentences(tiny_model) -> None:
    ranking = tiny_model.rerank(Q, PASSAGES)
    text = format_ranking(ranking, top=len(ranking.sentences), width=80)
    assert order_note(ranking) in " ".join(text.split())  # the order shown, named as in the app
    assert ranking.sentence_order == "score" and "order = score" in text
    rows = _rows(text)
    assert len(rows) == len(ranking.sentences)
    for row, s in zip(rows, ranking.sentences):
        assert row[0] == str(s.rank)
        assert row[1] == f"{s.score:.3f}"  # the score the ranking is sorted by
        assert row[4] == f"{s.passage_idx + 1}.{s.sent_idx + 1}"  # 1-based, as the legend says
    scores = [float(r[1]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    table = text.split("best first\n")[1].split("\nPassage order")[0]
    assert max(len(line) for line in table.splitlines()) <= 80
    assert LONG in " ".join(" ".join(text.split()).split())  # wrapped, never cut
    assert "[...]" not in text
    assert "counted from 1" in text and "count from 0" in text


def test_a_selected_ranking_says_so_and_keeps_its_order(tiny_model) -> None:
    ranking = apply_selection(tiny_model.rerank(Q, PASSAGES), None, ScoreConfig())
    assert ranking.sentence_order == "selected"
    text = format_ranking(ranking, top=len(ranking.sentences), width=80)
    flat = " ".join(text.split())
    assert order_note(ranking) in flat and "order = selected" in flat
    assert "order = score" not in flat and "best first" not in text
    rows = _rows(text)
    assert [row[0] for row in rows] == [str(s.rank) for s in ranking.sentences]
    assert [row[1] for row in rows] == [f"{s.score:.3f}" for s in ranking.sentences]


def test_intent_is_spelled_out(tiny_model) -> None:
    text = format_ranking(tiny_model.rerank(Q, PASSAGES))
    line = next(x for x in text.splitlines() if x.startswith("role mixing weights"))
    assert all(word in line for word in ("background", "method", "result"))
    assert not re.search(r"\b(bg|mt|rs)\b", text)


def test_text_and_json_number_the_same_sentences(tiny_ckpt, tmp_path, capsys) -> None:
    src = tmp_path / "p.json"
    src.write_text(json.dumps(PASSAGES), encoding="utf-8")
    out = tmp_path / "ranking.json"
    argv = ["rerank", "-q", Q, "-p", str(src), "--checkpoint", str(tiny_ckpt), "-o", str(out)]
    assert cli.main(argv + ["--top", "3"]) == 0
    rows = _rows(capsys.readouterr().out)
    data = json.loads(out.read_text(encoding="utf-8"))
    for row, s in zip(rows, data["sentences"][:3]):
        assert row[4] == f"{s['passage_idx'] + 1}.{s['sent_idx'] + 1}"
        assert row[1] == f"{s['score']:.3f}"


def test_bad_input_fails_before_torch_loads(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"question": "x", "ctxs": [', encoding="utf-8")
    code = (
        "import sys; from logrerank import cli\n"
        f"rc = cli.main(['rerank', '-p', {str(bad)!r}])\n"
        "print(rc, 'torch' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert proc.stdout.split() == ["2", "False"], proc.stdout + proc.stderr
    assert proc.stderr.startswith("logrerank: error: ") and proc.stderr.count("\n") == 1


def test_unwritable_out_and_missing_checkpoint_fail_early(tmp_path, capsys) -> None:
    src = tmp_path / "p.txt"
    src.write_text("Statins work.\n\nThey do not.", encoding="utf-8")
    base = ["rerank", "-q", Q, "-p", str(src)]
    assert cli.main(base + ["-o", str(tmp_path / "no" / "such" / "r.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli.main(base + ["--checkpoint", str(tmp_path / "nowhere")]) == 2
    assert "--checkpoint" in capsys.readouterr().err
