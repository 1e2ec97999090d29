"""State of the Gradio app: the shared models, the user's knobs and session, one call's result.

* :class:`Backend` holds the models, loaded once per process: the LoG reranker, the
  cross-encoder of the comparison (the bundled one, or the user's folder given by
  ``--cross-encoder DIR`` / ``$LOGRERANK_CROSS_ENCODER``; wrapped so that repeated
  ``(query, text)`` pairs are not re-scored) and the library baselines of
  :mod:`logrerank.rankers` used for the comparison columns.
* :class:`Knobs` are the graph / context settings a user can change without re-running the
  transformer.
* :class:`Session` is the per-user state (``gr.State``): the cached :class:`Encoded` of the
  current input, the baseline rankings and the latest LoG ranking.
* :class:`Result` is everything the page shows after one handler call.

No Gradio imports: the handlers of :mod:`logrerank.app.handlers` build and return these.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..config import ContextConfig, GraphConfig
from ..types import Ranking
from . import ce_choice

TABLE_COLUMNS = ["rank", "text", "score", "Δ vs CE", "P·S", "from", "role"]
"""Columns of the ranking table (:func:`logrerank.app.tables.ranking_table`): ``score`` is the
score the ranking is sorted by, ``Δ vs CE`` the cross-encoder rank minus the LoG rank, ``from``
the paper, section and page of a PDF's passage (:mod:`logrerank.app.provenance`)."""

DETAIL_COLUMNS = [
    "rank",
    "P·S",
    "score",
    "global",
    "local",
    "graph Δ",
    "P(background)",
    "P(method)",
    "P(result)",
    "cross-encoder",
    "CE rank",
    "BM25",
    "BM25 rank",
]
"""Columns of the score-details table: raw local / global scores, role distribution, baselines."""

METRIC_COLUMNS = ["level", "LoG vs", "items", "overlap@5", "overlap@10", "Kendall τ"]
"""Columns of the agreement table of the comparison tab."""

ABLATIONS: dict[str, str] = {
    "graph stage (GAT)": "use_global",
    "cross-passage similarity edges": "cross_passage",
    "typed relations": "typed",
    "link relations (mentions, shared terms)": "links",
    "lexical node inputs": "lexical",
}
"""Ablation checkbox labels -> :meth:`LoGReranker.rank_encoded` switches (unchecked = off)."""

DEFAULT_CONTEXT_TOKENS = 0
"""Default token budget of the app's structured context: 0 = automatic, the smaller of
:data:`AUTO_CONTEXT_TOKENS` and :data:`AUTO_FLAT_SHARE` of the tokens of the flat top-k
passages, so the structured context is shorter than the passages it stands in for
(:func:`logrerank.ranking.context.apply_budget`)."""

AUTO_FLAT_SHARE = 0.9
"""Automatic budget: at most this share of the flat top-k passages' tokens."""

AUTO_CONTEXT_TOKENS = 400
"""Cap of the automatic context budget (tokens)."""

DEFAULT_MIN_SCORE = 0.05
"""Default relevance threshold of the app's structured context, relative to the best unit's
score: units and neighbours scoring below this fraction of it (off-topic sentences) are left out;
the first unit is always kept, and a pool whose scores are all low keeps its units."""

CROSS_ENCODER_ENV = "LOGRERANK_CROSS_ENCODER"
"""Environment variable naming the app's cross-encoder folder (``--cross-encoder DIR`` wins)."""

RUNTIME_ENV = "LOGRERANK_RUNTIME"
"""Environment variable naming the app's transformer runtime, ``torch`` (default), ``onnx`` or
``onnx-int8`` (:mod:`logrerank.runtime`; ``--runtime`` wins)."""

APP_PASSAGE_CACHE_MB = 128.0
"""Passage cache of the app's LoG model (:attr:`LoGReranker.passage_cache_mb`): a new question
over passages already seen runs only the query and the joint layer (about 4 pools of 50)."""


