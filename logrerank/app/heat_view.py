"""The heat-text view: passages in LoG order, each sentence shaded by its score."""

from __future__ import annotations

import math

from ..ranking.shown_roles import role_source
from ..types import Ranking, ScoredSentence
from .viz import ROLE_COLORS, esc, fmt, role_color


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
        "<div class='lr-heat'>",
        "<div class='lr-note'>Shade = LoG score "
        f"(min–max over this input); underline colour = role ({esc(role_source(ranking))}) "
        + " ".join(
            f"<span class='lr-role-key' style='border-bottom-color:{c}'>{esc(r)}</span>"
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
            "<div class='lr-card'>"
            f"<div class='lr-bold'>#{sp.rank} · passage {sp.passage_idx + 1}"
            + (f" — {esc(p.title)}" if p.title else "")
            + "</div>"
            + (f"<div class='lr-note'>{others}</div>" if others else "")
            + "<div>"
        )
        for s in sorted(by_passage.get(sp.passage_idx, []), key=lambda s: s.sent_idx):
            w = (s.score - lo) / span if math.isfinite(s.score) else 0.0
            tip = (
                f"rank {s.rank} · {s.role or '–'} · global {fmt(s.global_score)}"
                f" · local {fmt(s.local_score)}"
            )
            outline = ";outline:2px solid #333" if s.rank <= top_k else ""  # a context unit
            out.append(
                f"<span class='lr-sent' data-node='{s.node}' title='{esc(tip)}' "
                f"style='background:rgba(255,176,0,{0.08 + 0.62 * w:.3f});"
                f"border-bottom-color:{role_color(s.role)}{outline}'>"
                f"<sup>{s.rank}</sup> {esc(s.text)}</span> "
            )
        out.append("</div></div>")
    out.append("</div>")
    return "".join(out)


__all__ = ["heat_html"]
