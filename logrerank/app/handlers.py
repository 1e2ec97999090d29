"""Handlers of the Gradio app: typed functions that call the library (no Gradio imports).

:mod:`logrerank.app.main` wires these to components; tests call them directly. The flow:

* :func:`run_rerank` parses the input, encodes it once (transformer pass) and renders every
  view; :func:`recompute` re-runs only the graph stages from the cached encodings when a knob
  changes; :func:`redraw_graph` and :func:`explain` only re-render.
* :func:`rank_session` calls the library and returns the data of one ranking
  (:class:`~logrerank.app.state.Ranked`); :mod:`logrerank.app.result_view` renders it.
* the models are a shared :class:`~logrerank.app.state.Backend`, the user's state a
  :class:`~logrerank.app.state.Session`, the page's content a :class:`~logrerank.app.state.Result`.
* :func:`list_examples`, :func:`load_example` and :func:`parse_input` read the built-in examples
  and the user's input.

Bad input never raises: the status panel says what is wrong; the result is marked not ``ok``
and the page keeps the last good results on screen (:mod:`logrerank.app.main`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from pathlib import Path
from typing import Any

from ..inputs.files import read_files
from ..inputs.passages import parse_passages_text, prepare_input, read_passages_file
from ..models.question_intent import question_intent_info
from ..ranking.context import apply_budget, estimate_tokens
from ..ranking.shown_roles import with_tagger_roles
from ..resources import package_path
from ..types import InputError, Passage, Ranking, ScoredSentence
from . import context_view, explain_view, labels, result_view, tables, viz
from .state import Backend, Knobs, Ranked, Result, Session

log = logging.getLogger(__name__)

EXAMPLES_DIR = package_path("app", "examples")


# ---------------------------------------------------------------------------------- examples
def example_name(path: Path) -> str:
    """The display name of an example: its ``"name"`` field, else the file name in words."""
    try:
        name = json.loads(path.read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        name = None
    return name if isinstance(name, str) and name.strip() else path.stem.replace("_", " ")


def list_examples() -> dict[str, Path]:
    """Built-in examples: display name -> JSON file under ``logrerank/app/examples`` (the
    5-15 passage ones, then the larger pools of ``examples/large``)."""
    files = sorted(EXAMPLES_DIR.glob("*.json")) + sorted(EXAMPLES_DIR.glob("large/*.json"))
    return {example_name(p): p for p in files}


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


Upload = str | list[str] | None
"""What the upload box gives: one path, several (``file_count="multiple"``) or none."""


def upload_paths(upload: Any) -> list[str]:
    """The uploaded files' paths (Gradio gives a path, a list of paths, or file objects)."""
    items = upload if isinstance(upload, (list, tuple)) else [upload]
    paths = [getattr(x, "name", x) for x in items if x]
    return [str(x) for x in paths if x]


def read_input(
    passages_text: str | None, upload: Upload, limits: Any = None
) -> tuple[str | None, list[Passage], list[str]]:
    """``(question, passages, notices)`` from the uploaded files (if any) or the text box.

    Several files (JSON, JSONL, TXT, PDF) are ranked together; a file that cannot be read is
    skipped with a notice (:func:`logrerank.inputs.files.read_files`).

    Raises:
        InputError: no passages, or no uploaded file could be read (the message says why).
    """
    paths = upload_paths(upload)
    if paths:
        files = read_files(paths, limits)
        return files.question, files.passages, files.notices
    if not passages_text or not passages_text.strip():
        raise InputError("no passages: paste passages separated by blank lines, or upload a file")
    return None, parse_passages_text(passages_text), []


def parse_input(passages_text: str | None, upload: Upload) -> tuple[str | None, list[Passage]]:
    """``(question, passages)`` of :func:`read_input`.

    Raises:
        InputError: no passages, or a malformed file (the message says where).
    """
    question, passages, _ = read_input(passages_text, upload)
    return question, passages


def input_source(passages_text: str | None, upload: Upload) -> str:
    """Which input the run uses, in words (uploaded files win over pasted text)."""
    names = [Path(p).name for p in upload_paths(upload)]
    if names:
        pasted = bool(passages_text and passages_text.strip())
        what = f"file {names[0]}" if len(names) == 1 else f"files {', '.join(names)}"
        return f"Input: the uploaded {what}" + (
            "; the pasted passages are ignored (remove the files to use them)" if pasted else ""
        )
    return "Input: the pasted passages"