# ---------------------------------------------------------------------------------- models
@dataclass
class Backend:
    """Models shared by every user of one app process.

    Attributes:
        log: the LoG reranker.
        cross_encoder: the (memoised) cross-encoder, or None when it could not be loaded.
        cross_encoder_error: why it could not be loaded.
        cross_encoder_choice: ``"bundled"``, the user's folder, or ``""`` (a model given by
            the caller, or none).
        runtime: the transformer runtime of both models (:mod:`logrerank.runtime`).
        role_tagger: the tagger of the shown roles (:mod:`logrerank.ranking.shown_roles`);
            None = the bundled one, loaded once per process on first use.
    """

    log: Any
    cross_encoder: Any = None
    cross_encoder_error: str | None = None
    cross_encoder_choice: str = ""
    runtime: str = "torch"
    role_tagger: Any = None
    _rankers: dict[str, Any] = field(default_factory=dict, repr=False)
    _choices: dict[str, ce_choice.Loaded] = field(default_factory=dict, repr=False)

    @classmethod
    def load(
        cls, log_model: Any = None, cross_encoder: Any = "default", runtime: str | None = None
    ) -> Backend:
        """Load the models once (the bundled LoG, ``logrerank/checkpoints/``, and a cross-encoder).

        Args:
            log_model: an already loaded :class:`LoGReranker` (None = ``from_pretrained()``).
            cross_encoder: see :meth:`use_cross_encoder`.
            runtime: the transformer runtime (None = ``$LOGRERANK_RUNTIME``, else torch).
        """
        runtime = runtime or os.environ.get(RUNTIME_ENV, "").strip() or "torch"
        if log_model is None:
            from ..pipeline import LoGReranker

            log_model = LoGReranker.from_pretrained(runtime=runtime)
            log_model.passage_cache_mb = APP_PASSAGE_CACHE_MB
        backend = cls(log=log_model, runtime=runtime)
        backend.use_cross_encoder(cross_encoder)
        return backend

    def use_cross_encoder(self, cross_encoder: Any = "default") -> None:
        """Set the default cross-encoder of the comparison; a folder that cannot be loaded is
        shown as UNAVAILABLE with a warning (:meth:`startup_warnings`), never raised.

        Args:
            cross_encoder: a loaded CrossEncoder; ``"default"``: the folder in
                ``$LOGRERANK_CROSS_ENCODER`` when set, else the bundled one; ``"bundled"``:
                the bundled one; ``"twin"``: the cross-encoder twin; a folder path (a
                sentence-transformers or Hugging Face sequence-classification folder, or a
                project checkpoint); or None to run without one (the comparison then shows it
                as unavailable).
        """
        if isinstance(cross_encoder, str) and cross_encoder == "default":
            cross_encoder = ce_choice.resolve("default")
        self._choices = {}
        if isinstance(cross_encoder, (str, os.PathLike)):
            choice = str(cross_encoder)
            loaded = ce_choice.load(choice, self.runtime)
            if loaded.error and choice != ce_choice.BUNDLED:
                warnings.warn(self._folder_warning(choice, loaded.error), RuntimeWarning, 2)
        else:
            from ..baselines.cross_encoder_ranker import MemoCrossEncoder

            choice = ""
            model = MemoCrossEncoder.wrap(cross_encoder) if cross_encoder is not None else None
            loaded = ce_choice.Loaded(
                model, None if model is not None else "no cross-encoder loaded"
            )
        self._choices[choice] = loaded
        self.cross_encoder, self.cross_encoder_error = loaded.model, loaded.error
        self.cross_encoder_choice = choice
        self._rankers = {}

    def choice(self, choice: Any = "") -> ce_choice.Loaded:
        """The cross-encoder of one choice (``""`` = the default one), loaded once."""
        key = ce_choice.resolve(choice)
        key = self.cross_encoder_choice if key == "" else key
        if key not in self._choices and key == self.cross_encoder_choice:  # set as fields
            error = self.cross_encoder_error or (None if self.cross_encoder else "not loaded")
            self._choices[key] = ce_choice.Loaded(self.cross_encoder, error)
        elif key not in self._choices:
            self._choices[key] = ce_choice.load(key, self.runtime)
        return self._choices[key]

    def choice_options(self) -> list[tuple[str, str]]:
        """``(menu label with badge, value)`` of the cross-encoders the user can pick."""
        return ce_choice.options(self.cross_encoder_choice, self._choices)

    @staticmethod
    def _folder_warning(folder: str, error: str) -> str:
        what = ce_choice.label(folder) if folder in ("bundled", "twin") else f"folder {folder}"
        return (
            f"cross-encoder {what} is unavailable ({error}); the comparison runs "
            "without a cross-encoder"
        )

    def use_runtime(self, runtime: str) -> None:
        """Switch both models to ``runtime`` (the cross-encoder is reloaded with it)."""
        from ..runtime.local_runtime import sync_local_runtime

        self.runtime = self.log.config.runtime = runtime
        sync_local_runtime(self.log)
        self.use_cross_encoder(self.cross_encoder_choice or "default")

    def startup_warnings(self, choice: Any = "") -> list[str]:
        """Start-up warnings for the status panel: a cross-encoder that failed to load (the
        bundled one only when picked explicitly), a runtime that fell back to torch."""
        key = ce_choice.resolve(choice) or self.cross_encoder_choice
        loaded = self.choice(key)
        out = []
        if loaded.model is None and loaded.error and (key not in ("", "bundled") or choice):
            out.append(self._folder_warning(key, loaded.error))
        state = self.log.caches.runtime
        out += [w for w in (getattr(state, "warning", None),) if w]
        ce_warning = getattr(loaded.model, "runtime_warning", None)
        return out + ([ce_warning] if ce_warning and ce_warning not in out else [])

    def rankers(self, choice: Any = "") -> dict[str, Any]:
        """Library baselines for the comparison, with the chosen cross-encoder (built once per
        choice; see :mod:`logrerank.rankers`)."""
        key = ce_choice.resolve(choice) or self.cross_encoder_choice
        if key not in self._rankers:
            from ..rankers import Models, build_rankers

            ce = self.choice(key).model
            names = ["bm25", "bm25-sent", "evidence-graph"]
            if ce is not None:
                names.append("cross-encoder-sent")
            self._rankers[key] = build_rankers(names, Models(_log=self.log, _ce=ce))
        return self._rankers[key]

    def ce_stage(self, blend: float, choice: Any = "") -> Any:
        """The cross-encoder stage (blend with the first pass) over BM25, ``blend`` = CE share."""
        from ..baselines.bm25_ranker import BM25Reranker
        from ..baselines.cross_encoder_stage import CrossEncoderStage

        ce = self.choice(choice).model
        spec = ce if ce is not None else "missing-cross-encoder"
        return CrossEncoderStage(BM25Reranker("passage"), spec, blend_weight=float(blend))

    def model_rows(self, choice: Any = "") -> list[tuple[str, str, bool | None]]:
        """``(what, source, trained)`` per model for the status panel."""
        rows = [("LoG reranker", str(self.log.source), bool(self.log.config.trained))]
        key = ce_choice.resolve(choice) or self.cross_encoder_choice
        loaded = self.choice(key)
        what = ce_choice.label(key)
        if loaded.model is not None:
            rows.append((what, str(loaded.model.source), bool(loaded.model.trained)))
        else:
            rows.append((what, loaded.error or "not loaded", None))
        return rows

    def device_info(self) -> tuple[str, str]:
        """(device, precision) of the LoG model; the precision names an ONNX runtime in use."""
        runtime = self.log.runtime_in_use
        if runtime != "torch":
            return str(self.log.device_), f"float32 activations, {runtime} runtime"
        prec = str(self.log.autocast_dtype or "float32").replace("torch.", "")
        return str(self.log.device_), prec


