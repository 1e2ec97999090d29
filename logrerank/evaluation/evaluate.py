"""Evaluate every ranker on the same candidate pools in one run.

Passage-level metrics use each ranker's passage order (a sentence ranker ranks a passage by its
best sentence). Sentence-level metrics use the dataset's own sentence units (passages are passed
with their given ``sentences``), so gold sentence ids match node ids exactly.

User collections (:mod:`logrerank.data.beir`) add graded gains (``Example.gold_gains``, used by
nDCG) and may hold queries that score 0 on every metric, as ``trec_eval`` and ``ir_measures``
score them: judged queries without a relevant passage, and queries without candidates (absent
from the first-stage run; nobody ranks them).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from ..data.schema import Example, example_passages
from .metrics import evaluate_query, macro_average

MULTI_HOP = {"hotpotqa", "musique"}


def evaluate(
    examples: list[Example],
    rankers: dict[str, Any],
    k: int = 10,
    coverage_ks: tuple[int, ...] = (),
    progress: bool = True,
    keep_rankings: bool = False,
) -> dict[str, Any]:
    """Run every ranker on every example.

    Args:
        examples: queries with candidate pools and gold labels.
        rankers: ``{name: ranker}`` from :func:`logrerank.rankers.build_rankers`.
        k: metric cut-off.
        coverage_ks: complete-coverage cut-offs (multi-hop benchmarks).
        progress: show a tqdm progress bar.
        keep_rankings: also return each ranker's passage order per query (every candidate,
            best first; a candidate the ranker left out, over a limit, follows in pool order,
            and the metrics see the same list).

    Returns:
        ``{"summary": {ranker: {...}}, "per_query": {ranker: [...]}, "warnings": [...]}``, plus
        ``"rankings": {ranker: {qid: [doc ids]}}`` with ``keep_rankings``; summary metrics are
        macro-averaged percentages, ``sec_per_query`` is the mean wall time over the ranked
        queries (for LoG rankers, the sum of their stage timings, since the ablations share one
        encoding).
    """
    from tqdm.auto import tqdm

    per_query: dict[str, list[dict[str, Any]]] = {n: [] for n in rankers}
    rankings: dict[str, dict[str, list[str]]] = {n: {} for n in rankers}
    warnings: dict[str, set[str]] = {n: set() for n in rankers}
    zero = {f"recall@{k}": 0.0, f"map@{k}": 0.0, f"ndcg@{k}": 0.0}
    zero.update({f"coverage@{c}": 0.0 for c in coverage_ks})
    for ex in tqdm(examples, desc="queries", disable=not progress):
        if not ex.candidates:  # nothing to rank: every metric is 0, as trec_eval scores it
            for name in rankers:
                row = {"qid": ex.qid, "seconds": 0.0, "passage": dict(zero), "unranked": True}
                per_query[name].append(row)
            continue
        passages = example_passages(ex)
        gold_p = set(ex.gold_doc_ids)
        gains = ex.gold_gains or None
        gold_s = {(d, j) for d, js in ex.gold_sentences.items() for j in js}
        for name, ranker in rankers.items():
            t0 = time.perf_counter()
            ranking = ranker.rank(ex.query, passages)
            seconds = time.perf_counter() - t0
            if name.startswith("log") and "total" in ranking.timings:
                seconds = ranking.timings["total"]
            warnings[name].update(w for w in ranking.warnings if "untrained" not in w)
            ids = [ex.candidates[i].doc_id for i in ranking.passage_order()]
            if len(ids) < len(ex.candidates):  # a candidate left out (over a limit) ranks last
                ranked = set(ids)
                ids += [d.doc_id for d in ex.candidates if d.doc_id not in ranked]
            if keep_rankings:
                rankings[name][ex.qid] = ids
            row: dict[str, Any] = {"qid": ex.qid, "seconds": seconds}
            row["passage"] = (
                evaluate_query(ids, gold_p, ks=(k,), coverage_ks=coverage_ks, gains=gains)
                if gold_p
                else dict(zero)  # judged, but nothing relevant: 0, as trec_eval scores it
            )
            if gold_s and ranking.sentences:
                sids = [
                    (ex.candidates[s.passage_idx].doc_id, s.sent_idx) for s in ranking.sentences
                ]
                row["sentence"] = evaluate_query(sids, gold_s, ks=(k,))
            per_query[name].append(row)
    summary = {}
    for name, rows in per_query.items():
        sent = [r["sentence"] for r in rows if "sentence" in r]
        summary[name] = {
            "level": getattr(rankers[name], "level", "?"),
            "queries": len(rows),
            "passage": macro_average([r["passage"] for r in rows]) if rows else {},
            "sentence": macro_average(sent) if sent else None,
            "sentence_queries": len(sent),
            "sec_per_query": statistics.mean(timed) if (timed := _timed(rows)) else 0.0,
        }
    result = {
        "summary": summary,
        "per_query": per_query,
        "warnings": {n: sorted(w) for n, w in warnings.items() if w},
    }
    if keep_rankings:
        result["rankings"] = rankings
    return result


def _timed(rows: list[dict[str, Any]]) -> list[float]:
    """The wall times of the queries that were ranked."""
    return [r["seconds"] for r in rows if not r.get("unranked")]


def results_markdown(result: dict[str, Any], k: int, coverage_ks: tuple[int, ...] = ()) -> str:
    """One row per ranker: passage and sentence Recall/MAP/nDCG@k, coverage, seconds/query."""
    cols = [f"P-R@{k}", f"P-MAP@{k}", f"P-nDCG@{k}", f"S-R@{k}", f"S-MAP@{k}", f"S-nDCG@{k}"]
    cols += [f"cov@{c}" for c in coverage_ks] + ["s/query"]
    lines = ["| ranker | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, s in result["summary"].items():
        p, sent = s["passage"], s["sentence"] or {}

        def f(d: dict[str, float], key: str) -> str:
            return f"{d[key]:.1f}" if key in d else "–"

        vals = [f(p, f"recall@{k}"), f(p, f"map@{k}"), f(p, f"ndcg@{k}")]
        vals += [f(sent, f"recall@{k}"), f(sent, f"map@{k}"), f(sent, f"ndcg@{k}")]
        vals += [f(p, f"coverage@{c}") for c in coverage_ks]
        vals.append(f"{s['sec_per_query']:.3f}")
        lines.append(f"| {name} | " + " | ".join(vals) + " |")
    return "\n".join(lines)


def write_results(
    out_dir: str | Path,
    result: dict[str, Any],
    meta: dict[str, Any],
    k: int,
    coverage_ks: tuple[int, ...] = (),
) -> tuple[Path, Path]:
    """Write ``results.json`` (summary, per-query rows, meta) and ``results.md``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({"meta": meta, **result}, indent=1), "utf-8")
    md = [f"# {meta.get('benchmark', 'evaluation')}", ""]
    md += [f"- {key}: {val}" for key, val in meta.items() if key != "benchmark"]
    md += ["", results_markdown(result, k, coverage_ks), ""]
    for name, ws in result.get("warnings", {}).items():
        md += [f"- warning ({name}): {w}" for w in ws]
    (out / "results.md").write_text("\n".join(md) + "\n", "utf-8")
    return out / "results.json", out / "results.md"
