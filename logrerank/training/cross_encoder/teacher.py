"""Distillation teacher of cross-encoder training: the zero-shot bi-encoder.

A cross-encoder trained from a bi-encoder checkpoint starts from chance: its new head knows
nothing and its joint attention was never trained. The packaged all-MiniLM-L6-v2 bi-encoder
already ranks well zero-shot, so it can teach the new model from the first step: per training
group, the student's listwise distribution is pulled toward the teacher's
(:func:`distill_loss`, a listwise KL in the spirit of margin-MSE distillation, Hofstätter et al.
2020, with a softmax over the whole group instead of pairwise margins). The teacher reads the
same text the cross-encoder reads (:func:`~logrerank.models.cross_encoder.pair_text`), embedded
once per distinct text (:class:`BiEncoderTeacher` keeps them for the run). It also picks hard
negatives: the non-gold candidates it scores highest (:func:`teacher_negatives`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


class BiEncoderTeacher:
    """Cosine of packaged bi-encoder embeddings, scaled into logits.

    Args:
        scale: teacher logit = ``scale * cos(query, text)``.
        device: torch device of the bi-encoder.
        model_name_or_path: the encoder (None = the packaged all-MiniLM-L6-v2; training uses
            the cross-encoder's own base, so the teacher is that base read as a bi-encoder).
    """

    def __init__(
        self, scale: float = 20.0, device: str = "cpu", model_name_or_path: str | None = None
    ):
        from ...baselines.bi_encoder_ranker import BiEncoder

        self.scale = scale
        self.encoder = BiEncoder(model_name_or_path, device=device)
        self._emb: dict[str, torch.Tensor] = {}

    def cosines(self, query: str, texts: list[str]) -> torch.Tensor:
        """``[len(texts)]`` cosines with ``query`` (new texts are embedded, then kept)."""
        new = list(dict.fromkeys(t for t in [query, *texts] if t not in self._emb))
        if new:
            for t, e in zip(new, self.encoder.embed(new)):
                self._emb[t] = e
        q = self._emb[query]
        return torch.stack([self._emb[t] for t in texts]) @ q

    def logits(self, query: str, texts: list[str]) -> torch.Tensor:
        """Teacher logits ``scale * cos``."""
        return self.scale * self.cosines(query, texts)


def teacher_negatives(teacher: BiEncoderTeacher, query: str, texts: list[str], k: int) -> list[int]:
    """Indices of the ``k`` candidates in ``texts`` the teacher scores highest (ties: order)."""
    if k <= 0 or not texts:
        return []
    cos = teacher.cosines(query, texts).tolist()
    return sorted(range(len(texts)), key=lambda i: (-cos[i], i))[:k]


def distill_loss(student: torch.Tensor, teacher: torch.Tensor, temperature: float = 1.0):
    """``T^2 * KL(softmax(teacher / T) || softmax(student / T))`` over one group."""
    t = temperature
    p = F.softmax(teacher.float().reshape(-1) / t, dim=0)
    log_q = F.log_softmax(student.float().reshape(-1) / t, dim=0)
    return t * t * (p * (torch.log(p.clamp_min(1e-12)) - log_q)).sum()
