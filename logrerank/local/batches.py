"""Inference of the local stage over every window of one call (the LoG-Reranker paper, eqs. 1-6).

The windows are grouped into length-bucketed batches (:func:`logrerank.local.tokenize.batches`), each
batch runs through the :class:`~logrerank.local.scorer.LocalScorer`, and the per-sentence outputs are
gathered into node order. In isolated mode the query-independent lower layers may come from a
:class:`~logrerank.local.segment_cache.SegmentCache`: one per call, or one kept across calls. With
packed rows (``LocalConfig.pack_length``) every new segment of the call is first computed into
it, packed over the whole call (:meth:`SegmentCache.prefill`), and every window then skips the
frozen layers; without, the kept cache's fully cached windows run as separate batches that skip
them while the other windows' states are harvested into it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

from ..config import LocalConfig
from .memory import HeapBudget
from .scorer import LocalScorer
from .segment_cache import SegmentCache
from .tokenize import Tokenized, batches, collate


def params_key(module: nn.Module) -> tuple:
    """Identity and in-place version of every parameter: changes when any is replaced or
    updated (training, ``load_state_dict``, quantisation), so derived caches can be rebuilt."""
    params = list(module.parameters())
    return (len(params), *((id(p), p._version) for p in params))


def bf16_linear_copy(scorer: LocalScorer) -> LocalScorer:
    """An eval-mode copy of ``scorer`` whose ``nn.Linear`` layers hold bf16 weights (under bf16
    autocast: the same logits, without re-casting every fp32 weight on every batch)."""
    with torch.inference_mode(False), torch.no_grad():
        twin = copy.deepcopy(scorer)
    for m in twin.modules():
        if isinstance(m, nn.Linear):
            m.to(torch.bfloat16)
    twin.eval()
    return twin


@dataclass
class LocalCaches:
    """What a :class:`~logrerank.pipeline.LoGReranker` derives from its local scorer and keeps
    between calls (its ``caches`` field). A plain attribute, not a submodule: never in
    ``state_dict``, a checkpoint or ``.to()``. Each entry is keyed by :func:`params_key` of the
    module it derives from and rebuilt when that changes.

    Attributes:
        passages: ``(encoder key, cache)`` of the cross-call passage cache
            (``LoGReranker.passage_cache_mb``), None while off.
        bf16_twin: ``(scorer key, copy)`` of the bf16-Linear scorer (``LoGReranker.bf16_weights``;
            :func:`bf16_linear_copy`), None until first used.
        runtime: the transformer runtime the scorer runs on, a
            :class:`~logrerank.runtime.local_runtime.RuntimeState` (set by
            :func:`~logrerank.runtime.local_runtime.sync_local_runtime`), None before the
            first call.
    """

    passages: tuple[Any, SegmentCache] | None = None
    bf16_twin: tuple[Any, LocalScorer] | None = None
    runtime: Any = None


@dataclass
class LocalStates:
    """The local scorer's outputs for every sentence (node order) and passage of one call."""

    h: Tensor  # [N, d] float32 contextual sentence vectors
    role_logits: Tensor  # [N, 3]
    logits: Tensor  # [N] local logits
    prior: Tensor | None  # [N] bi-encoder prior part of the logits (isolated mode), else None
    intent_by_passage: Tensor  # [P, 3] mean intent probabilities over a passage's windows
    cached_windows: tuple[int, int]  # windows served by the cross-call cache / all windows


def run_local(
    scorer: LocalScorer,
    tokenized: Tokenized,
    num_passages: int,
    config: LocalConfig,
    device: torch.device,
    max_len: int,
    autocast: Callable[[], AbstractContextManager],
    cache: SegmentCache | None,
    kept: SegmentCache | None,
    budget: HeapBudget,
) -> LocalStates:
    """Score every window of one call in batches.

    Args:
        scorer: the local scorer (or its inference copy).
        tokenized: the call's windows and sentence count (:func:`logrerank.local.tokenize.tokenize`).
        num_passages: passages of the call.
        config: batching settings (``batch_tokens``, ``max_batch_windows``, ``pad_multiple``,
            ``isolated_layers``).
        device: where the batches run.
        max_len: the window length (bounds ``pad_multiple`` rounding).
        autocast: returns the precision context each forward pass runs under.
        cache: a per-call segment cache (isolated mode), or None.
        kept: the cross-call passage cache (isolated mode), or None.
        budget: checked after every batch (bounded heap growth on large inputs).
    """
    windows, n, d = tokenized.windows, tokenized.num_nodes, scorer.hidden_size
    h = torch.zeros(n, d)
    role_logits = torch.zeros(n, 3)
    logits = torch.zeros(n)
    prior = torch.zeros(n) if config.isolated_layers else None
    P = num_passages
    intent_sum, intent_cnt = torch.zeros(P, 3), torch.zeros(P)
    cached_windows = (0, 0)
    if kept is not None:  # windows whose sentences were all cached before this call
        warm = [i for i, w in enumerate(windows) if kept.covers(w)]
        cached_windows = (len(warm), len(windows))
    store = cache if cache is not None else kept
    if store is not None and config.pack_length:  # every new segment of the call, packed once
        with autocast():
            store.prefill(
                windows,
                config.pack_length,
                rows=max(1, config.batch_tokens // config.pack_length),
                long_tokens=config.batch_tokens,
            )
        budget.check()
        warm = list(range(len(windows)))  # every window now skips the frozen layers
    plan = [
        (group, False) for group in batches(windows, config.batch_tokens, config.max_batch_windows)
    ]
    if kept is not None:  # fully cached windows skip the frozen layers; the others harvest
        cold = sorted(set(range(len(windows))) - set(warm))
        plan = [
            ([ids[i] for i in group], is_warm)
            for ids, is_warm in ((cold, False), (warm, True))
            if ids
            for group in batches(
                [windows[i] for i in ids], config.batch_tokens, config.max_batch_windows
            )
        ]
    for group, is_warm in plan:
        wins = [windows[i] for i in group]
        batch = collate(wins, device, config.pad_multiple, max_len)
        if kept is not None and not is_warm:
            batch["keep_lower"] = torch.ones(())
        with autocast():
            if cache is not None:
                cache.fill(batch, wins)
            elif is_warm:
                kept.fill(batch, wins)
            out, _ = scorer(batch)
        if kept is not None and not is_warm:
            kept.harvest(wins, out.lower, out.prior_emb)
        nodes = out.nodes.cpu()
        h[nodes] = out.h_s.float().cpu()
        role_logits[nodes] = out.role_logits.float().cpu()
        logits[nodes] = out.logits.float().cpu()
        if prior is not None and out.prior is not None:
            prior[nodes] = out.prior.float().cpu()
        pidx = torch.tensor([w.passage_idx for w in wins])
        intent_sum.index_add_(0, pidx, out.intent_logits.float().softmax(-1).cpu())
        intent_cnt.index_add_(0, pidx, torch.ones(len(wins)))
        del out, batch
        budget.check()  # bounded growth on large inputs
    intent = intent_sum / intent_cnt.clamp_min(1)[:, None]
    return LocalStates(h, role_logits, logits, prior, intent, cached_windows)