# ---------------------------------------------------------------------------------- state
@dataclass
class Knobs:
    """Graph/context settings the user can change without re-running the transformer."""

    top_k: int = 10  # context units K (eq. 17), also the marked nodes of the graph
    tau_sim: float = 0.75  # similarity threshold (eq. 10)
    delta: float = 0.25  # max |z_u - z_v| for a similarity edge (eq. 10)
    k: int = 8  # similar neighbours kept per node (eq. 10)
    blend: float = 0.5  # cross-encoder share in the cross-encoder stage
    switches: tuple[str, ...] = tuple(ABLATIONS)  # enabled parts (unchecked = ablated)
    graph_top_n: int = 0  # graph view: top-N nodes and their neighbours (0 = automatic)
    context_tokens: int = DEFAULT_CONTEXT_TOKENS  # token budget of the context (0 = automatic)
    min_score: float = DEFAULT_MIN_SCORE  # relevance threshold of context units / neighbours
    cross_encoder: str = (
        ""  # the comparison's cross-encoder (logrerank.app.ce_choice; "" = default)
    )

    @classmethod
    def make(
        cls,
        top_k: Any = 10,
        tau_sim: Any = 0.75,
        delta: Any = 0.25,
        k: Any = 8,
        blend: Any = 0.5,
        switches: Any = None,
        graph_top_n: Any = 0,
        context_tokens: Any = DEFAULT_CONTEXT_TOKENS,
        min_score: Any = DEFAULT_MIN_SCORE,
        cross_encoder: Any = "",
    ) -> Knobs:
        """Knobs from raw widget values, clamped to valid ranges (None = default)."""

        def num(x: Any, default: float, lo: float, hi: float) -> float:
            try:
                v = float(x)
            except (TypeError, ValueError):
                return default
            return default if not math.isfinite(v) else min(hi, max(lo, v))

        sw = tuple(ABLATIONS) if switches is None else tuple(s for s in switches if s in ABLATIONS)
        return cls(
            top_k=int(num(top_k, 10, 1, 100)),
            tau_sim=num(tau_sim, 0.75, -1.0, 1.0),
            delta=num(delta, 0.25, 0.0, 1.0),
            k=int(num(k, 8, 0, 64)),
            blend=num(blend, 0.5, 0.0, 1.0),
            switches=sw,
            graph_top_n=int(num(graph_top_n, 0, 0, 100_000)),
            context_tokens=int(num(context_tokens, DEFAULT_CONTEXT_TOKENS, 0, 100_000)),
            min_score=num(min_score, DEFAULT_MIN_SCORE, 0.0, 1.0),
            cross_encoder=ce_choice.resolve(cross_encoder),
        )

    def rank_kwargs(self, base: GraphConfig, ctx: ContextConfig) -> dict[str, Any]:
        """Keyword arguments of :meth:`LoGReranker.rank_encoded`."""
        return {
            "graph": dataclasses.replace(
                base, tau_sim=self.tau_sim, delta=self.delta, top_k=self.k
            ),
            "context": dataclasses.replace(ctx, top_k=self.top_k),
            **{v: (label in self.switches) for label, v in ABLATIONS.items()},
        }

    def budget(self, ctx: ContextConfig, flat_tokens: int) -> ContextConfig:
        """The context settings of :func:`logrerank.ranking.context.apply_budget` (each sentence once).

        Args:
            ctx: the model's context settings.
            flat_tokens: tokens of the flat top-k passages (sets the automatic budget).
        """
        auto = min(AUTO_CONTEXT_TOKENS, max(1, int(AUTO_FLAT_SHARE * flat_tokens)))
        return dataclasses.replace(
            ctx,
            top_k=self.top_k,
            max_tokens=self.context_tokens or auto,
            min_score=self.min_score,
            dedupe=True,
        )


