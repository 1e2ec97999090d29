"""The sentence-graph view: a self-contained pyvis document embedded as a sandboxed iframe.

Nodes are sentences (colour = role, size = the sort score, thick border = top-K context unit),
placed in one box per passage (:mod:`.graph_layout`, fixed positions, no physics); edges are the
graph's relations, styled by :data:`~logrerank.app.viz.RELATION_STYLES` (arrows for directed
relations, one dashed link per symmetric pair). The page bends every edge around the nodes it
would cross (vis-network curved edges, the bend tested against each node; in-passage arrows
and links bend to opposite sides, and a directed pair's two arrows never overlap). An edge's
tooltip says what links it: the shared rare terms of a shared-term link, the passage name and
the mentioning sentence of a mention. The legend sits above the canvas (collapsible); clicking
a relation in it hides or shows that relation's edges.
The page is rendered from ``graph_template.html`` (package data, read with
:func:`logrerank.resources.package_path`) and pyvis' bundled vis-network, so it needs no CDN;
data enters the page only through Jinja's ``tojson`` (see :mod:`logrerank.app.viz` on escaping).
"""

from __future__ import annotations

import html
import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..config import ROLE_NAMES
from ..ranking.shown_roles import log_head_reading, role_source
from ..resources import package_path
from ..types import GraphEdge, Ranking, ScoredSentence
from .graph_layout import (
    filter_nodes,
    graph_selection,
    layout_spec,
    passage_layout,
    resolve_top_n,
)
from .provenance import passage_source
from .viz import (
    ROLE_COLORS,
    esc,
    fmt,
    link_counts,
    relation_order,
    relation_style,
    role_color,
    sentence_ref,
    short,
)

_PYVIS_TEMPLATES = Path(__import__("pyvis").__file__).resolve().parent / "templates"
GRAPH_TEMPLATE_NAME = "logrerank_graph.html"


@lru_cache(maxsize=1)
def graph_template() -> str:
    """The Jinja template of the graph page (``logrerank/app/graph_template.html``)."""
    return package_path("app", "graph_template.html").read_text(encoding="utf-8")


def _graph_env():
    """Jinja environment: our page template, pyvis' templates for the inlined vis-network."""
    from jinja2 import ChoiceLoader, DictLoader, Environment, FileSystemLoader

    return Environment(
        loader=ChoiceLoader(
            [
                DictLoader({GRAPH_TEMPLATE_NAME: graph_template()}),
                FileSystemLoader(_PYVIS_TEMPLATES),
            ]
        ),
        autoescape=False,  # data enters only through |tojson; the rest is our own markup
    )


def _swatch(style: dict[str, Any]) -> str:
    """An inline SVG line in the relation's colour and dash pattern (legend)."""
    dash = style.get("dash")
    dash_attr = f" stroke-dasharray='{' '.join(str(int(d)) for d in dash)}'" if dash else ""
    return (
        "<svg class='ln' width='24' height='8' aria-hidden='true'><line x1='1' y1='4' x2='23' "
        f"y2='4' stroke='{esc(style['color'])}' stroke-width='3'{dash_attr}/></svg>"
    )


def graph_legend_html(
    num_nodes: int,
    num_shown: int,
    top_k: int,
    edge_counts: dict[str, int],
    shown_counts: dict[str, int] | None = None,
    top_n: int = 0,
) -> str:
    """The legend above the canvas (collapsible): roles, marks, every relation with its count.

    ``edge_counts`` are the links of the whole graph (:func:`~logrerank.app.viz.link_counts`,
    a symmetric pair = one link), ``shown_counts`` those drawn when the view is filtered.
    """
    shown_counts = edge_counts if shown_counts is None else shown_counts
    roles = "".join(
        f"<span class='it'><span class='sw' style='background:{c}'></span>{esc(r)}</span>"
        for r, c in ROLE_COLORS.items()
    )
    inside, across = [], []
    for rel in relation_order(edge_counts):
        n = edge_counts.get(rel, 0)
        if rel != "similar" and not n:
            continue
        style = relation_style(rel)
        arrow = "↔" if style["symmetric"] else "→"
        count = f"{n}" if shown_counts == edge_counts else f"{shown_counts.get(rel, 0)} of {n}"
        where = style["where"]
        item = (
            f"<span class='it' data-relation='{esc(rel)}' data-count='{n}' "
            f"data-shown='{shown_counts.get(rel, 0)}' title='{esc(where)}'>{_swatch(style)}"
            f"{esc(rel)} {arrow} · {esc(count)}</span>"
        )
        (inside if where == "in passage" else across).append(item)
    filtered = f"top {int(top_n)} and their neighbours: " if num_shown < num_nodes else ""
    return (
        "<details id='legend' open><summary>Legend · showing "
        f"{filtered}{int(num_shown)} of {int(num_nodes)} sentences</summary>"
        f"<div><b>Nodes</b>{roles}<span class='it'>size = score · ★rank = top-{int(top_k)} "
        "context unit · box = passage P# (LoG passage rank)</span></div>"
        f"<div><b>In passage</b> (next sentence) {''.join(inside) or '–'}</div>"
        f"<div><b>Across passages</b> (↔ pair = 1 link) {''.join(across) or '–'}</div>"
        "<div class='wh'>click a relation to hide or show its edges · hover an edge for what "
        "links it (shared terms, the mentioning sentence)</div>"
        "</details>"
    )


