"""The timed calls of the speed benchmark: model loading, one LoG, cross-encoder or BM25 call.

Each ``run_*`` function times one ranking of one pool and returns a row of seconds (and token
counts); ``measure`` in ``bench/speed.py`` interleaves them over the pools.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator
from typing import Any

from peak_memory import Memory
from speed_report import GRAPH_STAGES, LOG_STAGES


def _sync(device: Any) -> None:
    """Wait for queued CUDA work (timings end when the device is done)."""
    if getattr(device, "type", str(device)).startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def load_models(
    checkpoint: str | None = None,
    cross_encoder: str | None = None,
    device: str = "auto",
    precision: str = "auto",
    quantize: str = "none",
    mem: Memory | None = None,
    which: tuple[str, ...] = ("log", "ce"),
    runtime: str = "torch",
) -> dict[str, Any]:
    """Load LoG and/or the cross-encoder, timed (what the app pays at start-up).

    ``runtime`` (:mod:`logrerank.runtime`) applies to both; its first-use export, when the
    graphs were not in the cache yet, is part of the load time.

    Returns:
        ``{"log": model, "ce": CrossEncoder, "load_s": {...}, "quantize": {...}}``.
    """
    from logrerank.local.backbone import pick_device

    mem = mem or Memory()
    dev = pick_device(device)
    if quantize == "int8":
        if dev.type != "cpu":
            from logrerank.types import InputError

            raise InputError("--quantize int8 runs on CPU only: pass --device cpu")
        precision = "fp32"  # quantised kernels take float32 activations
    out: dict[str, Any] = {"load_s": {}, "quantize": {}}
    if "log" in which:
        from logrerank.pipeline import LoGReranker

        with mem.phase("load_log"):
            t0 = time.perf_counter()
            model = LoGReranker.from_pretrained(
                checkpoint, device=device, precision=precision, runtime=runtime
            )
            _sync(model.device_)
            out["load_s"]["log"] = time.perf_counter() - t0
            if quantize == "int8":
                from logrerank.local.quantize import quantize_log_reranker

                t0 = time.perf_counter()
                out["quantize"]["log"] = quantize_log_reranker(model)
                out["load_s"]["log_quantize"] = time.perf_counter() - t0
        out["log"] = model
    if "ce" in which:
        from logrerank.models.cross_encoder import CrossEncoder

        with mem.phase("load_ce"):
            t0 = time.perf_counter()
            ce = CrossEncoder(cross_encoder, device=device, precision=precision, runtime=runtime)
            _sync(ce.device)
            out["load_s"]["cross_encoder"] = time.perf_counter() - t0
            if quantize == "int8":
                from logrerank.local.quantize import quantize_cross_encoder

                t0 = time.perf_counter()
                out["quantize"]["cross_encoder"] = quantize_cross_encoder(ce)
                out["load_s"]["cross_encoder_quantize"] = time.perf_counter() - t0
        out["ce"] = ce
    return out


def clear_memos(*objs: Any) -> None:
    """Drop any score memo so that a repeated input is never free (``MemoCrossEncoder``'s
    ``_memo``, an ``lru_cache``'d ``predict``, ``rankers.Models``' encoding cache)."""
    for obj in objs:
        memo = getattr(obj, "_memo", None)
        if isinstance(memo, dict):
            memo.clear()
        for name in ("predict", "encode"):
            fn = getattr(obj, name, None)
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()
        if hasattr(obj, "cache_key"):
            obj.cache_key, obj.cache_value = None, None


def knob_graph(model: Any, i: int) -> Any:
    """A changed graph setting for query ``i`` (what a τ_sim slider move sends)."""
    g = model.config.graph
    taus = (0.6, 0.7, 0.8, 0.9)
    tau = taus[i % len(taus)]
    if abs(tau - g.tau_sim) < 1e-9:
        tau = taus[(i + 1) % len(taus)]
    return dataclasses.replace(g, tau_sim=tau)


# --------------------------------------------------------------------------------------
# The measured loop


def log_tokens(model: Any, enc: Any) -> dict[str, int]:
    """Tokens LoG's encoder reads for ``enc`` (real and padded as batched), recomputed untimed
    with the same settings as :meth:`~logrerank.pipeline.LoGReranker.encode`."""
    from logrerank.local.tokenize import batches, tokenize

    cfg = model.config
    per_passage: list[list[str]] = [[] for _ in enc.passages]
    for s in enc.sentences:
        per_passage[s.passage_idx].append(s.text)
    tok = tokenize(
        model.tokenizer,
        enc.query,
        per_passage,
        min(cfg.backbone.max_length, model._max_positions()),
        cfg.backbone.max_query_tokens,
        isolated=cfg.local.isolated_layers > 0,
    )
    lengths = [len(w.input_ids) for w in tok.windows]
    groups = batches(tok.windows, cfg.local.batch_tokens, cfg.local.max_batch_windows)
    padded = sum(len(g) * max(lengths[i] for i in g) for g in groups)
    return {"windows": len(lengths), "tokens": sum(lengths), "padded_tokens": padded}


def ce_tokens(
    ce: Any, query: str, passages: list[Any], max_chars: int, full: bool = False
) -> dict[str, int]:
    """Tokens the cross-encoder reads for the passage pairs (real and padded as batched);
    ``full``: the windows of the whole passages (the ``cross-encoder-full`` ranker)."""
    from logrerank.inputs.passages import normalize_passages
    from logrerank.models.cross_encoder import pair_text
    from logrerank.models.pair_windows import full_pair_texts

    plist = normalize_passages(passages)
    if full:
        texts = [t for p in plist for t in full_pair_texts(ce.tokenizer, query, p, ce.max_length)]
    else:
        texts = [pair_text(p, max_chars) for p in plist]
    enc = ce.tokenizer(
        [query] * len(texts), texts, truncation="longest_first", max_length=ce.max_length
    )
    lengths = sorted(len(x) for x in enc["input_ids"])
    b = ce.batch_size
    padded = sum(
        len(lengths[i : i + b]) * lengths[i : i + b][-1] for i in range(0, len(lengths), b)
    )
    return {"pairs": len(lengths), "tokens": sum(lengths), "padded_tokens": padded}


def run_log(
    model: Any, query: str, passages: list[Any], i: int = 0, prefill: bool = False
) -> dict[str, Any]:
    """One LoG rerank (encode + rank_encoded) timed end to end and per stage, then a knob change.

    ``prefill``: first (untimed) empty the passage cache and put this pool's passages in it.
    Otherwise the call starts cold: the sentence-split memo is emptied first (pools share
    passages, and a memo hit would time a lookup instead of segmentation).
    """
    from logrerank.text.segment import clear_cache

    clear_cache()
    if prefill:
        model.clear_passage_cache()
        model.cache_passages(passages)
    t0 = time.perf_counter()
    enc = model.encode(query, passages)
    ranking = model.rank_encoded(enc)
    _sync(model.device_)
    e2e = time.perf_counter() - t0
    t = ranking.timings
    row = {"e2e": e2e, **{k: float(t.get(k, 0.0)) for k in LOG_STAGES if k != "overhead"}}
    row["overhead"] = max(0.0, e2e - sum(row[k] for k in LOG_STAGES if k != "overhead"))
    row["graph_stages"] = sum(row[k] for k in GRAPH_STAGES)
    t0 = time.perf_counter()
    model.rank_encoded(enc, graph=knob_graph(model, i))
    _sync(model.device_)
    row["knob"] = time.perf_counter() - t0
    row["sentences"] = len(enc.sentences)
    row["passages"] = len(enc.passages)
    row["edges"] = int(sum(ranking.info.get("edge_counts", {}).values()))
    row.update(log_tokens(model, enc))
    row["warnings"] = [w for w in ranking.warnings if not w.startswith("model is untrained")]
    return row


@contextlib.contextmanager
def timed_method(obj: Any, name: str, clock: list[float]) -> Iterator[None]:
    """Add the seconds spent in ``obj.name(...)`` to ``clock[0]`` while the block runs.

    The method is wrapped on the instance and restored afterwards; ``obj`` None times nothing.
    """
    if obj is None:
        yield
        return
    own = name in vars(obj)
    orig = getattr(obj, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return orig(*args, **kwargs)
        finally:
            clock[0] += time.perf_counter() - t0

    setattr(obj, name, timed)
    try:
        yield
    finally:
        if own:
            setattr(obj, name, orig)
        else:
            delattr(obj, name)


def run_ce(ranker: Any, query: str, passages: list[Any]) -> dict[str, Any]:
    """One cross-encoder ranking (truncated or full-text passages), timed end to end (model
    time separately, and within it the bi-encoder prior pass of a prior-anchored model:
    ``prior``, 0 for a plain cross-encoder)."""
    clear_memos(ranker.model)
    prior = [0.0]
    with timed_method(getattr(ranker.model, "prior", None), "logits", prior):
        t0 = time.perf_counter()
        r = ranker.rank(query, passages)
        _sync(ranker.model.device)
        e2e = time.perf_counter() - t0
    row = {"e2e": e2e, "model": float(r.timings.get("cross_encoder", 0.0)), "prior": prior[0]}
    full = ranker.level == "full"
    row.update(ce_tokens(ranker.model, query, passages, ranker.max_chars, full))
    return row


def run_bm25(ranker: Any, query: str, passages: list[Any]) -> dict[str, Any]:
    """One BM25 ranking of the passages, timed end to end."""
    t0 = time.perf_counter()
    ranker.rank(query, passages)
    return {"e2e": time.perf_counter() - t0}
