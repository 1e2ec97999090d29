"""Handlers of the Gradio app: typed functions that call the library (no Gradio imports).

``app.py`` wires these to components; tests call them directly. The flow:

* :class:`Backend` holds the models, loaded once per process: the LoG reranker, the bundled
  cross-encoder (wrapped so that repeated ``(query, text)`` pairs are not re-scored) and the
  library baselines of :mod:`logrerank.rankers` used for the comparison columns.
* :class:`Session` is the per-user state (``gr.State``): the cached :class:`Encoded` of the
  current input, the baseline rankings and the latest LoG ranking.
* :func:`run_rerank` parses the input, encodes it once (transformer pass) and renders every
  view; :func:`recompute` re-runs only the graph stages from the cached encodings when a knob
  changes; :func:`redraw_graph` and :func:`explain` only re-render.

Bad input never raises: the status panel says what is wrong and the outputs are emptied.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..baselines.cross_encoder import MemoCrossEncoder
from ..config import ContextConfig, GraphConfig
from ..io import parse_passages_text, prepare_input, read_passages_file
from ..resources import package_path
from ..types import InputError, Passage, Ranking, ScoredSentence, _clean
from . import viz

log = logging.getLogger(__name__)

EXAMPLES_DIR = package_path("app", "examples")
OUT_DIR = Path(tempfile.gettempdir()) / "logrerank-app"

TABLE_COLUMNS = [
    "rank",
    "Δ vs CE",
    "passage",
    "sentence",
    "role",
    "P(background)",
    "P(method)",
    "P(result)",
    "local",
    "global",
    "cross-encoder",
    "CE rank",
    "BM25",
    "text",
]
METRIC_COLUMNS = ["level", "LoG vs", "overlap@5", "overlap@10", "Kendall τ"]

ABLATIONS: dict[str, str] = {
    "graph stage (GAT)": "use_global",
    "cross-passage similarity edges": "cross_passage",
    "typed relations": "typed",
}
"""Ablation checkbox labels -> :meth:`LoGReranker.rank_encoded` switches (unchecked = off)."""

SENT_CE, SENT_BM25 = "cross-encoder (sentences)", "BM25 (sentences)"
PASS_LOG, PASS_STAGE = "LoG (best sentence)", "cross-encoder stage"
PASS_BM25, PASS_GRAPH = "BM25", "evidence-graph selector"

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
    """

    log: Any
    cross_encoder: Any = None
    cross_encoder_error: str | None = None
    _rankers: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def load(cls, log_model: Any = None, cross_encoder: Any = "default") -> Backend:
        """Load the models once (LoG from ``checkpoints/``, the bundled cross-encoder).

        Args:
            log_model: an already loaded :class:`LoGReranker` (None = ``from_pretrained()``).
            cross_encoder: a loaded CrossEncoder, ``"default"`` for the bundled one, or None to
                run without it (the comparison then shows it as unavailable).
        """
        if log_model is None:
            from ..pipeline import LoGReranker

            log_model = LoGReranker.from_pretrained()
            log_model.passage_cache_mb = APP_PASSAGE_CACHE_MB
        ce, error = None, None
        if cross_encoder == "default":
            try:
                from ..baselines.cross_encoder import CrossEncoder

                cross_encoder = CrossEncoder(None)
            except Exception as exc:  # degrade visibly, never crash the app
                cross_encoder, error = None, f"{type(exc).__name__}: {exc}"
        if cross_encoder is not None:
            ce = MemoCrossEncoder.wrap(cross_encoder)
        elif error is None:
            error = "no cross-encoder loaded"
        return cls(log=log_model, cross_encoder=ce, cross_encoder_error=error)

    def rankers(self) -> dict[str, Any]:
        """Library baselines for the comparison (built once; see :mod:`logrerank.rankers`)."""
        if not self._rankers:
            from ..rankers import Models, build_rankers

            names = ["bm25", "bm25-sent", "evidence-graph"]
            if self.cross_encoder is not None:
                names.append("cross-encoder-sent")
            self._rankers = build_rankers(names, Models(_log=self.log, _ce=self.cross_encoder))
        return self._rankers

    def ce_stage(self, blend: float) -> Any:
        """The cross-encoder stage (seed 001) over BM25 with ``blend`` as the CE share."""
        from ..baselines.bm25 import BM25Reranker
        from ..baselines.cross_encoder import CrossEncoderStage

        spec = self.cross_encoder if self.cross_encoder is not None else "missing-cross-encoder"
        return CrossEncoderStage(BM25Reranker("passage"), spec, blend_weight=float(blend))

    def model_rows(self) -> list[tuple[str, str, bool | None]]:
        """``(what, source, trained)`` per model for the status panel."""
        rows = [("LoG reranker", str(self.log.source), bool(self.log.config.trained))]
        if self.cross_encoder is not None:
            rows.append(
                ("cross-encoder", str(self.cross_encoder.source), bool(self.cross_encoder.trained))
            )
        else:
            rows.append(("cross-encoder", self.cross_encoder_error or "not loaded", None))
        return rows

    def device_info(self) -> tuple[str, str]:
        """(device, precision) of the LoG model."""
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
    graph_top_n: int = 0  # graph view: top-N nodes and their neighbours (0 = all)

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


