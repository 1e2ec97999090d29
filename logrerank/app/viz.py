"""HTML and chart rendering for the app: sentence graph (pyvis), heat text, comparison views.

Every function here is pure (data in, string / figure out) and escapes all user-supplied text:

* HTML fragments go through :func:`html.escape` (``quote=True`` for attributes);
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
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from ..config import ROLE_NAMES
from ..types import GraphEdge, Ranking, ScoredSentence

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
}
"""Edge colour per relation: seven in-passage adjacency types and the similarity type."""

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


# ---------------------------------------------------------------------------------- graph
_PYVIS_TEMPLATES = Path(__import__("pyvis").__file__).resolve().parent / "templates"

_GRAPH_TEMPLATE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:">
<script>{% include 'lib/vis-9.1.2/vis-network.min.js' %}</script>
<style>
html, body { margin: 0; padding: 0; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; background: #fff; }
#mynetwork { width: {{width}}; height: {{height}}; position: relative; }
div.vis-tooltip { position: absolute; visibility: hidden; padding: 6px 8px; white-space: normal;
  font-size: 12px; color: #111; background: #fffef5; border: 1px solid #999; border-radius: 4px;
  box-shadow: 2px 2px 8px rgba(0,0,0,.2); pointer-events: none; z-index: 5; max-width: 420px; }
div.tip { white-space: pre-wrap; }
#legend { position: absolute; top: 6px; left: 6px; z-index: 4; background: rgba(255,255,255,.92);
  border: 1px solid #ddd; border-radius: 6px; padding: 6px 8px; font-size: 11px; line-height: 1.45; max-width: 230px; }
#legend b { font-size: 11px; }
#legend .sw { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 4px; vertical-align: middle; }
#legend .ln { display: inline-block; width: 22px; height: 0; border-top: 3px solid; margin-right: 4px; vertical-align: middle; }
#legend .dash { border-top-style: dashed; }
#meta { position: absolute; bottom: 6px; right: 8px; font-size: 11px; color: #555; z-index: 4; background: rgba(255,255,255,.8); }
</style>
</head>
<body>
<div id="mynetwork"></div>
<script type="text/javascript">
var nodes, edges, network, data, options;
function tipEl(t) { var d = document.createElement("div"); d.className = "tip"; d.textContent = t; return d; }
function drawGraph() {
  var container = document.getElementById("mynetwork");
  var rawNodes = {{nodes|tojson}};
  var rawEdges = {{edges|tojson}};
  rawNodes.forEach(function (n) { if (typeof n.title === "string") { n.title = tipEl(n.title); } });
  rawEdges.forEach(function (e) { if (typeof e.title === "string") { e.title = tipEl(e.title); } });
  nodes = new vis.DataSet(rawNodes);
  edges = new vis.DataSet(rawEdges);
  data = {nodes: nodes, edges: edges};
  options = {{options|safe}};
  network = new vis.Network(container, data, options);
  network.once("stabilizationIterationsDone", function () {
    network.setOptions({physics: false});
    network.fit();
    document.body.setAttribute("data-stabilized", "1");
  });
  return network;
}
drawGraph();
</script>
</body>
</html>
"""


def _graph_env():
    from jinja2 import ChoiceLoader, DictLoader, Environment, FileSystemLoader

    return Environment(
        loader=ChoiceLoader(
            [
                DictLoader({"logrerank_graph.html": _GRAPH_TEMPLATE}),
                FileSystemLoader(_PYVIS_TEMPLATES),
            ]
        ),
        autoescape=False,  # data enters only through |tojson; the rest is our own markup
    )


def graph_legend_html(
    num_nodes: int, num_shown: int, top_k: int, edge_counts: dict[str, int]
) -> str:
    """The legend overlay of the graph (roles, marks, relation styles, counts)."""
    parts = ["<div id='legend'><b>Nodes</b> = sentences<br>"]
    for role, color in ROLE_COLORS.items():
        parts.append(f"<span class='sw' style='background:{color}'></span>{esc(role)}<br>")
    parts.append(
        f"size = global score<br>★ thick border = top-{int(top_k)} context unit<br><b>Edges</b><br>"
    )
    for rel, color in RELATION_COLORS.items():
        n = edge_counts.get(rel, 0)
        if rel != "similar" and not n:
            continue
        dash = " dash" if rel == "similar" else ""
        label = "similar (other passage, cosine)" if rel == "similar" else rel + " (in passage)"
        parts.append(
            f"<span class='ln{dash}' style='border-color:{color}'></span>{esc(label)} · {n}<br>"
        )
    parts.append(f"showing {int(num_shown)} of {int(num_nodes)} nodes</div>")
    return "".join(parts)


