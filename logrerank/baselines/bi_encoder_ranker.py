"""Zero-shot bi-encoder baseline: cosine of packaged all-MiniLM-L6-v2 embeddings.

Embeddings are mean-pooled and L2-normalised, as sentence-transformers does for this model
(max 256 word pieces, its ``max_seq_length``).
"""

from __future__ import annotations

from typing import Any

from ..inputs.passages import normalize_passages
from ..models.bi_encoder import BiEncoder
from ..text.segment import passage_spans
from ..types import InputError, Ranking, ScoredSentence
from .base import passage_text


class BiEncoderRanker:
    """Rank by cosine between the query and passage (or sentence) embeddings.

    Args:
        level: "passage" (title + text) or "sentence" (each sentence; passage by best sentence).
        encoder: a shared :class:`BiEncoder` (created when None).
    """

    def __init__(self, level: str = "sentence", encoder: BiEncoder | None = None):
        if level not in ("passage", "sentence"):
            raise ValueError("level must be 'passage' or 'sentence'")
        self.level = level
        self.name = "bi-encoder" if level == "sentence" else "bi-encoder-passage"
        self.encoder = encoder or BiEncoder()

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        """Cosine scores mapped to [0, 1] as ``(1 + cos) / 2``; raw cosine in ``extra``."""
        if not isinstance(query, str) or not query.strip():
            raise InputError("the question is empty: type a question")
        plist = normalize_passages(passages)
        if self.level == "passage":
            texts = [passage_text(p) for p in plist]
            cos = (self.encoder.embed(texts) @ self.encoder.embed([query])[0]).tolist()
            extras = [{"cosine": c} for c in cos]
            return Ranking.from_passage_scores(
                query, plist, [(1 + c) / 2 for c in cos], self.name, extras
            )
        sents = []
        for i, p in enumerate(plist):
            for j, s in enumerate(passage_spans(p)):
                sents.append(ScoredSentence(len(sents), i, j, s.text, s.start, s.end, 0.0))
        if sents:
            cos = self.encoder.embed([s.text for s in sents]) @ self.encoder.embed([query])[0]
            for s, c in zip(sents, cos.tolist()):
                s.score, s.extra = (1 + c) / 2, {"cosine": c}
        return Ranking.from_sentence_scores(query, plist, sents, self.name)
