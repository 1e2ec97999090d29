"""BM25 scores and min-max normalisation: the lexical scoring of the core.

:func:`bm25_scores` (Okapi/Lucene BM25 from the maintained library ``bm25s``, with statistics from
the scored texts themselves) and :func:`minmax` feed the lexical node inputs of the global stage
(:mod:`logrerank.text.lexical`), the candidate pools (:data:`BM25_PARAMS`) and the BM25 baseline
(:mod:`logrerank.baselines.bm25_ranker`), which imports them from here.
"""

from __future__ import annotations

from typing import Any

#: BM25 settings of the candidate pools (:mod:`logrerank.data.pools`, part of their cache key)
#: and the default of every BM25 score here.
BM25_PARAMS: dict[str, Any] = {
    "k1": 1.5,
    "b": 0.75,
    "method": "lucene",
    "stopwords": "en",
    "lower": True,
    "stemmer": None,
}


def bm25_scores(query: str, texts: list[str], params: dict[str, Any] | None = None) -> list[float]:
    """BM25 score of each text for ``query``, with IDF from ``texts`` themselves.

    Uses bm25s (method, k1, b, English stopwords as in the candidate pools). A query with no
    indexable token, or an empty text list, gives zeros.
    """
    import bm25s

    p = dict(BM25_PARAMS if params is None else params)
    if not texts:
        return []

    def tok(xs: list[str]) -> list[list[str]]:
        return bm25s.tokenize(
            xs,
            lower=p["lower"],
            stopwords=p["stopwords"],
            stemmer=p["stemmer"],
            return_ids=False,
            show_progress=False,
        )

    q = tok([query])[0]
    docs = tok(texts)
    if not q or not any(docs):
        return [0.0] * len(texts)
    index = bm25s.BM25(k1=p["k1"], b=p["b"], method=p["method"])
    index.index(docs, show_progress=False)
    return [float(x) for x in index.get_scores(q)]


def minmax(values: list[float]) -> list[float]:
    """Min-max normalise to [0, 1]: ``(x - min) / (max - min)``.

    A single value or an all-tied list maps to 1.0 for every item (not 0): a lone or tied
    candidate is as good as the best, and must not collapse to the bottom when blended.
    """
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-12:
        return [1.0] * len(values)
    return [(v - lo) / (hi - lo) for v in values]
