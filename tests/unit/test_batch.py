"""Batch reranking (logrerank.batch), local engine: resume, error lines, TREC in and out, ids.

Rankings come from BM25 (no model) or from the tiny LoG fixture saved as a checkpoint folder;
the Ray engine is tested in tests/integration/test_batch_ray.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from logrerank.batch import rerank_batch
from logrerank.batch.io import Question, prepare_output, ranking_record, read_jsonl_questions
from logrerank.types import InputError
from tests.helpers import make_questions


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="module")
def tiny_checkpoint(make_tiny_model, tmp_path_factory) -> Path:
    """The tiny LoG model saved as a checkpoint folder (``--checkpoint``)."""
    path = tmp_path_factory.mktemp("tiny-ckpt")
    make_tiny_model().save_pretrained(path)
    return path


def test_ids_vs_indices(tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", make_questions(4))
    res = rerank_batch(tmp_path / "out.jsonl", inp, ranker="bm25", progress=False)
    assert (res.written, res.skipped, res.errors) == (4, 0, 0)
    recs = {r["id"]: r for r in read_jsonl(tmp_path / "out.jsonl")}
    assert sorted(recs["q0"]["passage_order"]) == ["d0-0", "d0-1", "d0-2"]
    assert sorted(recs["q1"]["passage_order"]) == [0, 1, 2, 3]  # plain strings: indices
    assert recs["q1"]["line"] == 2
    scores = recs["q0"]["passage_scores"]
    assert scores == sorted(scores, reverse=True)
    # a passage without an id among ids: indices for the whole question
    mixed = {"id": "m", "question": "cat?", "passages": [{"id": "a", "text": "cat"}, "dog"]}
    write_jsonl(tmp_path / "mixed.jsonl", [mixed])
    rerank_batch(
        tmp_path / "mixed-out.jsonl", tmp_path / "mixed.jsonl", ranker="bm25", progress=False
    )
    assert read_jsonl(tmp_path / "mixed-out.jsonl")[0]["passage_order"] == [0, 1]
    # no "id": the line number stands in
    write_jsonl(tmp_path / "noid.jsonl", make_questions(2, with_ids=False))
    rerank_batch(
        tmp_path / "noid-out.jsonl", tmp_path / "noid.jsonl", ranker="bm25", progress=False
    )
    assert [r["id"] for r in read_jsonl(tmp_path / "noid-out.jsonl")] == ["1", "2"]


def test_resume_skips_done_questions(tmp_path):
    inp = write_jsonl(tmp_path / "in.jsonl", make_questions(6))
    out = tmp_path / "out.jsonl"
    rerank_batch(out, inp, ranker="bm25", batch_size=2, progress=False)
    full = out.read_text(encoding="utf-8")
    lines = full.splitlines(keepends=True)
    # an interrupted run: two lines written, the third cut halfway
    out.write_text("".join(lines[:2]) + lines[2][:25], encoding="utf-8")
    res = rerank_batch(out, inp, ranker="bm25", batch_size=2, progress=False)
    assert (res.written, res.skipped) == (4, 2)
    assert out.read_text(encoding="utf-8") == full
    again = rerank_batch(out, inp, ranker="bm25", progress=False)
    assert (again.written, again.skipped) == (0, 6)
    assert out.read_text(encoding="utf-8") == full


def test_bad_lines_go_to_errors_file_with_line_numbers(tmp_path):
    good = make_questions(3)
    lines = [
        json.dumps(good[0]),  # 1
        '{"id": "broken", "question": ',  # 2 malformed JSON
        json.dumps({"id": "e", "question": "  ", "passages": ["x"]}),  # 3 empty question
        json.dumps({"id": "n", "question": "why?", "passages": []}),  # 4 no passages
        "",  # 5 blank: ignored
        json.dumps(good[1]),  # 6
        json.dumps({"id": "t", "question": "why?", "passages": [{"title": "no text"}]}),  # 7
        json.dumps({**good[2], "id": "q0"}),  # 8 duplicate id
        json.dumps(["not", "an", "object"]),  # 9
    ]
    inp = tmp_path / "in.jsonl"
    inp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    res = rerank_batch(out, inp, ranker="bm25", progress=False)
    assert [r["id"] for r in read_jsonl(out)] == ["q0", "q1"]
    errs = read_jsonl(tmp_path / "out.jsonl.errors.jsonl")
    assert res.errors == len(errs) and res.errors_file == tmp_path / "out.jsonl.errors.jsonl"
    by_line = {e["line"]: e for e in errs}
    assert sorted(by_line) == [2, 3, 4, 7, 8, 9]
    assert by_line[2]["reason"].startswith("malformed JSON")
    assert by_line[3]["reason"] == "empty question"
    assert by_line[4]["reason"] == "no passages"
    assert "text" in by_line[7]["reason"]
    assert by_line[8]["reason"] == "duplicate id (first on line 1)"
    assert by_line[8]["id"] == "q0"
    assert "object" in by_line[9]["reason"]
    assert all(e["source"] == "in.jsonl" for e in errs)
    # a re-run rewrites the same errors (they are found again), not twice
    rerank_batch(out, inp, ranker="bm25", progress=False)
    assert read_jsonl(tmp_path / "out.jsonl.errors.jsonl") == errs


def test_trec_output_reads_with_ir_measures(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    inp = write_jsonl(tmp_path / "in.jsonl", make_questions(4))
    run = tmp_path / "out.trec"
    rerank_batch(run, inp, ranker="bm25", tag="my-run", progress=False)
    rows = [line.split() for line in run.read_text().splitlines()]
    assert all(len(r) == 6 and r[1] == "Q0" and r[5] == "my-run" for r in rows)
    parsed = list(ir_measures.read_trec_run(str(run)))
    assert len(parsed) == len(rows)
    assert {p.query_id for p in parsed} == {"q0", "q1", "q2", "q3"}
    # ranks 1..n per query, scores non-increasing with rank
    for qid in ("q0", "q1"):
        mine = [r for r in rows if r[0] == qid]
        assert [int(r[3]) for r in mine] == list(range(1, len(mine) + 1))
        scores = [float(r[4]) for r in mine]
        assert scores == sorted(scores, reverse=True)
    # q1's passages have no ids: docids are the 0-based indices
    assert sorted(r[2] for r in rows if r[0] == "q1") == ["0", "1", "2", "3"]
    qrels = [ir_measures.Qrel("q0", rows[0][2], 1)]
    agg = ir_measures.calc_aggregate([ir_measures.RR], qrels, parsed)
    assert agg[ir_measures.RR] == 1.0
    # resume of a TREC run: the last query is done again, nothing is doubled
    full = run.read_text()
    run.write_text(full[: len(full) - 7])
    res = rerank_batch(run, inp, ranker="bm25", tag="my-run", progress=False)
    assert res.skipped == 3 and res.written == 1
    assert run.read_text() == full


def test_trec_run_and_corpus_input(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    docs = [
        {"_id": "d1", "title": "Rain", "text": "Rain falls from clouds when water condenses."},
        {"_id": "d2", "title": "Cats", "text": "Cats sleep for most of the day."},
        {
            "_id": "d3",
            "title": "Sugar",
            "abstract": ["Insulin lowers blood sugar.", "It is a hormone."],
        },
    ]
    write_jsonl(corpus, docs)
    (tmp_path / "queries.tsv").write_text(
        "1\twhat lowers blood sugar\n2\twhy does rain fall\n3\tmissing docs\n"
    )
    run = tmp_path / "bm25.run"
    run.write_text(
        "1 Q0 d2 2 3.5 bm25\n1 Q0 d3 1 4.0 bm25\n1 Q0 d1 3 1.0 bm25\n"
        "2 Q0 d1 1 9.0 bm25\n2 Q0 d2 2 1.0 bm25\n"
        "3 Q0 d9 1 2.0 bm25\n"
        "4 Q0 d1 1 1.0 bm25\n"
        "5 Q0 d1 one two\n"
    )
    out = tmp_path / "out.jsonl"
    res = rerank_batch(
        out,
        run=run,
        corpus=corpus,
        queries=tmp_path / "queries.tsv",
        ranker="first-pass",
        progress=False,
    )
    recs = {r["id"]: r for r in read_jsonl(out)}
    assert recs["1"]["passage_order"] == ["d3", "d2", "d1"]  # first-pass keeps the run's rank order
    assert recs["1"]["line"] == 1 and recs["2"]["line"] == 4
    errs = {e["line"]: e["reason"] for e in read_jsonl(tmp_path / "out.jsonl.errors.jsonl")}
    assert res.errors == 3
    assert "d9" in errs[6] and "corpus.jsonl" in errs[6]
    assert "'4'" in errs[7] and "queries.tsv" in errs[7]
    assert errs[8].startswith("malformed run line")
    # depth keeps each query's best documents; bm25 reorders them
    out2 = tmp_path / "out2.jsonl"
    rerank_batch(
        out2,
        run=run,
        corpus=corpus,
        queries=tmp_path / "queries.tsv",
        depth=2,
        ranker="bm25",
        progress=False,
    )
    rec1 = next(r for r in read_jsonl(out2) if r["id"] == "1")
    assert sorted(rec1["passage_order"]) == ["d2", "d3"] and rec1["passage_order"][0] == "d3"


def test_log_records_equal_rerank(tmp_path, tiny_checkpoint):
    from logrerank.pipeline import LoGReranker

    blank = {"id": "blank", "question": "why?", "passages": ["   ", ""]}  # the model refuses it
    rows = make_questions(3)
    inp = write_jsonl(tmp_path / "in.jsonl", rows[:2] + [blank] + rows[2:])
    out = tmp_path / "out.jsonl"
    res = rerank_batch(
        out, inp, checkpoint=str(tiny_checkpoint), device="cpu", top_sentences=3, progress=False
    )
    assert (res.written, res.errors) == (3, 1)
    (err,) = read_jsonl(tmp_path / "out.jsonl.errors.jsonl")
    assert err["line"] == 3 and err["id"] == "blank" and "empty" in err["reason"]
    model = LoGReranker.from_pretrained(tiny_checkpoint, device="cpu")
    recs = read_jsonl(out)
    assert [r["id"] for r in recs] == ["q0", "q1", "q2"]
    questions = [q for q in read_jsonl_questions(inp) if isinstance(q, Question)]
    questions = [q for q in questions if q.qid != "blank"]
    for q, rec in zip(questions, recs):
        ranking = model.rerank(q.question, q.passages)
        assert rec == json.loads(json.dumps(ranking_record(q, ranking, 3)))
        assert rec["passage_order"] == [q.pids[i] for i in ranking.passage_order()]
        assert rec["context"] == ranking.to_dict()["context"] and rec["context"]
        assert len(rec["top_sentences"]) == 3


def test_cli_rerank_batch(tmp_path, capsys):
    from logrerank.cli import main

    inp = write_jsonl(tmp_path / "in.jsonl", make_questions(2))
    out = tmp_path / "out.jsonl"
    argv = ["rerank-batch", "-i", str(inp), "-o", str(out), "--ranker", "bm25", "--no-progress"]
    assert main(argv) == 0
    assert "wrote 2 ranking(s)" in capsys.readouterr().err
    assert main(argv + ["--workers", "2"]) == 2  # local has one worker
    assert "--engine ray" in capsys.readouterr().err
    assert main(["rerank-batch", "-o", str(out), "--ranker", "bm25"]) == 2  # no input
    assert main(["rerank-batch", "-i", str(inp), "-o", str(out), "--ranker", "nope"]) == 2


def test_ray_missing_is_a_clear_error(tmp_path, monkeypatch):
    from logrerank.batch.ray_engine import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(InputError, match=r"pip install 'logrerank\[ray\]'"):
        import_ray()


def test_prepare_output_on_missing_and_empty(tmp_path):
    assert prepare_output(tmp_path / "none.jsonl", "jsonl") == set()
    (tmp_path / "empty.trec").write_text("")
    assert prepare_output(tmp_path / "empty.trec", "trec") == set()


def test_trec_resume_of_a_complete_run_redoes_nothing(tmp_path):
    """A finished TREC output is complete: a second run ranks nothing and changes nothing; a
    last query cut at a line boundary (an interrupted batch write) is done again."""
    inp = write_jsonl(tmp_path / "in.jsonl", make_questions(4))
    run = tmp_path / "out.trec"
    rerank_batch(run, inp, ranker="bm25", progress=False)
    full = run.read_text()
    again = rerank_batch(run, inp, ranker="bm25", progress=False)
    assert (again.written, again.skipped) == (0, 4)
    assert run.read_text() == full
    lines = full.splitlines(keepends=True)
    run.write_text("".join(lines[:-1]))  # the last query lost its last line, cleanly
    res = rerank_batch(run, inp, ranker="bm25", progress=False)
    assert (res.written, res.skipped) == (1, 3)
    assert run.read_text() == full


def test_trec_resume_with_a_trec_run_input(tmp_path):
    corpus = write_jsonl(
        tmp_path / "corpus.jsonl",
        [{"_id": f"d{i}", "title": f"T{i}", "text": f"Text {i} about rain."} for i in range(4)],
    )
    (tmp_path / "q.tsv").write_text("1\twhy rain\n2\twhat text\n")
    run = tmp_path / "bm25.run"
    run.write_text(
        "".join(f"{q} Q0 d{i} {i + 1} {9 - i}.0 bm25\n" for q in (1, 2) for i in range(4))
    )
    out = tmp_path / "out.trec"
    kw = {"run": run, "corpus": corpus, "queries": tmp_path / "q.tsv", "depth": 3}
    rerank_batch(out, ranker="bm25", progress=False, **kw)
    full = out.read_text()
    assert len(full.splitlines()) == 6  # depth 3 per query
    again = rerank_batch(out, ranker="bm25", progress=False, **kw)
    assert (again.written, again.skipped) == (0, 2) and out.read_text() == full


def test_cli_rerank_batch_exits_1_when_lines_failed(tmp_path, capsys):
    from logrerank.cli import main

    good = make_questions(1)[0]
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps(good) + "\n" + '{"id": "broken", \n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    argv = ["rerank-batch", "-i", str(inp), "-o", str(out), "--ranker", "bm25", "--no-progress"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "wrote 1 ranking(s)" in err and "1 bad line(s)" in err and "exit status 1" in err
    assert len(read_jsonl(out)) == 1
