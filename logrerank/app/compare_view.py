"""The comparison view: top-k lists side by side with rank-shift badges against LoG and each
ranker's own score beside every item, and the slope chart labelled on both sides."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from .viz import ROLE_COLORS, esc, fmt, role_color, short


def shift_badge(shift: int | None, reference: str = "the reference") -> str:
    """An arrow badge for a rank shift (positive = this list ranks it higher than the reference)."""
    ref = esc(reference)
    if shift is None:
        return f"<span class='lr-shift' style='color:#888' title='not ranked by {ref}'>new</span>"
    if shift > 0:
        return (
            f"<span class='lr-shift' style='color:#1a7f37' title='{shift} places higher than "
            f"{ref}'>▲{shift}</span>"
        )
    if shift < 0:
        return (
            f"<span class='lr-shift' style='color:#cf222e' title='{-shift} places lower than "
            f"{ref}'>▼{-shift}</span>"
        )
    return f"<span class='lr-shift' style='color:#888' title='same place as {ref}'>=</span>"


def comparison_columns_html(
    title: str,
    columns: Sequence[dict[str, Any]],
    reference: str,
    k: int = 10,
) -> str:
    """Top-k lists side by side, with rank-shift arrows against ``reference``.

    Args:
        title: heading of the block.
        columns: ``[{"name", "items": [(key, label, text, role, score)], "note"}]`` in rank
            order; keys identify the same item across columns; ``score`` (or None) is shown.
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
        for r, (key, label, text, role, score) in enumerate(col["items"][:k], 1):
            badge = ""
            if col["name"] != reference and ref:
                rr = ref_rank.get(key)
                badge = " " + shift_badge(rr - r if rr is not None else None, reference)
            sc = (
                f" <span class='lr-score' style='color:#555;font-size:11.5px'>{fmt(score)}</span>"
                if score is not None
                else ""
            )
            out.append(
                f"<li style='margin-bottom:3px;border-left:3px solid {role_color(role)};"
                f"padding-left:4px' title='{esc(text)}'><b>{esc(label)}</b>{sc}{badge}"
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
                text=[
                    esc(labels.get(key, "").split(":")[0]) if a <= k else "",
                    esc(labels.get(key, "").split(":")[0]) if b <= k else "",
                ],
                textposition=["middle left", "middle right"],
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
        margin={"l": 70, "r": 20, "t": 40, "b": 30},
        title={
            "text": f"Rank shift: {esc(left_name)} → {esc(right_name)} (top-{k} of either)",
            "font": {"size": 14},
        },
        legend={"orientation": "h", "y": -0.08},
        plot_bgcolor="white",
    )
    fig.update_xaxes(showgrid=False, range=[-0.75, 1.75])  # room for labels on both sides
    return fig


__all__ = ["comparison_columns_html", "shift_badge", "slope_figure"]
