"""The comparison view: top-k lists side by side with rank-shift badges against LoG and each
ranker's own score beside every item, and the slope chart (logarithmic rank axis, every line
labelled on both sides with its rank)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from .viz import ROLE_COLORS, esc, fmt, role_color, short


def shift_badge(shift: int | None, reference: str = "the reference") -> str:
    """An arrow badge for a rank shift (positive = this list ranks it higher than the reference)."""
    ref = esc(reference)
    if shift is None:
        return f"<span class='lr-shift lr-shift-none' title='not ranked by {ref}'>new</span>"
    if shift > 0:
        return (
            f"<span class='lr-shift lr-shift-up' title='{shift} places higher than "
            f"{ref}'>▲{shift}</span>"
        )
    if shift < 0:
        return (
            f"<span class='lr-shift lr-shift-down' title='{-shift} places lower than "
            f"{ref}'>▼{-shift}</span>"
        )
    return f"<span class='lr-shift lr-shift-none' title='same place as {ref}'>=</span>"


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
            order; keys identify the same item across columns; ``score`` (a number, a
            pre-formatted string, or None) is shown.
        reference: name of the column the arrows compare against.
        k: items per column.
    """
    ref = next((c for c in columns if c["name"] == reference), None)
    ref_rank = {it[0]: r for r, it in enumerate(ref["items"], 1)} if ref else {}
    out = [
        f"<div class='lr-compare'><div class='lr-compare-title'>{esc(title)}</div>",
        "<div class='lr-columns'>",
    ]
    for col in columns:
        out.append(
            "<div class='lr-column lr-card'>"
            f"<div class='lr-bold'>{esc(col['name'])}</div>"
            + (f"<div class='lr-column-note'>{esc(col['note'])}</div>" if col.get("note") else "")
            + "<ol>"
        )
        for r, (key, label, text, role, score) in enumerate(col["items"][:k], 1):
            badge = ""
            if col["name"] != reference and ref:
                rr = ref_rank.get(key)
                badge = " " + shift_badge(rr - r if rr is not None else None, reference)
            shown = score if isinstance(score, str) else fmt(score)  # str: pre-formatted
            sc = f" <span class='lr-score'>{esc(shown)}</span>" if score is not None else ""
            out.append(
                f"<li style='border-left-color:{role_color(role)}' title='{esc(text)}'>"
                f"<b>{esc(label)}</b>{sc}{badge}"
                + (f"<br><span class='lr-text'>{esc(short(text, 110))}</span>" if text else "")
                + "</li>"
            )
        out.append("</ol></div>")
    out.append("</div></div>")
    return "".join(out)


def spread_labels(ys: list[float], gap: float) -> list[float]:
    """Label positions near ``ys`` (any order) at least ``gap`` apart, in the same order.

    A stack of labels that would pile up is spread evenly around the stack's centre, so each
    label stays as close to its own point as the gap allows.
    """
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = [0.0] * len(ys)
    blocks: list[list[int]] = []  # runs of labels, each run spaced by exactly `gap`
    for i in order:
        blocks.append([i])
        while len(blocks) > 1:
            a, b = blocks[-2], blocks[-1]
            a_top = sum(ys[j] for j in a) / len(a) + gap * (len(a) - 1) / 2
            b_bottom = sum(ys[j] for j in b) / len(b) - gap * (len(b) - 1) / 2
            if b_bottom - a_top >= gap:
                break
            blocks[-2:] = [a + b]
    for block in blocks:
        centre = sum(ys[j] for j in block) / len(block)
        for n, j in enumerate(block):
            out[j] = centre + gap * (n - (len(block) - 1) / 2)
    return out


def _rank_ticks(top: int) -> list[int]:
    """Tick ranks of the logarithmic axis: 1-5, 7, 10, 20, 50, 100, 200, ... and ``top`` (left
    out when it would crowd the last tick)."""
    ticks = [t for t in (1, 2, 3, 4, 5, 7, 10) if t <= top]
    step = 10
    while step * 2 <= top:
        ticks += [step * m for m in (2, 5, 10) if step * m <= top and step * m not in ticks]
        step *= 10
    return ticks + ([top] if top > 1.4 * ticks[-1] else [])


