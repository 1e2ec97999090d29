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

RELATION_COLORS: dict[str, str] = {
    "same-role": "#9E9E9E",
    "background->method": "#1F4E79",
    "background->result": "#2C7FB8",
    "method->background": "#8C564B",
    "method->result": "#B8860B",
    "result->background": "#C0392B",
    "result->method": "#7B8C1F",
    "similar": "#B279A2",
    "mentions": "#E66100",
    "mentioned-by": "#F5A25D",
    "shared-term": "#1A9850",
}
"""Edge colour per relation: seven in-passage adjacency types, the similarity type and the three
link types (:mod:`logrerank.links`)."""

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


def fmt(x: float | None, digits: int = 3) -> str:
    """A score for display (``–`` when missing or not finite)."""
    if x is None or not isinstance(x, (int, float)) or not math.isfinite(x):
        return "–"
    return f"{x:.{digits}f}"


# ---------------------------------------------------------------------------------- status
def status_html(
    models: list[tuple[str, str, bool | None]],
    device: str,
    precision: str,
    warnings: list[str],
    timings: dict[str, float],
    notes: list[str] | None = None,
) -> str:
    """Status panel: loaded models (trained or not), device, warnings and stage timings.

    Args:
        models: ``[(what, source, trained)]``; ``trained`` False shows a red badge.
        device: torch device.
        precision: compute precision.
        warnings: degradation / input warnings (each escaped).
        timings: seconds per stage.
        notes: extra neutral lines (escaped).
    """
    out = ["<div class='lr-status' style='font-size:13px;line-height:1.5'>"]
    for what, source, trained in models:
        if trained is False:
            badge = (
                "<span style='background:#cf222e;color:#fff;border-radius:4px;padding:0 5px;"
                "font-size:11px'>UNTRAINED</span>"
            )
        elif trained is None:
            badge = (
                "<span style='background:#a15c00;color:#fff;border-radius:4px;padding:0 5px;"
                "font-size:11px'>UNAVAILABLE</span>"
            )
        else:
            badge = (
                "<span style='background:#1a7f37;color:#fff;border-radius:4px;padding:0 5px;"
                "font-size:11px'>trained</span>"
            )
        out.append(f"<div><b>{esc(what)}</b> {badge} <code>{esc(source)}</code></div>")
    out.append(f"<div><b>Device</b> {esc(device)} ({esc(precision)})</div>")
    for n in notes or []:
        out.append(f"<div>{esc(n)}</div>")
    if timings:
        cells = " · ".join(f"{esc(k)} {v * 1000:.0f} ms" for k, v in timings.items())
        out.append(f"<div><b>Stage timings</b> {cells}</div>")
    for w in warnings:
        out.append(
            "<div class='lr-warning' style='background:#fff4e5;border-left:4px solid #d97706;"
            f"padding:3px 8px;margin-top:4px'>⚠️ {esc(w)}</div>"
        )
    out.append("</div>")
    return "".join(out)


def error_html(message: str) -> str:
    """A visible error box (message escaped)."""
    return (
        "<div class='lr-error' style='background:#ffebe9;border-left:4px solid #cf222e;"
        f"padding:6px 10px;font-size:14px'><b>Input error:</b> {esc(message)}</div>"
    )


__all__ = [
    "MAX_TEXT_IN_LIST",
    "RELATION_COLORS",
    "ROLE_COLORS",
    "UNKNOWN_ROLE_COLOR",
    "error_html",
    "esc",
    "fmt",
    "role_color",
    "sentence_ref",
    "short",
    "status_html",
]
