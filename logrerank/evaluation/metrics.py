"""Ranking evaluation metrics as defined in the LoG-Reranker paper (Appendix A).

All functions are pure and evaluate one ranked list for one query against its
set of gold (relevant) ids, with binary relevance; :func:`ndcg_at_k` and
:func:`evaluate_query` also take graded gains (user collections with graded qrels).

Notation used throughout the docstrings:

* ``g_i`` in {0, 1} is the gold label of the item at rank ``i`` (1-based) of
  ``ranked_ids``.
* ``G`` is the number of distinct gold ids of the query. Gold ids that do not
  appear in ``ranked_ids`` still count towards ``G``.

Conventions shared by every function in this module:

* **Ids** may be any hashable values (str, int, tuples, ...). A gold id and a
  ranked id match when they compare equal.
* **G == 0 raises** ``ValueError``: a query without gold ids cannot be
  evaluated meaningfully (recall and MAP would divide by zero, nDCG has
  IDCG = 0). Callers must skip such queries before evaluation.
* **k must be an integer >= 1** (``int`` or e.g. ``numpy.int64``; ``bool``
  and ``float`` are rejected), otherwise ``ValueError`` is raised. ``k`` larger
  than the ranked list is fine: missing ranks count as ``g_i = 0``.
* **Duplicate ids** in ``ranked_ids``: only the first occurrence can be gold.
  Later occurrences of the same id keep their rank position (they still
  occupy a slot in the top k) but are scored as ``g_i = 0``. A system that
  repeats an id therefore gains nothing and loses the slot.
* Duplicate ids in ``gold_ids`` are collapsed (gold is treated as a set).

Two functions compare two rankings with each other rather than one ranking with gold ids (the
app's "Comparison" tab, LoG against each baseline): :func:`overlap_at` and :func:`kendall_tau`.
The gold conventions above do not apply to them; they return NaN when undefined.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Iterable, Mapping, Sequence

__all__ = [
    "average_precision_at_k",
    "coverage_at_k",
    "distinct_at_k",
    "evaluate_query",
    "evidence_coverage_at_k",
    "gold_labels",
    "kendall_tau",
    "macro_average",
    "ndcg_at_k",
    "overlap_at",
    "recall_at_k",
]


def _check_k(k: int) -> None:
    """Raise ``ValueError`` unless ``k`` is an integer >= 1."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")


def _gold_set(gold_ids: Iterable[Hashable]) -> frozenset[Hashable]:
    """Return the gold ids as a set; raise ``ValueError`` if it is empty."""
    gold = frozenset(gold_ids)
    if not gold:
        raise ValueError(
            "query has no gold ids (G == 0); such queries cannot be evaluated "
            "and must be skipped by the caller"
        )
    return gold


def _labels(ranked_ids: Sequence[Hashable], gold: frozenset[Hashable], k: int) -> list[int]:
    """Binary labels ``g_1..g_n`` of the top ``n = min(k, len(ranked_ids))`` ranks.

    Only the first occurrence of an id can be labelled 1; repeats are 0.
    """
    seen: set[Hashable] = set()
    labels: list[int] = []
    for doc_id in ranked_ids[:k]:
        labels.append(1 if doc_id in gold and doc_id not in seen else 0)
        seen.add(doc_id)
    return labels


def gold_labels(ranked_ids: Sequence[Hashable], gold_ids: Iterable[Hashable], k: int) -> list[int]:
    """Binary gold labels of the top-k ranks.

    Returns ``[g_1, ..., g_n]`` with ``n = min(k, len(ranked_ids))`` and
    ``g_i = 1`` iff the id at rank ``i`` is gold and has not appeared at an
    earlier rank.

    Args:
        ranked_ids: Ids in ranked order, best first.
        gold_ids: Gold (relevant) ids of the query.
        k: Cut-off, an integer >= 1.

    Returns:
        The list of 0/1 labels.

    Raises:
        ValueError: If ``k < 1`` or the query has no gold ids (``G == 0``).
    """
    _check_k(k)
    return _labels(ranked_ids, _gold_set(gold_ids), k)