def filter_nodes(ranking: Ranking, top_n: int) -> set[int]:
    """Nodes of the top ``top_n`` sentences and their graph neighbours (all when ``top_n <= 0``)."""
    if top_n <= 0 or top_n >= len(ranking.sentences):
        return {s.node for s in ranking.sentences}
    keep = {s.node for s in ranking.sentences[:top_n]}
    shown = set(keep)
    for e in ranking.edges:
        if e.source in keep:
            shown.add(e.target)
        if e.target in keep:
            shown.add(e.source)
    return shown


def _initial_positions(ranking: Ranking) -> dict[int, tuple[float, float]]:
    """Passages on a circle, their sentences on a short arc: physics then only refines."""
    by_passage: dict[int, list[ScoredSentence]] = {}
    for s in sorted(ranking.sentences, key=lambda s: s.node):
        by_passage.setdefault(s.passage_idx, []).append(s)
    n_p = max(1, len(ranking.passages))
    radius = 120.0 + 45.0 * n_p
    pos = {}
    for p, sents in by_passage.items():
        a = 2 * math.pi * p / n_p
        cx, cy = radius * math.cos(a), radius * math.sin(a)
        for j, s in enumerate(sents):
            b = a + math.pi / 2
            off = (j - (len(sents) - 1) / 2) * 38.0
            pos[s.node] = (cx + off * math.cos(b), cy + off * math.sin(b))
    return pos


def _node_tooltip(s: ScoredSentence, ranking: Ranking, extra: dict[str, Any]) -> str:
    p = ranking.passages[s.passage_idx]
    probs = s.role_probs or []
    role_line = ", ".join(f"{r} {x:.2f}" for r, x in zip(ROLE_NAMES, probs)) or "–"
    title = f' "{short(p.title, 80)}"' if p.title else ""
    lines = [
        f"#{s.rank}  passage {s.passage_idx + 1}{title}, sentence {s.sent_idx + 1}",
        short(s.text, 400),
        "",
        f"role: {s.role or '–'} ({role_line})",
        f"global {fmt(s.global_score)} · local {fmt(s.local_score)}",
    ]
    if extra.get("ce") is not None:
        lines.append(
            f"cross-encoder {fmt(extra['ce'])} (rank {extra.get('ce_rank', '–')})"
            f" · BM25 {fmt(extra.get('bm25'))}"
        )
    return "\n".join(lines)


def graph_document(
    ranking: Ranking,
    top_k: int = 10,
    top_n: int = 0,
    signals: dict[int, dict[str, Any]] | None = None,
    height_px: int = 600,
) -> str:
    """The sentence graph as a complete, self-contained HTML document (pyvis, vis-network inline).

    Args:
        ranking: a LoG ranking (sentences, edges with relation and attention).
        top_k: the number of top sentences marked as selected context units.
        top_n: show only the top ``top_n`` sentences and their neighbours (0 = all).
        signals: per node extra scores for tooltips (``ce``, ``ce_rank``, ``bm25``).
        height_px: canvas height.

    Returns:
        The HTML document (to be embedded with :func:`graph_iframe`).
    """
    from pyvis.network import Network

    signals = signals or {}
    shown = filter_nodes(ranking, top_n)
    net = Network(height=f"{height_px}px", width="100%", directed=True, cdn_resources="in_line")
    net.templateEnv = _graph_env()
    net.path = "logrerank_graph.html"
    pos = _initial_positions(ranking)
    n_total = len(ranking.sentences)
    label_all = len(shown) <= 80
    for s in sorted(ranking.sentences, key=lambda s: s.node):
        if s.node not in shown:
            continue
        score = s.score if math.isfinite(s.score) else 0.0
        selected = s.rank <= top_k
        color = role_color(s.role)
        label = f"★{s.rank}" if selected else (sentence_ref(s) if label_all else "")
        x, y = pos.get(s.node, (0.0, 0.0))
        net.add_node(
            s.node,
            label=label or " ",
            shape="dot",
            color={
                "background": color,
                "border": "#111111" if selected else color,
                "highlight": {"background": color, "border": "#000000"},
            },
            size=8 + 26 * max(0.0, min(1.0, score)),
            borderWidth=4 if selected else 1,
            title=_node_tooltip(s, ranking, signals.get(s.node, {})),
            x=x,
            y=y,
            font={"size": 12 if selected else 10, "color": "#222222"},
        )
        if not label:
            net.node_map[s.node]["label"] = ""
    edge_counts = _add_edges(net, ranking.edges, shown, ranking)
    options = {
        "autoResize": True,
        "layout": {"improvedLayout": False, "randomSeed": 7},
        "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False},
        "nodes": {"shape": "dot"},
        "edges": {"smooth": False, "selectionWidth": 2},
        "physics": {
            "enabled": True,
            "solver": "barnesHut",
            "barnesHut": {
                "gravitationalConstant": -3500,
                "springLength": 90,
                "springConstant": 0.03,
                "damping": 0.35,
                "avoidOverlap": 0.2,
            },
            "minVelocity": 1.5,
            "stabilization": {
                "enabled": True,
                "iterations": 160,
                "updateInterval": 40,
                "fit": True,
            },
        },
    }
    net.options = options
    doc = net.generate_html()
    legend = graph_legend_html(n_total, len(shown), top_k, edge_counts)
    meta = (
        f"<div id='meta' data-nodes='{len(shown)}' data-edges='{len(net.edges)}' "
        f"data-total-nodes='{n_total}'>drag to move · scroll to zoom · hover for details</div>"
    )
    return doc.replace("<body>\n", "<body>\n" + legend + meta + "\n", 1)


