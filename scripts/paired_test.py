"""Paired randomisation test between two rankers' per-query nDCG@10 (same pools, same queries).

    python scripts/paired_test.py runs/final2/scifact/results.json:log \
        runs/baselines/scifact/results.json:bi-encoder --level passage

Prints the mean difference, a 95% bootstrap interval and the two-sided p-value of a sign-flip
randomisation test (10,000 draws, seeded), over the queries both runs share.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics


def per_query(spec: str, level: str, metric: str) -> dict[str, float]:
    path, ranker = spec.rsplit(":", 1)
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)["per_query"][ranker]
    return {r["qid"]: r[level][metric] for r in rows if r.get(level)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="results.json:ranker")
    ap.add_argument("b", help="results.json:ranker")
    ap.add_argument("--level", default="passage", choices=["passage", "sentence"])
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--draws", type=int, default=10_000)
    args = ap.parse_args()
    a, b = per_query(args.a, args.level, args.metric), per_query(args.b, args.level, args.metric)
    qids = sorted(set(a) & set(b))
    d = [a[q] - b[q] for q in qids]
    obs = statistics.mean(d)
    rng = random.Random(0)
    extreme = sum(
        abs(statistics.mean(x if rng.random() < 0.5 else -x for x in d)) >= abs(obs) - 1e-12
        for _ in range(args.draws)
    )
    boots = sorted(statistics.mean(rng.choice(d) for _ in d) for _ in range(2000))
    lo, hi = boots[49], boots[1949]
    print(
        f"{args.level} {args.metric}: {len(qids)} queries, mean difference {100 * obs:+.2f} "
        f"(95% bootstrap {100 * lo:+.2f} .. {100 * hi:+.2f}), better on "
        f"{sum(x > 0 for x in d)}, worse on {sum(x < 0 for x in d)}, "
        f"sign-flip p = {(extreme + 1) / (args.draws + 1):.4f}"
    )


if __name__ == "__main__":
    main()