def recall_at_k(ranked_ids: Sequence[Hashable], gold_ids: Iterable[Hashable], k: int) -> float:
    """Recall at cut-off k.

    ``Recall@k = (sum_{i=1..k} g_i) / G``

    Args:
        ranked_ids: Ids in ranked order, best first.
        gold_ids: Gold (relevant) ids of the query; all of them count in ``G``,
            retrieved or not.
        k: Cut-off, an integer >= 1.

    Returns:
        A value in [0, 1].

    Raises:
        ValueError: If ``k < 1`` or the query has no gold ids (``G == 0``).
    """
    _check_k(k)
    gold = _gold_set(gold_ids)
    return sum(_labels(ranked_ids, gold, k)) / len(gold)


def average_precision_at_k(
    ranked_ids: Sequence[Hashable], gold_ids: Iterable[Hashable], k: int
) -> float:
    """Average precision at cut-off k (the per-query term of MAP@k).

    ``AP@k = (sum_{i=1..k} g_i * P(i)) / min(G, k)`` with
    ``P(i) = (sum_{j=1..i} g_j) / i``.

    Note the denominator ``min(G, k)``: a query with more gold ids than ``k``
    can still reach AP@k = 1. (Libraries such as ``trec_eval``/``ir_measures``
    divide by ``G`` instead; the two agree whenever ``G <= k``.)

    Args:
        ranked_ids: Ids in ranked order, best first.
        gold_ids: Gold (relevant) ids of the query.
        k: Cut-off, an integer >= 1.

    Returns:
        A value in [0, 1].

    Raises:
        ValueError: If ``k < 1`` or the query has no gold ids (``G == 0``).
    """
    _check_k(k)
    gold = _gold_set(gold_ids)
    hits = 0
    total = 0.0
    for i, g in enumerate(_labels(ranked_ids, gold, k), start=1):
        if g:
            hits += 1
            total += hits / i
    return total / min(len(gold), k)


def _dcg(labels: Iterable[float]) -> float:
    """``sum_i g_i / log2(i + 1)`` over 1-based ranks."""
    return sum(g / math.log2(i + 1) for i, g in enumerate(labels, start=1))


def ndcg_at_k(
    ranked_ids: Sequence[Hashable],
    gold_ids: Iterable[Hashable],
    k: int,
    gains: Mapping[Hashable, float] | None = None,
) -> float:
    """Normalised discounted cumulative gain at cut-off k.

    ``DCG@k = sum_{i=1..k} g_i / log2(i + 1)``

    ``IDCG@k = sum_{i=1..min(G, k)} 1 / log2(i + 1)`` (the DCG of the ideal
    ordering, all gold ids first)

    ``nDCG@k = DCG@k / IDCG@k``

    With ``gains`` (graded relevance), ``g_i`` is the gain of the id at rank ``i``
    (``max(gains[id], 0)``; 0 for an id without one; a repeat scores 0) and the ideal
    ordering puts the ``k`` largest gains of ``gains`` first: linear gains, the
    convention of ``trec_eval`` and ``ir_measures``' ``nDCG``. Binary relevance is
    the case of every gold id having gain 1.

    Args:
        ranked_ids: Ids in ranked order, best first.
        gold_ids: Gold (relevant) ids of the query.
        k: Cut-off, an integer >= 1.
        gains: Optional ``id -> graded gain`` of the judged ids (all judged ids, retrieved
            or not); ``None`` for binary relevance over ``gold_ids``.

    Returns:
        A value in [0, 1].

    Raises:
        ValueError: If ``k < 1`` or the query has no gold ids (``G == 0``).
    """
    _check_k(k)
    gold = _gold_set(gold_ids)
    if gains is None:
        ideal = _dcg([1] * min(len(gold), k))
        return _dcg(_labels(ranked_ids, gold, k)) / ideal
    positive = {d: float(g) for d, g in gains.items() if g > 0}
    ideal = _dcg(sorted(positive.values(), reverse=True)[:k])
    if ideal <= 0:
        raise ValueError("gains hold no positive gain; the query cannot be evaluated")
    seen: set[Hashable] = set()
    labels = []
    for doc_id in ranked_ids[:k]:
        labels.append(0.0 if doc_id in seen else positive.get(doc_id, 0.0))
        seen.add(doc_id)
    return _dcg(labels) / ideal


