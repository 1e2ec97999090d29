"""Speed benchmark statistics and report: percentiles, per-stage shares, targets, markdown.

The targets are the speed budget of the app on a 2-core CPU with 50-passage pools
(bench/README.md); :func:`check_targets` marks each pass / FAIL.
"""

from __future__ import annotations

from typing import Any

LOG_STAGES = ("segment", "tokenize", "local", "graph", "global", "context", "overhead")
"""Stages of LoG's time per query (``overhead`` = end to end minus the timed stages)."""
GRAPH_STAGES = ("graph", "global", "context")
"""The stages a knob change re-runs (graph build, GAT, context)."""

TARGETS = {
    "log_over_ce_full_p50": 1.15,  # cold LoG <= 1.15 x the full-text cross-encoder (p50)
    "log_over_ce_p50": 1.6,  # cold LoG <= 1.6 x the truncated cross-encoder (p50)
    "log_p50_s": 1.0,  # cold LoG <= 1.0 s per 50-passage pool (p50)
    "graph_share": 0.10,  # graph + GAT + context <= 10 % of LoG's time (50 passages)
    "peak_rss_mb": 1536.0,  # peak RSS <= 1.5 GB
    "knob_p95_s": 0.06,  # knob change (rank_encoded on a cached Encoded) <= 0.06 s
}
"""Speed targets (2-core CPU, 50-passage pools; bench/README.md)."""


def summary(xs: list[float]) -> dict[str, float]:
    """p50 / p95 (linear interpolation) / mean / max of ``xs`` (seconds)."""
    if not xs:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "mean": float("nan")}
    s = sorted(xs)

    def pct(q: float) -> float:
        k = (len(s) - 1) * q
        lo = int(k)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)

    return {
        "n": len(s),
        "p50": pct(0.50),
        "p95": pct(0.95),
        "mean": sum(s) / len(s),
        "max": s[-1],
    }


