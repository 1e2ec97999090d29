"""The first-pass ranking behind the candidate pools (the LoG-Reranker paper, App. A).

Pool rule, for each query over the benchmark's corpus:

1. Score every doc with BM25 (``bm25s``, Lucene variant, ``k1 = 1.5``, ``b = 0.75``,
   lower-cased ``\\w\\w+`` tokens, English stopwords removed, no stemming) on the string
   ``title + " " + text``.
2. Rank by score, descending; **ties break by ``doc_id`` string order** (ascending), so the
   ranking is fully deterministic, including for the duplicated passages of
   Citation-Integrity (identical text, identical score: the smaller id string ranks first).
3. Take the top ``k`` (50). For each gold doc missing from it, drop the lowest-ranked
   non-gold candidate and insert the gold doc, so the pool has exactly ``k`` candidates
   (fewer only when the corpus is smaller; more only if a query had more than ``k`` gold docs).
4. The final order is the BM25 order of the kept docs. Since a missed gold doc scores no
   higher than every top-``k`` doc, this is the same as appending the inserted gold docs at
   the end of the list in BM25 order. Base-ranker (BM25) metrics on a pool are therefore not
   inflated by the insertion beyond what cutting the list at ``k`` does.

:class:`BM25Ranker` gives steps 1-2, :func:`pool_from_ranking` steps 3-4; the pools are built
and cached in :mod:`logrerank.data.pools`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from logrerank.data.schema import Doc
from logrerank.text.bm25 import BM25_PARAMS


def doc_index_text(doc: Doc) -> str:
    """The string BM25 indexes for a doc: ``title + " " + text``."""
    return f"{doc.title} {doc.text}"


class BM25Ranker:
    """Full, deterministic BM25 ranking of a fixed corpus.

    Args:
        corpus: ``doc_id -> Doc``.
        params: BM25 settings; defaults to :data:`BM25_PARAMS`.
    """

    def __init__(self, corpus: dict[str, Doc], params: dict[str, Any] | None = None) -> None:
        import bm25s  # heavy import, only when pools are built

        self._bm25s = bm25s
        self.params = dict(BM25_PARAMS if params is None else params)
        self.doc_ids: list[str] = list(corpus)
        # Rank of each doc id in string order, the secondary sort key.
        order = sorted(range(len(self.doc_ids)), key=self.doc_ids.__getitem__)
        self._id_rank = np.empty(len(order), dtype=np.int64)
        self._id_rank[order] = np.arange(len(order))
        tokens = self._tokenize([doc_index_text(corpus[d]) for d in self.doc_ids])
        self._index = bm25s.BM25(
            k1=self.params["k1"], b=self.params["b"], method=self.params["method"]
        )
        self._index.index(tokens, show_progress=False)

    def _tokenize(self, texts: list[str]) -> list[list[str]]:
        return self._bm25s.tokenize(
            texts,
            lower=self.params["lower"],
            stopwords=self.params["stopwords"],
            stemmer=self.params["stemmer"],
            return_ids=False,
            show_progress=False,
        )

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every doc (in ``self.doc_ids`` order) for ``query``."""
        tokens = self._tokenize([query])[0]
        if not tokens:  # only stopwords / punctuation: every doc scores 0
            return np.zeros(len(self.doc_ids), dtype=np.float32)
        return np.asarray(self._index.get_scores(tokens))

    def rank(self, query: str) -> tuple[list[str], np.ndarray]:
        """All doc ids by descending score, ties by ``doc_id`` string order.

        Returns:
            ``(doc_ids, scores)``, both in ranked order.
        """
        scores = self.scores(query)
        order = np.lexsort((self._id_rank, -scores))
        return [self.doc_ids[i] for i in order], scores[order]


def pool_from_ranking(
    ranked: Sequence[str], gold: Sequence[str], k: int
) -> tuple[list[str], list[str]]:
    """Apply the insertion rule to a full ranking.

    Args:
        ranked: Every corpus doc id, best first (a total order).
        gold: Gold doc ids (each must occur in ``ranked``).
        k: Pool size.

    Returns:
        ``(pool, inserted)``: the pool in ranked order, and the gold ids that were not in the
        top ``k`` and had to be inserted (in ranked order).

    Raises:
        ValueError: If a gold id is not in ``ranked``.
    """
    position = {doc_id: i for i, doc_id in enumerate(ranked)}
    gold_set = set(gold)
    unknown = [g for g in gold_set if g not in position]
    if unknown:
        raise ValueError(f"gold doc ids not in the corpus: {sorted(unknown)}")
    top = list(ranked[:k])
    top_set = set(top)
    inserted = sorted((g for g in gold_set if g not in top_set), key=position.__getitem__)
    if not inserted:
        return top, []
    n_non_gold = max(0, min(k, len(ranked)) - len(gold_set))
    non_gold = [d for d in top if d not in gold_set][:n_non_gold]
    pool = sorted([*non_gold, *gold_set], key=position.__getitem__)
    return pool, inserted
