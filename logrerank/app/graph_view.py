"""The sentence-graph view: a self-contained pyvis document embedded as a sandboxed iframe.

Nodes are sentences (colour = role, size = score, thick border = top-K context unit), edges the
graph's relations (arrows for in-passage adjacency, dashed lines for similarity pairs). The page
is rendered from ``graph_template.html`` (package data, read with
:func:`logrerank.resources.package_path`) and pyvis' bundled vis-network, so it needs no CDN;
data enters the page only through Jinja's ``tojson`` (see :mod:`logrerank.app.viz` on escaping).
"""

from __future__ import annotations

import html
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..config import ROLE_NAMES
from ..resources import package_path
from ..types import GraphEdge, Ranking, ScoredSentence
from .viz import RELATION_COLORS, ROLE_COLORS, esc, fmt, role_color, sentence_ref, short

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
        label = {
            "similar": "similar (other passage, cosine)",
            "mentions": "mentions (names another passage's title)",
            "mentioned-by": "mentioned-by (reverse)",
            "shared-term": "shared-term (rare term, other passage)",
        }.get(rel, rel + " (in passage)")
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
    """Plain-text tooltip of a node (set with ``textContent`` in the page, never as HTML)."""
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
    net.path = GRAPH_TEMPLATE_NAME
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
        where = "across passages" if u.passage_idx != v.passage_idx else "in passage"
        title = f"{e.relation} ({where} {u.passage_idx + 1}): {sentence_ref(u)} → {sentence_ref(v)}"
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


__all__ = [
    "filter_nodes",
    "graph_document",
    "graph_iframe",
    "graph_legend_html",
    "graph_template",
]
