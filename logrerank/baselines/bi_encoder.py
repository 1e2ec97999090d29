"""Zero-shot bi-encoder baseline: cosine of packaged all-MiniLM-L6-v2 embeddings.

Embeddings are mean-pooled and L2-normalised, as sentence-transformers does for this model
(max 256 word pieces, its ``max_seq_length``).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from .. import backbone as bb
from ..io import normalize_passages
from ..segment import passage_spans
from ..types import InputError, Ranking, ScoredSentence
from .base import passage_text


class BiEncoder:
    """Sentence embedder (mean pooling + L2 norm).

    Args:
        model_name_or_path: HF encoder folder; None = packaged all-MiniLM-L6-v2.
        max_length: word pieces per text.
        batch_size: texts per forward pass.
        device: "auto", "cpu", "cuda".
        precision: "auto" (bf16 where supported), "bf16" or "fp32".
    """

    def __init__(
        self,
        model_name_or_path: str | None = None,
        max_length: int = 256,
        batch_size: int = 16,
        device: str = "auto",
        precision: str = "auto",
    ):
        self.device = bb.pick_device(device)
        self.tokenizer = bb.load_tokenizer(model_name_or_path)
        self.model = bb.load_encoder(model_name_or_path).to(self.device).eval()
        self.max_length, self.batch_size = max_length, batch_size
        self.dtype = bb.autocast_dtype(self.device, precision)

    @torch.inference_mode()
    def embed(self, texts: list[str]) -> torch.Tensor:
        """``[len(texts), d]`` unit-norm embeddings (length-sorted batches)."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = torch.zeros(len(texts), self.model.config.hidden_size)
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            enc = self.tokenizer(
                [texts[i] for i in idx],
                padding=True,
                truncation=True,
                max_length=self.max_length,
                return_tensors="pt",
            ).to(self.device)
            with bb.autocast(self.device, self.dtype):
                h = self.model(**enc).last_hidden_state.float()  # [b, L, d]
            m = enc["attention_mask"].unsqueeze(-1).float()
            e = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
            out[idx] = F.normalize(e, dim=-1).cpu()
        return out


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