def analyse(rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per-ranker / per-stage statistics, ratios and shares of the measured rows."""
    log, ce, bm = rows["log"], rows["ce"], rows["bm25"]
    full = rows.get("ce_full", [])
    stats: dict[str, dict[str, float]] = {
        "log": summary([r["e2e"] for r in log]),
        **{f"log.{k}": summary([r[k] for r in log]) for k in LOG_STAGES},
        "log.graph+global+context": summary([r["graph_stages"] for r in log]),
        "knob (rank_encoded)": summary([r["knob"] for r in log]),
        "cross-encoder": summary([r["e2e"] for r in ce]),
        "cross-encoder.model": summary([r["model"] for r in ce]),
        "cross-encoder.prior": summary([r.get("prior", 0.0) for r in ce]),
        "cross-encoder-full": summary([r["e2e"] for r in full]),
        "cross-encoder-full.model": summary([r["model"] for r in full]),
        "cross-encoder-full.prior": summary([r.get("prior", 0.0) for r in full]),
        "bm25": summary([r["e2e"] for r in bm]),
    }
    log_total = sum(r["e2e"] for r in log) or float("nan")
    share = {k: sum(r[k] for r in log) / log_total for k in LOG_STAGES}
    graph_share = sum(r["graph_stages"] for r in log) / log_total
    per_query_ratio = [a["e2e"] / b["e2e"] for a, b in zip(log, ce) if b["e2e"] > 0]
    # the cross-encoder without its bi-encoder prior pass (= the whole call for a plain model)
    pairs = summary([r["e2e"] - r.get("prior", 0.0) for r in ce])["p50"]
    pairs_full = summary([r["e2e"] - r.get("prior", 0.0) for r in full])["p50"]
    ratios = {
        "log_over_ce_p50": stats["log"]["p50"] / stats["cross-encoder"]["p50"],
        "log_over_ce_mean": stats["log"]["mean"] / stats["cross-encoder"]["mean"],
        "log_over_ce_per_query_p50": summary(per_query_ratio)["p50"],
        "log_over_ce_full_p50": stats["log"]["p50"] / stats["cross-encoder-full"]["p50"],
        "log_over_ce_full_mean": stats["log"]["mean"] / stats["cross-encoder-full"]["mean"],
        "log_over_ce_pairs_p50": stats["log"]["p50"] / pairs if pairs else float("nan"),
        "log_over_ce_full_pairs_p50": (
            stats["log"]["p50"] / pairs_full if pairs_full else float("nan")
        ),
        "log_over_bm25_p50": stats["log"]["p50"] / max(stats["bm25"]["p50"], 1e-12),
    }
    return {
        "stats": stats,
        "stage_share_of_log": share,
        "graph_share": graph_share,
        "ratios": ratios,
        "mean_passages": summary([r["passages"] for r in log])["mean"],
        "mean_sentences": summary([r["sentences"] for r in log])["mean"],
        "mean_edges": summary([r["edges"] for r in log])["mean"],
        "mean_tokens": {
            "log": summary([r["tokens"] for r in log])["mean"],
            "log_padded": summary([r["padded_tokens"] for r in log])["mean"],
            "log_windows": summary([r["windows"] for r in log])["mean"],
            "ce": summary([r["tokens"] for r in ce])["mean"],
            "ce_padded": summary([r["padded_tokens"] for r in ce])["mean"],
            "ce_full": summary([r["tokens"] for r in full])["mean"],
            "ce_full_padded": summary([r["padded_tokens"] for r in full])["mean"],
        },
    }


def check_targets(a: dict[str, Any], peak_rss_mb: float) -> dict[str, dict[str, Any]]:
    """:data:`TARGETS` against the measured values (``ok`` None = not measurable)."""
    vals = {
        "log_over_ce_full_p50": a["ratios"]["log_over_ce_full_p50"],
        "log_over_ce_p50": a["ratios"]["log_over_ce_p50"],
        "log_p50_s": a["stats"]["log"]["p50"],
        "graph_share": a["graph_share"],
        "peak_rss_mb": peak_rss_mb,
        "knob_p95_s": a["stats"]["knob (rank_encoded)"]["p95"],
    }
    out = {}
    for k, limit in TARGETS.items():
        v = vals[k]
        out[k] = {"value": v, "limit": limit, "ok": None if v != v else bool(v <= limit)}
    return out


def _f(x: float, nd: int = 3) -> str:
    return "–" if x != x else f"{x:.{nd}f}"


def runtime_lines(by_runtime: dict[str, dict[str, Any]]) -> list[str]:
    """The runtime comparison table (``--runtime a,b,...``; nothing for a single runtime)."""
    if len(by_runtime) < 2:
        return []
    lines = [
        "",
        "| runtime (in use: LoG / CE) | LoG p50 s | LoG local p50 s | CE p50 s | LoG / CE |",
        "|---|---|---|---|---|",
    ]
    for rt, r in by_runtime.items():
        lines.append(
            f"| {rt} ({r['log_in_use']} / {r['ce_in_use']}) | {_f(r['log_p50'])} | "
            f"{_f(r['log_local_p50'])} | {_f(r['ce_p50'])} | {_f(r['log_over_ce_p50'], 2)}x |"
        )
    return lines


def markdown(res: dict[str, Any]) -> str:
    """The results as markdown (tables + target checks)."""
    a, m, meta = res["analysis"], res["memory"], res["meta"]
    nan = float("nan")
    lines = [
        f"Speed benchmark: {meta['queries']} queries ({meta['source']}, "
        f"{_f(a['mean_passages'], 1)} passages, {_f(a['mean_sentences'], 0)} sentences, "
        f"{_f(a['mean_edges'], 0)} edges on average), {meta['warmup']} warm-up; "
        f"device {meta['device']}, precision {meta['precision']}, quantize {meta['quantize']}, "
        f"runtime {meta.get('runtime', 'torch')}, "
        f"segment cache {meta.get('segment_cache', 'off')}, "
        f"passage cache {meta.get('passage_cache', 'off')}, "
        f"{meta['threads']} torch threads, {meta['cpus']} CPUs.",
        "",
        "| ranker / stage | p50 s | p95 s | mean s | share of LoG |",
        "|---|---|---|---|---|",
    ]
    share = a["stage_share_of_log"]
    for k, s in a["stats"].items():
        sh = ""
        if k.startswith("log."):
            stage = k.removeprefix("log.")
            sh = _f(100 * (share[stage] if stage in share else a["graph_share"]), 1) + " %"
        lines.append(f"| {k} | {_f(s['p50'])} | {_f(s['p95'])} | {_f(s['mean'])} | {sh} |")
    r, tk = a["ratios"], a["mean_tokens"]
    lines += [
        "",
        f"LoG / cross-encoder: p50 {_f(r['log_over_ce_p50'], 2)}x, mean "
        f"{_f(r['log_over_ce_mean'], 2)}x (per-query p50 {_f(r['log_over_ce_per_query_p50'], 2)}x); "
        f"LoG / cross-encoder-full: p50 {_f(r['log_over_ce_full_p50'], 2)}x, mean "
        f"{_f(r['log_over_ce_full_mean'], 2)}x; without the cross-encoder's bi-encoder prior "
        f"pass (`.prior`): LoG / cross-encoder p50 {_f(r.get('log_over_ce_pairs_p50', nan), 2)}x, "
        f"LoG / cross-encoder-full p50 {_f(r.get('log_over_ce_full_pairs_p50', nan), 2)}x; "
        f"graph + GAT + context = {_f(100 * a['graph_share'], 1)} % of LoG's time.",
        "",
        f"Tokens per query read by the transformer: LoG {_f(tk['log'], 0)} "
        f"({_f(tk['log_padded'], 0)} padded, {_f(tk['log_windows'], 0)} windows), cross-encoder "
        f"{_f(tk['ce'], 0)} ({_f(tk['ce_padded'], 0)} padded; title + first characters of each "
        f"passage, capped at its max_length), cross-encoder-full {_f(tk['ce_full'], 0)} "
        f"({_f(tk['ce_full_padded'], 0)} padded; title + every window of each passage).",
        "",
        "| model load (start-up) | s |",
        "|---|---|",
        *[f"| {k} | {_f(v, 2)} |" for k, v in res["load_s"].items()],
        "",
        f"Peak RSS (process): {_f(m['process_peak_rss_mb'], 0)} MB (RSS before any model "
        f"loaded, after imports: {_f(m['rss_at_start_mb'], 0)} MB).",
        "",
    ]
    gpu = any("gpu_peak_alloc_mb" in v for v in m["phases"].values())
    head = "| phase | runs | peak RSS MB | peak over start MB | RSS after MB |"
    lines += [head + (" GPU peak alloc MB |" if gpu else ""), "|---" * (6 if gpu else 5) + "|"]
    for k, v in m["phases"].items():
        row = (
            f"| {k} | {v['runs']} | {_f(v['peak_mb'], 0)} | {_f(v.get('peak_over_start_mb', 0.0), 0)}"
            f" | {_f(v['rss_after_mb'], 0)} |"
        )
        if gpu:
            row += f" {_f(v.get('gpu_peak_alloc_mb', float('nan')), 0)} |"
        lines.append(row)
    if not m["peak_reset_per_phase"]:
        lines.append("\n(per-phase peaks could not be reset here: each is the process peak so far)")
    lines += ["", "| target (bench/README.md) | value | limit | |", "|---|---|---|---|"]
    for k, t in res["targets"].items():
        ok = "–" if t["ok"] is None else ("pass" if t["ok"] else "FAIL")
        lines.append(f"| {k} | {_f(t['value'], 3)} | {t['limit']} | {ok} |")
    lines += runtime_lines(res.get("runtimes") or {})
    if res.get("warnings"):
        lines += ["", *[f"warning: {w}" for w in res["warnings"]]]
    return "\n".join(lines)