def _add_edges(net, edges: list[GraphEdge], shown: set[int], ranking: Ranking) -> dict[str, int]:
    """Adjacency edges (arrows, colour by relation) and merged similarity pairs (dashed)."""
    by_node = ranking.sentence_by_node()
    counts: dict[str, int] = {}
    sim_pairs: dict[tuple[int, int], dict[str, Any]] = {}
    for e in edges:
        if e.source not in shown or e.target not in shown:
            continue
        att = e.attention or []
        if e.relation == "similar":
            key = (min(e.source, e.target), max(e.source, e.target))
            entry = sim_pairs.setdefault(key, {"sim": e.similarity, "att": {}})
            entry["att"][(e.source, e.target)] = att
            continue
        counts[e.relation] = counts.get(e.relation, 0) + 1
        a = sum(att) / len(att) if att else None
        u, v = by_node[e.source], by_node[e.target]
        title = (
            f"{e.relation} (in passage {u.passage_idx + 1}): {sentence_ref(u)} → {sentence_ref(v)}"
        )
        if att:
            title += "\nattention into target per layer: " + ", ".join(f"{x:.2f}" for x in att)
        net.add_edge(
            e.source,
            e.target,
            color=RELATION_COLORS.get(e.relation, "#999999"),
            width=1.5 + (4 * a if a is not None else 0.0),
            arrows="to",
            title=title,
        )
    for (u, v), entry in sim_pairs.items():
        counts["similar"] = counts.get("similar", 0) + 1
        su, sv = by_node[u], by_node[v]
        title = f"similar, cosine {fmt(entry['sim'], 2)}: {sentence_ref(su)} ↔ {sentence_ref(sv)}"
        for (a, b), att in sorted(entry["att"].items()):
            if att:
                title += (
                    f"\nattention {sentence_ref(by_node[a])} → {sentence_ref(by_node[b])}: "
                    + ", ".join(f"{x:.2f}" for x in att)
                )
        net.add_edge(
            u,
            v,
            color=RELATION_COLORS["similar"],
            width=1.0 + 2.0 * max(0.0, (entry["sim"] or 0.0)),
            dashes=True,
            arrows={"to": {"enabled": False}},
            title=title,
        )
    return counts


def graph_iframe(document: str, height_px: int = 620) -> str:
    """Embed an HTML document as a sandboxed iframe ``srcdoc`` (whole document escaped)."""
    return (
        f'<iframe class="logrerank-graph" title="sentence graph" sandbox="allow-scripts" '
        f'style="width:100%;height:{int(height_px)}px;border:1px solid #ddd;border-radius:6px" '
        f'srcdoc="{html.escape(document, quote=True)}"></iframe>'
    )


