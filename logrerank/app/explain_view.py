"""The explain view: why one sentence sits where it does (scores, role, intent, neighbours).

The "why it moved" lines read the strongest messages into the sentence and say what each edge
means, by relation name (:data:`RELATION_PHRASES`; in-passage adjacency and unknown relations
have generic phrases), e.g. "moved up: sentence P2·S3 mentions this passage's title".
"""

from __future__ import annotations

from typing import Any

from ..config import ROLE_NAMES
from ..ranking.shown_roles import TAGGER_SOURCE, log_head_reading, role_source
from ..types import GraphEdge, Ranking, ScoredSentence
from . import labels
from .labels import SATURATION_MARGIN
from .provenance import passage_source
from .viz import esc, fmt, relation_style, role_color, sentence_ref, short

RELATION_PHRASES: dict[str, str] = {
    "similar": "sentence {src} in passage {src_p} says something similar (cosine {sim})",
    "mentions": "sentence {src} names this passage{name}: “{said}”",
    "mentioned-by": "this sentence names passage {src_p}{name} (sentence {src} is in it)",
    "shared-term": "sentence {src} in passage {src_p} shares the rare term{s} {terms} with it",
}
"""What an edge into a sentence means, by relation name (``{src}``: the source sentence,
``{src_p}``: its passage number, ``{sim}``: the cosine, ``{rel}``: the relation name,
``{terms}``: the shared rare terms of a shared-term edge, ``{name}``: the passage name a
mention found, ``{said}``: the mentioning sentence)."""

_PANEL = "flex:1 1 240px;min-width:0;max-width:360px"
_NOTE = "font-size:11.5px;color:#555;overflow-wrap:anywhere"

IN_PASSAGE_PHRASE = "the previous sentence {src} of this passage ({rel}) passes its evidence on"
OTHER_PHRASE = "sentence {src} is linked to it ({rel})"

INTENT_NOTE = (
    "What the question asks for, from a separate classifier: a linear head on the role tagger's "
    "reading of the question, trained on labelled abstract sentences, its epoch chosen on 30 "
    "hand-written validation questions; test figures (hand-written questions, and weakly "
    "labelled ones: the role of their gold evidence) in "
    "logrerank/checkpoints/question-intent/MODEL_CARD.md. It is not the LoG intent head "
    "(eq. 2); that head's weights are shown beside it for what they are."
)
GAMMA_NOTE = (
    "The weights the LoG local scorer's intent head (eq. 2) gave the three roles in this passage "
    "when scoring (eq. 4). The bundled model gives nearly the same weights to every question, so "
    "they do not tell what the question asks for."
)


def edge_phrase(edge: GraphEdge, source: ScoredSentence, target: ScoredSentence) -> str:
    """What the edge ``source -> target`` tells about ``target``, in words (not escaped)."""
    sim = fmt(edge.similarity, 2)
    terms = edge.terms or []
    fields = {
        "src": sentence_ref(source),
        "src_p": f"P{source.passage_idx + 1}",
        "sim": sim,
        "rel": edge.relation,
        "terms": ", ".join(f"“{t}”" for t in terms[:4]) or "(not recorded)",
        "s": "s" if len(terms) > 1 else "",
        "name": f" (“{terms[0]}”)" if terms else "",
        "said": short(edge.mention or source.text, 160),
    }
    template = RELATION_PHRASES.get(edge.relation)
    if template is None:
        same = source.passage_idx == target.passage_idx
        template = IN_PASSAGE_PHRASE if same and edge.similarity is None else OTHER_PHRASE
    return template.format(**fields)