@dataclass
class Session:
    """Per-user state (kept in ``gr.State``)."""

    key: Any = None  # (question, ((title, text), ...)) of the cached input
    encoded: Any = None  # logrerank.ranking.results.Encoded
    baselines: dict[str, Ranking] = field(default_factory=dict)  # fixed baseline rankings
    baseline_timings: dict[str, float] = field(default_factory=dict)
    ce_choice: str = ""  # the cross-encoder choice the baselines were ranked with
    ranking: Ranking | None = None  # latest LoG ranking
    local_ranks: dict[int, int] = field(default_factory=dict)  # node -> rank by local alone
    signals: dict[int, dict[str, Any]] = field(default_factory=dict)  # node -> baseline scores
    knobs: Knobs = field(default_factory=Knobs)
    encodes: int = 0  # transformer passes in this session
    recomputes: int = 0  # graph-stage recomputations from cache
    tagger_roles: dict[Any, Any] = field(default_factory=dict)  # role tagger output per passage
    # what the headers call LoG (with its ablations) and the comparison's cross-encoder
    names: tuple[str, str] = ("LoG", "cross-encoder")


@dataclass
class Ranked:
    """What one ranking call produced, before any rendering: returned by
    :func:`logrerank.app.handlers.rank_session`, rendered by
    :func:`logrerank.app.result_view.render`."""

    ranking: Ranking  # LoG under the knobs, its context cut to the token budget
    local: Ranking  # LoG's local stage alone
    rankings: dict[str, Ranking]  # the baselines and the cross-encoder stage, by name
    timings: dict[str, float]  # seconds per stage shown in the status panel
    warnings: list[str]  # start-up, LoG, cross-encoder stage and baseline warnings, once each
    log_name: str  # LoG with its ablations (logrerank/app/labels.py)
    ce_name: str  # the comparison's cross-encoder
    from_cache: bool  # encodings reused: no transformer pass in this call
    model: Any  # the LoG model (its tokenizer counts the context's tokens)
    models: list[tuple[str, str, bool | None]]  # (what, source, trained): Backend.model_rows
    device: tuple[str, str]  # (device, precision): Backend.device_info
    source: str = ""  # which input the run used, in words ("" on a knob change)
    trained: bool = True  # False: LoG is an untrained initialisation


