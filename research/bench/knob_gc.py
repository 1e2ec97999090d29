"""Probe: where the knob change's slow calls come from (garbage collection or work).

Encodes the first ``--pools`` SciFact dev pools, then re-runs the graph stages
(``rank_encoded`` with another ``tau_sim``, what an app slider sends) ``--repeats`` times per
pool, timing each call and the seconds the cyclic garbage collector spent inside it
(``gc.callbacks``). ``--freeze`` calls ``logrerank.memory.freeze_startup_objects`` first, as
the app and ``logrerank bench`` do. Figures: bench/README.md, "A CPU without AMX".

    python research/bench/knob_gc.py --pools 4 --repeats 6 [--freeze]
"""

from __future__ import annotations

import argparse
import gc
import time

import torch

from logrerank.data.pools import load_benchmark
from logrerank.data.schema import example_passages
from logrerank.evaluation.speed_runs import knob_graph
from logrerank.memory import freeze_startup_objects
from logrerank.pipeline import LoGReranker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pools", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=6)
    ap.add_argument("--freeze", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = LoGReranker.from_pretrained(None, device="cpu")
    exs, _ = load_benchmark("scifact", split="dev", limit=args.pools)
    encs = [model.encode(e.query, example_passages(e)) for e in exs]
    if args.freeze:
        freeze_startup_objects()
    spent = {0: 0.0, 1: 0.0, 2: 0.0}
    start = [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            start[0] = time.perf_counter()
        else:
            spent[info["generation"]] += time.perf_counter() - start[0]

    gc.callbacks.append(on_gc)
    calls = []  # (seconds, gc seconds inside, repeat, pool)
    for r in range(args.repeats):
        for i, enc in enumerate(encs):
            before = sum(spent.values())
            t0 = time.perf_counter()
            model.rank_encoded(enc, graph=knob_graph(model, i + r))
            calls.append((time.perf_counter() - t0, sum(spent.values()) - before, r, i))
    calls.sort()
    n = len(calls)
    print(
        f"p50 {calls[n // 2][0]:.3f} s, p95 {calls[int(0.95 * n)][0]:.3f} s, max {calls[-1][0]:.3f} s"
    )
    print(
        "slowest (seconds, gc seconds, repeat, pool):",
        [tuple(round(x, 3) for x in c) for c in calls[-3:]],
    )
    print("gc seconds per generation:", {k: round(v, 3) for k, v in spent.items()})


if __name__ == "__main__":
    main()