def coverage_at_k(ranked_ids: Sequence[Hashable], gold_ids: Iterable[Hashable], k: int) -> float:
    """Complete supporting-evidence coverage at cut-off k (multi-hop).

    ``Coverage@k = 1 if sum_{i=1..k} g_i == G else 0``

    i.e. 1.0 iff every gold id appears within the top k. If ``G > k`` this is
    necessarily 0.0.

    Args:
        ranked_ids: Ids in ranked order, best first.
        gold_ids: Gold (relevant) ids of the query.
        k: Cut-off, an integer >= 1.

    Returns:
        1.0 or 0.0.

    Raises:
        ValueError: If ``k < 1`` or the query has no gold ids (``G == 0``).
    """
    _check_k(k)
    gold = _gold_set(gold_ids)
    return 1.0 if sum(_labels(ranked_ids, gold, k)) == len(gold) else 0.0


def evidence_coverage_at_k(
    ranked_groups: Sequence[Hashable], gold_groups: Iterable[Hashable], k: int
) -> float:
    """Share of the gold evidence groups (passages) hit by the top-k items (sentences).

    ``ranked_groups[i]`` is the group of the item at rank ``i + 1`` (e.g. the passage of the
    sentence); several items may share a group. With ``T_k = {ranked_groups[i] : i < k}``::

        EvidenceCoverage@k = |T_k ∩ gold_groups| / G

    A gold group counts once however many of its items are in the top k; ``G`` counts every gold
    group, ranked or not. With ``G == 1`` this is hit@k of the one evidence passage.

    Args:
        ranked_groups: the group of each ranked item, best first.
        gold_groups: the groups holding gold evidence.
        k: cut-off, an integer >= 1.

    Returns:
        A value in [0, 1].

    Raises:
        ValueError: if ``k < 1`` or there is no gold group (``G == 0``).
    """
    _check_k(k)
    gold = _gold_set(gold_groups)
    return len(gold.intersection(ranked_groups[:k])) / len(gold)


def distinct_at_k(ranked_groups: Sequence[Hashable], k: int) -> int:
    """Distinct groups (passages) among the top-k items: ``|{ranked_groups[i] : i < k}|``.

    Raises:
        ValueError: if ``k < 1``.
    """
    _check_k(k)
    return len(set(ranked_groups[:k]))


def evaluate_query(
    ranked_ids: Sequence[Hashable],
    gold_ids: Iterable[Hashable],
    ks: Iterable[int] = (10,),
    coverage_ks: Iterable[int] = (),
    gains: Mapping[Hashable, float] | None = None,
) -> dict[str, float]:
    """All metrics for one query.

    For each ``k`` in ``ks`` the result holds ``"recall@k"``
    (:func:`recall_at_k`), ``"map@k"`` (:func:`average_precision_at_k`) and
    ``"ndcg@k"`` (:func:`ndcg_at_k`); for each ``k`` in ``coverage_ks`` it holds
    ``"coverage@k"`` (:func:`coverage_at_k`). Values are fractions in [0, 1]
    (not percent; see :func:`macro_average`).

    Args:
        ranked_ids: Ids in ranked order, best first.
        gold_ids: Gold (relevant) ids of the query.
        ks: Cut-offs for recall, MAP and nDCG.
        coverage_ks: Cut-offs for coverage, e.g. ``(2, 3, 5)``. Empty by default.
        gains: Graded gains for nDCG (see :func:`ndcg_at_k`); recall, MAP and coverage
            stay binary over ``gold_ids``.

    Returns:
        Mapping from metric name to value.

    Raises:
        ValueError: If any cut-off is < 1 or the query has no gold ids (``G == 0``).
    """
    ranked = list(ranked_ids)
    gold = _gold_set(gold_ids)
    result: dict[str, float] = {}
    for k in ks:
        result[f"recall@{k}"] = recall_at_k(ranked, gold, k)
        result[f"map@{k}"] = average_precision_at_k(ranked, gold, k)
        result[f"ndcg@{k}"] = ndcg_at_k(ranked, gold, k, gains)
    for k in coverage_ks:
        result[f"coverage@{k}"] = coverage_at_k(ranked, gold, k)
    return result


