"""Graph statistics and tau_sim calibration on pools (TRAIN data for calibration).

``python -m logrerank.training.log.calibrate --benchmark scifact --split train --limit 100`` encodes each pool
once, then rebuilds the graph for a grid of tau_sim values and prints mean nodes and edges per
relation type. The paper reports 530.6 nodes and 3,387.3 relation pairs per query on its pools;
MiniLM's contextual vectors have their own cosine distribution, so tau_sim = 0.75 may give a
degenerate (empty or saturated) similarity graph: this tool shows which.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics

import torch

from ...graph.sentence_graph import build_graph, edge_counts


def graph_stats(model, encs, taus: list[float]) -> dict[float, dict[str, float]]:
    """Mean nodes / edges per relation for each tau_sim over encoded pools."""
    out = {}
    for tau in taus:
        g = dataclasses.replace(model.config.graph, tau_sim=tau)
        rows = []
        for e in encs:
            data = build_graph(e.h, e.role_probs, torch.sigmoid(e.local_logits), e.passage_of, g)
            rows.append({"nodes": data.num_nodes, **edge_counts(data)})
        keys = rows[0].keys()
        mean = {k: statistics.mean(r[k] for r in rows) for k in keys}
        mean["all_edges"] = sum(v for k, v in mean.items() if k != "nodes")
        mean["similar_per_node"] = mean["similar"] / max(mean["nodes"], 1)
        out[tau] = mean
    return out


def main(argv: list[str] | None = None) -> None:
    from ...data.pools import load_benchmark
    from ...data.schema import example_passages
    from ...pipeline import LoGReranker

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", default="scifact")
    ap.add_argument("--split", default="train")
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--taus", default="0.5,0.6,0.65,0.7,0.75,0.8,0.85,0.9")
    args = ap.parse_args(argv)
    model = LoGReranker.from_pretrained(args.checkpoint)
    exs, _ = load_benchmark(args.benchmark, split=args.split, limit=args.limit)
    encs = [model.encode(ex.query, example_passages(ex)) for ex in exs]
    stats = graph_stats(model, encs, [float(t) for t in args.taus.split(",")])
    print(
        json.dumps(
            {
                "benchmark": args.benchmark,
                "split": args.split,
                "queries": len(encs),
                "model": model.source,
                "stats": stats,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