@dataclass
class Session:
    """Per-user state (kept in ``gr.State``)."""

    key: Any = None  # (question, ((title, text), ...)) of the cached input
    encoded: Any = None  # logrerank.pipeline.Encoded
    baselines: dict[str, Ranking] = field(default_factory=dict)  # fixed baseline rankings
    baseline_timings: dict[str, float] = field(default_factory=dict)
    ranking: Ranking | None = None  # latest LoG ranking
    local_ranks: dict[int, int] = field(default_factory=dict)  # node -> rank by local alone
    signals: dict[int, dict[str, Any]] = field(default_factory=dict)  # node -> baseline scores
    knobs: Knobs = field(default_factory=Knobs)
    encodes: int = 0  # transformer passes in this session
    recomputes: int = 0  # graph-stage recomputations from cache


@dataclass
class Result:
    """Everything the page shows after one handler call."""

    status: str
    graph: str = ""
    table: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=TABLE_COLUMNS))
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


# ---------------------------------------------------------------------------------- examples
def list_examples() -> dict[str, Path]:
    """Built-in examples: display name -> JSON file under ``assets/examples``."""
    folder = EXAMPLES_DIR
    return {p.stem.replace("_", " "): p for p in sorted(folder.glob("*.json"))}


def load_example(name: str) -> tuple[str, str]:
    """(question, passages as blank-line text with ``Title:`` lines) of a built-in example.

    Raises:
        InputError: unknown example name.
    """
    path = list_examples().get(name)
    if path is None:
        raise InputError(f"unknown example {name!r}")
    question, passages = read_passages_file(path)
    return question or "", passages_to_text(passages)


def passages_to_text(passages: list[Passage]) -> str:
    """Passages as blank-line separated text with optional ``Title:`` first lines."""
    return "\n\n".join((f"Title: {p.title}\n" if p.title else "") + p.text for p in passages)


def parse_input(passages_text: str | None, upload: str | None) -> tuple[str | None, list[Passage]]:
    """Passages from an uploaded file (if any) or from the text box.

    Raises:
        InputError: no passages, or a malformed file (the message says where).
    """
    if upload:
        return read_passages_file(upload)
    if not passages_text or not passages_text.strip():
        raise InputError("no passages: paste passages separated by blank lines, or upload a file")
    return None, parse_passages_text(passages_text)


