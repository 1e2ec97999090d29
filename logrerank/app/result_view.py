"""Render one ranking call (:class:`~logrerank.app.state.Ranked`) into the page's content.

:func:`logrerank.app.handlers.rank_session` calls the library and returns the data; the
functions here only turn it into the status panel's prose and the views' HTML and tables
(:class:`~logrerank.app.state.Result`). No Gradio imports, no model calls besides counting the
context's tokens with the model's tokenizer.
"""

from __future__ import annotations

from typing import Any

from ..ranking.selection import order_note
from ..ranking.shown_roles import TAGGER_SOURCE, role_source
from ..ranking.treatment import headline, pool_treatment
from ..types import json_safe
from . import context_view, graph_view, heat_view, tables, viz
from .state import Knobs, Ranked, Result, Session


def cache_note(windows: Any, from_cache: bool) -> str:
    """Status text for the passage cache: how many windows reused cached passage states."""
    if from_cache or not windows or not windows[1]:
        return ""
    hit, total = windows
    if not hit:
        return " · passage cache: new passages"
    return f" · passage cache: {hit} of {total} windows reused (only the query and joint layer ran)"


def summary_lines(out: Ranked, session: Session) -> list[str]:
    """The status panel's first lines: what ranked and how the pool was treated
    (:func:`~logrerank.ranking.treatment.headline`: "local scores only" when the graph changed
    nothing), the input, its size and the time."""
    ranking = out.ranking
    treated = pool_treatment(ranking, [s.node for s in out.local.sentences])
    what = headline(treated, out.log_name, len(ranking.sentences))
    lines = [f"{what} · compared with: the {out.ce_name} and BM25"]
    lines += [out.source] if out.source else []
    lines.append(
        f"{len(ranking.sentences)} sentences in {len(ranking.passages)} passages · "
        + ("encodings cached" if out.from_cache else "encodings computed")
        + f" · {sum(t for t in out.timings.values()):.1f} s"
    )
    if not out.trained:
        lines.append(
            "The LoG model is an untrained initialisation: its graph correction starts at zero, "
            "so global = local scores, and roles / intents come from untrained heads. Treat "
            "the LoG columns as a demonstration of the mechanics, not as results."
        )
    return lines


def notes(out: Ranked, session: Session) -> list[str]:
    """The status panel's details: graph links, encodings and cache, score settings."""
    ranking, from_cache = out.ranking, out.from_cache
    links = viz.link_counts(ranking.edges)
    shown = ", ".join(f"{k} {links[k]}" for k in viz.relation_order(links) if links.get(k))
    lines = [
        "Graph links (a two-way pair counts once): " + (shown or "none"),
        (
            "Encodings: cached, transformer not re-run"
            if from_cache
            else "Encodings: computed (transformer pass)"
        )
        + cache_note(ranking.info.get("passage_cache_windows"), from_cache)
        + f" · transformer passes this session: {session.encodes}"
        + f" · graph recomputations: {session.recomputes}",
    ]
    if role_source(ranking) == TAGGER_SOURCE:
        lines.append(
            "Sentence roles: the role tagger's (read per passage); the LoG role head's own "
            "reading (eq. 3, used inside the local score) is in Explain"
        )
    sc = ranking.info.get("score") or {}
    head = sc.get("head_weight", 1.0)
    if sc.get("merge_duplicates") or sc.get("passage_weight") or head != 1.0:
        lines.append(
            "LoG sort score = the global logit adjusted as configured (logrerank/ranking/scoring.py): "
            f"duplicate consensus {'on' if sc.get('merge_duplicates') else 'off'}, passage term "
            f"beta {sc.get('passage_weight', 0.0):g}, head weight w {head:g}"
            "; the local / global columns show the raw scores."
        )
    a, b = ranking.info.get("calibration") or (1.0, 0.0)
    if (a, b) != (1.0, 0.0):
        lines.append(
            f"Shown LoG scores are calibrated: sigmoid({a:.3g} x final logit {b:+.3g}) "
            "(score.calibration_a / _b; the order is the logits', the local / global columns "
            "are not calibrated)."
        )
    return lines


def graph_html(session: Session) -> str:
    """The graph view of the session's latest ranking under its knobs (an iframe)."""
    doc = graph_view.graph_document(
        session.ranking, session.knobs.top_k, session.knobs.graph_top_n, signals=session.signals
    )
    return graph_view.graph_iframe(doc)


def explain_choices(out: Ranked) -> list[tuple[str, int]]:
    """The Explain menu: ``(label, node)`` per sentence in rank order."""
    return [
        (f"#{s.rank} {viz.sentence_ref(s)} {s.role or ''} · {viz.short(s.text, 70)}", s.node)
        for s in out.ranking.sentences
    ]


def render(out: Ranked, session: Session, knobs: Knobs) -> Result:
    """Every view of one ranking call (the Explain text is left to the caller).

    Args:
        out: what :func:`~logrerank.app.handlers.rank_session` returned.
        session: the user's state after that call.
        knobs: the settings it ran with.
    """
    ranking = out.ranking
    status = viz.status_html(
        out.models, *out.device, out.warnings, out.timings, notes(out, session),
        summary_lines(out, session),
    )  # fmt: skip
    ctx = ranking.context or {}
    units = json_safe(ctx.get("units", []))
    compare, metrics, slope = tables.comparison(
        ranking, out.local, out.rankings, knobs, out.ce_name
    )
    log_name, ce_name = out.log_name, out.ce_name
    return Result(
        status=status,
        graph=graph_html(session),
        table=tables.ranking_table(ranking, session.signals),
        details=tables.details_table(ranking, session.signals),
        heat=heat_view.heat_html(ranking, knobs.top_k, tables.passage_ranks(out.rankings)),
        compare=compare,
        slope=slope,
        metrics=metrics,
        context_prompt=ctx.get("prompt", ""),
        context_json=context_view.context_units_json(units),
        context_file=context_view.write_context_file(ranking, units),
        tokens=context_view.token_report(out.model, ranking, knobs.top_k),
        explain_choices=explain_choices(out),
        explain_value=ranking.sentences[0].node if ranking.sentences else None,
        session=session,
        table_label=f"Sentences ranked by {log_name} · {order_note(ranking)} · "
        f"Δ vs CE > 0: {log_name} ranks it higher than the {ce_name}",
        metrics_label=f"Agreement with {log_name} (n/a: every item fits in the top k, or too few)",
    )


__all__ = [
    "cache_note",
    "explain_choices",
    "graph_html",
    "notes",
    "render",
    "summary_lines",
]
