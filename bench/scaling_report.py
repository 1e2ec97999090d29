"""Analysis and output of ``bench/scaling.py``: least-squares fits of time and inference memory
against input size, the markdown table and the figure (plotly; PNG via kaleido, HTML otherwise)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

RANKERS = ("log", "ce")


def linear_fit(xs: list[float], ys: list[float]) -> dict[str, float]:
    """Least-squares ``y = a + b x`` with R² (NaN where undefined)."""
    n = len(xs)
    nan = float("nan")
    if n < 2:
        return {"a": nan, "b": nan, "r2": nan}
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return {"a": nan, "b": nan, "r2": nan}
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    sst = sum((y - my) ** 2 for y in ys)
    sse = sum((y - a - b * x) ** 2 for x, y in zip(xs, ys))
    return {"a": a, "b": b, "r2": 1 - sse / sst if sst > 0 else 1.0}


def analyse(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Linear fits of time (and inference memory) per ranker and sweep."""
    fits: dict[str, Any] = {}
    for sweep, xkey in (("passages", "passages"), ("length", "sentences_total")):
        for ranker in RANKERS:
            rows = [r for r in results if r["sweep"] == sweep and r["ranker"] == ranker]
            if len(rows) < 2:
                continue
            rows = [r for r in rows if r[xkey] is not None]
            if len(rows) < 2:
                continue
            xs = [float(r[xkey]) for r in rows]
            fits[f"{sweep}.{ranker}.seconds"] = {
                "x": xkey,
                **linear_fit(xs, [r["median"]["e2e"] for r in rows]),
            }
            fits[f"{sweep}.{ranker}.inference_mb"] = {
                "x": xkey,
                **linear_fit(xs, [r["inference_mb"] for r in rows]),
            }
    return fits


def _f(x: Any, nd: int = 3) -> str:
    if x is None or x != x:
        return "–"
    return f"{x:.{nd}f}"


def markdown(res: dict[str, Any]) -> str:
    meta = res["meta"]
    lines = [
        f"Scaling: source {meta['source']}, {meta['repeats']} timed + {meta['warmup']} warm-up "
        f"inputs per size, device {meta['device']}, quantize {meta['quantize']}, "
        f"{meta['cpus']} CPUs; one fresh process per row.",
        "",
        "| sweep | passages | sent./passage | sentences | ranker | s / query | s / passage "
        "| LoG local s | LoG graph+GAT+ctx s | load s | RSS loaded MB | peak RSS MB | inference MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res["results"]:
        m = r["median"]
        log = r["ranker"] == "log"
        graph = sum(m.get(k, 0.0) for k in ("graph", "global", "context")) if log else None
        load = sum(v for k, v in r["load_s"].items())
        spp = "natural" if r["sentences"] is None else str(r["sentences"])
        lines.append(
            f"| {r['sweep']} | {r['passages']} | {spp} | {_f(r.get('sentences_total'), 0)} "
            f"| {r['ranker']} | {_f(m['e2e'])} | {_f(m['e2e'] / r['passages'], 4)} "
            f"| {_f(m.get('local') if log else None)} | {_f(graph)} | {_f(load, 2)} "
            f"| {_f(r['rss_after_load_mb'], 0)} | {_f(r['process_peak_rss_mb'], 0)} "
            f"| {_f(r['inference_mb'], 0)} |"
        )
    lines += [
        "",
        "Linear fits (`y = a + b * x`; x = passages, or total sentences for the length sweep):",
        "",
        "| fit | x | a | b (per unit of x) | R² |",
        "|---|---|---|---|---|",
    ]
    for k, f in res["fits"].items():
        lines.append(f"| {k} | {f['x']} | {_f(f['a'], 4)} | {_f(f['b'], 5)} | {_f(f['r2'], 3)} |")
    if res.get("warnings"):
        lines += ["", *[f"warning: {w}" for w in res["warnings"]]]
    return "\n".join(lines)


def figure(res: dict[str, Any], path: Path) -> Path | None:
    """Plot time and inference memory against size: PNG via kaleido (HTML next to it when that
    fails), or HTML for a ``.html`` path. Returns the path written (None without plotly)."""
    try:
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots
    except ImportError:
        return None
    fig = make_subplots(
        rows=2,
        cols=2,
        subplot_titles=(
            "seconds / query vs passages",
            f"seconds / query vs sentences per passage ({res['meta']['length_passages']} passages)",
            "inference MB (peak − loaded RSS) vs passages",
            "inference MB vs sentences per passage",
        ),
    )
    colors = {"log": "#1f77b4", "ce": "#d62728", "log.local": "#2ca02c", "log.graph": "#9467bd"}
    names = {
        "log": "LoG end to end",
        "ce": "cross-encoder",
        "log.local": "LoG local encoder",
        "log.graph": "LoG graph+GAT+context",
    }
    for col, sweep, xkey in ((1, "passages", "passages"), (2, "length", "sentences")):
        for ranker in RANKERS:
            rows = [r for r in res["results"] if r["sweep"] == sweep and r["ranker"] == ranker]
            if not rows:
                continue
            xs = [r[xkey] for r in rows]
            series = {ranker: [r["median"]["e2e"] for r in rows]}
            if ranker == "log":
                series["log.local"] = [r["median"]["local"] for r in rows]
                series["log.graph"] = [
                    sum(r["median"][k] for k in ("graph", "global", "context")) for r in rows
                ]
            for key, ys in series.items():
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=ys,
                        mode="lines+markers",
                        name=names[key],
                        legendgroup=key,
                        showlegend=col == 1,
                        line={"color": colors[key], "dash": "solid" if "." not in key else "dot"},
                    ),
                    row=1,
                    col=col,
                )
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=[r["inference_mb"] for r in rows],
                    mode="lines+markers",
                    name=names[ranker],
                    legendgroup=ranker,
                    showlegend=False,
                    line={"color": colors[ranker]},
                ),
                row=2,
                col=col,
            )
    for col, title in ((1, "passages"), (2, "sentences per passage")):
        fig.update_xaxes(title_text=title, row=2, col=col)
        fig.update_xaxes(title_text=title, row=1, col=col)
    fig.update_yaxes(title_text="s", row=1, col=1)
    fig.update_yaxes(title_text="MB", row=2, col=1)
    m = res["meta"]
    fig.update_layout(
        title=f"LoG vs cross-encoder scaling ({m['device']}, {m['cpus']} CPUs, {m['source']})",
        width=1100,
        height=760,
        template="plotly_white",
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in (".html", ".htm"):
        fig.write_html(str(path), include_plotlyjs=True)
        return path
    try:
        fig.write_image(str(path), width=1100, height=760)
        return path
    except Exception as exc:  # no kaleido / no Chrome: keep an interactive figure instead
        html = path.with_suffix(".html")
        fig.write_html(str(html), include_plotlyjs=True)
        print(f"note: no PNG ({type(exc).__name__}: {exc}); wrote {html}", file=sys.stderr)
        return html
