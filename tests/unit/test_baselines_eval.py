"""BM25 baseline, the ranker registry, evaluation and `logrerank eval` on toy inputs and the tiny
model. The real-data smoke runs and the bi-encoder on the real backbone are in
``tests/integration/test_baselines_eval.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank.baselines.base import Ranker
from logrerank.baselines.bm25_ranker import BM25Reranker, lexical_signal
from logrerank.cli import main
from logrerank.data.schema import Doc, Example
from logrerank.evaluation.evaluate import evaluate, results_markdown, write_results
from logrerank.rankers import RANKERS, FirstPassRanker, build_rankers
from logrerank.text.bm25 import bm25_scores, minmax
from logrerank.types import InputError

PASSAGES = [
    {"title": "Aspirin trial", "text": "Aspirin reduced heart attacks by 20%. It was cheap."},
    {"title": "Statins", "text": "Statins lower cholesterol. Muscle pain is a side effect."},
    {"title": "Diet", "text": "A Mediterranean diet was studied. Olive oil was used."},
]


def test_minmax_tied_and_single_do_not_collapse():
    assert minmax([3.0]) == [1.0]
    assert minmax([2.0, 2.0]) == [1.0, 1.0]
    assert minmax([1.0, 3.0, 2.0]) == [0.0, 1.0, 0.5]
    assert minmax([]) == []


def test_bm25_passage_ranks_lexical_match_first():
    r = BM25Reranker("passage").rank("aspirin heart attacks", PASSAGES)
    assert r.passage_order()[0] == 0
    assert sorted(r.passage_order()) == [0, 1, 2]
    assert r.passages_ranked[0].score == 1.0  # min-max normalised
    assert r.passages_ranked[0].extra["bm25"] > 0
    assert isinstance(BM25Reranker(), Ranker)


def test_bm25_sentence_level_scores_every_sentence_once():
    r = BM25Reranker("sentence").rank("olive oil", PASSAGES)
    assert len(r.sentences) == 6
    assert {(s.passage_idx, s.sent_idx) for s in r.sentences} == {
        (p, j) for p in range(3) for j in range(2)
    }
    assert r.sentences[0].text == "Olive oil was used."
    assert r.passage_order()[0] == 2


def test_bm25_stopword_query_gives_zeros_and_flat_signal():
    assert bm25_scores("the of and", ["a b", "c d"]) == [0.0, 0.0]
    assert lexical_signal("the of", PASSAGES) == [1.0, 1.0, 1.0]


def test_bm25_rejects_empty_query():
    with pytest.raises(InputError):
        BM25Reranker().rank("  ", PASSAGES)


def test_given_sentences_are_used_as_units():
    ps = [{"title": "", "sentences": ["First one.", "Second e.g. two.", "Third."]}]
    r = BM25Reranker("sentence").rank("second", ps)
    assert [s.sent_idx for s in r.sentences][0] == 1
    assert len(r.sentences) == 3


def test_registry_lists_and_rejects_unknown():
    assert "log" in RANKERS and "ce-stage" in RANKERS
    with pytest.raises(InputError, match="unknown ranker"):
        build_rankers(["nope"])
    rs = build_rankers(["first-pass", "bm25"])
    assert rs["first-pass"].rank("q", PASSAGES).passage_order() == [0, 1, 2]


def _example() -> Example:
    docs = [Doc(f"d{i}", p["title"], p["text"].split(". ")) for i, p in enumerate(PASSAGES)]
    return Example("q1", "aspirin heart attacks", docs, ["d0"], {"d0": [0]}, {}, {})


def test_evaluate_hand_checked():
    ex = _example()
    rankers = {"first-pass": FirstPassRanker(), "bm25-sent": BM25Reranker("sentence")}
    res = evaluate([ex], rankers, k=2, progress=False)
    fp = res["summary"]["first-pass"]
    # gold d0 at rank 1: R@2 = 1, AP@2 = 1/min(1,2) = 1, nDCG@2 = 1
    assert fp["passage"] == {"recall@2": 100.0, "map@2": 100.0, "ndcg@2": 100.0}
    assert fp["sentence"] is None  # passage-level ranker
    s = res["summary"]["bm25-sent"]["sentence"]
    assert s["recall@2"] == 100.0  # gold sentence (d0, 0) mentions all query words
    md = results_markdown(res, 2)
    assert "| first-pass | 100.0 | 100.0 | 100.0 | – | – | – |" in md


def test_write_results(tmp_path: Path):
    res = evaluate([_example()], {"bm25": BM25Reranker()}, k=10, progress=False)
    j, m = write_results(tmp_path, res, {"benchmark": "toy", "queries": 1}, 10)
    data = json.loads(j.read_text())
    assert data["meta"]["benchmark"] == "toy" and "bm25" in data["summary"]
    assert "| bm25 |" in m.read_text()


def _scifact_files(tmp_path: Path, docs, claim: str) -> tuple[Path, Path]:
    """A SciFact-format claims / corpus pair: ``docs`` = ``(doc_id, title, sentences)``; one
    claim whose evidence is sentence 0 of doc 1."""
    claims, corpus = tmp_path / "claims.jsonl", tmp_path / "corpus.jsonl"
    corpus.write_text(
        "\n".join(json.dumps({"doc_id": d, "title": t, "abstract": a}) for d, t, a in docs) + "\n"
    )
    evidence = {"1": [{"sentences": [0], "label": "SUPPORT"}]}
    row = {"id": 1, "claim": claim, "evidence": evidence, "cited_doc_ids": [1]}
    claims.write_text(json.dumps(row) + "\n")
    return claims, corpus


def test_cli_eval_errors_are_clean(capsys):
    assert main(["eval", "--rankers", "bm25"]) == 2
    assert "pass --benchmark" in capsys.readouterr().err
    assert main(["eval", "--benchmark", "nope", "--rankers", "bm25"]) == 2


def test_cli_eval_quantize_int8_and_passage_cache_are_recorded(tmp_path: Path, tiny_model) -> None:
    """``logrerank eval --quantize int8`` quantises the models it uses and says so in meta."""
    docs = [
        (1, "Aspirin", ["Aspirin lowers heart attack risk.", "It thins the blood."]),
        (2, "Statins", ["Statins lower cholesterol.", "They are common."]),
        (3, "Paris", ["Paris is mild in spring.", "Tourists come."]),
    ]
    claims, corpus = _scifact_files(tmp_path, docs, "aspirin lowers heart attack risk")
    ckpt = tiny_model.save_pretrained(tmp_path / "log")
    out = tmp_path / "out"
    argv = ["eval", "--claims", str(claims), "--corpus", str(corpus), "--rankers", "log"]
    rc = main(
        [*argv, "--checkpoint", str(ckpt), "--quantize", "int8", "--quiet", "--out", str(out)]
    )
    assert rc == 0
    meta = json.loads((out / "results.json").read_text())["meta"]
    assert meta["quantize"] == "int8"
    assert meta["quantized"]["log"]["quantized_linear"] > 0
    assert "cross_encoder" not in meta["quantized"]  # no CE ranker asked for
    out2 = tmp_path / "cached"
    base = [*argv, "--checkpoint", str(ckpt), "--quiet"]
    assert main([*base, "--passage-cache-mb", "-1"]) == 2  # clear refusal
    assert main([*base, "--passage-cache-mb", "8", "--out", str(out2)]) == 0
    assert json.loads((out2 / "results.json").read_text())["meta"]["passage_cache_mb"] == 8.0


def test_ce_stage_first_pass_is_the_input_order_or_bm25(tiny_ce_dir) -> None:
    """``ce-stage`` reranks the retriever's order (``first-pass``) or BM25 over the candidates;
    ``ce-stage-bm25`` is always BM25; anything else is refused by name."""
    from logrerank.rankers import Models

    query = "olive oil diet"  # BM25 puts the diet passage (input position 3) first
    models = Models(cross_encoder_path=str(tiny_ce_dir), stage_first_pass="first-pass")
    rankers = build_rankers(["ce-stage", "ce-stage-bm25"], models)
    for r in rankers.values():
        r.top_n = 2  # rerank the first pass's top 2; the rest keep the first pass's order
    fp = rankers["ce-stage"].rank(query, PASSAGES)
    bm = rankers["ce-stage-bm25"].rank(query, PASSAGES)
    assert fp.info["first_pass"] == "first-pass" and bm.info["first_pass"] == "bm25"
    assert sorted(fp.passage_order()[:2]) == [0, 1] and fp.passage_order()[2] == 2
    assert 2 in bm.passage_order()[:2]
    with pytest.raises(InputError, match="stage first pass"):
        build_rankers(["ce-stage"], Models(stage_first_pass="random"))
    with pytest.raises(InputError, match="the question is empty"):  # the input order checks nothing
        rankers["ce-stage"].rank("  ", PASSAGES)


def test_cli_eval_stage_first_pass_auto_for_pools(tmp_path: Path, tiny_ce_dir) -> None:
    docs = [(1, "Aspirin", ["Aspirin lowers heart attack risk."]), (2, "Paris", ["Paris."])]
    claims, corpus = _scifact_files(tmp_path, docs, "aspirin heart")
    argv = ["eval", "--claims", str(claims), "--corpus", str(corpus), "--rankers", "ce-stage"]
    argv += ["--cross-encoder", str(tiny_ce_dir), "--quiet"]
    for extra, want in (([], "first-pass"), (["--stage-first-pass", "bm25"], "bm25")):
        out = tmp_path / want
        assert main([*argv, *extra, "--out", str(out)]) == 0
        meta = json.loads((out / "results.json").read_text())["meta"]
        assert meta["ce_stage_first_pass"] == want