# ---------------------------------------------------------------------------------- handlers
def run_rerank(
    backend: Backend,
    session: Session | None,
    question: str | None,
    passages_text: str | None,
    upload: str | None = None,
    knobs: Knobs | None = None,
) -> Result:
    """Main handler: parse, encode once (cached per input), rank, compare and render.

    Args:
        backend: the shared models.
        session: the user's state (None = new).
        question: the question (may be empty when an uploaded file holds one).
        passages_text: blank-line separated passages.
        upload: path of an uploaded ``.json`` / ``.jsonl`` / ``.txt`` (takes precedence).
        knobs: graph / context settings.

    Returns:
        A :class:`Result`; on bad input its status is an error box and the views are empty.
    """
    session = session if session is not None else Session()
    knobs = knobs or Knobs()
    try:
        file_question, passages = parse_input(passages_text, upload)
        q = (question or "").strip() or (file_question or "").strip()
        if not q:
            raise InputError("the question is empty: type a question")
        key = (q, tuple((p.title, p.text) for p in passages))
        if session.key != key or session.encoded is None:
            session = _encode(backend, q, passages, key, session)
        return _rank_and_render(backend, session, knobs, from_cache=session.recomputes > 0)
    except InputError as exc:
        return Result(status=viz.error_html(str(exc)), session=session)
    except Exception as exc:  # never crash the page
        log.exception("rerank failed")
        return Result(
            status=viz.error_html(f"internal error ({type(exc).__name__}): {exc}"), session=session
        )


def recompute(backend: Backend, session: Session | None, knobs: Knobs) -> Result:
    """Knob handler: re-run only the graph stages from the cached encodings.

    Returns:
        A :class:`Result` (a hint when nothing has been run yet).
    """
    if session is None or session.encoded is None:
        return Result(
            status="<div class='lr-status'>Run an example or your own input first; knob changes "
            "then recompute the graph stages from cached encodings.</div>",
            session=session or Session(),
        )
    try:
        return _rank_and_render(backend, session, knobs, from_cache=True)
    except Exception as exc:
        log.exception("recompute failed")
        return Result(
            status=viz.error_html(f"internal error ({type(exc).__name__}): {exc}"), session=session
        )


def redraw_graph(session: Session | None, top_n: Any) -> str:
    """Graph view filter: only the top-N sentences and their neighbours (no recomputation)."""
    if session is None or session.ranking is None:
        return ""
    knobs = Knobs.make(graph_top_n=top_n, top_k=session.knobs.top_k)
    session.knobs = dataclasses.replace(session.knobs, graph_top_n=knobs.graph_top_n)
    return _graph(session)


def explain(session: Session | None, node: Any) -> str:
    """Explain one sentence: local vs global, role, intent, neighbours and their attention."""
    if session is None or session.ranking is None:
        return "<div>Run a query first, then pick a sentence.</div>"
    ranking = session.ranking
    by_node = ranking.sentence_by_node()
    try:
        s = by_node[int(node)]
    except (TypeError, ValueError, KeyError):
        return "<div>Pick a sentence from the list.</div>"
    incoming = [(e, by_node[e.source]) for e in ranking.edges if e.target == s.node]
    outgoing = [(e, by_node[e.target]) for e in ranking.edges if e.source == s.node]

    def weight(item: tuple[Any, ScoredSentence]) -> float:
        att = item[0].attention
        return -(sum(att) / len(att)) if att else 0.0

    incoming.sort(key=weight)
    outgoing.sort(key=weight)
    intent = None
    if ranking.intent_by_passage and s.passage_idx < len(ranking.intent_by_passage):
        intent = ranking.intent_by_passage[s.passage_idx]
    signals = dict(session.signals.get(s.node, {}))
    signals["local_rank"] = session.local_ranks.get(s.node)
    return viz.explain_html(s, ranking, incoming, outgoing, intent, signals)


