"""BM25 baseline (Okapi/Lucene BM25 from the maintained library ``bm25s``).

Ranks the candidate passages (or their sentences) by BM25 with statistics from the candidate set
itself, and exposes the per-query min-max normalised score as the lexical signal used by other
stages (the lexical signal of the cross-encoder stage, blended with the first pass).
"""

from __future__ import annotations

from typing import Any

from ..inputs.passages import normalize_passages
from ..text.bm25 import bm25_scores, minmax
from ..text.segment import passage_spans
from ..types import InputError, Ranking, ScoredSentence
from .base import passage_text


def lexical_signal(query: str, passages: list[Any]) -> list[float]:
    """Per-query min-max normalised BM25 over the passages (all-tied -> 1.0)."""
    plist = normalize_passages(passages)
    return minmax(bm25_scores(query, [passage_text(x) for x in plist]))


class BM25Reranker:
    """BM25 over the candidates.

    Args:
        level: ``"passage"`` scores title + text; ``"sentence"`` scores each sentence and ranks
            passages by their best sentence.
    """

    def __init__(self, level: str = "passage"):
        if level not in ("passage", "sentence"):
            raise ValueError("level must be 'passage' or 'sentence'")
        self.level = level
        self.name = "bm25" if level == "passage" else "bm25-sent"

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        """Rank passages (or sentences) by BM25; scores are min-max normalised per query."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("the question is empty: type a question")
        plist = normalize_passages(passages)
        if self.level == "passage":
            raw = bm25_scores(query, [passage_text(x) for x in plist])
            extras = [{"bm25": r} for r in raw]
            return Ranking.from_passage_scores(query, plist, minmax(raw), self.name, extras)
        sents = []
        for i, p in enumerate(plist):
            for j, s in enumerate(passage_spans(p)):
                sents.append(ScoredSentence(len(sents), i, j, s.text, s.start, s.end, 0.0))
        raw = bm25_scores(query, [s.text for s in sents])
        for s, r, n in zip(sents, raw, minmax(raw)):
            s.score, s.extra = n, {"bm25": r}
        return Ranking.from_sentence_scores(query, plist, sents, self.name)
