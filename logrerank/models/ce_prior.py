"""The cross-encoder's priors: ``logit(q, t) = f(q, t) + scale * cos(E(q), E(t)) [+ w * lex]``.

A cross-encoder fine-tuned from a bi-encoder checkpoint starts from chance: its new head knows
nothing. A *prior-anchored* cross-encoder instead adds the zero-shot bi-encoder's cosine,
scaled into a logit, to its own output ``f``, and training starts with ``f = 0`` (a zero
classifier). At step 0 it ranks exactly as the bi-encoder does; training learns only the
correction, which is how LoG's local scorer treats its prior (the LoG-Reranker paper's local
scorer; ``docs/method.md``). ``E`` is the delta checkpoint's base read as a bi-encoder (mean
pooling, L2 norm), so nothing extra is stored: the checkpoint's ``logrerank_delta.json`` holds
``"prior": {"scale": s, "max_length": n}``.

A second, optional prior is lexical: ``w * minmax(BM25)`` over the texts a ranker scores for
one query (the ``passage_bm25`` input LoG's global stage reads, :mod:`logrerank.lexical`),
added by the rankers (:func:`logrerank.baselines.cross_encoder.add_lexical`), since it needs
the pool. Its weight ``w`` is tuned on held-out TRAIN queries after training
(:mod:`logrerank.training.cross_encoder_lexical`) and recorded as ``"lexical": {"weight": w}``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

PRIOR_KEY = "prior"
"""Key of the prior's settings in a delta checkpoint's ``logrerank_delta.json``."""

LEXICAL_KEY = "lexical"
"""Key of the lexical prior's weight (and its tuning table) in ``logrerank_delta.json``."""


@dataclass
class PriorConfig:
    """How the prior enters the logit."""

    scale: float  # prior logit = scale * cosine (the bi-encoder's cosines as logits)
    max_length: int = 256  # word pieces per text when embedding (the bi-encoder's own cap)

    def to_dict(self) -> dict[str, Any]:
        return {"scale": float(self.scale), "max_length": int(self.max_length)}


def prior_from_meta(meta: dict[str, Any]) -> PriorConfig | None:
    """The prior settings of a delta checkpoint's description (None: no prior)."""
    raw = meta.get(PRIOR_KEY)
    try:
        if not isinstance(raw, dict) or float(raw.get("scale", 0) or 0) <= 0:
            return None
        return PriorConfig(float(raw["scale"]), int(raw.get("max_length", 256)))
    except (TypeError, ValueError):
        return None


def lexical_from_meta(meta: dict[str, Any]) -> float:
    """The lexical prior's weight in a delta checkpoint's description (0.0: none)."""
    try:
        return max(0.0, float((meta.get(LEXICAL_KEY) or {}).get("weight", 0.0)))
    except (TypeError, ValueError, AttributeError):
        return 0.0


def _meta(folder: str | Path) -> dict[str, Any]:
    from .cross_encoder_folder import read_json
    from .delta_checkpoint import DELTA_META

    return read_json(Path(folder) / DELTA_META)


def read_prior_config(folder: str | Path) -> PriorConfig | None:
    """The prior settings recorded in a delta checkpoint folder, or None (no prior)."""
    return prior_from_meta(_meta(folder))


def read_lexical_weight(folder: str | Path) -> float:
    """The lexical prior's weight recorded in a delta checkpoint folder (0.0: none)."""
    return lexical_from_meta(_meta(folder))


class BiEncoderPrior:
    """``scale * cos`` of bi-encoder embeddings for ``(query, text)`` pairs.

    Args:
        config: scale and embedding length.
        base: the encoder (``"packaged:all-MiniLM-L6-v2"`` or a folder).
        device: torch device.
        precision: autocast precision (``"auto"``, ``"bf16"``, ``"fp32"``).
    """

    def __init__(
        self, config: PriorConfig, base: str | None, device: Any = "cpu", precision: str = "auto"
    ):
        from ..backbone import resolve
        from .bi_encoder import BiEncoder

        self.config = config
        self.encoder = BiEncoder(
            resolve(base) if base else None,
            max_length=config.max_length,
            device=str(device),
            precision=precision,
        )

    @torch.inference_mode()
    def logits(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """One prior logit per pair; each distinct text is embedded once."""
        if not pairs:
            return []
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        index = {t: i for i, t in enumerate(texts)}
        emb = self.encoder.embed(texts)  # [T, d], unit norm
        q = emb[[index[a] for a, _ in pairs]]
        t = emb[[index[b] for _, b in pairs]]
        return (self.config.scale * (q * t).sum(-1)).tolist()
