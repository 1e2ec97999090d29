"""Silver sentence labels (logrerank.data.silver) and the "pubmedqa-silver" training source.

F1 values are computed by hand in the comments: F1 = 2 * overlap / (|s| + |r|) on lowercased
``[a-z0-9]+`` tokens with clipped counts. The test on the public PubMedQA files is in
``tests/integration/test_silver.py``.
"""

from __future__ import annotations

import io

import pytest

from logrerank.data.schema import Doc, Example
from logrerank.data.silver import (
    SILVER_SOURCE,
    rouge1_f1,
    silver_examples,
    silver_scores,
    silver_sentences,
)
from logrerank.training import queries as td
from logrerank.training.log import log_config as tc

# --------------------------------------------------------------------------- silver_sentences


def test_rouge1_hand_computed():
    ref = "The drug reduced mortality."  # [the, drug, reduced, mortality]: 4 tokens
    # [the, drug, was, given]: overlap {the, drug} = 2 -> 2*2 / (4+4) = 0.5
    assert rouge1_f1("The drug was given.", ref) == pytest.approx(0.5)
    # [mortality, fell]: overlap 1 -> 2*1 / (2+4) = 1/3
    assert rouge1_f1("Mortality fell.", ref) == pytest.approx(1 / 3)
    # no shared token -> 0
    assert rouge1_f1("Patients were enrolled.", ref) == 0.0
    # clipped counts: [cancer x4] vs [cancer x2, risk]: overlap min(4, 2) = 2 -> 2*2 / (4+3)
    assert rouge1_f1("Cancer cancer CANCER cancer", "cancer cancer risk") == pytest.approx(4 / 7)
    # case and punctuation: [covid, 19, risk] vs [covid, 19]: overlap 2 -> 2*2 / (3+2) = 0.8
    assert rouge1_f1("COVID-19 risk!", "covid 19") == pytest.approx(0.8)


def test_silver_sentences_top_and_order():
    ref = "The drug reduced mortality."
    sents = ["Patients were enrolled.", "Mortality fell.", "The drug was given."]
    # F1: [0, 1/3, 0.5]
    assert silver_scores(sents, ref) == pytest.approx([0.0, 1 / 3, 0.5])
    assert silver_sentences(sents, ref) == [1, 2]  # top 2, sorted ascending (not by F1)
    assert silver_sentences(sents, ref, top=1) == [2]
    assert silver_sentences(sents, ref, top=5) == [1, 2]  # the 0-F1 sentence is below 0.2
    assert silver_sentences(sents, ref, top=2, min_f1=0.4) == [2]  # 1/3 < 0.4
    assert silver_sentences(sents, ref, top=0) == []


def test_silver_sentences_ties_break_by_lower_index():
    ref = "a b"  # 2 tokens
    # each of 0, 1, 3 shares one token with the reference: 2*1 / (2+2) = 0.5; sentence 2: 0
    sents = ["x a", "b y", "z w", "a q"]
    assert silver_sentences(sents, ref, top=2) == [0, 1]
    assert silver_sentences(sents, ref, top=1) == [0]
    # a strictly better later sentence still wins: "a b" has F1 1.0
    assert silver_sentences(["a q", "a b"], ref, top=1) == [1]


def test_silver_sentences_threshold_is_inclusive():
    ref = "a b c d e"  # 5 tokens
    sents = ["a x y z w"]  # overlap 1: 2*1 / (5+5) = 0.2 exactly
    assert silver_sentences(sents, ref, min_f1=0.2) == [0]
    assert silver_sentences(sents, ref, min_f1=0.21) == []


def test_silver_sentences_empty_inputs():
    assert silver_sentences(["Some sentence."], "") == []
    assert silver_sentences(["Some sentence."], " ... !!! ") == []  # no tokens
    assert silver_sentences([], "a reference") == []
    assert silver_sentences(["", "..."], "a reference") == []  # token-less sentences: F1 0


# --------------------------------------------------------------------------- silver_examples


def _pqa(qid: str, cand_ids: list[str], long_answer: str) -> Example:
    docs = [
        Doc(d, "", ["Background on the topic.", "The drug reduced mortality in adults."])
        for d in cand_ids
    ]
    return Example(qid, f"question {qid}?", docs, [qid], {}, {}, {"long_answer": long_answer})