def _wrap(text: str, width: int) -> str:
    """Plain text broken into lines of at most ``width`` characters, escaped, joined by
    ``<br>`` (plotly titles and tick labels)."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(esc(line) for line in lines)


def slope_figure(
    left: list[tuple[Any, int]],
    right: list[tuple[Any, int]],
    labels: dict[Any, str],
    roles: dict[Any, str | None],
    left_name: str,
    right_name: str,
    k: int = 10,
) -> go.Figure:
    """Rank-shift (slope) chart of the union of two top-k lists, on a logarithmic rank axis.

    The top ranks keep room however deep the other list puts an item (rank 140 sits one decade
    below rank 14), and every line is labelled on both sides with its sentence and its rank
    there (``P3·S2 #140``), the labels spread so they never pile up.

    Args:
        left: ``[(key, rank)]`` of the reference ranking (all items).
        right: ``[(key, rank)]`` of the compared ranking (all items).
        labels: hover text per key (plain text; escaped here); the part before ``:`` labels
            the line.
        roles: role per key (line colour).
        left_name: name of the left axis.
        right_name: name of the right axis.
        k: the top-k of either side that is drawn.
    """
    lr, rr = dict(left), dict(right)
    keys: list[Any] = []
    for key in [key for key, r in left if r <= k] + [key for key, r in right if r <= k]:
        if key not in keys and key in lr and key in rr:
            keys.append(key)
    fig = go.Figure()
    top = max([lr[x] for x in keys] + [rr[x] for x in keys] + [k])
    height = max(410, 26 * len(keys) + 170)
    # label spacing in log10 units: one label line (16 px) of the plot's height
    span = math.log10(top + 0.5) - math.log10(0.8)
    gap = span * 16 / max(1, height - 160)
    for ranks, x_text, anchor in ((lr, 0.0, "right"), (rr, 1.0, "left")):
        ys = spread_labels([math.log10(ranks[x]) for x in keys], gap)
        for key, y in zip(keys, ys):
            ref = labels.get(key, "").split(":")[0]
            fig.add_annotation(
                x=x_text,
                y=y,
                xref="x",
                yref="y",
                text=esc(f"{ref} #{ranks[key]}" if anchor == "left" else f"#{ranks[key]} {ref}"),
                showarrow=False,
                xanchor=anchor,
                xshift=-10 if anchor == "right" else 10,
                font={"size": 10.5, "color": role_color(roles.get(key))},
            )
    for key in keys:
        a, b = lr[key], rr[key]
        color = role_color(roles.get(key))
        fig.add_trace(
            go.Scatter(
                x=[0, 1],
                y=[a, b],
                mode="lines+markers",
                line={"color": color, "width": 3 if a != b else 1.5},
                marker={"size": 8, "color": color},
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
    ticks = _rank_ticks(top)
    fig.update_yaxes(
        type="log",
        autorange=False,
        range=[math.log10(top + 0.5), math.log10(0.8)],  # rank 1 on top
        tickvals=ticks,
        ticktext=[str(t) for t in ticks],
        title="rank (1 = best; log scale)",
        showgrid=True,
        gridcolor="#eeeeee",
    )
    fig.update_xaxes(
        range=[-0.9, 1.9],  # room for the labels on both sides
        tickvals=[0, 1],
        ticktext=[_wrap(left_name, 16), _wrap(right_name, 16)],
        showgrid=False,
        zeroline=False,
    )
    fig.update_layout(
        height=height,
        margin={"l": 60, "r": 20, "t": 64, "b": 96},
        title={  # wrapped: a phone's chart is 330 px wide
            "text": _wrap(f"Rank shift (top-{k} of either): {left_name} → {right_name}", 44),
            "font": {"size": 14},
        },
        # below the two-line axis names: 50 px under the plot area, whatever its height
        legend={"orientation": "h", "yanchor": "top", "y": -50 / max(1, height - 160)},
        plot_bgcolor="white",
    )
    return fig


__all__ = ["comparison_columns_html", "shift_badge", "slope_figure", "spread_labels"]