def why_lines(
    s: ScoredSentence,
    incoming: list[tuple[GraphEdge, ScoredSentence]],
    local_rank: int | None,
    limit: int = 3,
) -> list[str]:
    """Up to ``limit`` lines "moved up: <what the edge means> (α ...)" for the strongest edges in.

    The direction comes from the rank by local scores alone against the final rank (the graph
    correction's sign when that rank is unknown).
    """
    if local_rank is not None:
        moved = local_rank - s.rank
    elif s.global_score is not None and s.local_score is not None:
        moved = (s.global_score > s.local_score) - (s.global_score < s.local_score)
    else:
        moved = 0
    head = "moved up" if moved > 0 else "moved down" if moved < 0 else "kept its place"
    out = []
    for e, n in incoming[:limit]:
        att = e.attention or []
        a = f" (α {sum(att) / len(att):.2f})" if att else ""
        out.append(f"{head}: {edge_phrase(e, n, s)}{a}")
    return out


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
        intent: the LoG intent head's role weights for its passage (eq. 2), or None; the
            question intent shown as such is ``ranking.info["question_intent"]`` (classifier).
        signals: ``ce``, ``ce_rank``, ``bm25`` and ``local_rank`` of the sentence.
    """
    signals = signals or {}
    p = ranking.passages[s.passage_idx]
    probs = s.role_probs or []
    tagged = role_source(ranking) == TAGGER_SOURCE
    role_note = labels.role_note(tagger=tagged)
    role_title = labels.role_title(tagger=tagged)
    delta = None
    if s.global_score is not None and s.local_score is not None:
        delta = s.global_score - s.local_score
    local_rank = signals.get("local_rank")
    bars = "".join(_bar(r, x, role_color(r)) for r, x in zip(ROLE_NAMES, probs))
    gamma_bars = "".join(_bar(r, x, "#bbb") for r, x in zip(ROLE_NAMES, intent or []))
    q_intent = ranking.info.get("question_intent") or {}
    q_title = labels.intent_title(q_intent)
    q_bars = "".join(_bar(r, x, "#777") for r, x in zip(ROLE_NAMES, q_intent.get("probs") or []))
    ce_name = signals.get("ce_name") or "cross-encoder"
    ce_logit = signals.get("ce_logit")
    ce = signals.get("ce")
    near_end = ce is not None and min(ce, 1 - ce) <= SATURATION_MARGIN  # 0.98-0.999 say nothing
    ce_raw = f" (raw logit {ce_logit:.2f})" if near_end and ce_logit is not None else ""
    why = why_lines(s, incoming, local_rank)
    moved = ""
    if local_rank:
        d = local_rank - s.rank
        moved = (
            f"up {d} place{'s' if d != 1 else ''} from rank {local_rank} by local score alone"
            if d > 0
            else f"down {-d} place{'s' if d != -1 else ''} from rank {local_rank} by local "
            "score alone"
            if d < 0
            else "the same rank as by local score alone"
        )
    out = [
        "<div class='lr-explain' style='font-size:14px'>",
        f"<div style='font-weight:600'>#{s.rank} · passage {s.passage_idx + 1}"
        + (f" — {esc(p.title)}" if p.title else "")
        + f", sentence {s.sent_idx + 1}</div>",
        *(
            [f"<div class='lr-from' style='font-size:13px;color:#555'>from: {esc(source)}</div>"]
            if (source := passage_source(p))
            else []
        ),
        f"<blockquote style='border-left:4px solid {role_color(s.role)};margin:6px 0;"
        f"padding:4px 10px;background:#fafafa'>{esc(s.text)}</blockquote>",
        "<table style='font-size:13px;border-collapse:collapse'>",
        f"<tr><td style='padding-right:14px'>score (sorts the ranking)</td>"
        f"<td class='lr-score'><b>{fmt(s.score, 4)}</b> (rank {s.rank}"
        + (f"; {moved}" if moved else "")
        + ")</td></tr>",
        f"<tr><td>global score (eq. 16, raw)</td><td>{fmt(s.global_score, 4)}</td></tr>",
        f"<tr><td>local score (eq. 6, raw)</td><td>{fmt(s.local_score, 4)}"
        + (f" (rank {local_rank} by local alone)" if local_rank else "")
        + "</td></tr>",
        f"<tr><td>graph correction</td><td>{'–' if delta is None else f'{delta:+.4f}'}</td></tr>",
        f"<tr><td>{esc(ce_name)} (sentence)</td><td>{fmt(ce)}{esc(ce_raw)}"
        + (f" (rank {signals['ce_rank']})" if signals.get("ce_rank") else "")
        + "</td></tr>",
        f"<tr><td>BM25 (sentence)</td><td>{fmt(signals.get('bm25'))}</td></tr>",
        _share_row(ranking),
        "</table>",
        "<div class='lr-panels' style='display:flex;flex-wrap:wrap;gap:12px 30px;margin-top:8px'>",
        f"<div class='lr-role' title='{esc(role_note)}' style='{_PANEL}'>"
        f"<div style='font-weight:600;font-size:13px'>{esc(role_title)}: {esc(s.role or '–')}"
        f"</div>{bars}{_log_head_line(ranking, s.node) if tagged else ''}"
        f"<div class='lr-role-note' style='{_NOTE}'>{esc(role_note)}</div></div>",
        f"<div class='lr-intent' title='{esc(INTENT_NOTE)}' style='{_PANEL}'>"
        f"<div style='font-weight:600;font-size:13px'>{esc(q_title or 'question intent')}: "
        f"{esc(q_intent.get('label') or 'not available')}</div>{q_bars}"
        f"<div class='lr-intent-note' style='{_NOTE}'>{esc(INTENT_NOTE)}</div></div>",
        f"<div class='lr-gamma' title='{esc(GAMMA_NOTE)}' style='{_PANEL}'>"
        "<div style='font-weight:600;font-size:13px'>role mixing weights the local scorer used "
        f"in this passage (LoG γ, eq. 2)</div>{gamma_bars or '–'}"
        f"<div class='lr-gamma-note' style='{_NOTE}'>{esc(GAMMA_NOTE)}</div></div>",
        "</div>",
    ]
    if why:
        out.append(
            "<div class='lr-why' style='margin-top:8px;font-size:13px'><b>"
            + ("Why it moved" if why[0].startswith("moved") else "Strongest messages in")
            + "</b>"
            "<ul style='margin:2px 0 0 0;padding-left:20px'>"
            + "".join(f"<li>{esc(w)}</li>" for w in why)
            + "</ul></div>"
        )
    if s.global_score is not None and abs(s.score - s.global_score) > 1e-6:
        out.append(
            "<p style='font-size:12px;color:#555'>The score differs from the raw global score: "
            "it is the global logit adjusted as configured (logrerank/ranking/scoring.py), "
            "shown through the score calibration when the model has one.</p>"
        )
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


def _share_row(ranking: Ranking) -> str:
    """The table row of the pool's graph share (the learned gate of the global stage, the same
    for every sentence of the pool); ``""`` when the graph stage did not run or has no gate."""
    gate = (ranking.info or {}).get("graph_gate")
    if gate is None:
        return ""
    return (
        "<tr><td>graph share (learned gate of this pool)</td>"
        f"<td>{fmt(gate, 2)}: the graph correction counts {100 * gate:.0f} %</td></tr>"
    )


def log_head_text(ranking: Ranking, node: int) -> str:
    """The LoG role head's reading of a retagged ranking's sentence, in words (not escaped):
    ``"LoG role head (eq. 3, used inside the local score): result 0.61"``; ``""`` when the
    ranking keeps none for it."""
    reading = log_head_reading(ranking, node) or {}
    role, probs = reading.get("role"), reading.get("probs") or []
    if role is None:
        return ""
    p = (
        probs[ROLE_NAMES.index(role)]
        if role in ROLE_NAMES and len(probs) == len(ROLE_NAMES)
        else None
    )
    return f"{labels.LOG_ROLE_HEAD}: {role}" + (f" {p:.2f}" if p is not None else "")


def _log_head_line(ranking: Ranking, node: int) -> str:
    text = log_head_text(ranking, node)
    if not text:
        return ""
    return f"<div class='lr-role-log' style='font-size:12.5px;margin-top:2px'>{esc(text)}</div>"


def _bar(name: str, x: float, color: str) -> str:
    """One labelled bar of a distribution; the track shrinks with the screen (no overflow)."""
    return (
        "<div style='display:flex;align-items:center;gap:6px;font-size:12px'>"
        f"<span style='flex:0 0 80px'>{esc(name)}</span>"
        "<span style='flex:0 1 160px;min-width:40px;height:10px'><span style='display:block;"
        f"height:10px;width:{100 * max(0.0, min(1.0, x)):.0f}%;background:{color}'></span></span>"
        f"<span>{x:.2f}</span></div>"
    )


def _link_detail(e: GraphEdge) -> str:
    """What a link edge is, for the neighbour table: its shared terms or its mention."""
    if e.relation == "shared-term" and e.terms:
        return "shared: " + ", ".join(e.terms[:4])
    if e.mention is not None:
        return "names “" + (e.terms[0] if e.terms else "?") + "” in: " + short(e.mention, 100)
    return ""


def _neighbour_table(title: str, rows: list[tuple[GraphEdge, ScoredSentence]]) -> str:
    """A table of a sentence's graph neighbours: relation, attention per layer, rank, text."""
    if not rows:
        return f"<div style='margin-top:8px;font-size:13px'><b>{esc(title)}</b>: none</div>"
    out = [
        f"<div style='margin-top:10px;font-weight:600;font-size:13px'>{esc(title)}</div>",
        "<div style='overflow-x:auto'><table style='font-size:12.5px;border-collapse:collapse;"
        "width:100%'>",
        "<tr style='text-align:left;border-bottom:1px solid #ddd'><th>relation</th><th>α per layer</th>"
        "<th>neighbour</th><th>rank</th><th>global</th><th>text</th></tr>",
    ]
    for e, n in rows:
        att = ", ".join(f"{x:.2f}" for x in e.attention) if e.attention else "–"
        rel = e.relation + (f" (cos {e.similarity:.2f})" if e.similarity is not None else "")
        detail = _link_detail(e)
        rel += f" · {detail}" if detail else ""
        out.append(
            "<tr style='border-bottom:1px solid #f0f0f0'>"
            f"<td style='color:{relation_style(e.relation)['color']}'>{esc(rel)}</td>"
            f"<td>{esc(att)}</td><td>{esc(sentence_ref(n))}</td><td>{n.rank}</td>"
            f"<td>{fmt(n.global_score)}</td><td>{esc(short(n.text, 140))}</td></tr>"
        )
    out.append("</table></div>")
    return "".join(out)


__all__ = [
    "GAMMA_NOTE",
    "INTENT_NOTE",
    "RELATION_PHRASES",
    "edge_phrase",
    "explain_html",
    "log_head_text",
    "why_lines",
]