# ---------------------------------------------------------------------------------- internals
def _encode(backend: Backend, q: str, passages: list[Passage], key: Any, old: Session) -> Session:
    """Transformer pass for LoG and the fixed baselines; returns a fresh session.

    The input is validated and cut to the model's limits once, here, so LoG and every baseline
    rank exactly the same passages, and each notice is shown once.
    """
    q, passages, notices = prepare_input(q, passages, backend.log.limits)
    encoded = backend.log.encode(q, passages)
    encoded.warnings[:] = notices + [w for w in encoded.warnings if w not in notices]
    baselines: dict[str, Ranking] = {}
    timings: dict[str, float] = {}
    for name, ranker in backend.rankers().items():
        t0 = time.perf_counter()
        baselines[name] = ranker.rank(q, passages)
        timings[name] = time.perf_counter() - t0
    return Session(
        key=key,
        encoded=encoded,
        baselines=baselines,
        baseline_timings=timings,
        encodes=old.encodes + 1,
        knobs=old.knobs,
    )


def _cache_note(windows: Any, from_cache: bool) -> str:
    """Status text for the passage cache: how many windows reused cached passage states."""
    if from_cache or not windows or not windows[1]:
        return ""
    hit, total = windows
    if not hit:
        return " · passage cache: new passages"
    return f" · passage cache: {hit} of {total} windows reused (only the query and joint layer ran)"


def _rank_and_render(backend: Backend, session: Session, knobs: Knobs, from_cache: bool) -> Result:
    model = backend.log
    t0 = time.perf_counter()
    kwargs = knobs.rank_kwargs(model.config.graph, model.config.context)
    ranking = model.rank_encoded(session.encoded, **kwargs)
    local = model.rank_encoded(session.encoded, use_global=False, graph=kwargs["graph"])
    t_rank = time.perf_counter() - t0
    t0 = time.perf_counter()
    stage = backend.ce_stage(knobs.blend).rank(session.encoded.query, session.encoded.passages)
    t_stage = time.perf_counter() - t0
    session.recomputes += 1
    session.ranking = ranking
    session.knobs = knobs
    session.local_ranks = {s.node: s.rank for s in local.sentences}
    session.signals = _signals(ranking, session.baselines)
    rankings = {**session.baselines, "ce-stage": stage}

    timings = {k: v for k, v in ranking.timings.items() if k != "total"}
    if from_cache:
        for k in ("segment", "tokenize", "local"):
            timings.pop(k, None)
    if not from_cache:
        timings.update({f"{k} (baseline)": v for k, v in session.baseline_timings.items()})
    timings["ce-stage (baseline)"] = t_stage
    timings["LoG graph stages (this call)"] = t_rank
    notes = [
        f"{len(ranking.sentences)} sentences in {len(ranking.passages)} passages; edges: "
        + (
            ", ".join(f"{k} {v}" for k, v in ranking.info.get("edge_counts", {}).items() if v)
            or "none"
        ),
        (
            "Encodings: cached, transformer not re-run"
            if from_cache
            else "Encodings: computed (transformer pass)"
        )
        + _cache_note(ranking.info.get("passage_cache_windows"), from_cache)
        + f" · transformer passes this session: {session.encodes}"
        + f" · graph recomputations: {session.recomputes}",
    ]
    sc = ranking.info.get("score") or {}
    if sc.get("merge_duplicates") or sc.get("passage_weight") or sc.get("head_weight", 1.0) != 1.0:
        notes.append(
            "LoG sort score = the global logit adjusted as configured (logrerank/scoring.py): "
            f"duplicate consensus {'on' if sc.get('merge_duplicates') else 'off'}, passage term "
            f"beta {sc.get('passage_weight', 0.0):g}, head weight w {sc.get('head_weight', 1.0):g}"
            "; the local / global columns show the raw scores."
        )
    warnings = list(dict.fromkeys(ranking.warnings + stage.warnings))
    for b in session.baselines.values():
        for w in b.warnings:
            if w not in warnings:
                warnings.append(w)
    if not model.config.trained:
        notes.append(
            "The LoG model is an untrained initialisation: its graph correction starts at zero, "
            "so global = local scores, and roles / intents come from untrained heads. Treat "
            "the LoG columns as a demonstration of the mechanics, not as results."
        )
    device, precision = backend.device_info()
    status = viz.status_html(backend.model_rows(), device, precision, warnings, timings, notes)

    ctx = ranking.context or {}
    units = _clean(ctx.get("units", []))
    ctx_json = viz.context_units_json(units)
    choices = [
        (f"#{s.rank} {viz.sentence_ref(s)} {s.role or ''} · {viz.short(s.text, 70)}", s.node)
        for s in ranking.sentences
    ]
    first = ranking.sentences[0].node if ranking.sentences else None
    compare, metrics, slope = _comparison(ranking, local, rankings, knobs)
    return Result(
        status=status,
        graph=_graph(session),
        table=ranking_table(ranking, session.signals),
        heat=viz.heat_html(ranking, knobs.top_k, _passage_ranks(rankings)),
        compare=compare,
        slope=slope,
        metrics=metrics,
        context_prompt=ctx.get("prompt", ""),
        context_json=ctx_json,
        context_file=_write_context_file(ranking, units),
        tokens=_token_report(model, ranking),
        explain_choices=choices,
        explain_value=first,
        explain=explain(session, first) if first is not None else "",
        session=session,
    )


