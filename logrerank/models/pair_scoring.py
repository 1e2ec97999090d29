"""Batched scoring of ``(query, text)`` pairs with a sequence classifier (one logit each).

What cross-encoder training feeds its model (:func:`encode_pairs`) and how it scores held-out
pools (:func:`score_pairs`); the :class:`~logrerank.models.cross_encoder.CrossEncoder` wrapper
has its own batching with memory trimming for serving.
"""

from __future__ import annotations

from typing import Any

import torch

from ..local.backbone import autocast, autocast_dtype


def encode_pairs(
    tokenizer: Any, queries: list[str], texts: list[str], max_length: int, device: torch.device
) -> dict[str, torch.Tensor]:
    """Tokenise ``(query, text)`` pairs, cut ``longest_first`` and padded, on ``device``."""
    enc = tokenizer(
        queries,
        texts,
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )
    return {k: v.to(device) for k, v in enc.items()}


@torch.inference_mode()
def score_pairs(
    model: torch.nn.Module,
    tokenizer: Any,
    query: str,
    texts: list[str],
    max_length: int,
    bf16: bool,
    batch_size: int = 32,
) -> list[float]:
    """Logits of ``(query, text)`` pairs (length-sorted batches, input order returned)."""
    device = next(model.parameters()).device
    lengths = [len(t) for t in texts]
    order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
    out = [0.0] * len(texts)
    for b in range(0, len(order), batch_size):
        idx = order[b : b + batch_size]
        enc = encode_pairs(
            tokenizer, [query] * len(idx), [texts[i] for i in idx], max_length, device
        )
        with autocast(device, autocast_dtype(device, "auto" if bf16 else "fp32")):
            logits = model(**enc).logits
        for i, v in zip(idx, logits.float().reshape(len(idx), -1)[:, 0].tolist()):
            out[i] = float(v)
    return out
