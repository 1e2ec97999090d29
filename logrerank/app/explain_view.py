"""The explain view: why one sentence sits where it does (scores, role, intent, neighbours)."""

from __future__ import annotations

from typing import Any

from ..config import ROLE_NAMES
from ..types import GraphEdge, Ranking, ScoredSentence
from .viz import RELATION_COLORS, esc, fmt, role_color, sentence_ref, short


def explain_html(
    s: ScoredSentence,
    ranking: Ranking,
    incoming: list[tuple[GraphEdge, ScoredSentence]],
    outgoing: list[tuple[GraphEdge, ScoredSentence]],
    intent: list[float] | None,
    signals: dict[str, Any] | None = None,
) -> str:
    """Why a sentence sits where it does: local vs global, role, intent, attention from neighbours.

    Args:
        s: the sentence.
        ranking: the LoG ranking it belongs to.
        incoming: ``(edge, source sentence)`` of the messages into ``s``, strongest first.
        outgoing: ``(edge, target sentence)`` of the messages from ``s``, strongest first.
        intent: the question-intent distribution of its passage (eq. 2), or None.
        signals: ``ce``, ``ce_rank``, ``bm25`` and ``local_rank`` of the sentence.
    """
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
    """A table of a sentence's graph neighbours: relation, attention per layer, rank, text."""
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


__all__ = ["explain_html"]
