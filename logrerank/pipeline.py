"""LoGReranker: the only place where the stages meet (segment -> local -> graph -> global ->
context). No I/O beyond loading/saving checkpoints, no UI.

Two steps, so that knob changes do not re-run the transformer:

* :meth:`LoGReranker.encode` segments, tokenises and runs the local scorer once, returning an
  :class:`Encoded` (sentence vectors, roles, intents, local logits) that can be cached;
* :meth:`LoGReranker.rank_encoded` builds the graph, runs the GAT and the context under any
  graph/context settings and ablation switches.

:meth:`LoGReranker.rerank` does both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from . import log_checkpoint as ckpt
from .config import ContextConfig, GraphConfig, LoGConfig
from .graph.global_model import GlobalReranker
from .graph.inputs import global_scores, graph_inputs
from .graph.links import annotate_edges
from .graph.sentence_graph import PAPER_RELATIONS
from .inputs.limits import DEFAULT_LIMITS, Limits
from .inputs.passages import prepare_input
from .local import backbone as bb
from .local.batches import LocalCaches, bf16_linear_copy, params_key, run_local
from .local.memory import TRIM_BUDGET_MB, HeapBudget, trim_heap
from .local.scorer import LocalScorer
from .local.segment_cache import SegmentCache
from .local.tokenize import tokenize
from .local.units import scoring_units
from .ranking.context import build_context
from .ranking.passage_head import PassageHead
from .ranking.results import (
    Encoded,
    build_ranking,
    call_info,
    final_logits,
    graph_edges,
    passage_logits,
    unscored_sentences,
)
from .ranking.selection import selected_sentences, selection_active
from .runtime.local_runtime import sync_local_runtime
from .types import InputError, Ranking

ABLATIONS: dict[str, dict[str, bool]] = {
    "log": {},
    "log-local": {"use_global": False},  # local only, no graph
    "log-nocross": {"cross_passage": False},  # no cross-passage similarity edges
    "log-untyped": {"typed": False},  # all edges one relation
    "log-nolinks": {"links": False},  # no mention / mentioned-by / shared-term edges
    "log-nolex": {"lexical": False},  # lexical node inputs zeroed (graph_inputs)
    "log-maxsent": {"passage_head": False},  # passages ranked by their best sentence
}
"""Registry names of LoG and its ablations -> keyword switches of :meth:`LoGReranker.rerank`."""


class LoGReranker(nn.Module):
    """Local-to-global sentence-level graph reranker.

    Args:
        config: the full configuration (defaults = the paper's settings).
        encoder: an already loaded backbone (loaded from ``config.backbone`` when None).
        tokenizer: its tokenizer (loaded when None).
    """

    limits: Limits = DEFAULT_LIMITS
    """Input limits applied by :meth:`encode` (assign ``model.limits = Limits(...)`` to change)."""

    trim_memory: bool = True
    """``malloc_trim`` after each :meth:`encode` and after a batch once the call grew more than
    :attr:`trim_budget_mb` (:mod:`logrerank.local.memory`): flat resident memory in a long-running
    process, a bounded peak per call (no-op off glibc)."""

    bf16_weights: bool = False
    """Under bf16 autocast, infer with a copy of the local scorer whose ``nn.Linear`` weights are
    cast to bf16 once (autocast re-casts them every batch); bit-identical logits (tested), rebuilt
    when a parameter of :attr:`local` changes. Off by default: little time saved for more peak
    memory (bench/README.md)."""

    trim_budget_mb: float = TRIM_BUDGET_MB
    """Growth of the resident memory within one :meth:`encode` above which the heap is trimmed
    after a batch (a 50-passage call stays under it and pays nothing)."""

    segment_cache: bool = True
    """Isolated mode: run the frozen lower layers once per distinct ``[CLS] x [SEP]`` segment of
    a call into a per-call :class:`~logrerank.local.segment_cache.SegmentCache`. With packed rows
    (``local.pack_length`` > 0, the default) the segments are packed over the whole call
    (:meth:`~logrerank.local.segment_cache.SegmentCache.prefill`): on 50-passage SciFact pools 95 % of
    the row slots are real tokens against 83 % batch by batch, and the local stage is about 7 %
    faster (bench/README.md). False: each window batch packs its own segments. With
    ``pack_length`` 0 each segment runs padded alone (slower than the block-masked windows).
    Same scores either way, up to float rounding (tested)."""

    passage_cache_mb: float = 0.0
    """Isolated mode: keep the query-independent states of passages already seen (their
    sentences after the frozen lower layers, and their prior embeddings) across calls, up to this
    many MiB, least recently used evicted first (:class:`~logrerank.local.segment_cache.SegmentCache`).
    A new question over passages already in the cache then runs only the query and the joint
    layer; new passages cost what they cost without the cache. About 1.5 KiB per token in fp32
    (pool sizes in bench/README.md). Scores equal the uncached ones up to float rounding, so a
    cached call may differ from a cold one in the last digits. 0 = off (the
    default, so that equal inputs give bit-equal scores); the app turns it on."""

    def __init__(self, config: LoGConfig | None = None, encoder=None, tokenizer=None):
        super().__init__()
        self.config = (config or LoGConfig()).validate()
        encoder = (
            encoder if encoder is not None else bb.load_encoder(self.config.backbone.name_or_path)
        )
        self.tokenizer = tokenizer or bb.load_tokenizer(self.config.backbone.name_or_path)
        self.local = LocalScorer(encoder, self.config.local)
        # one global stage for every pool (its learned gate, global.pool_gate, weighs the graph)
        self.global_model = GlobalReranker(self.local.hidden_size, self.config.global_)
        pc = self.config.passage  # learned passage score (logrerank/ranking/passage_head.py)
        self.passage_head = (
            PassageHead(self.local.hidden_size, pc.hidden, pc.proj_dim, pc.dropout)
            if pc.hidden
            else None
        )
        self.source = "untrained initialisation (seeded)"  # replaced by from_pretrained
        self.device_ = bb.pick_device(self.config.device)
        self.autocast_dtype = bb.autocast_dtype(self.device_, self.config.precision)
        self.caches = LocalCaches()  # derived state kept between calls; not saved
        self.to(self.device_)
        self.eval()

    # ------------------------------------------------------------------ loading / saving
    @classmethod
    def untrained(cls, config: LoGConfig | None = None, seed: int = 13) -> LoGReranker:
        """A deterministic, explicitly untrained initialisation (heads seeded, backbone packaged)."""
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = cls(config)
        model.source = f"UNTRAINED initialisation (seed {seed}): scores are not meaningful"
        return model

    @classmethod
    def from_pretrained(cls, path: str | Path | None = None, **overrides: Any) -> LoGReranker:
        """Load a checkpoint folder (safetensors + config.json).

        Args:
            path: checkpoint folder; None = the bundled default (``logrerank/checkpoints/``),
                or, while none exists, an explicitly labelled untrained initialisation.
            **overrides: top-level config fields to override (e.g. ``device="cpu"``).

        Raises:
            CheckpointError: missing, truncated or mismatched files.
        """
        if path is None:
            path = ckpt.default_checkpoint_dir()
            if not ckpt.has_checkpoint(path):
                config = LoGConfig(**overrides) if overrides else None
                return cls.untrained(config)
        path = Path(path)
        config = ckpt.read_log_config(path, **overrides)
        state = ckpt.read_weights(path)
        model = cls(config)
        ckpt.check_state(model.state_dict(), state, path)
        model.load_state_dict(state, strict=False)
        model.source = str(path)
        if model.config.runtime != "torch":
            sync_local_runtime(model)  # export / load the ONNX graphs now, not on the first call
        return model

    def save_pretrained(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Save heads, graph model and only those backbone tensors that differ from the base.

        Args:
            path: output folder (created).
            extra: extra JSON-serialisable facts for config.json (training run, metrics).
        """
        base = bb.load_encoder(self.config.backbone.name_or_path).state_dict()
        state, config = self.state_dict(), self.config.to_dict()
        return ckpt.write_checkpoint(Path(path), state, base, config, extra)

    # ------------------------------------------------------------------ inference
    def _autocast(self):
        """The precision context every forward pass runs under (``config.precision``; float32
        while an ONNX runtime runs the transformer layers)."""
        if self.autocast_dtype is None or self.local.active_runtime() is not None:
            return contextlib.nullcontext()
        return torch.autocast(self.device_.type, dtype=self.autocast_dtype)

    @torch.inference_mode()
    def encode(self, query: str, passages: Any) -> Encoded:
        """Segment, tokenise and run the local scorer (eqs. 1-6) once.

        Input is validated and cut to ``self.limits`` (:mod:`logrerank.inputs.limits`); every cut,
        dropped passage, replaced control character or duplicate becomes a warning.

        Raises:
            InputError: empty query, no passages, no passage with any text, or (strict limits)
                input over a limit.
        """
        query, plist, warnings = prepare_input(query, passages, self.limits)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        spans, unit_texts = scoring_units(plist, self.config.local, self.tokenizer)  # nodes
        empty = [i + 1 for i, s in enumerate(spans) if not s]
        if len(empty) == len(plist):
            raise InputError("every passage is empty: paste passages with text")
        if empty:
            warnings.append(f"passage(s) {empty} have no text; they rank last")
        sentences, passage_of = unscored_sentences(spans)
        timings["segment"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        cfg = self.config
        max_len = min(cfg.backbone.max_length, self._max_positions())
        tok = tokenize(
            self.tokenizer,
            query,
            unit_texts,
            max_len,
            cfg.backbone.max_query_tokens,
            isolated=cfg.local.isolated_layers > 0,
        )
        if tok.query_truncated:
            warnings.append(
                f"the question is longer than {cfg.backbone.max_query_tokens} tokens; it was cut"
            )
        for n in tok.truncated_nodes:
            sentences[n].truncated = True
        if tok.truncated_nodes:
            warnings.append(
                f"{len(tok.truncated_nodes)} sentence(s) longer than one window were cut for scoring "
                "(their full text is kept in the result)"
            )
        timings["tokenize"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        runtime = sync_local_runtime(self)  # config.runtime: torch or the ONNX sessions
        if runtime.warning:
            warnings.append(runtime.warning)
        scorer = self._inference_scorer()
        kept = self._passage_cache(scorer)  # across calls (passage_cache_mb)
        # isolated mode: the query-independent lower layers run once per distinct segment (into
        # the cross-call cache when there is one)
        iso = cfg.local.isolated_layers and self.segment_cache and kept is None
        cache = SegmentCache(scorer) if iso else None
        states = run_local(
            scorer,
            tok,
            len(plist),
            cfg.local,
            self.device_,
            max_len,
            self._autocast,
            cache,
            kept,
            HeapBudget(self.trim_budget_mb, enabled=self.trim_memory),
        )
        timings["local"] = time.perf_counter() - t0
        if self.trim_memory:
            trim_heap()
        return Encoded(
            query=query,
            passages=plist,
            sentences=sentences,
            passage_of=passage_of,
            h=states.h,
            role_probs=states.role_logits.softmax(-1),
            local_logits=states.logits,
            prior_logits=states.prior,
            intent_by_passage=states.intent_by_passage,
            warnings=warnings,
            timings=timings,
            cached_windows=states.cached_windows,
        )

    def cache_passages(self, passages: Any) -> int:
        """Put passages into the cross-call cache ahead of any question (an offline index).

        Needs :attr:`passage_cache_mb` > 0 and an isolated-mode model. Runs the passages once
        under a placeholder question; later questions over them run only the query and the
        joint layer.

        Returns:
            Segments now stored.

        Raises:
            InputError: the cache is off, or the passages are not valid input.
        """
        if not self.passage_cache_mb or not self.config.local.isolated_layers:
            raise InputError(
                "the passage cache is off: set passage_cache_mb > 0 (isolated-mode models only)"
            )
        self.encode("passages", passages)
        return len(self.caches.passages[1].store)

    def clear_passage_cache(self) -> None:
        """Drop every passage state kept across calls (:attr:`passage_cache_mb`)."""
        if self.caches.passages is not None:
            self.caches.passages[1].clear()

    def _passage_cache(self, scorer: LocalScorer) -> SegmentCache | None:
        """The cross-call :class:`SegmentCache` (None when off or not in isolated mode); a new
        one whenever a parameter of the frozen packaged encoder changed."""
        if not self.passage_cache_mb or not self.config.local.isolated_layers:
            self.caches.passages = None
            return None
        key = params_key(self.local.encoder)
        held = self.caches.passages
        if held is None or held[0] != key:
            held = (key, SegmentCache(scorer, max_mb=self.passage_cache_mb))
            self.caches.passages = held
        held[1].scorer, held[1].max_mb = scorer, self.passage_cache_mb
        return held[1]

    def _inference_scorer(self) -> LocalScorer:
        """:attr:`local`, or its bf16-Linear copy (:attr:`bf16_weights`) when that applies."""
        if not self.bf16_weights or self.autocast_dtype != torch.bfloat16 or self.training:
            return self.local
        if self.local.active_runtime() is not None:  # the ONNX runtime runs the Linear layers
            return self.local
        key = params_key(self.local)
        cached = self.caches.bf16_twin
        if cached is not None and cached[0] == key:
            return cached[1]
        twin = bf16_linear_copy(self.local)
        self.caches.bf16_twin = (key, twin)  # concurrent builders: the last one wins
        return twin

    @property
    def runtime_in_use(self) -> str:
        """The runtime the last encode ran on: ``config.runtime``, or ``"torch"`` after a
        fallback (:mod:`logrerank.runtime`)."""
        state = self.caches.runtime
        return state.effective if state is not None else "torch"

    def _autocast_dtype_used(self) -> torch.dtype:
        return (
            torch.float32
            if self.local.active_runtime() is not None
            else (self.autocast_dtype or torch.float32)
        )

    def _max_positions(self) -> int:
        return int(getattr(self.local.encoder.config, "max_position_embeddings", 512))

    @torch.inference_mode()
    def rank_encoded(
        self,
        enc: Encoded,
        graph: GraphConfig | None = None,
        context: ContextConfig | None = None,
        use_global: bool | None = None,
        cross_passage: bool | None = None,
        typed: bool | None = None,
        ranker: str = "log",
        links: bool | None = None,
        lexical: bool = True,
        passage_head: bool | None = None,
    ) -> Ranking:
        """Graph, GAT and context stages over a cached :class:`Encoded` (no transformer pass).

        One global stage ranks every pool; its learned gate (``global.pool_gate``) says how much
        the graph counts (``info["graph_gate"]``). Shown sentence and learned passage scores are
        ``sigmoid(a * f + b)`` of the final logits ``f`` (``score.calibration_a/b``, a > 0: the
        order is the logits'); the local and global columns stay uncalibrated.

        Args:
            enc: output of :meth:`encode`.
            graph: graph settings (default: the model's config).
            context: context settings (default: the model's config).
            use_global: False = local-only ablation.
            cross_passage: False = no cross-passage edges ablation.
            typed: False = one relation type for all edges ablation.
            ranker: name recorded in the result.
            links: False = no link edges (mentions, mentioned-by, shared-term) ablation.
            lexical: False = lexical node inputs zeroed ablation (:func:`graph_inputs`).
            passage_head: False = passages ranked by their best sentence (no learned head).
        """
        cfg = self.config
        gcfg = dataclasses.replace(graph or cfg.graph)
        gcfg.cross_passage = gcfg.cross_passage if cross_passage is None else cross_passage
        gcfg.typed = gcfg.typed if typed is None else typed
        if links is False:
            gcfg.mentions = gcfg.shared_terms = False
        use_global = cfg.use_global if use_global is None else use_global
        timings = dict(enc.timings)

        t0 = time.perf_counter()
        data, lex = graph_inputs(cfg, enc, gcfg, lexical)
        timings["graph"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        l_global, attention, gate = None, None, None
        if use_global:
            _, l_global, attention, gate = global_scores(
                self.global_model, enc, data, lex, self.device_
            )
        timings["global"] = time.perf_counter() - t0

        t0, scfg = time.perf_counter(), cfg.score
        logits = final_logits(enc, l_global, scfg, scfg.lexical_weight)
        head = self.passage_head if passage_head is not False else None
        # scores in float64: a float32 sigmoid reads 1.0 (ties) from ~16.6
        raw = logits.double().sigmoid()  # what the selection reads (calibration is display only)
        a, b = scfg.calibration_a, scfg.calibration_b
        shown = (a * logits.double() + b).sigmoid()
        z = [t if t is None else t.double().sigmoid() for t in (enc.local_logits, l_global)]
        ranking = build_ranking(
            enc, shown, *z, ranker, passage_logits(head, enc, logits),
            scfg if scfg.select_ranking else None, (a, b), raw,
        )  # fmt: skip
        ctx_cfg = context or cfg.context
        paper = data.relation_type < PAPER_RELATIONS  # the context reads adjacency + similarity
        ranking.context = build_context(
            selected_sentences(ranking.sentences, enc.h, scfg, raw),  # the ranking's, when selected
            enc.passages,
            data.edge_index[:, paper],
            data.relation_type[paper],
            data.edge_sim[paper],
            ctx_cfg,
        )
        ranking.context["order"] = "selected" if selection_active(scfg) else "score"
        ranking.edges = annotate_edges(graph_edges(data, attention), enc, gcfg)
        timings["context"] = time.perf_counter() - t0
        timings["total"] = sum(v for k, v in timings.items() if k != "total")
        ranking.timings = timings
        ranking.info = call_info(self, enc, data, gcfg, gate, use_global, head is not None)
        if not cfg.trained:
            ranking.warnings.append("model is untrained: " + self.source)
        return ranking

    def rerank(self, query: str, passages: Any, **switches: Any) -> Ranking:
        """Rerank the sentences (and passages) of ``passages`` for ``query``.

        Args:
            query: the question.
            passages: strings, ``{"title", "text"}`` dicts or :class:`Passage` objects.
            **switches: ``use_global``, ``cross_passage``, ``typed``, ``links``, ``lexical``
                (ablations), ``graph``, ``context`` configs, ``ranker``; see :meth:`rank_encoded`.

        Raises:
            InputError: invalid input (message says what).
        """
        return self.rank_encoded(self.encode(query, passages), **switches)
