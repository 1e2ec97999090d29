"""Cache of the query-independent isolated-mode segment states (:class:`SegmentCache`)."""

from __future__ import annotations

from collections import OrderedDict

import torch

from .packing import first_fit_decreasing


class SegmentCache:
    """Isolated-mode cache: per ``[CLS] x [SEP]`` segment (keyed by its token ids), the frozen
    lower-layer states and the prior embedding (``LocalScorer.encode_segments``).

    They do not depend on the query or on the window (the PreTTR idea: precompute the
    query-independent layers of a passage once). Training keeps one cache per run, so every
    sentence goes through the frozen packaged layers once per run instead of once per step.
    Inference uses it two ways:

    * ``LoGReranker.segment_cache``: one cache per call, every segment encoded alone;
    * ``LoGReranker.passage_cache_mb``: one cache kept across calls, bounded in bytes with
      least-recently-used eviction. New passages run in the ordinary block-masked windows and
      their states are *harvested* (:meth:`harvest`); windows whose sentences are all cached skip
      the frozen layers and run only the query segment and the joint layer (:meth:`fill`).

    Cached and uncached forwards are equal up to float rounding (tested).

    Args:
        scorer: the local scorer whose frozen layers produce the states.
        chunk: segments per :meth:`LocalScorer.encode_segments` call.
        max_mb: bound on the stored tensors in MiB (None = unbounded, e.g. one training run).
    """

    def __init__(self, scorer, chunk: int = 64, max_mb: float | None = None):
        self.scorer, self.chunk, self.max_mb = scorer, chunk, max_mb
        self.store: OrderedDict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor]] = OrderedDict()
        self.nbytes = 0
        self.hits = self.misses = 0  # segments served from / added to the store

    @staticmethod
    def segments(windows) -> list[tuple[int, int, int, int]]:
        """``(window b, segment k, start, end)`` of every segment (k = 0 is the query)."""
        segs = []
        for b, w in enumerate(windows):
            start = 0
            for i in range(1, len(w.span_ids) + 1):
                if i == len(w.span_ids) or w.span_ids[i] != w.span_ids[start]:
                    segs.append((b, w.span_ids[start], start, i))
                    start = i
        return segs

    def covers(self, window) -> bool:
        """True if every sentence segment of ``window`` is stored (the query may be new)."""
        return all(
            k == 0 or tuple(window.input_ids[a:e]) in self.store
            for _, k, a, e in self.segments([window])
        )

    def _put(self, key: tuple[int, ...], x: torch.Tensor, e: torch.Tensor) -> None:
        if key in self.store:
            return
        self.store[key] = (x, e)
        self.nbytes += x.numel() * x.element_size() + e.numel() * e.element_size()
        self.misses += 1

    def _shrink(self) -> None:
        """Evict least recently used entries until the store is within ``max_mb``."""
        if self.max_mb is None:
            return
        while self.store and self.nbytes > self.max_mb * 2**20:
            _, (x, e) = self.store.popitem(last=False)
            self.nbytes -= x.numel() * x.element_size() + e.numel() * e.element_size()

    def clear(self) -> None:
        self.store.clear()
        self.nbytes = 0

    def prefill(self, windows, width: int, rows: int, long_tokens: int) -> None:
        """Compute every segment of ``windows`` not yet stored, packed across the whole call.

        The distinct new segments are packed into rows of ``width`` tokens by
        :func:`~logrerank.local.packing.first_fit_decreasing` over all of them at once, and run
        ``rows`` rows per :meth:`LocalScorer.encode_segments` call, so only the last call has a
        partly empty row count; packing batch by batch left about a quarter of the slots empty
        (bench/README.md). Segments longer than ``width`` run in calls of at most
        ``long_tokens`` padded tokens. Nothing is evicted here (``max_mb`` applies on the next
        :meth:`fill`).

        Args:
            windows: the call's windows (:class:`logrerank.local.tokenize.Window`).
            width: tokens per packed row (``LocalConfig.pack_length``).
            rows: packed rows per call of the frozen layers.
            long_tokens: padded tokens per call for the segments longer than ``width``.
        """
        keys = {tuple(windows[b].input_ids[a:e]) for b, _, a, e in self.segments(windows)}
        todo = sorted((k for k in keys if k not in self.store), key=len, reverse=True)
        long = [k for k in todo if len(k) > width]
        short = [k for k in todo if len(k) <= width]
        packed = first_fit_decreasing([len(k) for k in short], width)
        parts = [
            [short[i] for members in packed[r : r + rows] for i in members]
            for r in range(0, len(packed), rows)
        ]
        i = 0
        while i < len(long):  # longest first: each call as wide as its first segment
            n = max(1, long_tokens // len(long[i]))
            parts.append(long[i : i + n])
            i += n
        for part in parts:
            for k, v in zip(part, self.scorer.encode_segments([list(t) for t in part])):
                self._put(k, v[0].detach().clone(), v[1].detach().clone())

    def fill(self, batch: dict[str, torch.Tensor], windows) -> None:
        """Add ``batch["lower"]`` [B, L, d] and ``batch["prior_emb"]`` [W + M, d] in place."""
        segs = self.segments(windows)
        keys = [tuple(windows[b].input_ids[a:e]) for b, _, a, e in segs]
        todo = sorted({k for k in keys if k not in self.store}, key=len)
        for i in range(0, len(todo), self.chunk):
            part = todo[i : i + self.chunk]
            for k, v in zip(part, self.scorer.encode_segments([list(t) for t in part])):
                self._put(k, v[0].detach().clone(), v[1].detach().clone())
        entries = {}
        for k in keys:
            entries[k] = self.store[k]
            self.store.move_to_end(k)  # most recently used
        self.hits += len(keys) - len(todo)
        B, L = batch["input_ids"].shape
        first = entries[keys[0]][0]
        lower = torch.zeros(B, L, first.size(-1), dtype=first.dtype, device=first.device)
        prior = torch.zeros(B + batch["nodes"].numel(), first.size(-1), device=first.device)
        offset = B
        for (b, k, a, e), key in zip(segs, keys):
            x, emb = entries[key]
            lower[b, a:e] = x
            prior[b if k == 0 else offset + k - 1] = emb
            if k == len(windows[b].nodes):
                offset += k
        batch["lower"], batch["prior_emb"] = lower, prior
        self._shrink()

    def harvest(self, windows, lower: torch.Tensor, prior_emb: torch.Tensor) -> None:
        """Store the segments of a batch computed the ordinary way.

        Args:
            windows: the batch's windows, in batch order.
            lower: ``[B, L, d]`` states after the isolated layers (``LocalOutput.lower``).
            prior_emb: ``[W + M, d]`` span embeddings (``LocalOutput.prior_emb``).
        """
        offset = len(windows)
        for b, k, a, e in self.segments(windows):
            key = tuple(windows[b].input_ids[a:e])
            if key not in self.store:
                row = b if k == 0 else offset + k - 1
                self._put(
                    key,
                    lower[b, a:e].detach().float().clone(),
                    prior_emb[row].detach().float().clone(),
                )
            else:
                self.store.move_to_end(key)
            if k == len(windows[b].nodes):
                offset += k
        self._shrink()
