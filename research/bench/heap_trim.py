"""Heap trimming: one call's memory growth and its time cost (bench/README.md).

    python research/bench/heap_trim.py memory --mode budget     # peak over start for 50 / 100 / 200 passages
    python research/bench/heap_trim.py memory --mode batch      # trim after every batch
    python research/bench/heap_trim.py memory --mode call       # trim at the end of each call only
    python research/bench/heap_trim.py time                     # interleaved A/B of encode time, 11 pools

``memory`` needs the scaling inputs of ``python bench/scaling.py --out DIR`` (``--inputs`` points
at ``DIR/inputs/passages-p200-snat-log.json``); ``time`` needs the SciFact data. Run alone on the
machine; peaks come from ``VmHWM``, reset before each call through ``/proc/self/clear_refs``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from logrerank.evaluation.speed_inputs import scifact_pools


def _status(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) // 1024
    return 0


def set_mode(model, mode: str) -> None:
    """batch: trim after every batch; budget: the default HeapBudget; call: end of call only."""
    model.trim_memory = True
    model.trim_budget_mb = {"batch": -1.0, "budget": 256.0, "call": float("inf")}[mode]


def memory(args: argparse.Namespace) -> None:
    from logrerank.pipeline import LoGReranker

    inputs = json.loads(Path(args.inputs).read_text())["inputs"]
    model = LoGReranker.from_pretrained(args.checkpoint)
    set_mode(model, args.mode)
    model.rerank(inputs[0][0], inputs[0][1][:50])  # warm-up
    for n in (50, 100, 200):
        Path("/proc/self/clear_refs").write_text("5")
        start = _status("VmRSS")
        model.rerank(inputs[1][0], inputs[1][1][:n])
        peak = _status("VmHWM")
        print(
            f"{args.mode} {n} passages: start {start} MB, peak {peak} MB, "
            f"over start {peak - start} MB, after {_status('VmRSS')} MB"
        )


def timing(args: argparse.Namespace) -> None:
    from logrerank.pipeline import LoGReranker

    pools = scifact_pools(13)
    model = LoGReranker.from_pretrained(args.checkpoint)
    for q, p in pools[:2]:
        model.rerank(q, p)
    times: dict[str, list[float]] = {m: [] for m in args.modes.split(",")}
    for q, p in pools[2:]:
        for mode in times:
            set_mode(model, mode)
            t = time.perf_counter()
            model.encode(q, p)
            times[mode].append(time.perf_counter() - t)
    for mode, ts in times.items():
        ts.sort()
        print(f"{mode}: median encode {ts[len(ts) // 2]:.3f} s, sum {sum(ts):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["memory", "time"])
    ap.add_argument("--mode", default="budget", choices=["batch", "budget", "call"])
    ap.add_argument("--modes", default="batch,call,budget", help="time: modes to interleave")
    ap.add_argument("--inputs", default="runs/bench/scaling-s4/inputs/passages-p200-snat-log.json")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    memory(args) if args.what == "memory" else timing(args)


if __name__ == "__main__":
    main()
