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
from .metrics import distinct_at_k, evaluate_query, evidence_coverage_at_k, macro_average

MULTI_HOP = {"hotpotqa", "musique"}
SENT_COVERAGE_K = 5  # cut-off of the sentence-side evidence coverage (evcov@5)


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
            if ranking.sentences and (gold_s or gold_p):
                orders = {"sentence": ranking.sentences}
                if ranking.sentence_order != "score":  # the plain order too: before/after
                    orders["sentence_by_score"] = ranking.by_score()
                for key, sents in orders.items():
                    row[key] = sentence_metrics(ex, sents, gold_s, gold_p, k)
            per_query[name].append(row)
    summary = {}
    for name, rows in per_query.items():
        sent = [r["sentence"] for r in rows if "sentence" in r]
        gold_sent = sum(1 for r in sent if f"ndcg@{k}" in r)
        summary[name] = {
            "level": getattr(rankers[name], "level", "?"),
            "queries": len(rows),
            "passage": macro_average([r["passage"] for r in rows]) if rows else {},
            "sentence": _sentence_summary(sent),
            "sentence_queries": gold_sent,  # queries with gold sentences
            "evidence_queries": len(sent),  # queries with S-cov / S-dist
            "sec_per_query": statistics.mean(timed) if (timed := _timed(rows)) else 0.0,
        }
        plain = [r["sentence_by_score"] for r in rows if "sentence_by_score" in r]
        if plain and len(plain) == len(sent):
            summary[name]["sentence_by_score"] = _sentence_summary(plain)
    result = {
        "summary": summary,
        "per_query": per_query,
        "warnings": {n: sorted(w) for n, w in warnings.items() if w},
    }
    if keep_rankings:
        result["rankings"] = rankings
    return result


def sentence_metrics(
    ex: Example, sentences: list, gold_s: set[tuple[str, int]], gold_p: set[str], k: int
) -> dict[str, float]:
    """Sentence-side metrics of one ranked sentence list.

    ``recall@k``, ``map@k`` and ``ndcg@k`` over the gold sentences (when the query has any);
    ``evcov@5``: :func:`~.metrics.evidence_coverage_at_k` of the sentences' passages against the
    evidence passages (those holding gold sentences, else the gold passages); ``distinct@k``:
    :func:`~.metrics.distinct_at_k`, passages among the top k sentences (a count).
    """
    sids = [(ex.candidates[s.passage_idx].doc_id, s.sent_idx) for s in sentences]
    groups = [d for d, _ in sids]
    out = evaluate_query(sids, gold_s, ks=(k,)) if gold_s else {}
    evidence = {d for d, _ in gold_s} or set(gold_p)
    out[f"evcov@{SENT_COVERAGE_K}"] = evidence_coverage_at_k(groups, evidence, SENT_COVERAGE_K)
    out[f"distinct@{k}"] = float(distinct_at_k(groups, k))
    return out


def _sentence_summary(rows: list[dict[str, float]]) -> dict[str, float] | None:
    """Mean of each sentence-side metric over the queries that have it (the gold-sentence
    metrics exist only for queries with gold sentences), in percent; ``distinct@k`` stays a
    mean count of passages."""
    if not rows:
        return None
    out: dict[str, float] = {}
    for key in dict.fromkeys(key for r in rows for key in r):
        vals = [r[key] for r in rows if key in r]
        scale = 1.0 if key.startswith("distinct@") else 100.0
        out[key] = scale * sum(vals) / len(vals)
    return out


def _timed(rows: list[dict[str, Any]]) -> list[float]:
    """The wall times of the queries that were ranked."""
    return [r["seconds"] for r in rows if not r.get("unranked")]


def results_markdown(result: dict[str, Any], k: int, coverage_ks: tuple[int, ...] = ()) -> str:
    """One row per ranker: passage and sentence Recall/MAP/nDCG@k, the sentence-side evidence
    coverage (S-cov@5) and distinct passages (S-dist@k), passage coverage, seconds/query. A
    ranker whose sentences were selected (:mod:`logrerank.ranking.selection`) gets a second row, "(score
    order)", with its sentence metrics in the plain score order."""
    cov = SENT_COVERAGE_K
    cols = [f"P-R@{k}", f"P-MAP@{k}", f"P-nDCG@{k}", f"S-R@{k}", f"S-MAP@{k}", f"S-nDCG@{k}"]
    cols += [f"S-cov@{cov}", f"S-dist@{k}"]
    cols += [f"cov@{c}" for c in coverage_ks] + ["s/query"]
    lines = ["| ranker | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]

    def f(d: dict[str, float], key: str) -> str:
        return f"{d[key]:.1f}" if key in d else "–"

    for name, s in result["summary"].items():
        p = s["passage"]
        rows = [(name, s["sentence"] or {})]
        if s.get("sentence_by_score"):
            rows.append((f"{name} (score order)", s["sentence_by_score"]))
        for label, sent in rows:
            vals = [f(p, f"recall@{k}"), f(p, f"map@{k}"), f(p, f"ndcg@{k}")]
            vals += [f(sent, f"recall@{k}"), f(sent, f"map@{k}"), f(sent, f"ndcg@{k}")]
            vals += [f(sent, f"evcov@{cov}"), f(sent, f"distinct@{k}")]
            vals += [f(p, f"coverage@{c}") for c in coverage_ks]
            vals.append(f"{s['sec_per_query']:.3f}")
            lines.append(f"| {label} | " + " | ".join(vals) + " |")
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
