"""Tables of the Gradio app: the ranking table, baseline signals and the comparison tab's data.

* :func:`ranking_table` is the "Ranking" tab: one row per sentence in LoG order (rank, text,
  the sort score, the change against the cross-encoder); :func:`details_table` the raw scores,
  role distribution and baseline scores behind it;
* :func:`baseline_signals` aligns the cross-encoder and BM25 sentence scores with LoG's nodes
  (for the table, the graph tooltips and the explain view);
* :func:`comparison` builds the "Comparison" tab: side-by-side top-10 lists, the agreement
  table (overlap@k and Kendall's tau of :mod:`logrerank.evaluation.metrics`) and the slope chart.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ..evaluation.metrics import kendall_tau, overlap_at
from ..types import Ranking
from . import compare_view, labels, viz
from .provenance import passage_source
from .state import DETAIL_COLUMNS, METRIC_COLUMNS, TABLE_COLUMNS, Knobs

SENT_CE, SENT_BM25 = "cross-encoder (sentences)", "BM25 (sentences)"
PASS_LOG, PASS_STAGE = "LoG (best sentence)", "cross-encoder stage"
PASS_BM25, PASS_GRAPH = "BM25", "evidence-graph selector"


def baseline_signals(ranking: Ranking, baselines: dict[str, Ranking]) -> dict[int, dict[str, Any]]:
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
                if key == "ce" and "cross_encoder_logit" in s.extra:
                    out[n]["ce_logit"] = s.extra["cross_encoder_logit"]
    return out


def _r4(x: float | None) -> float | None:
    return round(x, 4) if x is not None and math.isfinite(x) else None


def ranking_table(
    ranking: Ranking, signals: dict[int, dict[str, Any]] | None = None
) -> pd.DataFrame:
    """The ranking: one row per sentence in rank order (text is plain text, never HTML).

    ``score`` is the score the ranking is sorted by (the adjusted logit of
    :mod:`logrerank.ranking.scoring` through a sigmoid); ``Δ vs CE`` is the cross-encoder rank minus
    the LoG rank: positive = LoG ranks it higher. ``from`` says where the sentence came from
    (paper, section and page of a PDF's passage; :mod:`logrerank.app.provenance`).
    """
    signals = signals or {}
    rows = []
    for s in ranking.sentences:
        ce_rank = signals.get(s.node, {}).get("ce_rank")
        rows.append(
            [
                s.rank,
                s.text,
                _r4(s.score),
                (ce_rank - s.rank) if ce_rank is not None else None,
                viz.sentence_ref(s),
                passage_source(ranking.passages[s.passage_idx]),
                s.role,
            ]
        )
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def details_table(
    ranking: Ranking, signals: dict[int, dict[str, Any]] | None = None
) -> pd.DataFrame:
    """Score details per sentence (rank order): raw global / local scores, the graph's change,
    the role distribution and the cross-encoder / BM25 sentence scores and ranks."""
    signals = signals or {}
    rows = []
    for s in ranking.sentences:
        sig = signals.get(s.node, {})
        probs = s.role_probs or [None] * 3
        delta = None
        if s.global_score is not None and s.local_score is not None:
            delta = s.global_score - s.local_score
        rows.append(
            [
                s.rank,
                viz.sentence_ref(s),
                _r4(s.score),
                _r4(s.global_score),
                _r4(s.local_score),
                _r4(delta),
                *(round(p, 3) if p is not None else None for p in probs),
                _r4(sig.get("ce")),
                sig.get("ce_rank"),
                _r4(sig.get("bm25")),
                sig.get("bm25_rank"),
            ]
        )
    return pd.DataFrame(rows, columns=DETAIL_COLUMNS)


def passage_ranks(rankings: dict[str, Ranking]) -> dict[str, dict[int, int]]:
    """Other rankers' passage ranks for the heat view's headers, ``{ranker: {idx: rank}}``."""
    names = {"ce-stage": "CE stage", "bm25": "BM25", "evidence-graph": "evidence graph"}
    out = {}
    for key, label in names.items():
        r = rankings.get(key)
        if r is not None:
            out[label] = {p.passage_idx: p.rank for p in r.passages_ranked}
    return out


def comparison(
    ranking: Ranking,
    local: Ranking,
    rankings: dict[str, Ranking],
    knobs: Knobs,
    ce_name: str = "cross-encoder",
) -> tuple[str, pd.DataFrame, Any]:
    """Side-by-side top-10 lists, overlap / Kendall tau table and the slope chart, every header
    naming the active cross-encoder and LoG's ablations (:mod:`.labels`). Where a ranker's
    calibrated scores saturate (:func:`~.labels.saturated`) its raw logits are shown too.

    Args:
        ranking: the LoG ranking.
        local: the LoG ranking by the local scores alone.
        rankings: the baselines' rankings by name (``cross-encoder-sent``, ``bm25-sent``,
            ``ce-stage``, ``bm25``, ``evidence-graph``; missing ones are left out).
        knobs: the current knobs (ablation switches, blend weight).
        ce_name: what the comparison's cross-encoder is called (:func:`~.labels.ce_label`).

    Returns:
        ``(html, metrics table, slope figure or None)``.
    """

    def sent_items(r: Ranking) -> list[tuple[Any, str, str, str | None, Any]]:
        raw = _raw_logits(r.sentences)
        return [
            ((s.passage_idx, s.sent_idx), viz.sentence_ref(s), s.text, s.role, _shown(s, raw))
            for s in r.sentences
        ]

    role_of = {(s.passage_idx, s.sent_idx): s.role for s in ranking.sentences}
    text_of = {(s.passage_idx, s.sent_idx): s.text for s in ranking.sentences}
    log_name = labels.log_label(knobs.switches)
    sent_cols = [{"name": log_name, "items": sent_items(ranking)}]
    ce = rankings.get("cross-encoder-sent")
    if ce is not None:
        sent_cols.append(
            {"name": f"{ce_name} (sentences)", "items": sent_items(ce), "note": _note(ce)}
        )
    bm = rankings.get("bm25-sent")
    if bm is not None:
        sent_cols.append({"name": SENT_BM25, "items": sent_items(bm)})
    for c in sent_cols:
        c["items"] = [(k, lab, t, role_of.get(k), sc) for k, lab, t, _, sc in c["items"]]

    def pass_items(r: Ranking) -> list[tuple[Any, str, str, str | None, Any]]:
        out = []
        raw = _raw_logits(r.passages_ranked)
        for p in r.passages_ranked:
            title = r.passages[p.passage_idx].title
            text = r.passages[p.passage_idx].text
            label = f"P{p.passage_idx + 1}" + (f" · {title}" if title else "")
            out.append((p.passage_idx, label, "" if title else text, None, _shown(p, raw)))
        return out

    stage = rankings.get("ce-stage")
    pass_log = f"{log_name} (best sentence)"
    pass_cols = [{"name": pass_log, "items": pass_items(ranking)}]
    if stage is not None:
        pass_cols.append(
            {
                "name": f"{ce_name} stage (BM25 top-25 → CE, blend {knobs.blend:.2f})",
                "items": pass_items(stage),
                "note": _note(stage),
            }
        )
    for key, name in (("bm25", PASS_BM25), ("evidence-graph", PASS_GRAPH)):
        if rankings.get(key) is not None:
            pass_cols.append(
                {"name": name, "items": pass_items(rankings[key]), "note": _note(rankings[key])}
            )

    n_s, n_p = len(ranking.sentences), len(ranking.passages_ranked)
    html_parts = [
        f"<div class='lr-compare-head'>{viz.esc(log_name)}"
        f" compared with the {viz.esc(ce_name)} and BM25</div>"
        "<div class='lr-compare-note'>Arrows compare each "
        "list with LoG: ▲n = this ranker puts the item n places higher than LoG, ▼n = lower, "
        "= the same place. The number after an item is that ranker's own score (with its raw logit "
        "where the calibrated scores saturate). Left border = role.</div>",
        compare_view.comparison_columns_html(
            f"Sentences: top-{min(10, n_s)} of {n_s}", sent_cols, log_name
        ),
        compare_view.comparison_columns_html(
            f"Passages: top-{min(10, n_p)} of {n_p}", pass_cols, pass_log
        ),
    ]

    log_s = [k for k, *_ in sent_items(ranking)]
    log_p = [p.passage_idx for p in ranking.passages_ranked]
    rows = []
    for name, r in (
        (f"{ce_name} (sentences)", ce),
        ("BM25 (sentences)", bm),
        ("LoG local only", local),
    ):
        if r is None or not r.sentences:
            continue
        other = [(s.passage_idx, s.sent_idx) for s in r.sentences]
        rows.append(["sentence", name, *agreement(log_s, other)])
    for key, name in (
        ("ce-stage", f"{ce_name} stage"),
        ("bm25", "BM25"),
        ("evidence-graph", "evidence-graph selector"),
    ):
        r = rankings.get(key)
        if r is None:
            continue
        rows.append(["passage", name, *agreement(log_p, r.passage_order())])
    metrics = pd.DataFrame(rows, columns=METRIC_COLUMNS)

    slope = None
    if ce is not None:
        left = [((s.passage_idx, s.sent_idx), s.rank) for s in ce.sentences]
        right = [((s.passage_idx, s.sent_idx), s.rank) for s in ranking.sentences]
        names = {k: f"P{k[0] + 1}·S{k[1] + 1}: {t}" for k, t in text_of.items()}
        slope = compare_view.slope_figure(left, right, names, role_of, ce_name, log_name, k=10)
    return "".join(html_parts), metrics, slope


def agreement(a: list[Any], b: list[Any]) -> list[Any]:
    """``[items, overlap@5, overlap@10, Kendall τ]`` as display strings, ``n/a`` where the number
    says nothing: overlap@k when every item fits in the top k (it is 1 by construction), Kendall
    τ over fewer than two items."""
    n = min(len(a), len(b))

    def ov(k: int) -> str:
        return "n/a" if n <= k else f"{overlap_at(a, b, k):.3f}"

    common = set(a) & set(b)
    tau = kendall_tau(a, b) if len(common) >= 2 else None
    tau_s = "n/a" if tau is None or not math.isfinite(tau) else f"{tau:.3f}"
    return [n, ov(5), ov(10), tau_s]


def _raw_logits(items: list[Any], k: int = 10) -> bool:
    """Whether a list's shown scores saturate and it has raw logits to show instead."""
    top = items[:k]
    has_logit = all("cross_encoder_logit" in x.extra for x in top)
    return bool(top) and has_logit and labels.saturated(x.score for x in top)


def _shown(item: Any, raw: bool) -> Any:
    """The score shown beside an item: the calibrated score, or with its raw logit."""
    if not raw:
        return item.score
    return f"{viz.fmt(item.score)} · logit {item.extra['cross_encoder_logit']:.2f}"


def _note(r: Ranking) -> str:
    """A column note: degraded (with its warnings), untrained, or saturated scores, else empty."""
    if r.info.get("degraded"):
        return "degraded: " + "; ".join(r.warnings)
    if r.info.get("trained") is False:
        return "untrained model"
    for items in (r.sentences, r.passages_ranked):
        if _raw_logits(items):
            return "calibrated scores crowd at 0 or 1: raw logits shown beside them"
    return ""


__all__ = [
    "PASS_BM25",
    "PASS_GRAPH",
    "PASS_LOG",
    "PASS_STAGE",
    "SENT_BM25",
    "SENT_CE",
    "agreement",
    "baseline_signals",
    "comparison",
    "details_table",
    "passage_ranks",
    "ranking_table",
]
