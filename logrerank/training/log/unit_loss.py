"""Stage-1 loss of the cross-encoder twin: passage-level L_cal over passage units.

The twin (``LocalConfig.unit = "passage"``, :mod:`logrerank.local.units`) trains with LoG's
local recipe (the same data, negatives, frozen layers, joint layer and optimiser,
:func:`logrerank.training.log.local_stage.train_local`), but its nodes are passage units, which
have neither sentence labels nor roles. What is left of the recipe is L_cal at passage level,
as LoG uses it for Citation-Integrity: a listwise softmax over the sampled passages with the
cited passages as targets, a passage's logit being the ``logsumexp`` of its units' logits
(docs/method.md, "L_cal").

``logsumexp`` rather than ``max``: it is the pooling LoG's own L_cal uses, so the two models
differ only in their nodes, and every unit gets gradient. At inference a passage scores as its
best unit; ``logsumexp`` exceeds the max by at most ``log(units)`` (at 128 tokens a SciFact
abstract has 4 units at the median, a Citation-Integrity passage 2).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ...data.schema import Example
from ...local.tokenize import collate, tokenize
from ...local.units import passage_units, unit_inputs


def node_logits(model: Any, query: str, texts: list[list[str]], cache=None):
    """The local scorer on one query's sampled passages (``texts``: per passage its node texts):
    ``(LocalOutput, tokenized, logits [num_nodes] in document order)``."""
    c = model.config
    tok = tokenize(
        model.tokenizer,
        query,
        texts,
        c.backbone.max_length,
        c.backbone.max_query_tokens,
        isolated=c.local.isolated_layers > 0,
    )
    batch = collate(tok.windows, model.device_)
    if cache is not None:
        cache.fill(batch, tok.windows)
    out, _ = model.local(batch)
    logits = torch.empty(tok.num_nodes, device=out.logits.device)
    logits[out.nodes] = out.logits.float()
    return out, tok, logits


def passage_logits(logits: Tensor, group: Tensor, passages: int) -> Tensor:
    """``[passages]`` logsumexp of each passage's unit logits (``-inf`` for one without units).

    Args:
        logits: ``[M]`` unit logits.
        group: ``[M]`` passage index of each unit.
        passages: number of passages.
    """
    out = torch.full((passages,), float("-inf"), device=logits.device, dtype=logits.dtype)
    for p in range(passages):
        sel = logits[group == p]
        if sel.numel():
            out[p] = torch.logsumexp(sel, 0)
    return out


def unit_step_loss(model: Any, ex: Example, idx: list[int], mu: float, cache=None) -> Tensor | None:
    """Passage-level L_cal of one query on the sampled passages ``idx`` (module docstring).

    Args:
        model: a :class:`~logrerank.pipeline.LoGReranker` with ``local.unit = "passage"``.
        ex: the training query with its pool.
        idx: indices of the sampled candidates.
        mu: weight of L_cal (``TrainConfig.mu``).
        cache: the run's :class:`~logrerank.local.segment_cache.SegmentCache` (isolated mode), or None.

    Returns:
        The loss, or None when no sampled passage has text or none is cited.
    """
    c = model.config
    docs = [ex.candidates[i] for i in idx]
    gold = torch.tensor([d.doc_id in set(ex.gold_doc_ids) for d in docs])
    units = [
        passage_units(d, model.tokenizer, c.local.unit_tokens, c.local.unit_stride) for d in docs
    ]
    if not any(units) or not any(g and u for g, u in zip(gold.tolist(), units)):
        return None
    texts = [unit_inputs(d, model.tokenizer, u, c.local.unit_tokens) for d, u in zip(docs, units)]
    out, tok, logits = node_logits(model, ex.query, texts, cache)
    group = torch.tensor([p for p, u in enumerate(units) for _ in u], device=logits.device)
    plogit = passage_logits(logits, group, len(docs))
    has = torch.isfinite(plogit)
    target = (gold.to(logits.device) & has).float()
    target = target / target.sum()
    log_p = torch.log_softmax(plogit[has], 0)
    return mu * -(target[has] * log_p).sum()