# ---------------------------------------------------------------------------------- heat text
def heat_html(
    ranking: Ranking,
    top_k: int = 10,
    passage_ranks: dict[str, dict[int, int]] | None = None,
) -> str:
    """Passages in LoG order, every sentence shaded by its score, top-K sentences outlined.

    Args:
        ranking: the LoG ranking.
        top_k: sentences ranked ``<= top_k`` get an outline (the context units).
        passage_ranks: other rankers' passage ranks for the header, ``{ranker: {idx: rank}}``.
    """
    passage_ranks = passage_ranks or {}
    by_passage: dict[int, list[ScoredSentence]] = {}
    for s in ranking.sentences:
        by_passage.setdefault(s.passage_idx, []).append(s)
    scores = [s.score for s in ranking.sentences if math.isfinite(s.score)]
    lo, hi = (min(scores), max(scores)) if scores else (0.0, 1.0)
    span = hi - lo or 1.0
    out = [
        "<div class='lr-heat' style='font-size:14px;line-height:1.6'>",
        "<div style='font-size:12px;color:#555;margin-bottom:6px'>Shade = LoG score "
        "(min–max over this input); underline colour = role "
        + " ".join(
            f"<span style='border-bottom:3px solid {c};padding:0 3px'>{esc(r)}</span>"
            for r, c in ROLE_COLORS.items()
        )
        + f"; outlined = top-{int(top_k)} context units. Hover a sentence for its scores.</div>",
    ]
    for sp in ranking.passages_ranked:
        p = ranking.passages[sp.passage_idx]
        others = " · ".join(
            f"{esc(name)} #{ranks[sp.passage_idx]}"
            for name, ranks in passage_ranks.items()
            if sp.passage_idx in ranks
        )
        out.append(
            "<div style='border:1px solid #e3e3e3;border-radius:6px;padding:8px 10px;margin:8px 0'>"
            f"<div style='font-weight:600'>#{sp.rank} · passage {sp.passage_idx + 1}"
            + (f" — {esc(p.title)}" if p.title else "")
            + "</div>"
            + (f"<div style='font-size:12px;color:#666'>{others}</div>" if others else "")
            + "<div>"
        )
        for s in sorted(by_passage.get(sp.passage_idx, []), key=lambda s: s.sent_idx):
            w = (s.score - lo) / span if math.isfinite(s.score) else 0.0
            tip = (
                f"rank {s.rank} · {s.role or '–'} · global {fmt(s.global_score)}"
                f" · local {fmt(s.local_score)}"
            )
            outline = "outline:2px solid #333;" if s.rank <= top_k else ""
            out.append(
                f"<span class='lr-sent' data-node='{s.node}' title='{esc(tip)}' "
                f"style='background:rgba(255,176,0,{0.08 + 0.62 * w:.3f});"
                f"border-bottom:3px solid {role_color(s.role)};{outline}"
                "padding:1px 2px;margin:0 1px;border-radius:3px'>"
                f"<sup style='color:#555'>{s.rank}</sup> {esc(s.text)}</span> "
            )
        out.append("</div></div>")
    out.append("</div>")
    return "".join(out)


# ---------------------------------------------------------------------------------- comparison
def shift_badge(shift: int | None) -> str:
    """An arrow badge for a rank shift (positive = moved up vs the reference)."""
    if shift is None:
        return "<span style='color:#888' title='not ranked by the reference'>new</span>"
    if shift > 0:
        return f"<span style='color:#1a7f37' title='up {shift} vs reference'>▲{shift}</span>"
    if shift < 0:
        return f"<span style='color:#cf222e' title='down {-shift} vs reference'>▼{-shift}</span>"
    return "<span style='color:#888' title='same rank as reference'>=</span>"


