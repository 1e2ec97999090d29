"""Per-seed against seed-pooled route cells, judged on held-out training specs.

    python research/route_pooling.py --kind citance runs/tune-y-seed13.json runs/tune-y-seed14.json runs/tune-y-seed15.json
    python research/route_pooling.py --kind question runs/tune-pqy-seed1{3,4,5}.json

Each argument is the JSON that ``logrerank tune-score --paper-route`` prints for one seed of a
training recipe (same specs for every seed). Leave one spec out: for every held-out spec s and
every seed, the route cell (a, w, v, u) is chosen on the other specs

* **per seed**: by that seed's own macro (the tuner's rule, ``route_tuning.best_cell``);
* **pooled**: by the mean over seeds of their macros on those specs;

and the chosen cell's nDCG@10 on s for that seed is kept. Printed: the mean held-out figure of
each procedure over specs and seeds, the per-spec figures, and the pooled cells on all specs.
Training pools only; reads nothing but the tune JSONs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def _macro(per_spec: dict[str, dict[str, float]], specs: list[str]) -> dict[str, float]:
    """Unweighted mean over ``specs`` of each cell's nDCG@10 (the tuner's macro)."""
    cells = per_spec[specs[0]]
    return {c: statistics.fmean(per_spec[s][c] for s in specs) for c in cells}


def main(argv: list[str] | None = None) -> int:
    from logrerank.training.log.route_tuning import best_cell, cell, mean_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tunes", nargs="+", help="one tune-score --paper-route JSON per seed")
    parser.add_argument("--kind", choices=("question", "citance"), required=True)
    args = parser.parse_args(argv)

    seeds = [
        json.loads(Path(path).read_text(encoding="utf-8"))["per_spec"][args.kind]
        for path in args.tunes
    ]
    specs = [s for s in seeds[0] if all(s in t for t in seeds)]
    if len(specs) < 2 or len(seeds) < 2:
        print("need at least two seeds and two shared specs", file=sys.stderr)
        return 2
    rows = {"per seed": [], "pooled": []}
    for held in specs:
        rest = [s for s in specs if s != held]
        own = [_macro(t, rest) for t in seeds]
        pooled_cell = cell(*best_cell(mean_table(own)))
        line = [f"{held:26s}"]
        for i, t in enumerate(seeds):
            own_cell = cell(*best_cell(own[i]))
            rows["per seed"].append(t[held][own_cell])
            rows["pooled"].append(t[held][pooled_cell])
            line.append(
                f"seed{i}: own {own_cell} {t[held][own_cell]:.2f} pooled {t[held][pooled_cell]:.2f}"
            )
        line.append(f"(pooled cell {pooled_cell})")
        print("  ".join(line))
    for name, vals in rows.items():
        print(f"{args.kind} held-out mean, {name}: {statistics.fmean(vals):.3f} over {len(vals)}")
    diffs = [p - o for p, o in zip(rows["pooled"], rows["per seed"], strict=True)]
    better = sum(d > 0 for d in diffs)
    worse = sum(d < 0 for d in diffs)
    print(f"pooled - per seed: {statistics.fmean(diffs):+.3f} ({better} better, {worse} worse)")
    full = mean_table([_macro(t, specs) for t in seeds])
    print(f"pooled cell on all {len(specs)} specs: {cell(*best_cell(full))}")
    for i, t in enumerate(seeds):
        print(f"seed{i} own cell on all specs: {cell(*best_cell(_macro(t, specs)))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