def _node_tooltip(s: ScoredSentence, ranking: Ranking, extra: dict[str, Any]) -> str:
    """Plain-text tooltip of a node (set with ``textContent`` in the page, never as HTML)."""
    p = ranking.passages[s.passage_idx]
    probs = s.role_probs or []
    role_line = ", ".join(f"{r} {x:.2f}" for r, x in zip(ROLE_NAMES, probs)) or "–"
    title = f' "{short(p.title, 80)}"' if p.title else ""
    source = passage_source(p)
    lines = [
        f"#{s.rank}  passage {s.passage_idx + 1}{title}, sentence {s.sent_idx + 1}",
        *([f"from: {short(source, 200)}"] if source else []),
        short(s.text, 400),
        "",
        f"score {fmt(s.score, 4)} (sorts the ranking) · global {fmt(s.global_score)}"
        f" · local {fmt(s.local_score)}",
        f"role ({role_source(ranking)}): {s.role or '–'} ({role_line})",
    ]
    head = log_head_reading(ranking, s.node)
    if head and head.get("role"):
        head_line = ", ".join(f"{r} {x:.2f}" for r, x in zip(ROLE_NAMES, head.get("probs") or []))
        lines.append(
            f"LoG role head (eq. 3): {head['role']}" + (f" ({head_line})" if head_line else "")
        )
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
    height_px: int = 560,
) -> str:
    """The sentence graph as a complete, self-contained HTML document (pyvis, vis-network inline).

    Args:
        ranking: a LoG ranking (sentences, edges with relation and attention).
        top_k: the number of top sentences marked as selected context units.
        top_n: show only the top ``top_n`` sentences and their neighbours (0 = automatic, see
            :func:`~logrerank.app.graph_layout.resolve_top_n`).
        signals: per node extra scores for tooltips (``ce``, ``ce_rank``, ``bm25``).
        height_px: canvas height.

    Returns:
        The HTML document (to be embedded with :func:`graph_iframe`).
    """
    from pyvis.network import Network

    signals = signals or {}
    n_total = len(ranking.sentences)
    top_n = resolve_top_n(int(top_n), n_total)
    shown, drawn = graph_selection(ranking, top_n)
    net = Network(height=f"{height_px}px", width="100%", directed=True, cdn_resources="in_line")
    net.templateEnv = _graph_env()
    net.path = GRAPH_TEMPLATE_NAME
    pos, groups = passage_layout(ranking, shown)
    for s in sorted(ranking.sentences, key=lambda s: s.node):
        if s.node not in shown:
            continue
        score = s.score if math.isfinite(s.score) else 0.0
        selected = s.rank <= top_k
        color = role_color(s.role)
        x, y = pos.get(s.node, (0.0, 0.0))
        net.add_node(
            s.node,
            label=f"★{s.rank}" if selected else f"S{s.sent_idx + 1}",
            shape="dot",
            color={
                "background": color,
                "border": "#111111" if selected else color,
                "highlight": {"background": color, "border": "#000000"},
            },
            size=7 + 15 * max(0.0, min(1.0, score)),
            borderWidth=4 if selected else 1,
            title=_node_tooltip(s, ranking, signals.get(s.node, {})),
            x=x,
            y=y,
            physics=False,
            font={"size": 13 if selected else 10, "color": "#222222"},
        )
    _add_edges(net, drawn, shown, ranking)
    net.options = {
        "autoResize": True,
        "layout": {"improvedLayout": False, "randomSeed": 7},
        "interaction": {"hover": True, "tooltipDelay": 120, "navigationButtons": False},
        "nodes": {"shape": "dot"},
        "edges": {"smooth": False, "selectionWidth": 2},
        "physics": {"enabled": False},
    }
    doc = net.generate_html()
    counts_all = link_counts(ranking.edges)
    counts_shown = link_counts(drawn)
    legend = graph_legend_html(n_total, len(shown), top_k, counts_all, counts_shown, top_n)
    meta = (
        f"<div id='meta' data-nodes='{len(shown)}' data-edges='{len(net.edges)}' "
        f"data-total-nodes='{n_total}' data-links='{sum(counts_all.values())}'>"
        "drag to move · scroll to zoom · hover for details</div>"
    )
    group_json = json.dumps(groups, ensure_ascii=True).replace("<", "\\u003c")
    spec = json.dumps(layout_spec())
    groups_js = f"<script>var passageGroups = {group_json}; var layoutSpec = {spec};</script>"
    return doc.replace("<body>\n", "<body>\n" + legend + meta + groups_js + "\n", 1)


