"""The app's headers, saturated scores, slope chart and link tooltips (pure view functions)."""

from __future__ import annotations

import json
import math
import re

from logrerank.app import compare_view, graph_view, labels
from logrerank.app.state import ABLATIONS
from logrerank.types import GraphEdge, Passage, Ranking, ScoredSentence


def test_log_label_names_the_ablation():
    assert labels.log_label(ABLATIONS) == "LoG"
    off = [a for a in ABLATIONS if a != "typed relations"]
    assert labels.log_label(off) == "LoG without typed relations"
    assert labels.log_label([a for a in ABLATIONS if a != labels.GAT]) == "LoG (local only)"


def test_ce_label():
    class B:
        cross_encoder_choice = "bundled"

    assert labels.ce_label(B()) == "bundled cross-encoder"
    assert labels.ce_label(B(), "twin") == "cross-encoder twin"
    assert labels.ce_label(B(), "/models/my-ce") == "cross-encoder my-ce"


def test_saturated():
    assert labels.saturated([0.999, 0.995, 0.99, 0.985])  # the twin's
    assert labels.saturated([0.997, 0.996, 0.987, 0.978, 0.96, 0.94, 0.93, 0.9])  # 4 of 8
    assert not labels.saturated([0.86, 0.10, 0.09, 0.06])  # the bundled cross-encoder's
    assert labels.saturated([0.51, 0.515, 0.52])  # spread < 0.02
    assert not labels.saturated([0.999])  # one score says nothing about an order


def test_spread_labels_keeps_order_and_gap():
    ys = [0.0, 0.0, 0.01, 1.0, 1.2, 3.0]
    out = compare_view.spread_labels(ys, 0.3)
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    placed = [out[i] for i in order]
    assert all(b - a >= 0.3 - 1e-9 for a, b in zip(placed, placed[1:]))
    assert out[5] == 3.0  # a lone label stays on its point
    assert abs(sum(out[:3]) / 3 - sum(ys[:3]) / 3) < 1e-9  # a stack stays centred


def test_slope_chart_log_axis_labels_both_sides():
    n = 140
    left = [((i,), i + 1) for i in range(n)]  # reference order
    right = [((n - 1 - i,), i + 1) for i in range(n)]  # reversed: deep ranks on both sides
    names = {(i,): f"P{i + 1}·S1: text {i}" for i in range(n)}
    fig = compare_view.slope_figure(left, right, names, {}, "cross-encoder twin", "LoG", k=10)
    assert fig.layout.yaxis.type == "log"
    lo, hi = fig.layout.yaxis.range
    assert math.isclose(10**lo, n + 0.5) and hi < 0  # rank 1 on top, nothing cut
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    anns = fig.layout.annotations
    assert len(lines) == 20 and len(anns) == 40
    assert {a.x for a in anns} == {0, 1}
    assert any("#140" in a.text for a in anns)  # deep ranks are labelled too
    assert all(re.search(r"P\d+·S1", a.text) for a in anns)
    assert max(fig.layout.yaxis.tickvals) <= n


def _ranking(edges: list[GraphEdge]) -> Ranking:
    passages = [Passage("Metformin lowers glucose. It is cheap.", "Drug A"), Passage("x.", "B")]
    sents = [
        ScoredSentence(0, 0, 0, "Metformin lowers glucose.", 0, 25, 0.9, 1, role="result"),
        ScoredSentence(1, 0, 1, "It is cheap.", 26, 38, 0.5, 2, role="method"),
        ScoredSentence(2, 1, 0, "Drug A and metformin.", 0, 2, 0.3, 3, role="background"),
    ]
    return Ranking("q", passages, "log", sents, edges=edges)


def test_graph_edges_say_what_links_them():
    edges = [
        GraphEdge(0, 2, "shared-term", 10, terms=["metformin"]),
        GraphEdge(2, 0, "shared-term", 10, terms=["metformin"]),
        GraphEdge(2, 0, "mentions", 8, terms=["drug a"], mention="Drug A and metformin."),
        GraphEdge(0, 2, "mentioned-by", 9, terms=["drug a"], mention="Drug A and metformin."),
        GraphEdge(0, 1, "same-role", 0),
    ]
    doc = graph_view.graph_document(_ranking(edges), top_k=2)
    raw = json.loads(re.search(r"var rawEdges = (\[.*?\]);\n", doc).group(1))
    by_rel = {e["relation"]: e for e in raw}
    assert "shared rare terms: metformin" in by_rel["shared-term"]["title"]
    assert "names “drug a” in: Drug A and metformin." in by_rel["mentions"]["title"]
    # in-passage arrows and links bend to opposite sides; the page routes them around nodes
    assert by_rel["same-role"]["bend"] == "curvedCW" and by_rel["mentions"]["bend"] == "curvedCCW"
    assert "click a relation to hide or show its edges" in doc
    assert "function routeEdges" in doc and "function toggleRelation" in doc
