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
one query (the ``passage_bm25`` input LoG's global stage reads, :mod:`logrerank.text.lexical`),
added by the rankers (:func:`logrerank.baselines.cross_encoder_ranker.add_lexical`), since it needs
the pool. Its weight ``w`` is tuned on held-out TRAIN queries after training
(:mod:`logrerank.training.cross_encoder.lexical_prior`) and recorded as ``"lexical": {"weight": w}``.

The priors put a prior-anchored model's logits around 10-20, where a plain sigmoid reads 1.000
for every candidate. The same tuning run therefore fits a Platt calibration
``P(relevant) = sigmoid(a * logit + b)`` (:func:`fit_platt`) on the held-out logits, recorded as
``"calibration": {"a": a, "b": b}``; the rankers report that probability as the score. It is
monotone (``a > 0``), so no ordering changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

PRIOR_KEY = "prior"
"""Key of the prior's settings in a delta checkpoint's ``logrerank_delta.json``."""

LEXICAL_KEY = "lexical"
"""Key of the lexical prior's weight (and its tuning table) in ``logrerank_delta.json``."""

CALIBRATION_KEY = "calibration"
"""Key of the score calibration ``{"a", "b"}`` (Platt scaling) in ``logrerank_delta.json``."""


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


def calibration_from_meta(meta: dict[str, Any]) -> tuple[float, float]:
    """``(a, b)`` of the score calibration ``sigmoid(a * logit + b)``; ``(1, 0)`` when absent.

    A malformed entry, or one with ``a <= 0`` (which would reverse the order), reads as absent.
    """
    try:
        raw = meta.get(CALIBRATION_KEY) or {}
        a, b = float(raw.get("a", 1.0)), float(raw.get("b", 0.0))
    except (TypeError, ValueError, AttributeError):
        return 1.0, 0.0
    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0:
        return 1.0, 0.0
    return a, b


def fit_platt(
    logits: Sequence[float], labels: Sequence[int], l2: float = 1e-3, iters: int = 50
) -> tuple[float, float]:
    """Platt scaling: ``(a, b)`` minimising the mean log loss of ``sigmoid(a * x + b)``.

    Minimises ``L(a, b) = -1/n sum_i [y_i log p_i + (1 - y_i) log(1 - p_i)] + l2 / 2 * a^2``
    with ``p_i = sigmoid(a * x_i + b)`` by Newton's method (gradient
    ``g = 1/n X^T (p - y) + [l2 a, 0]``, Hessian ``H = 1/n X^T diag(p (1 - p)) X + diag(l2, 0)``,
    ``X = [x, 1]``); the small ridge on ``a`` keeps separable data finite. The logits are
    standardised first and the fit mapped back, so any logit scale converges.

    Raises:
        ValueError: fewer than two points, different lengths, or only one class.
    """
    x = np.asarray(logits, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if x.shape != y.shape or x.size < 2:
        raise ValueError("fit_platt needs two or more (logit, label) pairs of equal length")
    if y.min() == y.max():
        raise ValueError("fit_platt needs both positive and negative labels")
    mu, sd = float(x.mean()), float(x.std()) or 1.0
    X = np.stack([(x - mu) / sd, np.ones_like(x)], axis=1)  # [n, 2]
    w = np.zeros(2)
    ridge = np.array([l2, 0.0])
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        g = X.T @ (p - y) / x.size + ridge * w
        H = (X * (p * (1 - p))[:, None]).T @ X / x.size + np.diag(ridge) + 1e-9 * np.eye(2)
        step = np.linalg.solve(H, g)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    a = w[0] / sd
    return float(a), float(w[1] - a * mu)


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
        from ..local.backbone import resolve
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
