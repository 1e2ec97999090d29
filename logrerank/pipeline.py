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
import copy
import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from . import backbone as bb
from .config import ROLE_NAMES, ConfigError, ContextConfig, GraphConfig, LoGConfig
from .context import build_context
from .global_model import GlobalReranker
from .graph import build_graph, edge_counts, relation_name
from .io import prepare_input
from .limits import DEFAULT_LIMITS, Limits
from .local import LocalScorer, SegmentCache, batches, collate, tokenize
from .memory import TRIM_BUDGET_MB, HeapBudget, trim_heap
from .resources import checkpoint_dir
from .scoring import adjust_logits
from .segment import passage_spans
from .types import GraphEdge, InputError, Passage, Ranking, ScoredSentence

FORMAT_VERSION = 1
WEIGHTS_NAME = "model.safetensors"
CONFIG_NAME = "config.json"

ABLATIONS: dict[str, dict[str, bool]] = {
    "log": {},
    "log-local": {"use_global": False},  # local only, no graph
    "log-nocross": {"cross_passage": False},  # no cross-passage similarity edges
    "log-untyped": {"typed": False},  # all edges one relation
}
"""Registry names of LoG and its ablations -> keyword switches of :meth:`LoGReranker.rerank`."""


class CheckpointError(RuntimeError):
    """A checkpoint folder is missing files, truncated, or does not match the model."""


def default_checkpoint_dir() -> Path:
    """Where the bundled LoG checkpoint lives (``$LOGRERANK_CHECKPOINTS`` overrides)."""
    return checkpoint_dir("log-reranker")


@dataclass
class Encoded:
    """Everything the graph stages need, computed once per (query, passages)."""

    query: str
    passages: list[Passage]
    sentences: list[ScoredSentence]  # document order, scores not yet set
    passage_of: Tensor  # [N] long
    h: Tensor  # [N, d] float32 contextual sentence vectors
    role_probs: Tensor  # [N, 3]
    local_logits: Tensor  # [N]
    intent_by_passage: Tensor  # [P, 3] (zeros for passages without sentences)
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    prior_logits: Tensor | None = None  # [N] bi-encoder prior part of local_logits (isolated)
    # passage cache (LoGReranker.passage_cache_mb): windows whose sentences were all cached
    # (only the query and the joint layer ran) / all windows; (0, 0) when the cache is off
    cached_windows: tuple[int, int] = (0, 0)


