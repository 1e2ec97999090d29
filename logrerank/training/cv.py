"""Folds, per-query rows and tables of the cross-validated stage-2 run
(:mod:`logrerank.training.log.graph_cv`).

Folds are over the multi-hop questions, assigned by a hash of ``source:qid`` (independent of
file order). The rows and ``results.json`` files have the layout ``logrerank eval --out``
writes (``summary`` and ``per_query`` per ranker), so ``logrerank paired-test`` and
``logrerank report`` read them.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from ..data.schema import Example, example_passages
from ..evaluation.metrics import evaluate_query, macro_average

COVERAGE = (2, 3, 5)

BY_PAPER = ("scisumm-hand",)
"""Sources cross-validated by reference paper (``meta["paper_id"]``), not by gold passage."""


def fold_of(source: str, qid: str, folds: int) -> int:
    """Deterministic fold of a question (hash of ``source:qid``)."""
    return int(hashlib.sha256(f"{source}:{qid}".encode()).hexdigest()[:8], 16) % folds


def grouped_folds(examples: list[Example], folds: int) -> list[int]:
    """Folds that keep questions sharing a gold passage together (one fold per group).

    Questions are joined when they share a ``(source, gold doc id)``; each connected group
    takes the :func:`fold_of` of its smallest ``(source, qid)``, so a question without shared
    golds keeps its own fold. Without this, claims citing the same abstract (common in
    SciFact) fall into different folds and a fold's model has trained on its test golds.
    Sources in :data:`BY_PAPER` (the hand-annotated CL-SciSumm citances) also join every
    question about the same reference paper: their folds are folds of papers.
    """
    parent = list(range(len(examples)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, ex in enumerate(examples):
        src = ex.meta.get("source") or ""
        keys = list(ex.gold_doc_ids)
        if src in BY_PAPER and ex.meta.get("paper_id"):
            keys.append("paper:" + str(ex.meta["paper_id"]))
        for d in keys:
            j = first.setdefault((src, d), i)
            parent[root(i)] = root(j)
    lead: dict[int, tuple[str, str]] = {}
    for i, ex in enumerate(examples):
        key = (ex.meta.get("source") or "", ex.qid)
        r = root(i)
        lead[r] = min(lead.get(r, key), key)
    return [fold_of(*lead[root(i)], folds) for i in range(len(examples))]


def ranking_row(ex: Example, ranking, coverage: tuple[int, ...] = COVERAGE) -> dict[str, Any]:
    """Per-query row (passage metrics, sentence metrics where the example has labels)."""
    ids = [ex.candidates[i].doc_id for i in ranking.passage_order()]
    row: dict[str, Any] = {
        "qid": ex.qid,
        "source": ex.meta.get("source"),
        "type": ex.meta.get("type"),
        "passage": evaluate_query(ids, set(ex.gold_doc_ids), ks=(10,), coverage_ks=coverage),
    }
    gold_s = {(d, j) for d, js in ex.gold_sentences.items() for j in js}
    if gold_s and ranking.sentences:
        sids = [(ex.candidates[s.passage_idx].doc_id, s.sent_idx) for s in ranking.sentences]
        row["sentence"] = evaluate_query(sids, gold_s, ks=(10,))
    return row


def score_encoded(model, pools, coverage=COVERAGE, **switches) -> list[dict[str, Any]]:
    """Rows of LoG (``switches``: its ablations) on ``(example, encoding)`` pools."""
    return [ranking_row(ex, model.rank_encoded(enc, **switches), coverage) for ex, enc in pools]


def baseline_rows(pools, coverage=COVERAGE) -> dict[str, list[dict[str, Any]]]:
    """BM25 and evidence-graph selector rows on the same pools (no neural model)."""
    from ..baselines.bm25_ranker import BM25Reranker
    from ..baselines.evidence_graph import EvidenceGraphSelector

    rankers = {"bm25": BM25Reranker("passage"), "evidence-graph": EvidenceGraphSelector()}
    return {
        name: [ranking_row(ex, r.rank(ex.query, example_passages(ex)), coverage) for ex, _ in pools]
        for name, r in rankers.items()
    }


def summarise(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Flat macro averages (percent): ``P-ndcg@10``, ``P-coverage@2``, ``S-...``, ``n``."""
    if not rows:
        return {}
    out = {f"P-{k}": v for k, v in macro_average([r["passage"] for r in rows]).items()}
    sent = [r["sentence"] for r in rows if "sentence" in r]
    if sent:
        out |= {f"S-{k}": v for k, v in macro_average(sent).items()}
    out["n"] = len(rows)
    return {k: round(v, 2) for k, v in out.items()}


def by_source(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """:func:`summarise` per source and per source/question type (bridge, comparison, ...)."""
    out = {}
    for src in sorted({r["source"] for r in rows}):
        sub = [r for r in rows if r["source"] == src]
        out[src] = summarise(sub)
        for t in sorted({r["type"] for r in sub if r.get("type")}):
            out[f"{src}/{t}"] = summarise([r for r in sub if r.get("type") == t])
    return out


def write_results(path: str | Path, rows_by_ranker: dict[str, list[dict[str, Any]]]) -> Path:
    """``results.json`` in the ``logrerank eval --out`` layout (``summary`` + ``per_query``)."""
    summary = {}
    for name, rows in rows_by_ranker.items():
        sent = [r["sentence"] for r in rows if "sentence" in r]
        summary[name] = {
            "queries": len(rows),
            "passage": macro_average([r["passage"] for r in rows]) if rows else {},
            "sentence": macro_average(sent) if sent else None,
            "sentence_queries": len(sent),
            "sec_per_query": 0.0,
        }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"summary": summary, "per_query": rows_by_ranker}), "utf-8")
    return path


def print_table(table: dict[str, dict[str, dict[str, float]]], log=sys.stdout) -> None:
    """``table[ranker][source]`` summaries: passage nDCG@10 and coverage@2 per source."""
    for src in sorted({s for v in table.values() for s in v}):
        print(f"## {src}", file=log)
        for name, v in table.items():
            s = v.get(src)
            if s:
                cov = s.get("P-coverage@2", float("nan"))
                nd = s["P-ndcg@10"]
                print(f"  {name:16s} P-nDCG@10 {nd:6.2f}  cov@2 {cov:6.2f}  n={s['n']}", file=log)
    log.flush()