# ---------------------------------------------------------------------------------- handlers
def run_rerank(
    backend: Backend,
    session: Session | None,
    question: str | None,
    passages_text: str | None,
    upload: Upload = None,
    knobs: Knobs | None = None,
) -> Result:
    """Main handler: parse, encode once (cached per input), rank, compare and render.

    Args:
        backend: the shared models.
        session: the user's state (None = new).
        question: the question (may be empty when an uploaded file holds one).
        passages_text: blank-line separated passages.
        upload: the uploaded ``.json`` / ``.jsonl`` / ``.txt`` / ``.pdf`` file(s) (take
            precedence over the pasted passages).
        knobs: graph / context settings.

    Returns:
        A :class:`Result`; on bad input its status is an error box and the views are empty.
    """
    session = session if session is not None else Session()
    knobs = knobs or Knobs()
    try:
        file_question, passages, file_notes = read_input(passages_text, upload, backend.log.limits)
        q = (question or "").strip() or (file_question or "").strip()
        if not q:
            raise InputError("the question is empty: type a question")
        key = (q, tuple((p.title, p.text) for p in passages))
        if session.key != key or session.encoded is None:
            session = _encode(backend, q, passages, key, session, knobs.cross_encoder, file_notes)
        source = input_source(passages_text, upload)
        return _rank_and_render(
            backend, session, knobs, from_cache=session.recomputes > 0, source=source
        )
    except InputError as exc:
        return _failed(str(exc), session)
    except Exception as exc:  # never crash the page
        log.exception("rerank failed")
        return _failed(f"internal error ({type(exc).__name__}): {exc}", session)


def _failed(message: str, session: Session) -> Result:
    """An error result; the page keeps the previous results (if any) on screen."""
    kept = (
        "<div class='lr-kept lr-note'>The results below are from the last successful run.</div>"
        if session.ranking is not None
        else ""
    )
    return Result(status=viz.error_html(message) + kept, ok=False, session=session, error=message)


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
        return _failed(f"internal error ({type(exc).__name__}): {exc}", session)


def redraw_graph(session: Session | None, top_n: Any) -> str:
    """Graph view filter: only the top-N sentences and their neighbours (no recomputation)."""
    if session is None or session.ranking is None:
        return ""
    knobs = Knobs.make(graph_top_n=top_n, top_k=session.knobs.top_k)
    session.knobs = dataclasses.replace(session.knobs, graph_top_n=knobs.graph_top_n)
    return result_view.graph_html(session)


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
    signals["log_name"], signals["ce_name"] = session.names
    return explain_view.explain_html(s, ranking, incoming, outgoing, intent, signals)


# ---------------------------------------------------------------------------------- internals
def _encode(
    backend: Backend,
    q: str,
    passages: list[Passage],
    key: Any,
    old: Session,
    choice: str = "",
    file_notes: list[str] | None = None,
) -> Session:
    """Transformer pass for LoG and the fixed baselines; returns a fresh session.

    The input is validated and cut to the model's limits once, here, so LoG and every baseline
    rank exactly the same passages, and each notice is shown once (``file_notes``: what
    reading the uploaded files skipped or left out, shown first).
    """
    q, passages, notices = prepare_input(q, passages, backend.log.limits)
    notices = list(file_notes or []) + notices
    encoded = backend.log.encode(q, passages)
    encoded.warnings[:] = notices + [w for w in encoded.warnings if w not in notices]
    session = Session(key=key, encoded=encoded, encodes=old.encodes + 1, knobs=old.knobs)
    _rank_baselines(backend, session, choice)
    return session


def _rank_baselines(backend: Backend, session: Session, choice: str) -> None:
    """Rank the session's input with the fixed baselines of one cross-encoder choice."""
    q, passages = session.encoded.query, session.encoded.passages
    session.baselines, session.baseline_timings = {}, {}
    for name, ranker in backend.rankers(choice).items():
        t0 = time.perf_counter()
        session.baselines[name] = ranker.rank(q, passages)
        session.baseline_timings[name] = time.perf_counter() - t0
    session.ce_choice = choice