@dataclass
class Result:
    """Everything the page shows after one handler call."""

    status: str
    ok: bool = True  # False: an error; the page keeps the last good results on screen
    graph: str = ""
    table: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=TABLE_COLUMNS))
    details: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=DETAIL_COLUMNS))
    heat: str = ""
    compare: str = ""
    slope: Any = None  # plotly Figure
    metrics: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=METRIC_COLUMNS))
    context_prompt: str = ""
    context_json: str = "[]"
    context_file: str | None = None
    tokens: str = ""
    explain_choices: list[tuple[str, int]] = field(default_factory=list)
    explain_value: int | None = None
    explain: str = ""
    session: Session = field(default_factory=Session)
    # headers naming the active LoG ablation and cross-encoder (logrerank/app/labels.py)
    table_label: str = ""
    metrics_label: str = ""
    error: str = ""  # the plain message of a failed call (the API raises it)


__all__ = [
    "ABLATIONS",
    "APP_PASSAGE_CACHE_MB",
    "AUTO_CONTEXT_TOKENS",
    "AUTO_FLAT_SHARE",
    "CROSS_ENCODER_ENV",
    "RUNTIME_ENV",
    "DEFAULT_CONTEXT_TOKENS",
    "DEFAULT_MIN_SCORE",
    "DETAIL_COLUMNS",
    "METRIC_COLUMNS",
    "TABLE_COLUMNS",
    "Backend",
    "Knobs",
    "Ranked",
    "Result",
    "Session",
]