def _graph(session: Session) -> str:
    ranking = session.ranking
    doc = viz.graph_document(
        ranking, session.knobs.top_k, session.knobs.graph_top_n, signals=session.signals
    )
    return viz.graph_iframe(doc)


def _signals(ranking: Ranking, baselines: dict[str, Ranking]) -> dict[int, dict[str, Any]]:
    """Per LoG node: cross-encoder and BM25 sentence scores and ranks (aligned by position)."""
    out: dict[int, dict[str, Any]] = {s.node: {} for s in ranking.sentences}
    pos = {(s.passage_idx, s.sent_idx): s.node for s in ranking.sentences}
    for name, key in (("cross-encoder-sent", "ce"), ("bm25-sent", "bm25")):
        b = baselines.get(name)
        if b is None:
            continue
        for s in b.sentences:
            n = pos.get((s.passage_idx, s.sent_idx))
            if n is not None:
                out[n][key] = s.score
                out[n][key + "_rank"] = s.rank
    return out


def ranking_table(
    ranking: Ranking, signals: dict[int, dict[str, Any]] | None = None
) -> pd.DataFrame:
    """One row per sentence in rank order (text is plain text, never HTML).

    ``Δ vs CE`` is the cross-encoder rank minus the LoG rank: positive = LoG ranks it higher.
    """
    signals = signals or {}
    rows = []

    def r4(x: float | None) -> float | None:
        return round(x, 4) if x is not None and math.isfinite(x) else None

    for s in ranking.sentences:
        sig = signals.get(s.node, {})
        probs = s.role_probs or [None] * 3
        ce_rank = sig.get("ce_rank")
        rows.append(
            [
                s.rank,
                (ce_rank - s.rank) if ce_rank is not None else None,
                s.passage_idx + 1,
                s.sent_idx + 1,
                s.role,
                *(round(p, 3) if p is not None else None for p in probs),
                r4(s.local_score),
                r4(s.global_score),
                r4(sig.get("ce")),
                ce_rank,
                r4(sig.get("bm25")),
                s.text,
            ]
        )
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def _passage_ranks(rankings: dict[str, Ranking]) -> dict[str, dict[int, int]]:
    names = {"ce-stage": "CE stage", "bm25": "BM25", "evidence-graph": "evidence graph"}
    out = {}
    for key, label in names.items():
        r = rankings.get(key)
        if r is not None:
            out[label] = {p.passage_idx: p.rank for p in r.passages_ranked}
    return out


