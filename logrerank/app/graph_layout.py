"""Which sentences the graph view shows, and where: a fixed layout grouped by passage.

* :func:`resolve_top_n` turns the view's top-N setting into a number (0 = automatic: every
  sentence of a small input, the top :data:`AUTO_TOP_N` and their neighbours of a large one);
* :func:`graph_selection` keeps the top-N sentences and their neighbours (in-passage neighbours
  all, cross-passage ones the strongest few per sentence) and only the edges that touch a top
  sentence, so a 50-passage pool stays readable;
* :func:`passage_layout` places every passage in its own cell of a grid (best passage first,
  in LoG passage order) and its sentences in reading order inside the cell, so passages are
  visible as groups and the layout is the same on every load (no physics).
"""

from __future__ import annotations

import math
from typing import Any

from ..types import GraphEdge, Ranking, ScoredSentence

AUTO_ALL_UP_TO = 60
"""Automatic view: inputs with at most this many sentences are shown whole."""

AUTO_TOP_N = 12
"""Automatic view of a larger input: the top this many sentences and their neighbours."""

CROSS_NEIGHBOURS_PER_NODE = 3
"""Filtered view: cross-passage neighbours kept per top sentence (strongest first)."""

STEP_X, STEP_Y = 64.0, 62.0  # px between sentences in a passage cell
PER_ROW = 5  # sentences per row inside a passage cell
CELL_PAD_X, CELL_PAD_Y = 150.0, 130.0  # cell size beyond its sentences (box, label, gap)


def layout_spec() -> dict[str, float]:
    """The grid constants, for the page, which re-picks the number of columns to fit the canvas
    (the same grid as :func:`passage_layout`, at the canvas' own aspect ratio)."""
    return {
        "stepX": STEP_X,
        "stepY": STEP_Y,
        "perRow": PER_ROW,
        "padX": CELL_PAD_X,
        "padY": CELL_PAD_Y,
    }


def resolve_top_n(top_n: int, num_sentences: int) -> int:
    """The top-N setting as a number: 0 = automatic (all, or :data:`AUTO_TOP_N` when large)."""
    if top_n > 0:
        return top_n
    return 0 if num_sentences <= AUTO_ALL_UP_TO else AUTO_TOP_N


def _strength(edge: Any) -> float:
    if edge.similarity is not None and math.isfinite(edge.similarity):
        return float(edge.similarity)
    att = edge.attention or []
    return sum(att) / len(att) if att else 0.0


def graph_selection(
    ranking: Ranking, top_n: int, per_node: int = CROSS_NEIGHBOURS_PER_NODE
) -> tuple[set[int], list[GraphEdge]]:
    """The nodes and edges the view draws: everything when ``top_n <= 0``, else the top
    ``top_n`` sentences, their in-passage neighbours and the ``per_node`` strongest
    cross-passage neighbours (similarity, shared terms, title mentions, ...) of each, with only
    the edges that touch a top sentence.
    """
    if top_n <= 0 or top_n >= len(ranking.sentences):
        return {s.node for s in ranking.sentences}, list(ranking.edges)
    by_node = ranking.sentence_by_node()
    keep = {s.node for s in ranking.sentences[:top_n]}
    chosen: set[tuple[int, int]] = set()  # (top node, neighbour) pairs kept
    cross: dict[int, list[tuple[float, int]]] = {}
    for e in ranking.edges:
        for mine, other in ((e.source, e.target), (e.target, e.source)):
            if mine not in keep or other not in by_node:
                continue
            if by_node[mine].passage_idx == by_node[other].passage_idx:
                chosen.add((mine, other))
            else:
                cross.setdefault(mine, []).append((_strength(e), other))
    for mine, items in cross.items():
        picked: list[int] = []
        for _, other in sorted(items, key=lambda x: (-x[0], x[1])):
            if other not in picked:
                picked.append(other)
            if len(picked) >= per_node:
                break
        chosen.update((mine, other) for other in picked)
    edges = [
        e for e in ranking.edges if (e.source, e.target) in chosen or (e.target, e.source) in chosen
    ]
    shown = set(keep) | {v for _, v in chosen}
    return shown, edges


def filter_nodes(
    ranking: Ranking, top_n: int, per_node: int = CROSS_NEIGHBOURS_PER_NODE
) -> set[int]:
    """Nodes of the top ``top_n`` sentences and their neighbours (:func:`graph_selection`)."""
    return graph_selection(ranking, top_n, per_node)[0]


def passage_layout(
    ranking: Ranking, shown: set[int], aspect: float = 1.6
) -> tuple[dict[int, tuple[float, float]], list[dict[str, Any]]]:
    """Fixed positions: one grid cell per passage (LoG passage order), sentences in reading order.

    ``aspect`` is the width / height the grid aims at (the canvas shape).

    Returns:
        ``(positions by node, groups)``; a group is ``{"passage", "rank", "title", "nodes"}``
        (1-based passage number, LoG passage rank) for the page to draw a box around.
    """
    by_passage: dict[int, list[ScoredSentence]] = {}
    for s in sorted(ranking.sentences, key=lambda s: s.node):
        if s.node in shown:
            by_passage.setdefault(s.passage_idx, []).append(s)
    order = [p.passage_idx for p in ranking.passages_ranked if p.passage_idx in by_passage]
    order += sorted(set(by_passage) - set(order))
    if not order:
        return {}, []
    widest = min(PER_ROW, max(len(v) for v in by_passage.values()))
    tallest = max(math.ceil(len(v) / PER_ROW) for v in by_passage.values())
    cell_w = (widest - 1) * STEP_X + CELL_PAD_X
    cell_h = (tallest - 1) * STEP_Y + CELL_PAD_Y
    n = len(order)
    cols = min(
        range(1, n + 1),
        key=lambda c: abs(math.log((c * cell_w) / (math.ceil(n / c) * cell_h) / aspect)),
    )
    rank_of = {p.passage_idx: p.rank for p in ranking.passages_ranked}
    pos: dict[int, tuple[float, float]] = {}
    groups = []
    for i, p in enumerate(order):
        col, row = i % cols, i // cols
        sents = by_passage[p]
        for j, s in enumerate(sents):
            pos[s.node] = (
                col * cell_w + (j % PER_ROW) * STEP_X,
                row * cell_h + (j // PER_ROW) * STEP_Y,
            )
        groups.append(
            {
                "passage": p + 1,
                "rank": rank_of.get(p),
                "title": ranking.passages[p].title,
                "nodes": [s.node for s in sents],
            }
        )
    return pos, groups


__all__ = [
    "AUTO_ALL_UP_TO",
    "AUTO_TOP_N",
    "CROSS_NEIGHBOURS_PER_NODE",
    "filter_nodes",
    "graph_selection",
    "layout_spec",
    "passage_layout",
    "resolve_top_n",
]
