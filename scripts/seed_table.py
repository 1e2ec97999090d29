"""Mean and standard deviation of one ranker over seed runs of ``logrerank eval`` (issue 4).

    python scripts/seed_table.py --ranker log \\
        scifact=runs/final4/scifact,runs/seeds3-full/scifact-s17,runs/seeds3-full/scifact-s23 \\
        citint=runs/final4/citint,runs/seeds3-full/citint-s17,runs/seeds3-full/citint-s23

Each ``NAME=DIR,DIR,...`` is one benchmark with one eval folder (holding ``results.json``) per
seed, in the same seed order. Prints a markdown table: one row per seed, then mean ± sd (sample
standard deviation, n - 1), with passage nDCG@10 and, where the benchmark has sentence labels,
sentence nDCG@10.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def figures(run: Path, ranker: str) -> dict[str, float]:
    """Passage (and sentence, when present) nDCG@10 of ``ranker`` in ``run/results.json``."""
    summary = json.loads((run / "results.json").read_text())["summary"][ranker]
    out = {"P": summary["passage"]["ndcg@10"]}
    if summary.get("sentence_queries"):
        out["S"] = summary["sentence"]["ndcg@10"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranker", default="log")
    ap.add_argument("--seeds", default="13,17,23", help="labels of the rows, in folder order")
    ap.add_argument("bench", nargs="+", help="NAME=DIR,DIR,... (one folder per seed)")
    args = ap.parse_args()
    seeds = args.seeds.split(",")
    cols: list[tuple[str, list[float]]] = []
    for spec in args.bench:
        name, dirs = spec.split("=", 1)
        runs = [figures(Path(d), args.ranker) for d in dirs.split(",")]
        if len(runs) != len(seeds):
            raise SystemExit(f"{name}: {len(runs)} folders for {len(seeds)} seeds")
        for level in ("P", "S"):
            if all(level in r for r in runs):
                cols.append((f"{name} {level}", [r[level] for r in runs]))
    print("| seed | " + " | ".join(c for c, _ in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for i, s in enumerate(seeds):
        print(f"| {s} | " + " | ".join(f"{v[i]:.1f}" for _, v in cols) + " |")
    stats = [f"{statistics.mean(v):.1f} ± {statistics.stdev(v):.1f}" for _, v in cols]
    print("| mean ± sd | " + " | ".join(stats) + " |")


if __name__ == "__main__":
    main()