def test_silver_examples_removes_test_ids_and_drops():
    test_ids = {"t1", "t2"}
    answer = "The drug reduced mortality."
    exs = [
        _pqa("q1", ["t1", "q1", "x", "t2"], answer),  # kept, two test candidates removed
        _pqa("q2", ["q2", "x"], "Unrelated words here."),  # no sentence over 0.2 -> dropped
        _pqa("t1", ["t1", "x"], answer),  # a test query -> dropped
        _pqa("q3", ["x", "y"], answer),  # gold not among the candidates -> dropped
    ]
    kept, st = silver_examples(exs, test_ids, top=2, min_f1=0.2)
    assert [ex.qid for ex in kept] == ["q1"]
    ex = kept[0]
    assert [d.doc_id for d in ex.candidates] == ["q1", "x"]
    # sentence 0: [background, on, the, topic] vs [the, drug, reduced, mortality]: 2*1/8 = 0.25
    # sentence 1: 6 tokens, overlap 4: 2*4 / (6+4) = 0.8
    assert ex.gold_sentences == {"q1": [0, 1]}
    assert ex.meta["silver_f1"] == pytest.approx([0.25, 0.8])
    assert exs[0].gold_sentences == {} and len(exs[0].candidates) == 4  # inputs untouched
    assert st["loaded"] == 4 and st["kept"] == 1
    assert st["dropped_no_silver"] == 1
    assert st["dropped_test_query"] == 1
    assert st["dropped_gold_removed"] == 1
    assert st["test_candidates_removed"] == 3  # t1, t2 of q1 and t1 of the test query
    assert st["mean_silver"] == 2 and st["mean_candidates"] == 2
    assert st["mean_silver_f1"] == pytest.approx(0.525)


def test_silver_examples_role_filter_keeps_only_allowed_sections():
    answer = "The drug reduced mortality."
    ex = _pqa("q1", ["q1", "x"], answer)
    ex.roles = {"q1": ["background", "result"]}
    kept, _ = silver_examples([ex], set(), top=2, min_f1=0.2, roles={"result"})
    assert kept[0].gold_sentences == {"q1": [1]}  # sentence 0 (F1 0.25) is background
    assert kept[0].meta["silver_f1"] == pytest.approx([0.8])
    ex.roles = {"q1": ["background", "method"]}
    kept, st = silver_examples([ex], set(), roles={"result"})
    assert kept == [] and st["dropped_no_silver"] == 1  # no result sentence -> dropped
    ex.roles = {}
    kept, _ = silver_examples([ex], set(), roles={"result"})
    assert kept == []  # unknown roles never qualify


def test_load_train_queries_routes_silver_source(monkeypatch):
    import logrerank.data.pools as pools
    import logrerank.data.silver as silver

    answer = "The drug reduced mortality."
    pqa = [_pqa(f"q{i}", [f"q{i}", "t1", "x"], answer) for i in range(6)]
    calls = []

    def fake_load(name, split=None, limit=None, **kw):
        calls.append((name, split, limit))
        return ([_pqa("s1", ["s1", "x"], "")] if name == "scifact" else pqa[:limit]), {}

    monkeypatch.setattr(pools, "load_benchmark", fake_load)
    monkeypatch.setattr(silver, "pubmedqa_test_ids", lambda root=None: {"t1"})
    cfg = tc.TrainConfig(
        sources=["scifact", SILVER_SOURCE],
        max_queries={SILVER_SOURCE: 4},
        silver_top=1,
        dev_fraction=0.5,
    )
    log = io.StringIO()
    train, dev = td.load_train_queries(cfg, log)
    assert calls == [("scifact", "train", None), ("pubmedqa", "train", 4)]
    silver_exs = [ex for ex in train + dev if ex.meta["source"] == SILVER_SOURCE]
    assert len(silver_exs) == 4
    for ex in silver_exs:
        assert ex.gold_sentences == {ex.qid: [1]}  # silver_top = 1: the 0.8 sentence
        assert "t1" not in {d.doc_id for d in ex.candidates}
        assert (ex in dev) == td.held_out(f"{SILVER_SOURCE}:{ex.qid}", 0.5)
    assert f"{SILVER_SOURCE}: kept 4/4" in log.getvalue()


def test_load_train_queries_skips_leading_queries(monkeypatch):
    """skip_queries drops a source's first queries before max_queries caps it (a stage can
    train on claims that another stage and a selection slice did not use)."""
    import logrerank.data.pools as pools

    claims = [_pqa(f"c{i}", [f"c{i}", "x"], "") for i in range(10)]
    calls = []

    def fake_load(name, split=None, limit=None, **kw):
        calls.append((name, limit))
        return claims[:limit], {}

    monkeypatch.setattr(pools, "load_benchmark", fake_load)
    cfg = tc.TrainConfig(
        sources=["citint"], max_queries={"citint": 3}, skip_queries={"citint": 4}, dev_fraction=0
    )
    train, dev = td.load_train_queries(cfg, io.StringIO())
    assert calls == [("citint", 7)] and dev == []
    assert [ex.qid for ex in train] == ["c4", "c5", "c6"]
    cfg = tc.TrainConfig(sources=["citint"], skip_queries={"citint": 8}, dev_fraction=0)
    assert [ex.qid for ex in td.load_train_queries(cfg, io.StringIO())[0]] == ["c8", "c9"]