def overlap_at(a: list[Any], b: list[Any], k: int) -> float:
    """|top-k(a) ∩ top-k(b)| / k (k capped by the list length)."""
    k = min(k, len(a), len(b))
    return len(set(a[:k]) & set(b[:k])) / k if k else float("nan")


def kendall_tau(a: list[Any], b: list[Any]) -> float:
    """Kendall's tau-b between two orderings of the same items (items only in one are ignored)."""
    import numpy as np

    common = [x for x in a if x in set(b)]
    if len(common) < 2:
        return float("nan")
    rb = {x: i for i, x in enumerate(b)}
    x = np.arange(len(common), dtype=float)
    y = np.array([rb[c] for c in common], dtype=float)
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    num = float((dx * dy).sum())
    den = math.sqrt(float((dx != 0).sum()) * float((dy != 0).sum()))
    return num / den if den else float("nan")


def _comparison(
    ranking: Ranking, local: Ranking, rankings: dict[str, Ranking], knobs: Knobs
) -> tuple[str, pd.DataFrame, Any]:
    """Side-by-side top-10 lists, overlap / Kendall tau table and the slope chart."""

    def sent_items(r: Ranking) -> list[tuple[Any, str, str, str | None]]:
        return [
            ((s.passage_idx, s.sent_idx), viz.sentence_ref(s), s.text, s.role) for s in r.sentences
        ]

    role_of = {(s.passage_idx, s.sent_idx): s.role for s in ranking.sentences}
    text_of = {(s.passage_idx, s.sent_idx): s.text for s in ranking.sentences}
    log_name = "LoG (global)" if "graph stage (GAT)" in knobs.switches else "LoG (local only)"
    sent_cols = [{"name": log_name, "items": sent_items(ranking)}]
    ce = rankings.get("cross-encoder-sent")
    if ce is not None:
        sent_cols.append({"name": SENT_CE, "items": sent_items(ce), "note": _note(ce)})
    bm = rankings.get("bm25-sent")
    if bm is not None:
        sent_cols.append({"name": SENT_BM25, "items": sent_items(bm)})
    for c in sent_cols:
        c["items"] = [(k, lab, t, role_of.get(k)) for k, lab, t, _ in c["items"]]

    def pass_items(r: Ranking) -> list[tuple[Any, str, str, str | None]]:
        out = []
        for p in r.passages_ranked:
            title = r.passages[p.passage_idx].title
            text = r.passages[p.passage_idx].text
            label = f"P{p.passage_idx + 1}" + (f" · {title}" if title else "")
            out.append((p.passage_idx, label, "" if title else text, None))
        return out

    stage = rankings.get("ce-stage")
    pass_cols = [{"name": PASS_LOG, "items": pass_items(ranking)}]
    if stage is not None:
        pass_cols.append(
            {
                "name": f"{PASS_STAGE} (BM25 top-25 → CE, blend {knobs.blend:.2f})",
                "items": pass_items(stage),
                "note": _note(stage),
            }
        )
    for key, name in (("bm25", PASS_BM25), ("evidence-graph", PASS_GRAPH)):
        if rankings.get(key) is not None:
            pass_cols.append(
                {"name": name, "items": pass_items(rankings[key]), "note": _note(rankings[key])}
            )

    sent_ref = SENT_CE if ce is not None else log_name
    pass_ref = pass_cols[1]["name"] if stage is not None else PASS_LOG
    html_parts = [
        "<div style='font-size:13px;color:#444'>Arrows: rank shift against the cross-encoder "
        "(▲ = ranked higher than the cross-encoder did, ▼ = lower). Left border = role.</div>",
        viz.comparison_columns_html("Sentences: top-10", sent_cols, sent_ref),
        viz.comparison_columns_html("Passages: top-10 order", pass_cols, pass_ref),
    ]

    log_s = [k for k, *_ in sent_items(ranking)]
    log_p = [p.passage_idx for p in ranking.passages_ranked]
    rows = []
    for name, r in (
        ("cross-encoder (sentences)", ce),
        ("BM25 (sentences)", bm),
        ("LoG local only", local),
    ):
        if r is None or not r.sentences:
            continue
        other = [(s.passage_idx, s.sent_idx) for s in r.sentences]
        rows.append(
            [
                "sentence",
                name,
                overlap_at(log_s, other, 5),
                overlap_at(log_s, other, 10),
                kendall_tau(log_s, other),
            ]
        )
    for key, name in (
        ("ce-stage", "cross-encoder stage"),
        ("bm25", "BM25"),
        ("evidence-graph", "evidence-graph selector"),
    ):
        r = rankings.get(key)
        if r is None:
            continue
        other = r.passage_order()
        rows.append(
            [
                "passage",
                name,
                overlap_at(log_p, other, 5),
                overlap_at(log_p, other, 10),
                kendall_tau(log_p, other),
            ]
        )
    metrics = pd.DataFrame(rows, columns=METRIC_COLUMNS).round(3)

    slope = None
    if ce is not None:
        left = [((s.passage_idx, s.sent_idx), s.rank) for s in ce.sentences]
        right = [((s.passage_idx, s.sent_idx), s.rank) for s in ranking.sentences]
        labels = {k: f"P{k[0] + 1}·S{k[1] + 1}: {t}" for k, t in text_of.items()}
        slope = viz.slope_figure(left, right, labels, role_of, "cross-encoder", log_name, k=10)
    return "".join(html_parts), metrics, slope


