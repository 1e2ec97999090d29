"""Small HTML helpers shared by the app's views: escaping, colours, labels, status and errors.

Every function of the app's views (:mod:`.graph_view`, :mod:`.heat_view`, :mod:`.compare_view`,
:mod:`.explain_view` and this module) is pure (data in, string / figure out) and escapes all
user-supplied text:

* HTML fragments go through :func:`html.escape` (``quote=True`` for attributes), here
  :func:`esc`;
* the graph is a complete pyvis document (vis-network inlined from pyvis' bundled copy, no
  CDN) whose node and edge data enter the page through Jinja's ``tojson`` (``<``, ``>``, ``&``
  and ``'`` become ``\\u`` escapes) and whose tooltips are built in the page with
  ``textContent`` (never parsed as HTML); the document is then embedded as an iframe
  ``srcdoc`` with the whole document escaped for the attribute, in a sandbox that allows scripts
  but not the app's origin;
* plotly hover text is escaped too (plotly renders a subset of HTML in labels).
"""

from __future__ import annotations

import html
import math
from typing import Any

from ..types import ScoredSentence

ROLE_COLORS: dict[str, str] = {
    "background": "#4C78A8",
    "method": "#F58518",
    "result": "#54A24B",
}
"""Node colour per predicted role (shared by graph, heat text, table and charts)."""

RELATION_STYLES: dict[str, dict[str, Any]] = {
    "same-role": {"color": "#9E9E9E", "dash": None, "symmetric": False, "where": "in passage"},
    "background->method": {
        "color": "#1F4E79",
        "dash": None,
        "symmetric": False,
        "where": "in passage",
    },
    "background->result": {
        "color": "#2C7FB8",
        "dash": None,
        "symmetric": False,
        "where": "in passage",
    },
    "method->background": {
        "color": "#8C564B",
        "dash": None,
        "symmetric": False,
        "where": "in passage",
    },
    "method->result": {"color": "#B8860B", "dash": None, "symmetric": False, "where": "in passage"},
    "result->background": {
        "color": "#C0392B",
        "dash": None,
        "symmetric": False,
        "where": "in passage",
    },
    "result->method": {"color": "#7B8C1F", "dash": None, "symmetric": False, "where": "in passage"},
    "similar": {
        "color": "#B279A2",
        "dash": [6, 4],
        "symmetric": True,
        "where": "other passage, cosine",
    },
    "mentions": {
        "color": "#D62728",
        "dash": [2, 3],
        "symmetric": False,
        "where": "names a passage's title",
    },
    "mentioned-by": {
        "color": "#17A2B8",
        "dash": [2, 3],
        "symmetric": False,
        "where": "its title is named",
    },
    "shared-term": {
        "color": "#C79A00",
        "dash": [10, 3, 2, 3],
        "symmetric": True,
        "where": "other passage, rare term",
    },
}
"""Edge style per relation name (``logrerank.graph.sentence_graph.relation_name``): colour, vis-network dash
pattern (None = solid), whether the relation is stored in both directions (drawn and counted as
one link) and where it links. :func:`relation_style` falls back for names not listed here."""

FALLBACK_STYLE: dict[str, Any] = {
    "color": "#777777",
    "dash": [1, 3],
    "symmetric": False,
    "where": "other relation",
}
RELATION_COLORS: dict[str, str] = {name: st["color"] for name, st in RELATION_STYLES.items()}
"""Edge colour per relation name (from :data:`RELATION_STYLES`)."""

UNKNOWN_ROLE_COLOR = "#BBBBBB"
MAX_TEXT_IN_LIST = 160  # characters of a sentence shown in compact lists


def esc(value: Any) -> str:
    """``html.escape`` of ``str(value)`` with quotes escaped (safe in text and attributes)."""
    return html.escape(str(value), quote=True)


def short(text: str, limit: int = MAX_TEXT_IN_LIST) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis (not escaped)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def role_color(role: str | None) -> str:
    """Colour of a role label (grey when unknown)."""
    return ROLE_COLORS.get(role or "", UNKNOWN_ROLE_COLOR)


def sentence_ref(s: ScoredSentence) -> str:
    """Short 1-based reference ``P2·S3`` of a sentence."""
    return f"P{s.passage_idx + 1}·S{s.sent_idx + 1}"


