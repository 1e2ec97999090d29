"""Tests for logrerank.evaluation.metrics (LoG-Reranker paper, App. A definitions)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from logrerank.evaluation.metrics import (
    average_precision_at_k,
    coverage_at_k,
    distinct_at_k,
    evaluate_query,
    evidence_coverage_at_k,
    gold_labels,
    macro_average,
    ndcg_at_k,
    recall_at_k,
)

ALL_METRICS = [recall_at_k, average_precision_at_k, ndcg_at_k, coverage_at_k]
INV_LOG2_3 = 1 / math.log2(3)  # discount at rank 2: 0.63093


# ---------------------------------------------------------------------------
# Hand-computed cases
# ---------------------------------------------------------------------------


def test_basic_k3() -> None:
    ranked, gold = ["a", "b", "c"], {"a", "c"}  # g = [1, 0, 1], G = 2
    # Recall@3 = (1 + 0 + 1) / 2 = 1
    assert recall_at_k(ranked, gold, 3) == pytest.approx(1.0)
    # AP@3 = (1 * 1/1 + 0 + 1 * 2/3) / min(2, 3) = 1.6667 / 2 = 0.8333
    assert average_precision_at_k(ranked, gold, 3) == pytest.approx(5 / 6)
    # DCG@3 = 1/log2(2) + 1/log2(4) = 1 + 0.5 = 1.5
    # IDCG@3 = 1/log2(2) + 1/log2(3) = 1 + 0.63093 = 1.63093
    # nDCG@3 = 1.5 / 1.63093 = 0.91972
    assert ndcg_at_k(ranked, gold, 3) == pytest.approx(1.5 / (1 + INV_LOG2_3))
    assert ndcg_at_k(ranked, gold, 3) == pytest.approx(0.919721, abs=1e-6)
    # both gold ids within the top 3
    assert coverage_at_k(ranked, gold, 3) == 1.0


def test_basic_k2() -> None:
    ranked, gold = ["a", "b", "c"], {"a", "c"}  # top-2 labels g = [1, 0]
    # Recall@2 = 1 / 2
    assert recall_at_k(ranked, gold, 2) == pytest.approx(0.5)
    # AP@2 = (1 * 1/1) / min(2, 2) = 0.5
    assert average_precision_at_k(ranked, gold, 2) == pytest.approx(0.5)
    # nDCG@2 = (1/log2 2) / (1/log2 2 + 1/log2 3) = 1 / 1.63093 = 0.61315
    assert ndcg_at_k(ranked, gold, 2) == pytest.approx(1 / (1 + INV_LOG2_3))
    # "c" is at rank 3, outside the top 2
    assert coverage_at_k(ranked, gold, 2) == 0.0


def test_gold_at_lower_ranks() -> None:
    ranked, gold = ["x", "a", "y", "b"], {"a", "b"}  # g = [0, 1, 0, 1], G = 2
    # AP@4 = (1/2 + 2/4) / min(2, 4) = 1.0 / 2 = 0.5
    assert average_precision_at_k(ranked, gold, 4) == pytest.approx(0.5)
    # DCG@4 = 1/log2(3) + 1/log2(5) = 0.63093 + 0.43068 = 1.06161
    # IDCG@4 = 1 + 0.63093 = 1.63093 -> nDCG@4 = 0.65092
    expected = (INV_LOG2_3 + 1 / math.log2(5)) / (1 + INV_LOG2_3)
    assert ndcg_at_k(ranked, gold, 4) == pytest.approx(expected)
    assert ndcg_at_k(ranked, gold, 4) == pytest.approx(0.650921, abs=1e-6)
    # Recall@1 = 0 / 2; AP@1 = 0 / min(2, 1) = 0; nDCG@1 = 0 / 1
    assert recall_at_k(ranked, gold, 1) == 0.0
    assert average_precision_at_k(ranked, gold, 1) == 0.0
    assert ndcg_at_k(ranked, gold, 1) == 0.0


def test_perfect_ranking_scores_one() -> None:
    ranked, gold = ["a", "b", "c", "x"], ["c", "a", "b"]
    for k in (3, 4, 10):
        assert recall_at_k(ranked, gold, k) == pytest.approx(1.0)
        assert average_precision_at_k(ranked, gold, k) == pytest.approx(1.0)
        assert ndcg_at_k(ranked, gold, k) == pytest.approx(1.0)
        assert coverage_at_k(ranked, gold, k) == 1.0


# ---------------------------------------------------------------------------
# Edge cases
# ---------------------------------------------------------------------------


def test_gold_not_retrieved() -> None:
    ranked, gold = ["a", "b", "c"], {"z"}  # g = [0, 0, 0], G = 1
    for fn in ALL_METRICS:
        assert fn(ranked, gold, 3) == 0.0


def test_gold_partly_unretrieved_counts_in_G() -> None:
    ranked, gold = ["a", "b"], {"a", "z1", "z2", "z3"}  # G = 4, only "a" retrieved
    # Recall@2 = 1 / 4
    assert recall_at_k(ranked, gold, 2) == pytest.approx(0.25)
    # AP@2 = (1/1) / min(4, 2) = 0.5
    assert average_precision_at_k(ranked, gold, 2) == pytest.approx(0.5)


def test_empty_ranking() -> None:
    for fn in ALL_METRICS:
        assert fn([], {"a"}, 5) == 0.0


def test_k_larger_than_list() -> None:
    ranked, gold = ["a"], {"a", "b"}  # g = [1] then nothing; G = 2
    # Recall@10 = 1 / 2
    assert recall_at_k(ranked, gold, 10) == pytest.approx(0.5)
    # AP@10 = (1/1) / min(2, 10) = 0.5
    assert average_precision_at_k(ranked, gold, 10) == pytest.approx(0.5)
    # nDCG@10 = 1 / (1 + 1/log2 3) = 0.61315  (IDCG has min(G, k) = 2 terms)
    assert ndcg_at_k(ranked, gold, 10) == pytest.approx(1 / (1 + INV_LOG2_3))
    # "b" never retrieved
    assert coverage_at_k(ranked, gold, 10) == 0.0


def test_map_denominator_is_min_G_k_when_G_exceeds_k() -> None:
    ranked, gold = ["a", "b", "c", "d"], {"a", "b", "c", "x", "y"}  # G = 5
    # AP@2 = (1/1 + 2/2) / min(5, 2) = 2 / 2 = 1.0  (dividing by G would give 0.4)
    assert average_precision_at_k(ranked, gold, 2) == pytest.approx(1.0)
    # AP@4 = (1/1 + 2/2 + 3/3 + 0) / min(5, 4) = 3 / 4 = 0.75
    assert average_precision_at_k(ranked, gold, 4) == pytest.approx(0.75)
    # Recall@2 = 2 / 5 (recall still divides by G)
    assert recall_at_k(ranked, gold, 2) == pytest.approx(0.4)
    # nDCG@2: top 2 all gold and IDCG uses min(G, k) = 2 ones -> 1.0
    assert ndcg_at_k(ranked, gold, 2) == pytest.approx(1.0)
    # G > k: coverage is impossible
    assert coverage_at_k(ranked, gold, 4) == 0.0


def test_duplicates_only_first_occurrence_counts() -> None:
    ranked, gold = ["a", "a", "b"], {"a", "b"}
    # labels: first "a" -> 1, repeated "a" -> 0 (keeps its slot), "b" -> 1
    assert gold_labels(ranked, gold, 3) == [1, 0, 1]
    # Recall@3 = 2 / 2; without dedup it would be 3 / 2
    assert recall_at_k(ranked, gold, 3) == pytest.approx(1.0)
    # AP@3 = (1/1 + 2/3) / 2 = 0.8333, same as ranking [a, x, b]
    assert average_precision_at_k(ranked, gold, 3) == pytest.approx(5 / 6)
    # nDCG@3 = (1 + 1/log2 4) / (1 + 1/log2 3) = 0.91972, same as [a, x, b]
    assert ndcg_at_k(ranked, gold, 3) == pytest.approx(ndcg_at_k(["a", "x", "b"], gold, 3))
    # the repeat occupies rank 2, so "b" falls outside the top 2
    assert recall_at_k(ranked, gold, 2) == pytest.approx(0.5)
    assert coverage_at_k(ranked, gold, 2) == 0.0
    # all metrics stay within [0, 1] with heavy repetition
    for fn in ALL_METRICS:
        assert 0.0 <= fn(["a"] * 5, {"a"}, 5) <= 1.0


def test_duplicate_gold_ids_collapse() -> None:
    # gold ["a", "a"] is the set {"a"}: G = 1
    assert recall_at_k(["a"], ["a", "a"], 1) == pytest.approx(1.0)
    assert average_precision_at_k(["a"], ["a", "a"], 1) == pytest.approx(1.0)


def test_hashable_ids() -> None:
    ranked = [3, (1, 2), "s", frozenset({9})]
    gold = {(1, 2), frozenset({9})}  # g = [0, 1, 0, 1]
    # AP@4 = (1/2 + 2/4) / 2 = 0.5
    assert average_precision_at_k(ranked, gold, 4) == pytest.approx(0.5)
    assert coverage_at_k(ranked, gold, 4) == 1.0
    # ranked_ids may be a tuple; gold_ids any iterable (here a generator)
    assert recall_at_k(tuple(ranked), (g for g in gold), 2) == pytest.approx(0.5)


@pytest.mark.parametrize("fn", [*ALL_METRICS, gold_labels])
def test_empty_gold_raises(fn) -> None:
    with pytest.raises(ValueError, match="G == 0"):
        fn(["a", "b"], set(), 2)


def test_evaluate_query_empty_gold_raises() -> None:
    with pytest.raises(ValueError, match="G == 0"):
        evaluate_query(["a"], [], ks=(1,))


@pytest.mark.parametrize("bad_k", [0, -1, 1.5, 2.0, True, "3", None])
@pytest.mark.parametrize("fn", ALL_METRICS)
def test_invalid_k_raises(fn, bad_k) -> None:
    with pytest.raises(ValueError, match="k must be"):
        fn(["a"], {"a"}, bad_k)


def test_numpy_integer_k_accepted() -> None:
    assert recall_at_k(["a", "b"], {"b"}, np.int64(2)) == pytest.approx(1.0)


def test_evaluate_query_invalid_k_raises() -> None:
    with pytest.raises(ValueError, match="k must be"):
        evaluate_query(["a"], {"a"}, ks=(0,))
    with pytest.raises(ValueError, match="k must be"):
        evaluate_query(["a"], {"a"}, ks=(1,), coverage_ks=(0,))


# ---------------------------------------------------------------------------
# evaluate_query / macro_average
# ---------------------------------------------------------------------------


def test_evaluate_query_keys_and_values() -> None:
    ranked, gold = ["a", "b", "c"], {"a", "c"}
    out = evaluate_query(ranked, gold, ks=(2, 3), coverage_ks=(2, 3, 5))
    assert list(out) == [
        "recall@2",
        "map@2",
        "ndcg@2",
        "recall@3",
        "map@3",
        "ndcg@3",
        "coverage@2",
        "coverage@3",
        "coverage@5",
    ]
    assert out["recall@3"] == pytest.approx(1.0)
    assert out["map@3"] == pytest.approx(5 / 6)
    assert out["ndcg@3"] == pytest.approx(ndcg_at_k(ranked, gold, 3))
    assert out["map@2"] == pytest.approx(0.5)
    assert (out["coverage@2"], out["coverage@3"], out["coverage@5"]) == (0.0, 1.0, 1.0)


def test_evaluate_query_default_ks() -> None:
    out = evaluate_query(["a"], {"a"})
    assert set(out) == {"recall@10", "map@10", "ndcg@10"}


def test_evaluate_query_accepts_iterators() -> None:
    out = evaluate_query(iter(["a", "b"]), iter(["b"]), ks=(1, 2))
    assert out["recall@1"] == 0.0
    assert out["recall@2"] == 1.0


def test_macro_average_percent() -> None:
    per_query = [
        {"recall@10": 1.0, "map@10": 0.5},
        {"recall@10": 0.5, "map@10": 0.0},
    ]
    # recall: (1.0 + 0.5) / 2 * 100 = 75; map: (0.5 + 0.0) / 2 * 100 = 25
    assert macro_average(per_query) == pytest.approx({"recall@10": 75.0, "map@10": 25.0})


def test_macro_average_with_evaluate_query() -> None:
    q1 = evaluate_query(["a", "b", "c"], {"a", "c"}, ks=(3,))  # map@3 = 0.8333
    q2 = evaluate_query(["x", "y", "z"], {"a"}, ks=(3,))  # all zero
    avg = macro_average([q1, q2])
    # map@3 = (0.8333 + 0) / 2 * 100 = 41.667
    assert avg["map@3"] == pytest.approx(100 * 5 / 12)
    assert avg["recall@3"] == pytest.approx(50.0)


def test_macro_average_missing_key_raises() -> None:
    with pytest.raises(ValueError, match=r"missing \['map@10'\]"):
        macro_average([{"recall@10": 1.0, "map@10": 1.0}, {"recall@10": 1.0}])
    with pytest.raises(ValueError, match=r"unexpected \['ndcg@10'\]"):
        macro_average([{"recall@10": 1.0}, {"recall@10": 1.0, "ndcg@10": 1.0}])


def test_macro_average_empty_raises() -> None:
    with pytest.raises(ValueError, match="empty"):
        macro_average([])


# ---------------------------------------------------------------------------
# Agreement with the maintained ir_measures library (pytrec_eval backend)
# ---------------------------------------------------------------------------


def _random_cases(n: int, seed: int) -> list[tuple[list[str], set[str]]]:
    rng = random.Random(seed)
    pool = [f"d{i:02d}" for i in range(30)]
    cases = []
    for _ in range(n):
        ranked = rng.sample(pool, rng.randint(1, 20))
        # gold drawn from the whole pool, so some gold ids are not retrieved
        gold = set(rng.sample(pool, rng.randint(1, 8)))
        cases.append((ranked, gold))
    return cases


def test_agreement_with_ir_measures() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, R, nDCG

    ks = (1, 3, 5, 10, 20)
    cases = _random_cases(50, seed=1234)
    qrels, run = [], []
    for q, (ranked, gold) in enumerate(cases):
        qid = f"q{q}"
        qrels += [ir_measures.Qrel(qid, d, 1) for d in sorted(gold)]
        # strictly decreasing scores so there are no ties for the library to break
        run += [ir_measures.ScoredDoc(qid, d, float(len(ranked) - r)) for r, d in enumerate(ranked)]
    measures = [m @ k for k in ks for m in (nDCG, R, AP)]
    lib = {
        (m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(measures, qrels, run)
    }

    n_ap_compared = 0
    for q, (ranked, gold) in enumerate(cases):
        qid = f"q{q}"
        for k in ks:
            # nDCG@k with binary qrels: IDCG cut at k, same as App. A
            assert ndcg_at_k(ranked, gold, k) == pytest.approx(lib[(qid, f"nDCG@{k}")], abs=1e-9)
            # R@k = relevant in top k / all relevant, same as App. A
            assert recall_at_k(ranked, gold, k) == pytest.approx(lib[(qid, f"R@{k}")], abs=1e-9)
            # ir_measures AP@k divides by G, App. A by min(G, k): they agree only if G <= k
            if len(gold) <= k:
                assert average_precision_at_k(ranked, gold, k) == pytest.approx(
                    lib[(qid, f"AP@{k}")], abs=1e-9
                )
                n_ap_compared += 1
    assert n_ap_compared >= 100  # make sure the G <= k filter leaves enough cases


# ---------------------------------------------------------------------------------- agreement
def test_overlap_and_kendall_tau():
    """Agreement between two rankings (the app's comparison tab)."""
    from logrerank.evaluation.metrics import kendall_tau, overlap_at

    assert overlap_at([1, 2, 3], [3, 2, 1], 2) == 0.5
    assert kendall_tau([1, 2, 3, 4], [1, 2, 3, 4]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)
    assert kendall_tau([1], [1]) != kendall_tau([1], [1])  # NaN for < 2 items


# ---------------------------------------------------------------------------
# Sentence-side evidence coverage and distinct passages
# ---------------------------------------------------------------------------
def test_evidence_coverage_hand_computed() -> None:
    # passages of the ranked sentences; gold evidence passages A, C, E (G = 3)
    groups = ["A", "A", "B", "A", "C", "E", "C"]
    gold = {"A", "C", "E"}
    # top 5 = A A B A C -> {A, B, C}; hits A, C -> 2 / 3
    assert evidence_coverage_at_k(groups, gold, 5) == pytest.approx(2 / 3)
    # top 2 = A A -> {A} -> 1 / 3 (a passage counts once)
    assert evidence_coverage_at_k(groups, gold, 2) == pytest.approx(1 / 3)
    # top 6 adds E -> 3 / 3
    assert evidence_coverage_at_k(groups, gold, 6) == 1.0
    assert evidence_coverage_at_k(groups, {"Z"}, 5) == 0.0  # G counts unranked gold
    assert evidence_coverage_at_k([], gold, 5) == 0.0
    with pytest.raises(ValueError):
        evidence_coverage_at_k(groups, set(), 5)
    with pytest.raises(ValueError):
        evidence_coverage_at_k(groups, gold, 0)


def test_distinct_at_k_hand_computed() -> None:
    groups = ["A", "A", "B", "A", "C", "E", "C"]
    assert distinct_at_k(groups, 3) == 2  # A, B
    assert distinct_at_k(groups, 10) == 4  # A, B, C, E
    assert distinct_at_k([], 10) == 0
    with pytest.raises(ValueError):
        distinct_at_k(groups, 0)