def _note(r: Ranking) -> str:
    if r.info.get("degraded"):
        return "degraded: " + "; ".join(r.warnings)
    if r.info.get("trained") is False:
        return "untrained model"
    return ""


def _write_context_file(ranking: Ranking, units: list[dict[str, Any]]) -> str | None:
    """The structured context as a JSON file for download."""
    try:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        path = OUT_DIR / f"logrerank-context-{uuid.uuid4().hex[:12]}.json"
        payload = {
            "question": ranking.query,
            "model": ranking.info.get("model"),
            "trained": ranking.info.get("trained"),
            "k": (ranking.context or {}).get("k"),
            "units": units,
            "prompt": (ranking.context or {}).get("prompt", ""),
        }
        path.write_text(json.dumps(_clean(payload), indent=1, ensure_ascii=False), encoding="utf-8")
        return str(path)
    except OSError:
        log.exception("cannot write the context file")
        return None


def count_tokens(tokenizer: Any, text: str) -> int:
    """WordPiece tokens of ``text`` (no special tokens)."""
    if not text:
        return 0
    return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


def _token_report(model: Any, ranking: Ranking) -> str:
    prompt = (ranking.context or {}).get("prompt", "")
    top = ranking.passages_ranked[:10]
    flat = "\n\n".join(
        (
            ranking.passages[p.passage_idx].title + "\n"
            if ranking.passages[p.passage_idx].title
            else ""
        )
        + ranking.passages[p.passage_idx].text
        for p in top
    )
    try:
        a, b = count_tokens(model.tokenizer, prompt), count_tokens(model.tokenizer, flat)
    except Exception:
        a, b = len(prompt.split()), len(flat.split())
        unit = "words"
    else:
        unit = "tokens (backbone WordPiece)"
    ratio = f" ({a / b:.0%} of the flat context)" if b else ""
    n_units = len((ranking.context or {}).get("units", []))
    return (
        f"**Structured context:** {a:,} {unit} in {n_units} units{ratio} · "
        f"**flat top-{len(top)} passages (LoG order):** {b:,} {unit}"
    )


__all__ = [
    "ABLATIONS",
    "Backend",
    "Knobs",
    "Result",
    "Session",
    "explain",
    "kendall_tau",
    "list_examples",
    "load_example",
    "overlap_at",
    "parse_input",
    "ranking_table",
    "recompute",
    "redraw_graph",
    "run_rerank",
]