def relation_style(name: str) -> dict[str, Any]:
    """Style of a relation name (:data:`RELATION_STYLES`, else :data:`FALLBACK_STYLE`)."""
    return RELATION_STYLES.get(name, FALLBACK_STYLE)


def link_counts(edges: Any, shown: set[int] | None = None) -> dict[str, int]:
    """Links per relation name: a symmetric relation's two directions count once.

    The status line, the graph legend and the graph itself all count with this, so their
    numbers agree. ``shown`` limits the count to edges between those nodes.
    """
    counts: dict[str, int] = {}
    pairs: set[tuple[str, int, int]] = set()
    for e in edges:
        if shown is not None and (e.source not in shown or e.target not in shown):
            continue
        if relation_style(e.relation)["symmetric"]:
            key = (e.relation, min(e.source, e.target), max(e.source, e.target))
            if key in pairs:
                continue
            pairs.add(key)
        counts[e.relation] = counts.get(e.relation, 0) + 1
    return counts


def relation_order(names: Any) -> list[str]:
    """Relation names in ``logrerank.graph.sentence_graph.Relation`` order, then any other names sorted."""
    from ..graph.sentence_graph import Relation, relation_name

    known = []
    for r in Relation:
        try:
            known.append(relation_name(int(r)))
        except Exception:  # a relation without a name yet
            continue
    extra = sorted(set(names) - set(known))
    return known + extra


def fmt(x: float | None, digits: int = 3) -> str:
    """A score for display (``–`` when missing or not finite)."""
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return "–"
    return f"{x:.{digits}f}"


# ---------------------------------------------------------------------------------- status
def _badge(trained: bool | None) -> str:
    text = "UNTRAINED" if trained is False else "UNAVAILABLE" if trained is None else "trained"
    return f"<span class='lr-badge lr-badge-{text.lower()}'>{text}</span>"


def status_html(
    models: list[tuple[str, str, bool | None]],
    device: str,
    precision: str,
    warnings: list[str],
    timings: dict[str, float],
    notes: list[str] | None = None,
    summary: list[str] | None = None,
) -> str:
    """Status panel: models (trained or not) and device on one line, the ``summary`` lines,
    warnings, and a collapsed "details" part with the model sources, ``notes`` and timings.

    Args:
        models: ``[(what, source, trained)]``; ``trained`` False shows a red badge.
        device: torch device.
        precision: compute precision.
        warnings: degradation / input warnings (each escaped, always visible).
        timings: seconds per stage.
        notes: extra neutral lines inside the details (escaped).
        summary: lines shown without opening the details (escaped).
    """
    head = " · ".join(f"<b>{esc(what)}</b> {_badge(trained)}" for what, _, trained in models)
    out = [
        "<div class='lr-status'>",
        f"<div>{head} · <b>Device</b> {esc(device)} ({esc(precision)})</div>",
    ]
    for line in summary or []:
        out.append(f"<div class='lr-summary'>{esc(line)}</div>")
    for w in warnings:
        out.append(f"<div class='lr-warning'>⚠️ {esc(w)}</div>")
    out.append(
        "<details class='lr-more'><summary>Details: models, "
        "graph links, encodings, timings</summary>"
    )
    for what, source, _ in models:
        out.append(f"<div><b>{esc(what)}</b> <code>{esc(source)}</code></div>")
    for n in notes or []:
        out.append(f"<div>{esc(n)}</div>")
    if timings:
        cells = " · ".join(f"{esc(k)} {v * 1000:.0f} ms" for k, v in timings.items())
        out.append(f"<div><b>Stage timings</b> {cells}</div>")
    out.append("</details></div>")
    return "".join(out)


def error_html(message: str) -> str:
    """A visible error box (message escaped)."""
    return f"<div class='lr-error'><b>Input error:</b> {esc(message)}</div>"


__all__ = [
    "FALLBACK_STYLE",
    "MAX_TEXT_IN_LIST",
    "RELATION_COLORS",
    "RELATION_STYLES",
    "ROLE_COLORS",
    "UNKNOWN_ROLE_COLOR",
    "error_html",
    "esc",
    "fmt",
    "link_counts",
    "relation_order",
    "relation_style",
    "role_color",
    "sentence_ref",
    "short",
    "status_html",
]
