"""Multi-paper candidate pools for benchmarks whose gold lies in one paper of many.

Used by ``evinf`` (Evidence Inference 2.0) and ``scisumm`` (CL-SciSumm), whose corpora are the
passages of every paper of a split, with ids ``<paper>:<passage index>`` (the paper is the id
up to its last ``:``); a query's gold passages all belong to one paper, its *own* paper.

Rule, for each query (``k`` = 50, ``own_k`` = 25):

1. One BM25 index over all passages of the split (the settings of
   :mod:`logrerank.data.first_pass`, on ``title + " " + text``) scores every passage; ranks
   are by score, ties by doc-id string order.
2. **Own paper:** its passages in that order; the top ``own_k`` are kept, every gold passage is
   inserted if missing (replacing the lowest-ranked non-gold ones, the rule of
   :func:`~logrerank.data.first_pass.pool_from_ranking`). A paper with fewer passages gives
   them all.
3. **Other papers:** the best-ranked passages of the other papers of the split fill the pool to
   ``k``.
4. The pool is in BM25 order (the ``first-pass`` ranker's order).

Statistics: ``bm25_recall_at_k`` is the fraction of gold passages in the plain BM25 top ``k``
over the whole split, before any insertion (macro over queries; ``_micro`` pooled);
``own_recall_at_own_k`` the fraction in the own paper's top ``own_k`` before insertion.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from logrerank.data.first_pass import BM25Ranker, pool_from_ranking
from logrerank.data.schema import Doc, Example

#: Passages of the gold (own) paper kept in a pool, before gold insertion.
OWN_K = 25


def paper_of(doc_id: str) -> str:
    """The paper of a passage id ``<paper>:<index>``."""
    return doc_id.rsplit(":", 1)[0]


def _top(scores: np.ndarray, id_rank: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` best scores, best first, ties by ``id_rank`` (a full sort's prefix)."""
    if n <= 0:
        return np.empty(0, dtype=np.int64)
    if n < len(scores):
        threshold = np.partition(scores, len(scores) - n)[len(scores) - n]
        idx = np.flatnonzero(scores >= threshold)
    else:
        idx = np.arange(len(scores))
    return idx[np.lexsort((id_rank[idx], -scores[idx]))][:n]


def build_paper_pools(
    queries: Sequence[Example], corpus: dict[str, Doc], k: int = 50, own_k: int = OWN_K
) -> tuple[dict[str, dict[str, list[str]]], dict[str, Any]]:
    """Build multi-paper pools (rule in the module docstring); no cache.

    Args:
        queries: Examples whose ``gold_doc_ids`` all lie in one paper of ``corpus``.
        corpus: Every passage of the split, ids ``<paper>:<index>``.
        k: Pool size.
        own_k: Own-paper passages kept before gold insertion.

    Returns:
        ``(pools, stats)`` in the format of :func:`logrerank.data.pools.build_pools`
        (``pools[qid] = {"doc_ids": [...], "inserted": [...]}``, ``inserted`` = gold passages
        outside the own paper's top ``own_k``). ``stats`` adds ``own_k``, ``n_papers``,
        ``papers_per_pool_mean``/``min``/``max``, ``own_per_pool_mean``,
        ``gold_passages_per_query_mean``/``max``, ``gold_sentences_per_query_mean``/``max``
        and ``own_recall_at_own_k``.

    Raises:
        ValueError: On duplicate query ids, gold ids missing from the corpus, or gold spread
            over several papers.
    """
    start = time.perf_counter()
    ranker = BM25Ranker(corpus)
    ids = ranker.doc_ids
    id_rank = np.empty(len(ids), dtype=np.int64)
    id_rank[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    position = {d: i for i, d in enumerate(ids)}
    by_paper: dict[str, list[int]] = {}
    for i, d in enumerate(ids):
        by_paper.setdefault(paper_of(d), []).append(i)
    paper_idx = {p: np.asarray(v, dtype=np.int64) for p, v in by_paper.items()}
    pools: dict[str, dict[str, list[str]]] = {}
    recalls, own_recalls, n_papers, n_own = [], [], [], []
    n_gold_total = n_found = 0
    for ex in queries:
        if ex.qid in pools:
            raise ValueError(f"duplicate query id {ex.qid}")
        gold = list(dict.fromkeys(ex.gold_doc_ids))
        missing = [g for g in gold if g not in position]
        if missing or not gold:
            raise ValueError(f"query {ex.qid}: gold passages not in the corpus: {missing}")
        papers = {paper_of(g) for g in gold}
        if len(papers) != 1:
            raise ValueError(f"query {ex.qid}: gold passages in several papers {sorted(papers)}")
        own = paper_idx[papers.pop()]
        scores = ranker.scores(ex.query)
        own_ranked = [ids[i] for i in own[np.lexsort((id_rank[own], -scores[own]))]]
        own_pool, inserted = pool_from_ranking(own_ranked, gold, min(own_k, len(own)))
        n_other = max(0, k - len(own_pool))
        top = _top(scores, id_rank, max(k, n_other + len(own)))
        own_set = set(own.tolist())
        others = [ids[i] for i in top if i not in own_set][:n_other]
        pool = sorted([*own_pool, *others], key=lambda d: (-scores[position[d]], d))
        pools[ex.qid] = {"doc_ids": pool, "inserted": inserted}
        top_k = {ids[i] for i in top[:k]}
        found = sum(1 for g in gold if g in top_k)
        n_gold_total += len(gold)
        n_found += found
        recalls.append(found / len(gold))
        own_recalls.append((len(gold) - len(inserted)) / len(gold))
        n_papers.append(len({paper_of(d) for d in pool}))
        n_own.append(len(own_pool))
    gold_p = [len(set(ex.gold_doc_ids)) for ex in queries]
    gold_s = [sum(len(v) for v in ex.gold_sentences.values()) for ex in queries]
    sizes = [len(p["doc_ids"]) for p in pools.values()]

    def mean(xs: list[float]) -> float:
        return round(statistics.mean(xs), 4) if xs else float("nan")

    stats = {
        "n_queries": len(pools),
        "k": k,
        "own_k": own_k,
        "corpus_size": len(corpus),
        "n_papers": len(paper_idx),
        "n_queries_with_insertion": sum(1 for p in pools.values() if p["inserted"]),
        "n_gold_inserted": sum(len(p["inserted"]) for p in pools.values()),
        "n_gold_total": n_gold_total,
        "bm25_recall_at_k": mean(recalls),
        "bm25_recall_at_k_micro": round(n_found / n_gold_total, 4) if n_gold_total else None,
        "own_recall_at_own_k": mean(own_recalls),
        "pool_size_min": min(sizes, default=0),
        "pool_size_max": max(sizes, default=0),
        "papers_per_pool_mean": mean(n_papers),
        "papers_per_pool_min": min(n_papers, default=0),
        "papers_per_pool_max": max(n_papers, default=0),
        "own_per_pool_mean": mean(n_own),
        "gold_passages_per_query_mean": mean(gold_p),
        "gold_passages_per_query_max": max(gold_p, default=0),
        "gold_sentences_per_query_mean": mean(gold_s),
        "gold_sentences_per_query_max": max(gold_s, default=0),
        "build_seconds": round(time.perf_counter() - start, 3),
    }
    return pools, stats