def macro_average(per_query: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Macro average over queries, in percent.

    ``avg[m] = 100 * (1 / Q) * sum_{q=1..Q} per_query[q][m]``

    Every query must report exactly the same metric names: a key missing from
    some queries raises ``ValueError`` rather than being averaged over a
    subset of queries (which would silently change the denominator ``Q``).
    Queries with ``G == 0`` should have been skipped before evaluation.

    Args:
        per_query: One metric dict per query, e.g. from :func:`evaluate_query`,
            with values as fractions in [0, 1].

    Returns:
        Mapping from metric name to its mean over queries, multiplied by 100,
        with keys in the order of the first query.

    Raises:
        ValueError: If ``per_query`` is empty or the queries' key sets differ.
    """
    if not per_query:
        raise ValueError("cannot macro-average an empty list of queries")
    keys = list(per_query[0])
    expected = set(keys)
    for idx, metrics in enumerate(per_query):
        got = set(metrics)
        if got != expected:
            missing = sorted(expected - got)
            extra = sorted(got - expected)
            raise ValueError(
                f"query {idx} has metric keys differing from query 0: "
                f"missing {missing}, unexpected {extra}"
            )
    n = len(per_query)
    return {key: 100.0 * sum(m[key] for m in per_query) / n for key in keys}


# --------------------------------------------------------------------------- ranking agreement
def overlap_at(a: Sequence[Hashable], b: Sequence[Hashable], k: int) -> float:
    """Share of the top k that two rankings have in common.

    ``overlap@k = |top_k(a) ∩ top_k(b)| / k'`` with ``k' = min(k, |a|, |b|)`` (k capped by the
    list lengths).

    Args:
        a: One ranking (ids, best first).
        b: The other ranking.
        k: Cut-off.

    Returns:
        The overlap in [0, 1]; NaN when ``k'`` is 0.
    """
    k = min(k, len(a), len(b))
    return len(set(a[:k]) & set(b[:k])) / k if k else float("nan")


def kendall_tau(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Kendall's tau-b between two orderings of the same items.

    Over the ``n`` items of ``a`` that also occur in ``b`` (items only in one are ignored),
    with ``x_i`` the position in ``a`` and ``y_i`` the position in ``b``::

        tau_b = sum_{i,j} sgn(x_i - x_j) sgn(y_i - y_j)
                / sqrt(#{(i,j): x_i != x_j} * #{(i,j): y_i != y_j})

    (sums over all ordered pairs ``(i, j)``; tied pairs add 0 to the numerator).

    Args:
        a: One ordering (ids, best first).
        b: The other ordering.

    Returns:
        tau in [-1, 1] (1 = same order, -1 = reversed); NaN for fewer than 2 common items.
    """
    import numpy as np

    common = [x for x in a if x in set(b)]
    if len(common) < 2:
        return float("nan")
    rb = {x: i for i, x in enumerate(b)}
    x = np.arange(len(common), dtype=float)
    y = np.array([rb[c] for c in common], dtype=float)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    num = float((dx * dy).sum())
    den = math.sqrt(float((dx != 0).sum()) * float((dy != 0).sum()))
    return num / den if den else float("nan")