def _add_edges(net, edges: list[GraphEdge], shown: set[int], ranking: Ranking) -> None:
    """One drawn edge per directed edge, one per symmetric pair (style by relation name)."""
    by_node = ranking.sentence_by_node()
    pairs: dict[tuple[str, int, int], list[GraphEdge]] = {}
    for e in edges:
        if e.source not in shown or e.target not in shown:
            continue
        style = relation_style(e.relation)
        if style["symmetric"]:
            key = (e.relation, min(e.source, e.target), max(e.source, e.target))
            pairs.setdefault(key, []).append(e)
            continue
        att = e.attention or []
        a = sum(att) / len(att) if att else None
        u, v = by_node[e.source], by_node[e.target]
        inside = u.passage_idx == v.passage_idx
        where = f"in passage {u.passage_idx + 1}" if inside else "link"
        title = f"{e.relation} ({where}): {sentence_ref(u)} → {sentence_ref(v)}"
        title += edge_detail(e)
        if att:
            title += "\nattention into target per layer: " + ", ".join(f"{x:.2f}" for x in att)
        net.add_edge(
            e.source,
            e.target,
            color=style["color"],
            width=1.5 + (4 * a if a is not None else 0.0),
            dashes=style["dash"] or False,
            arrows="to",
            title=title,
            relation=e.relation,  # the legend's toggles hide edges by relation
            # links bend the other way from the in-passage arrows (the page routes around nodes)
            bend="curvedCW" if inside else "curvedCCW",
        )
    for (rel, u, v), group in pairs.items():
        sim = next((e.similarity for e in group if e.similarity is not None), None)
        su, sv = by_node[u], by_node[v]
        head = f"{rel}" + (f", cosine {fmt(sim, 2)}" if sim is not None else "")
        title = f"{head}: {sentence_ref(su)} ↔ {sentence_ref(sv)}" + edge_detail(group[0])
        for e in sorted(group, key=lambda e: (e.source, e.target)):
            if e.attention:
                title += (
                    f"\nattention {sentence_ref(by_node[e.source])} → "
                    f"{sentence_ref(by_node[e.target])}: "
                    + ", ".join(f"{x:.2f}" for x in e.attention)
                )
        style = relation_style(rel)
        net.add_edge(
            u,
            v,
            color=style["color"],
            width=1.0 + 2.0 * max(0.0, (sim or 0.0)),
            dashes=style["dash"] or True,
            arrows={"to": {"enabled": False}},
            title=title,
            relation=rel,
            bend="curvedCW",
        )


def edge_detail(e: GraphEdge) -> str:
    """Tooltip lines saying what a link edge is: the shared rare terms, or the passage name and
    the mentioning sentence (plain text; empty for other relations)."""
    if e.relation == "shared-term":
        return "\nshared rare terms: " + (", ".join(e.terms[:6]) if e.terms else "not recorded")
    if e.mention is not None:
        name = f"“{e.terms[0]}”" if e.terms else "the passage"
        return f"\nnames {name} in: {short(e.mention, 300)}"
    return ""


def graph_iframe(document: str, height_px: int = 720) -> str:
    """Embed an HTML document as a sandboxed iframe ``srcdoc`` (whole document escaped)."""
    return (
        f'<iframe class="logrerank-graph" title="sentence graph" sandbox="allow-scripts" '
        f'style="width:100%;height:{int(height_px)}px;border:1px solid #ddd;border-radius:6px" '
        f'srcdoc="{html.escape(document, quote=True)}"></iframe>'
    )


__all__ = [
    "filter_nodes",
    "graph_document",
    "graph_iframe",
    "graph_legend_html",
    "graph_template",
]
