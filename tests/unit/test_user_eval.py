"""``logrerank eval`` on user collections: BEIR folders, TREC runs + qrels, run files out.

The figures of ``results.json`` must be what ``ir_measures`` computes from the written run files
with the same qrels (graded nDCG, recall), for every ranker; errors name the file and line.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from logrerank.cli import main
from logrerank.data.beir import load_beir
from logrerank.evaluation.metrics import average_precision_at_k, ndcg_at_k

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import AP, R, nDCG  # noqa: E402

TOPICS = [
    ("brown fat", "cold exposure raises brown fat activity and heat production"),
    ("nitrogen", "legume cover crops add nitrogen to the soil for maize"),
    ("sleep", "sleep loss impairs memory recall of word pairs"),
    ("battery", "lithium cells lose capacity at low temperature"),
]


def write_beir(root: Path, n_docs: int = 24, seed: int = 3) -> Path:
    """A BEIR folder with graded qrels, a query judged only 0 and a relevant doc BM25 misses."""
    rng = random.Random(seed)
    words = ["cells", "study", "trial", "patients", "effect", "model", "data", "rate", "level"]
    (root / "qrels").mkdir(parents=True)
    docs = []
    for i in range(n_docs):
        topic, text = TOPICS[i % len(TOPICS)]
        filler = " ".join(rng.choice(words) for _ in range(8))
        body = f"{text} in {filler}. The {rng.choice(words)} changed by {i} percent."
        docs.append({"_id": f"d{i:02d}", "title": f"{topic} {i}", "text": body})
    docs[5] = {"_id": "d05", "title": "split", "sentences": ["First part.", "Second part."]}
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [
        {"_id": "q1", "text": "does cold exposure raise brown fat activity"},
        {"_id": "q2", "text": "cover crops nitrogen maize"},
        {"_id": "q3", "text": "sleep loss memory recall"},
        {"_id": "q4", "text": "lithium capacity low temperature"},
        {"_id": "q9", "text": "not judged in this split"},
    ]
    (root / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    qrels = [
        ("q1", "d00", 2), ("q1", "d04", 1), ("q1", "d05", 1), ("q1", "d01", 0),
        ("q2", "d01", 1), ("q2", "d09", 2), ("q2", "d13", 3),
        ("q3", "d02", 0), ("q3", "d06", 0),  # judged, nothing relevant
        ("q4", "d03", 1), ("q4", "d07", 2), ("q4", "d23", 1),
    ]  # fmt: skip
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{g}" for q, d, g in qrels]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return root


def read_qrels_tsv(path: Path) -> list:
    rows = [line.split("\t") for line in path.read_text().splitlines()[1:]]
    return [ir_measures.Qrel(q, d, int(g)) for q, d, g in rows]


def rescored(out: Path, qrels: list, k: int = 10) -> dict[str, dict]:
    """``{ranker: {measure: value in percent}}`` of ``out/runs/*.trec`` by ir_measures."""
    found = {}
    for f in sorted((out / "runs").glob("*.trec")):
        run = list(ir_measures.read_trec_run(str(f)))
        agg = ir_measures.calc_aggregate([nDCG @ k, R @ k], qrels, run)
        found[f.stem] = {f"ndcg@{k}": 100 * agg[nDCG @ k], f"recall@{k}": 100 * agg[R @ k]}
    return found


@pytest.fixture(autouse=True)
def _pool_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGRERANK_CACHE", str(tmp_path / "cache"))


def test_beir_folder_results_equal_ir_measures_on_saved_runs(tmp_path: Path, capsys) -> None:
    root = write_beir(tmp_path / "beir")
    out = tmp_path / "out"
    rankers = "first-pass,bm25,bm25-sent"
    argv = ["eval", "--beir", str(root), "--rankers", rankers, "--depth", "6", "--quiet"]
    assert main([*argv, "--save-runs", "--out", str(out)]) == 0
    assert "1 judged queries have no relevant passage" in capsys.readouterr().out
    result = json.loads((out / "results.json").read_text())
    assert result["meta"]["runs"] == [f"runs/{r}.trec" for r in rankers.split(",")]
    assert result["meta"]["queries"] == 4  # q9 has no judgement in test
    lib = rescored(out, read_qrels_tsv(root / "qrels" / "test.tsv"))
    assert set(lib) == set(rankers.split(","))
    for name, figures in lib.items():
        for metric, value in figures.items():
            assert result["summary"][name]["passage"][metric] == pytest.approx(value, abs=1e-9)
    # every pool doc is in each run, scores strictly decreasing (no tie for trec_eval to break)
    lines = [ln.split() for ln in (out / "runs" / "bm25.trec").read_text().splitlines()]
    by_q: dict[str, list[float]] = {}
    for qid, _, _, _rank, score, tag in lines:
        by_q.setdefault(qid, []).append(float(score))
        assert tag == "bm25"
    assert set(by_q) == {"q1", "q2", "q3", "q4"}
    assert all(
        len(s) == 6 and s == sorted(s, reverse=True) and len(set(s)) == 6 for s in by_q.values()
    )
    # the pool missed relevant docs (no insertion by default), so recall < 100 for first-pass
    assert result["summary"]["first-pass"]["passage"]["recall@10"] < 100


def test_insert_gold_puts_every_relevant_passage_in_the_pool(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "beir")
    plain, stats = load_beir(root, depth=3)
    gold, gstats = load_beir(root, depth=3, insert_gold=True)
    assert stats["pool_recall"] < 1.0 and gstats["pool_recall"] == 1.0
    assert all(len(ex.candidates) == 3 for ex in gold if ex.gold_doc_ids)
    q2 = next(ex for ex in plain if ex.qid == "q2")
    assert q2.gold_gains == {"d01": 1, "d09": 2, "d13": 3} and q2.gold_doc_ids == [
        "d01",
        "d09",
        "d13",
    ]
    d05 = next(d for ex in gold for d in ex.candidates if d.doc_id == "d05")
    assert d05.sentences == ["First part.", "Second part."]  # the file's own split


def test_trec_collection_and_paired_test_on_run_files(tmp_path: Path, capsys) -> None:
    root = write_beir(tmp_path / "beir")
    # first-stage run: tied scores (ranks decide), q3 missing, an unjudged query q9
    run = tmp_path / "first.run"
    rows = [("q1", ["d08", "d00", "d04", "d12"]), ("q2", ["d09", "d01", "d05"])]
    rows += [("q4", ["d03", "d11", "d07", "d23", "d15"]), ("q9", ["d00"])]
    run.write_text(
        "".join(f"{q} Q0 {d} {r} 1.0 bm25\n" for q, ds in rows for r, d in enumerate(ds, 1))
    )
    qrels = tmp_path / "qrels.txt"  # TREC layout
    tsv = read_qrels_tsv(root / "qrels" / "test.tsv")
    qrels.write_text("".join(f"{q.query_id} 0 {q.doc_id} {q.relevance}\n" for q in tsv))
    queries = tmp_path / "queries.tsv"
    queries.write_text(
        "q1\tdoes cold raise brown fat\nq2\tcover crops\nq3\tsleep\nq4\tlithium\nq9\tx\n"
    )
    out = tmp_path / "out"
    argv = [
        "eval",
        "--run",
        str(run),
        "--qrels",
        str(qrels),
        "--corpus",
        str(root / "corpus.jsonl"),
    ]
    argv += ["--queries", str(queries), "--rankers", "first-pass,bm25", "--depth", "4"]
    assert main([*argv, "--save-runs", "--out", str(out), "--quiet"]) == 0
    assert "are not in the first-stage run" in capsys.readouterr().out
    result = json.loads((out / "results.json").read_text())
    assert result["meta"]["pool_stats"]["run_queries_without_qrels"] == 1
    lib = rescored(out, tsv)
    for name, figures in lib.items():
        for metric, value in figures.items():
            assert result["summary"][name]["passage"][metric] == pytest.approx(value, abs=1e-9)
    # first-pass keeps the run's rank order (d08 first), depth 4 cuts q4's d15
    fp = (out / "runs" / "first-pass.trec").read_text().split("\n")
    assert fp[0].split()[2] == "d08" and "d15" not in "".join(fp)
    # paired test: run files + qrels give the figures results.json gives
    base = ["paired-test", str(out / "runs" / "bm25.trec"), str(out / "runs" / "first-pass.trec")]
    assert main([*base, "--qrels", str(qrels)]) == 0
    from_runs = capsys.readouterr().out
    assert main(["paired-test", f"{out}:bm25", f"{out}:first-pass"]) == 0
    assert capsys.readouterr().out == from_runs
    assert main(base) == 2  # a run file without --qrels
    assert "--qrels" in capsys.readouterr().err


def test_sentence_qrels_give_sentence_metrics(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "beir")
    (root / "qrels" / "test.sentences.tsv").write_text(
        "query-id\tcorpus-id\tsentence-index\tscore\nq1\td05\t1\t1\nq1\td00\t0\t1\nq1\td00\t1\t0\n"
    )
    out = tmp_path / "out"
    argv = ["eval", "--beir", str(root), "--rankers", "bm25-sent", "--insert-gold", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    result = json.loads((out / "results.json").read_text())
    assert result["summary"]["bm25-sent"]["sentence_queries"] == 1
    assert result["meta"]["pool_stats"]["sentence_judged_queries"] == 1
    examples, _ = load_beir(root, insert_gold=True)
    assert next(ex for ex in examples if ex.qid == "q1").gold_sentences == {"d05": [1], "d00": [0]}


def _error(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    return capsys.readouterr().err


def test_malformed_folders_name_file_and_line(tmp_path: Path, capsys) -> None:
    root = write_beir(tmp_path / "beir")
    base = ["eval", "--beir", str(root), "--rankers", "bm25", "--quiet"]
    assert "no qrels/dev.tsv (splits there: test)" in _error([*base, "--split", "dev"], capsys)
    qrels = root / "qrels" / "test.tsv"
    good = qrels.read_text()
    qrels.write_text(good + "q1\tnope\t1\n")
    assert f"{qrels} line 14: corpus-id 'nope' is not in" in _error(base, capsys)
    qrels.write_text(good + "qx\td00\t1\n")
    assert "line 14: query-id 'qx' is not in" in _error(base, capsys)
    qrels.write_text(good + "q1\td00\thigh\n")
    assert "line 14: relevance 'high' is not an integer grade" in _error(base, capsys)
    qrels.write_text(good)
    queries = root / "queries.jsonl"
    text = queries.read_text()
    queries.write_text(text.replace("cover crops nitrogen maize", " "))
    assert f"{queries} line 2: query 'q2' has empty text" in _error(base, capsys)
    queries.write_text("")
    assert "holds no query" in _error(base, capsys)
    queries.write_text(text)
    corpus = root / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + "{not json\n")
    assert f"{corpus} line 25: malformed JSON" in _error(base, capsys)
    corpus.unlink()
    assert "has no corpus.jsonl" in _error(base, capsys)
    write_beir(tmp_path / "b2")
    sq = tmp_path / "b2" / "qrels" / "test.sentences.tsv"
    sq.write_text("query-id\tcorpus-id\tsentence-index\nq1\td05\t2\n")
    msg = _error(["eval", "--beir", str(tmp_path / "b2"), "-r", "bm25", "--quiet"], capsys)
    assert f"{sq} line 2: passage 'd05' has 2 sentence(s)" in msg
    assert "--save-runs writes" in _error([*base, "--save-runs"], capsys)
    assert "go together" in _error(["eval", "--run", "x.run", "-r", "bm25"], capsys)


def test_graded_ndcg_matches_ir_measures() -> None:
    rng = random.Random(7)
    pool = [f"d{i:02d}" for i in range(25)]
    qrels, run, cases = [], [], []
    for q in range(60):
        ranked = rng.sample(pool, rng.randint(1, 15))
        judged = rng.sample(pool, rng.randint(1, 10))
        gains = {d: rng.choice([-1, 0, 1, 2, 3]) for d in judged}
        if not any(g > 0 for g in gains.values()):
            gains[judged[0]] = 1
        cases.append((ranked, gains))
        qrels += [ir_measures.Qrel(f"q{q}", d, g) for d, g in gains.items()]
        run += [ir_measures.ScoredDoc(f"q{q}", d, float(-r)) for r, d in enumerate(ranked)]
    lib = {
        (m.query_id, str(m.measure)): m.value
        for m in ir_measures.iter_calc([nDCG @ 5, nDCG @ 10, AP @ 10], qrels, run)
    }
    for q, (ranked, gains) in enumerate(cases):
        gold = [d for d, g in gains.items() if g >= 1]
        for k in (5, 10):
            mine = ndcg_at_k(ranked, gold, k, gains=gains)
            assert mine == pytest.approx(lib[(f"q{q}", f"nDCG@{k}")], abs=1e-12)
        if len(gold) <= 10:  # AP@k divides by min(G, k), ir_measures by G
            ap = average_precision_at_k(ranked, gold, 10)
            assert ap == pytest.approx(lib[(f"q{q}", "AP@10")], abs=1e-12)


@pytest.mark.slow
def test_shipped_example_with_log_and_cross_encoder(tmp_path: Path) -> None:
    """The README's example: bundled LoG and cross-encoder, figures equal to ir_measures."""
    root = Path(__file__).resolve().parents[2] / "examples" / "beir-tiny"
    out = tmp_path / "out"
    argv = ["eval", "--beir", str(root), "--rankers", "bm25,cross-encoder,log", "--quiet"]
    assert main([*argv, "--save-runs", "--out", str(out)]) == 0
    result = json.loads((out / "results.json").read_text())
    lib = rescored(out, read_qrels_tsv(root / "qrels" / "test.tsv"))
    assert set(lib) == {"bm25", "cross-encoder", "log"}
    for name, figures in lib.items():
        for metric, value in figures.items():
            assert result["summary"][name]["passage"][metric] == pytest.approx(value, abs=1e-9)
    assert result["summary"]["log"]["sentence_queries"] >= 1  # qrels/test.sentences.tsv


def test_beir_folder_with_a_run_reads_sentences_and_inserts_gold(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "beir")
    run = tmp_path / "first.run"
    run.write_text("q1 Q0 d05 1 9.0 x\nq1 Q0 d08 2 8.0 x\nq1 Q0 d12 3 7.0 x\nq2 Q0 d01 1 1.0 x\n")
    plain, stats = load_beir(root, run=run, depth=2)
    q1 = next(ex for ex in plain if ex.qid == "q1")
    assert [d.doc_id for d in q1.candidates] == ["d05", "d08"]
    assert q1.candidates[0].sentences == ["First part.", "Second part."]  # the file's own split
    assert stats["queries_without_candidates"] == 2  # q3, q4 are not in the run
    gold, gstats = load_beir(root, run=run, depth=2, insert_gold=True)
    q1 = next(ex for ex in gold if ex.qid == "q1")
    # d05 (relevant, in the run) stays; d00 and d04 (relevant, not in the run) take d08's slot
    assert {d.doc_id for d in q1.candidates} == {"d05", "d00", "d04"}
    assert gstats["n_gold_inserted"] == 4  # q1: d00, d04; q2: d09, d13