def comparison_columns_html(
    title: str,
    columns: Sequence[dict[str, Any]],
    reference: str,
    k: int = 10,
) -> str:
    """Top-k lists side by side, with rank-shift arrows against ``reference``.

    Args:
        title: heading of the block.
        columns: ``[{"name", "items": [(key, label, text, role)], "note"}]`` in rank order; keys
            identify the same item across columns.
        reference: name of the column the arrows compare against.
        k: items per column.
    """
    ref = next((c for c in columns if c["name"] == reference), None)
    ref_rank = {it[0]: r for r, it in enumerate(ref["items"], 1)} if ref else {}
    out = [
        f"<div class='lr-compare'><div style='font-weight:600;margin:6px 0'>{esc(title)}</div>",
        "<div style='display:flex;gap:10px;flex-wrap:wrap'>",
    ]
    for col in columns:
        out.append(
            "<div style='flex:1 1 230px;min-width:230px;border:1px solid #e3e3e3;"
            "border-radius:6px;padding:6px 8px'>"
            f"<div style='font-weight:600'>{esc(col['name'])}</div>"
            + (
                f"<div style='font-size:11px;color:#a15c00'>{esc(col['note'])}</div>"
                if col.get("note")
                else ""
            )
            + "<ol style='margin:4px 0 0 0;padding-left:22px;font-size:12.5px'>"
        )
        for r, (key, label, text, role) in enumerate(col["items"][:k], 1):
            badge = ""
            if col["name"] != reference and ref:
                rr = ref_rank.get(key)
                badge = " " + shift_badge(rr - r if rr is not None else None)
            out.append(
                f"<li style='margin-bottom:3px;border-left:3px solid {role_color(role)};"
                f"padding-left:4px' title='{esc(text)}'><b>{esc(label)}</b>{badge}"
                + (f"<br><span style='color:#333'>{esc(short(text, 110))}</span>" if text else "")
                + "</li>"
            )
        out.append("</ol></div>")
    out.append("</div></div>")
    return "".join(out)


def slope_figure(
    left: list[tuple[Any, int]],
    right: list[tuple[Any, int]],
    labels: dict[Any, str],
    roles: dict[Any, str | None],
    left_name: str,
    right_name: str,
    k: int = 10,
) -> go.Figure:
    """Rank-shift (slope) chart of the union of two top-k lists.

    Args:
        left: ``[(key, rank)]`` of the reference ranking (all items).
        right: ``[(key, rank)]`` of the compared ranking (all items).
        labels: hover text per key (plain text; escaped here).
        roles: role per key (line colour).
        left_name: x label of the left axis.
        right_name: x label of the right axis.
        k: the top-k of either side that is drawn.
    """
    lr, rr = dict(left), dict(right)
    keys = [key for key, r in left if r <= k] + [key for key, r in right if r <= k]
    seen: set = set()
    fig = go.Figure()
    for key in keys:
        if key in seen or key not in lr or key not in rr:
            continue
        seen.add(key)
        a, b = lr[key], rr[key]
        color = role_color(roles.get(key))
        width = 3 if a - b != 0 else 1.5
        fig.add_trace(
            go.Scatter(
                x=[left_name, right_name],
                y=[a, b],
                mode="lines+markers+text",
                line={"color": color, "width": width},
                marker={"size": 8, "color": color},
                text=[esc(labels.get(key, "").split(":")[0]) if a <= k else "", ""],
                textposition="middle left",
                textfont={"size": 10},
                hovertext=[esc(short(labels.get(key, ""), 140))] * 2,
                hoverinfo="text+y",
                showlegend=False,
            )
        )
    for role, color in ROLE_COLORS.items():
        fig.add_trace(
            go.Scatter(
                x=[None], y=[None], mode="lines", line={"color": color, "width": 3}, name=role
            )
        )
    top = max([lr[k_] for k_ in seen] + [rr[k_] for k_ in seen] + [k])
    fig.update_yaxes(
        autorange=False,
        range=[top + 0.5, 0.5],
        title="rank (1 = best)",
        dtick=1 if top <= 25 else 5,
    )
    fig.update_layout(
        height=max(360, 22 * min(top, 40) + 120),
        margin={"l": 150, "r": 30, "t": 40, "b": 30},
        title={
            "text": f"Rank shift: {esc(left_name)} → {esc(right_name)} (top-{k} of either)",
            "font": {"size": 14},
        },
        legend={"orientation": "h", "y": -0.08},
        plot_bgcolor="white",
    )
    fig.update_xaxes(showgrid=False)
    return fig


