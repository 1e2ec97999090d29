"""Dump per-pool first-pass rank, pool BM25 and bi-encoder scores (passage and best sentence).

Used to study what a cross-encoder has to add over its priors:
``python research/ce/score_dump.py --out runs/probe/scores.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from logrerank.data.pools import load_benchmark
from logrerank.data.schema import example_passages
from logrerank.rankers import build_rankers

SETS = {"hotpotqa": "train", "musique": "train", "citint": "dev", "scifact": "dev"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rankers = build_rankers(["bm25", "bi-encoder", "bi-encoder-passage"])
    out: dict = {}
    for name, split in SETS.items():
        t0 = time.perf_counter()
        exs, _ = load_benchmark(name, split=split, limit=args.limit)
        rows = []
        for ex in exs:
            ps = example_passages(ex)
            row = {"qid": ex.qid, "ids": [p["id"] for p in ps], "gold": list(ex.gold_doc_ids)}
            for rn, r in rankers.items():
                rk = r.rank(ex.query, ps)
                sc = [0.0] * len(ps)
                for sp in rk.passages_ranked:
                    sc[sp.passage_idx] = float(sp.score)
                row[rn] = sc
            rows.append(row)
        out[name] = rows
        print(name, len(rows), f"{time.perf_counter() - t0:.0f}s", flush=True)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out))


if __name__ == "__main__":
    main()
