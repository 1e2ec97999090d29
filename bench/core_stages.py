"""Stage timings, peak memory and graph size of LoG on real 50-candidate pools.

Usage::

    python bench/core_stages.py --queries 3 [--checkpoint DIR] [--precision auto|fp32]

Builds SciFact dev 50-candidate BM25 pools (logrerank.data), reranks each pool once to warm up
and then ``--queries`` pools timed, and prints per-stage seconds (median over queries), peak
resident memory and nodes / edges per relation type. Needs ../shared/data (or LOGRERANK_DATA).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import time

import torch

from logrerank.data.pools import load_benchmark
from logrerank.pipeline import LoGReranker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=3)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--precision", default="auto")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    examples, _ = load_benchmark("scifact", limit=args.queries + 1)
    t0 = time.perf_counter()
    model = LoGReranker.from_pretrained(args.checkpoint, precision=args.precision)
    load_s = time.perf_counter() - t0
    runs = []
    for i, ex in enumerate(examples):
        passages = [{"title": d.title, "text": d.text} for d in ex.candidates]
        r = model.rerank(ex.query, passages)
        if i == 0:
            continue  # warm-up
        runs.append(r)
    stages = list(runs[0].timings)
    med = {k: statistics.median(r.timings[k] for r in runs) for k in stages}
    nodes = statistics.mean(r.info["num_nodes"] for r in runs)
    edges = {
        k: statistics.mean(r.info["edge_counts"][k] for r in runs)
        for k in runs[0].info["edge_counts"]
    }
    report = {
        "queries": len(runs),
        "passages_per_query": len(examples[1].candidates),
        "model": model.source,
        "device": str(model.device_),
        "precision": str(model.autocast_dtype or torch.float32),
        "threads": torch.get_num_threads(),
        "model_load_s": round(load_s, 2),
        "median_stage_s": {k: round(v, 4) for k, v in med.items()},
        "mean_nodes": nodes,
        "mean_edges_per_type": edges,
        "mean_edges_total": sum(edges.values()),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