def _params_key(module: nn.Module) -> tuple:
    """Identity and in-place version of every parameter: changes when any is replaced or
    updated (training, ``load_state_dict``, quantisation), so derived caches can be rebuilt."""
    params = list(module.parameters())
    return (len(params), *((id(p), p._version) for p in params))


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
    """Call ``malloc_trim`` at the end of each :meth:`encode`, and after a transformer batch
    whenever the call has grown more than :attr:`trim_budget_mb` (:mod:`logrerank.memory`):
    keeps a long-running process's resident memory flat and one call's peak bounded however
    many passages it gets (no-op off glibc)."""

    bf16_weights: bool = False
    """Under bf16 autocast, run inference on a copy of the local scorer whose ``nn.Linear``
    weights are cast to bf16 once (autocast re-casts every fp32 weight on every batch).
    Bit-identical logits (autocast rounds the same way; tested). The copy is rebuilt whenever a
    parameter of :attr:`local` changes (training, ``load_state_dict``, quantisation). Off by
    default: on the speed benchmark it saved 2.6 % of the local stage (within noise) for 104 MB
    more peak memory (bench/README.md)."""

    trim_budget_mb: float = TRIM_BUDGET_MB
    """Growth of the resident memory within one :meth:`encode` above which the heap is trimmed
    after a batch (a 50-passage call stays under it and pays nothing)."""

    segment_cache: bool = False
    """Isolated mode: run the frozen lower layers once per distinct ``[CLS] x [SEP]`` segment
    (:class:`~logrerank.local.SegmentCache`) instead of inside block-masked windows (same scores
    up to float rounding). Off by default: on the 2-core CPU it was not faster (p50 1.65 s vs
    1.59 s per 50-passage SciFact pool) and peaked higher (3.4 vs 2.6 GB RSS), see bench/README."""

    passage_cache_mb: float = 0.0
    """Isolated mode: keep the query-independent states of passages already seen (their
    sentences after the frozen lower layers, and their prior embeddings) across calls, up to this
    many MiB, least recently used evicted first (:class:`~logrerank.local.SegmentCache`). A new
    question over passages already in the cache then runs only the query and the joint layer;
    new passages cost what they cost without the cache. About 1.5 KiB per token in fp32 (a
    50-abstract SciFact pool is about 27 MiB). Scores equal the uncached ones up to float
    rounding, so a cached call may differ from a cold one in the last digits. 0 = off (the
    default, so that equal inputs give bit-equal scores); the app turns it on."""

    def __init__(self, config: LoGConfig | None = None, encoder=None, tokenizer=None):
        super().__init__()
        self.config = (config or LoGConfig()).validate()
        encoder = (
            encoder if encoder is not None else bb.load_encoder(self.config.backbone.name_or_path)
        )
        self.tokenizer = tokenizer or bb.load_tokenizer(self.config.backbone.name_or_path)
        self.local = LocalScorer(encoder, self.config.local)
        self.global_model = GlobalReranker(self.local.hidden_size, self.config.global_)
        self.source = "untrained initialisation (seeded)"  # replaced by from_pretrained
        self.device_ = bb.pick_device(self.config.device)
        self.autocast_dtype = bb.autocast_dtype(self.device_, self.config.precision)
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
            path: checkpoint folder; None = the bundled default under ``checkpoints/``, or, while
                none exists, an explicitly labelled untrained initialisation.
            **overrides: top-level config fields to override (e.g. ``device="cpu"``).

        Raises:
            CheckpointError: missing, truncated or mismatched files.
        """
        if path is None:
            path = default_checkpoint_dir()
            if not (path / CONFIG_NAME).exists():
                config = LoGConfig(**overrides) if overrides else None
                return cls.untrained(config)
        path = Path(path)
        if not path.is_dir():
            raise CheckpointError(f"checkpoint folder {path} does not exist")
        for name in (CONFIG_NAME, WEIGHTS_NAME):
            if not (path / name).is_file():
                raise CheckpointError(f"checkpoint {path} is missing {name}")
        try:
            raw = json.loads((path / CONFIG_NAME).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise CheckpointError(f"{path / CONFIG_NAME} is not valid JSON: {exc}") from exc
        if not isinstance(raw, dict) or raw.get("format") != "logrerank" or "model" not in raw:
            raise CheckpointError(f"{path / CONFIG_NAME} is not a logrerank checkpoint config")
        try:
            config = LoGConfig.from_dict(raw["model"])
            config = dataclasses.replace(config, **overrides)
        except (ConfigError, TypeError) as exc:
            raise CheckpointError(f"{path / CONFIG_NAME}: {exc}") from exc
        try:
            state = load_file(str(path / WEIGHTS_NAME))
        except Exception as exc:
            raise CheckpointError(f"cannot read {path / WEIGHTS_NAME} (truncated?): {exc}") from exc
        model = cls(config)
        model._load_partial_state(state, path)
        model.source = str(path)
        return model

    def _load_partial_state(self, state: dict[str, Tensor], path: Path) -> None:
        own = self.state_dict()
        unexpected = sorted(set(state) - set(own))
        if unexpected:
            raise CheckpointError(f"{path}: unknown tensors {unexpected[:5]} (config mismatch?)")
        missing = sorted(k for k in own if k not in state and not k.startswith("local.encoder."))
        if missing:
            raise CheckpointError(f"{path}: missing tensors {missing[:5]}")
        for k, v in state.items():
            if v.is_floating_point() and not torch.isfinite(v).all():
                raise CheckpointError(f"{path}: tensor {k} has NaN or infinite values")
            if own[k].shape != v.shape:
                raise CheckpointError(
                    f"{path}: tensor {k} has shape {tuple(v.shape)}, model expects {tuple(own[k].shape)}"
                )
        self.load_state_dict(state, strict=False)

    def save_pretrained(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Save heads, graph model and only those backbone tensors that differ from the base.

        Args:
            path: output folder (created).
            extra: extra JSON-serialisable facts for config.json (training run, metrics).
        """
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        base = bb.load_encoder(self.config.backbone.name_or_path).state_dict()
        state = {}
        for k, v in self.state_dict().items():
            if k.startswith("local.encoder."):
                b = base.get(k.removeprefix("local.encoder."))
                if b is not None and b.shape == v.shape and torch.equal(b, v.detach().cpu()):
                    continue
            state[k] = v.detach().cpu().contiguous()
        save_file(state, str(path / WEIGHTS_NAME))
        meta = {
            "format": "logrerank",
            "format_version": FORMAT_VERSION,
            "model": self.config.to_dict(),
            "backbone_tensors_stored": sum(k.startswith("local.encoder.") for k in state),
            **(extra or {}),
        }
        (path / CONFIG_NAME).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        return path

    # ------------------------------------------------------------------ inference
    def _autocast(self):
        if self.autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device_.type, dtype=self.autocast_dtype)

    @torch.inference_mode()
    def encode(self, query: str, passages: Any) -> Encoded:
        """Segment, tokenise and run the local scorer (eqs. 1-6) once.

        Input is validated and cut to ``self.limits`` (:mod:`logrerank.limits`); every cut,
        dropped passage, replaced control character or duplicate becomes a warning.

        Raises:
            InputError: empty query, no passages, no passage with any text, or (strict limits)
                input over a limit.
        """
        query, plist, warnings = prepare_input(query, passages, self.limits)
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        spans = [passage_spans(p) for p in plist]
        empty = [i + 1 for i, s in enumerate(spans) if not s]
        if len(empty) == len(plist):
            raise InputError("every passage is empty: paste passages with text")
        if empty:
            warnings.append(f"passage(s) {empty} have no text; they rank last")
        sentences, passage_of = [], []
        for p, sp in enumerate(spans):
            for j, s in enumerate(sp):
                sentences.append(ScoredSentence(len(sentences), p, j, s.text, s.start, s.end, 0.0))
                passage_of.append(p)
        timings["segment"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        cfg = self.config
        max_len = min(cfg.backbone.max_length, self._max_positions())
        tok = tokenize(
            self.tokenizer,
            query,
            [[s.text for s in sp] for sp in spans],
            min(cfg.backbone.max_length, self._max_positions()),
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
        n, d = tok.num_nodes, self.local.hidden_size
        h = torch.zeros(n, d)
        role_logits = torch.zeros(n, 3)
        logits = torch.zeros(n)
        prior = torch.zeros(n) if cfg.local.isolated_layers else None
        P = len(plist)
        intent_sum, intent_cnt = torch.zeros(P, 3), torch.zeros(P)
        scorer = self._inference_scorer()
        # isolated mode: the query-independent lower layers run once per distinct segment
        cache = SegmentCache(scorer) if cfg.local.isolated_layers and self.segment_cache else None
        kept = self._passage_cache(scorer)  # across calls (passage_cache_mb)
        cached_windows = (0, 0)
        budget = HeapBudget(self.trim_budget_mb, enabled=self.trim_memory)
        plan = [
            (group, False)
            for group in batches(tok.windows, cfg.local.batch_tokens, cfg.local.max_batch_windows)
        ]
        if kept is not None:  # windows whose sentences are all cached skip the frozen layers
            warm = [i for i, w in enumerate(tok.windows) if kept.covers(w)]
            cached_windows = (len(warm), len(tok.windows))
            cold = sorted(set(range(len(tok.windows))) - set(warm))
            plan = [
                ([ids[i] for i in group], is_warm)
                for ids, is_warm in ((cold, False), (warm, True))
                if ids
                for group in batches(
                    [tok.windows[i] for i in ids],
                    cfg.local.batch_tokens,
                    cfg.local.max_batch_windows,
                )
            ]
        for group, is_warm in plan:
            wins = [tok.windows[i] for i in group]
            batch = collate(wins, self.device_, cfg.local.pad_multiple, max_len)
            if kept is not None and not is_warm:
                batch["keep_lower"] = torch.ones(())
            with self._autocast():
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
        timings["local"] = time.perf_counter() - t0
        if self.trim_memory:
            trim_heap()
        return Encoded(
            query=query,
            passages=plist,
            sentences=sentences,
            passage_of=torch.tensor(passage_of, dtype=torch.long),
            h=h,
            role_probs=role_logits.softmax(-1),
            local_logits=logits,
            prior_logits=prior,
            intent_by_passage=intent_sum / intent_cnt.clamp_min(1)[:, None],
            warnings=warnings,
            timings=timings,
            cached_windows=cached_windows,
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
        return len(self.__dict__["_kept_cache"][1].store)

    def clear_passage_cache(self) -> None:
        """Drop every passage state kept across calls (:attr:`passage_cache_mb`)."""
        held = self.__dict__.get("_kept_cache")
        if held is not None:
            held[1].clear()

    def _passage_cache(self, scorer: LocalScorer) -> SegmentCache | None:
        """The cross-call :class:`SegmentCache` (None when off or not in isolated mode); a new
        one whenever a parameter of the frozen packaged encoder changed."""
        if not self.passage_cache_mb or not self.config.local.isolated_layers:
            self.__dict__.pop("_kept_cache", None)
            return None
        key = _params_key(self.local.encoder)
        held = self.__dict__.get("_kept_cache")
        if held is None or held[0] != key:
            held = (key, SegmentCache(scorer, max_mb=self.passage_cache_mb))
            self.__dict__["_kept_cache"] = held  # plain attribute: not a submodule, not saved
        held[1].scorer, held[1].max_mb = scorer, self.passage_cache_mb
        return held[1]

    def _inference_scorer(self) -> LocalScorer:
        """:attr:`local`, or its bf16-Linear copy (:attr:`bf16_weights`) when that applies."""
        if not self.bf16_weights or self.autocast_dtype != torch.bfloat16 or self.training:
            return self.local
        key = _params_key(self.local)
        cached = self.__dict__.get("_bf16_twin")  # plain attribute: not a submodule, not saved
        if cached is not None and cached[0] == key:
            return cached[1]
        with torch.inference_mode(False), torch.no_grad():
            twin = copy.deepcopy(self.local)
        for m in twin.modules():
            if isinstance(m, nn.Linear):
                m.to(torch.bfloat16)
        twin.eval()
        self.__dict__["_bf16_twin"] = (key, twin)  # concurrent builders: the last one wins
        return twin

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
    ) -> Ranking:
        """Graph, GAT and context stages over a cached :class:`Encoded` (no transformer pass).

        Args:
            enc: output of :meth:`encode`.
            graph: graph settings (default: the model's config).
            context: context settings (default: the model's config).
            use_global: False = local-only ablation.
            cross_passage: False = no cross-passage edges ablation.
            typed: False = one relation type for all edges ablation.
            ranker: name recorded in the result.
        """
        cfg = self.config
        gcfg = dataclasses.replace(graph or cfg.graph)
        if cross_passage is not None:
            gcfg.cross_passage = cross_passage
        if typed is not None:
            gcfg.typed = typed
        use_global = cfg.use_global if use_global is None else use_global
        timings = dict(enc.timings)
        z_local = torch.sigmoid(enc.local_logits)

        t0 = time.perf_counter()
        data = build_graph(enc.h, enc.role_probs, z_local, enc.passage_of, gcfg)
        timings["graph"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        z_global, l_global, attention = None, None, None
        if use_global:
            dev = self.device_
            out, _ = self.global_model(
                enc.h.to(dev),
                enc.role_probs.to(dev),
                enc.local_logits.to(dev),
                data.edge_index.to(dev),
                data.edge_type.to(dev),
                return_attention=True,
            )
            z_global = out.scores.float().cpu()
            l_global = out.logits.float().cpu()
            attention = [a.float().mean(-1).cpu() for a in out.attention]  # per layer [E]
        timings["global"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        scfg = cfg.score
        final = torch.sigmoid(
            adjust_logits(
                (l_global if l_global is not None else enc.local_logits).float(),
                enc.passage_of,
                [s.text for s in enc.sentences],
                scfg.merge_duplicates,
                scfg.passage_weight,
                None if enc.prior_logits is None else enc.local_logits - enc.prior_logits,
                scfg.head_weight,
            )
        )
        sentences = []
        roles = enc.role_probs.argmax(-1).tolist()
        for s in enc.sentences:
            n = s.node
            zl = float(z_local[n])
            zg = float(z_global[n]) if z_global is not None else None
            sentences.append(
                dataclasses.replace(
                    s,
                    score=float(final[n]),
                    role_probs=[float(x) for x in enc.role_probs[n]],
                    role=ROLE_NAMES[roles[n]],
                    local_score=zl,
                    global_score=zg,
                    extra={},
                )
            )
        intent = enc.intent_by_passage
        has = torch.zeros(len(enc.passages), dtype=torch.bool)
        has[enc.passage_of] = True
        ranking = Ranking.from_sentence_scores(
            enc.query,
            enc.passages,
            sentences,
            ranker,
            intent_probs=[float(x) for x in intent[has].mean(0)],
            intent_by_passage=[[float(x) for x in row] for row in intent],
            warnings=list(enc.warnings),
        )
        ctx_cfg = context or cfg.context
        ranking.context = build_context(
            ranking.sentences,
            enc.passages,
            data.edge_index,
            data.relation_type,
            data.edge_sim,
            ctx_cfg,
        )
        ranking.edges = self._edges(data, attention)
        timings["context"] = time.perf_counter() - t0
        timings["total"] = sum(v for k, v in timings.items() if k != "total")
        ranking.timings = timings
        ranking.info = {
            "model": self.source,
            "trained": cfg.trained,
            "device": str(self.device_),
            "precision": str(self.autocast_dtype or torch.float32).replace("torch.", ""),
            "use_global": use_global,
            "graph": dataclasses.asdict(gcfg),
            "score": dataclasses.asdict(scfg),
            "num_nodes": int(data.num_nodes),
            "edge_counts": edge_counts(data),
            "passage_cache_windows": list(enc.cached_windows),
        }
        if not cfg.trained:
            ranking.warnings.append("model is untrained: " + self.source)
        return ranking

    @staticmethod
    def _edges(data, attention: list[Tensor] | None) -> list[GraphEdge]:
        src, dst = data.edge_index.tolist()
        rel = data.relation_type.tolist()
        used = data.edge_type.tolist()
        sim = data.edge_sim.tolist()
        att = torch.stack(attention, 1).tolist() if attention else None  # [E, layers]
        return [
            GraphEdge(
                u,
                v,
                relation_name(r),
                t,
                None if c != c else c,  # NaN -> None
                att[e] if att is not None else None,
            )
            for e, (u, v, r, t, c) in enumerate(zip(src, dst, rel, used, sim))
        ]

    def rerank(self, query: str, passages: Any, **switches: Any) -> Ranking:
        """Rerank the sentences (and passages) of ``passages`` for ``query``.

        Args:
            query: the question.
            passages: strings, ``{"title", "text"}`` dicts or :class:`Passage` objects.
            **switches: ``use_global``, ``cross_passage``, ``typed`` (ablations), ``graph``,
                ``context`` configs and ``ranker`` name; see :meth:`rank_encoded`.

        Raises:
            InputError: invalid input (message says what).
        """
        return self.rank_encoded(self.encode(query, passages), **switches)