# ---------------------------------------------------------------------------------- explain
def explain_html(
    s: ScoredSentence,
    ranking: Ranking,
    incoming: list[tuple[GraphEdge, ScoredSentence]],
    outgoing: list[tuple[GraphEdge, ScoredSentence]],
    intent: list[float] | None,
    signals: dict[str, Any] | None = None,
) -> str:
    """Why a sentence sits where it does: local vs global, role, intent, attention from neighbours."""
    signals = signals or {}
    p = ranking.passages[s.passage_idx]
    probs = s.role_probs or []
    delta = None
    if s.global_score is not None and s.local_score is not None:
        delta = s.global_score - s.local_score
    local_rank = signals.get("local_rank")
    bars = "".join(
        f"<div style='display:flex;align-items:center;gap:6px;font-size:12px'>"
        f"<span style='width:80px'>{esc(r)}</span>"
        f"<span style='display:inline-block;height:10px;width:{160 * x:.0f}px;"
        f"background:{role_color(r)}'></span>{x:.2f}</div>"
        for r, x in zip(ROLE_NAMES, probs)
    )
    intent_bars = "".join(
        f"<div style='display:flex;align-items:center;gap:6px;font-size:12px'>"
        f"<span style='width:80px'>{esc(r)}</span>"
        f"<span style='display:inline-block;height:10px;width:{160 * x:.0f}px;"
        f"background:#999'></span>{x:.2f}</div>"
        for r, x in zip(ROLE_NAMES, intent or [])
    )
    out = [
        "<div class='lr-explain' style='font-size:14px'>",
        f"<div style='font-weight:600'>#{s.rank} · passage {s.passage_idx + 1}"
        + (f" — {esc(p.title)}" if p.title else "")
        + f", sentence {s.sent_idx + 1}</div>",
        f"<blockquote style='border-left:4px solid {role_color(s.role)};margin:6px 0;"
        f"padding:4px 10px;background:#fafafa'>{esc(s.text)}</blockquote>",
        "<table style='font-size:13px;border-collapse:collapse'>",
        f"<tr><td style='padding-right:14px'>local score (eq. 6)</td><td><b>{fmt(s.local_score)}</b>"
        + (f" (rank {local_rank} by local alone)" if local_rank else "")
        + "</td></tr>",
        f"<tr><td>global score (eq. 16)</td><td><b>{fmt(s.global_score)}</b> (rank {s.rank})</td></tr>",
        f"<tr><td>graph correction</td><td>{'–' if delta is None else f'{delta:+.4f}'}</td></tr>",
        f"<tr><td>cross-encoder (sentence)</td><td>{fmt(signals.get('ce'))}"
        + (f" (rank {signals['ce_rank']})" if signals.get("ce_rank") else "")
        + "</td></tr>",
        f"<tr><td>BM25 (sentence)</td><td>{fmt(signals.get('bm25'))}</td></tr>",
        "</table>",
        "<div style='display:flex;gap:30px;margin-top:8px'>",
        f"<div><div style='font-weight:600;font-size:13px'>role (eq. 3): {esc(s.role or '–')}</div>{bars}</div>",
        f"<div><div style='font-weight:600;font-size:13px'>question intent in this passage (eq. 2)</div>{intent_bars or '–'}</div>",
        "</div>",
    ]
    if delta is not None and abs(delta) < 1e-9:
        out.append(
            "<p style='font-size:12px;color:#a15c00'>The graph left this score unchanged "
            "(an untrained graph correction starts at zero).</p>"
        )
    out.append(
        _neighbour_table("Messages into this sentence (attention α per GAT layer)", incoming)
    )
    out.append(_neighbour_table("Messages from this sentence to its neighbours", outgoing))
    out.append("</div>")
    return "".join(out)


def _neighbour_table(title: str, rows: list[tuple[GraphEdge, ScoredSentence]]) -> str:
    if not rows:
        return f"<div style='margin-top:8px;font-size:13px'><b>{esc(title)}</b>: none</div>"
    out = [
        f"<div style='margin-top:10px;font-weight:600;font-size:13px'>{esc(title)}</div>",
        "<table style='font-size:12.5px;border-collapse:collapse;width:100%'>",
        "<tr style='text-align:left;border-bottom:1px solid #ddd'><th>relation</th><th>α per layer</th>"
        "<th>neighbour</th><th>rank</th><th>global</th><th>text</th></tr>",
    ]
    for e, n in rows:
        att = ", ".join(f"{x:.2f}" for x in e.attention) if e.attention else "–"
        rel = e.relation + (f" (cos {e.similarity:.2f})" if e.similarity is not None else "")
        out.append(
            "<tr style='border-bottom:1px solid #f0f0f0'>"
            f"<td style='color:{RELATION_COLORS.get(e.relation, '#333')}'>{esc(rel)}</td>"
            f"<td>{esc(att)}</td><td>{esc(sentence_ref(n))}</td><td>{n.rank}</td>"
            f"<td>{fmt(n.global_score)}</td><td>{esc(short(n.text, 140))}</td></tr>"
        )
    out.append("</table>")
    return "".join(out)


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


def context_units_json(units: list[dict[str, Any]]) -> str:
    """Context units as pretty JSON text."""
    return json.dumps(units, indent=1, ensure_ascii=False, allow_nan=False, default=str)