def _budgeted(model: Any, ranking: Ranking, knobs: Knobs) -> None:
    """Cut the ranking's structured context to the knobs' budget (backbone WordPiece tokens)."""
    if not ranking.context:
        return

    def count(text: str) -> int:
        return context_view.count_tokens(model.tokenizer, text)

    try:
        count("probe")
    except Exception:  # no usable tokenizer: the library's estimate
        count = estimate_tokens  # type: ignore[assignment]
    k_flat = min(knobs.top_k, len(ranking.passages_ranked))
    flat = count(context_view.flat_text(ranking, k_flat))
    cfg = knobs.budget(model.config.context, flat)
    ranking.context = apply_budget(ranking.context, cfg, count)


def rank_session(
    backend: Backend, session: Session, knobs: Knobs, from_cache: bool, source: str = ""
) -> Ranked:
    """Rank the session's cached input under ``knobs``: LoG's graph stages, its local stage,
    the cross-encoder stage, and the baselines again when another cross-encoder was picked.

    The ranking's sentences carry the role tagger's roles
    (:func:`~logrerank.ranking.shown_roles.with_tagger_roles`; the LoG role head's reading is
    kept in its ``info``). Updates the session (latest ranking, local ranks, baseline signals,
    names); renders nothing (:func:`logrerank.app.result_view.render` does).

    Args:
        backend: the shared models.
        session: the user's state holding the encoded input.
        knobs: graph / context settings.
        from_cache: the encodings were reused (no transformer pass in this call).
        source: which input the run used, in words.
    """
    model = backend.log
    choice = knobs.cross_encoder
    switched = choice != session.ce_choice
    if switched:  # another cross-encoder picked: re-rank the baselines, not the transformer
        _rank_baselines(backend, session, choice)
    t0 = time.perf_counter()
    kwargs = knobs.rank_kwargs(model.config.graph, model.config.context)
    ranking = model.rank_encoded(session.encoded, **kwargs)
    t_rank = time.perf_counter() - t0
    # the shown roles: the role tagger's (timed on its own), the LoG role head's kept in info
    ranking = with_tagger_roles(ranking, backend.role_tagger, cache=session.tagger_roles)
    t0 = time.perf_counter()
    ranking.info["question_intent"] = question_intent_info(ranking.query)
    _budgeted(model, ranking, knobs)
    local = model.rank_encoded(session.encoded, use_global=False, graph=kwargs["graph"])
    t_rank += time.perf_counter() - t0
    t0 = time.perf_counter()
    stage = backend.ce_stage(knobs.blend, choice)
    stage = stage.rank(session.encoded.query, session.encoded.passages)
    t_stage = time.perf_counter() - t0
    session.recomputes += 1
    session.ranking = ranking
    session.knobs = knobs
    session.local_ranks = {s.node: s.rank for s in local.sentences}
    session.signals = tables.baseline_signals(ranking, session.baselines)

    timings = {k: v for k, v in ranking.timings.items() if k != "total"}
    if from_cache:
        for k in ("segment", "tokenize", "local"):
            timings.pop(k, None)
    if not from_cache or switched:
        timings.update({f"{k} (baseline)": v for k, v in session.baseline_timings.items()})
    timings["ce-stage (baseline)"] = t_stage
    timings["LoG graph stages (this call)"] = t_rank
    session.names = (labels.log_label(knobs.switches), labels.ce_label(backend, choice))
    warnings = backend.startup_warnings(choice) + ranking.warnings + stage.warnings
    warnings += [w for b in session.baselines.values() for w in b.warnings]
    return Ranked(
        ranking=ranking,
        local=local,
        rankings={**session.baselines, "ce-stage": stage},
        timings=timings,
        warnings=list(dict.fromkeys(warnings)),
        log_name=session.names[0],
        ce_name=session.names[1],
        from_cache=from_cache,
        model=model,
        models=backend.model_rows(choice),
        device=backend.device_info(),
        source=source,
        trained=bool(model.config.trained),
    )


def _rank_and_render(
    backend: Backend, session: Session, knobs: Knobs, from_cache: bool, source: str = ""
) -> Result:
    """:func:`rank_session`, rendered (:func:`logrerank.app.result_view.render`), with the
    Explain view of the first sentence."""
    ranked = rank_session(backend, session, knobs, from_cache, source)
    res = result_view.render(ranked, session, knobs)
    res.explain = explain(session, res.explain_value) if res.explain_value is not None else ""
    return res


__all__ = [
    "EXAMPLES_DIR",
    "example_name",
    "explain",
    "input_source",
    "list_examples",
    "load_example",
    "parse_input",
    "read_input",
    "upload_paths",
    "passages_to_text",
    "recompute",
    "rank_session",
    "redraw_graph",
    "run_rerank",
]
