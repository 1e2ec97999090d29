"""Probe: how far LoG's cold time is from what this CPU can do at all.

Counts the multiply-adds of every ``nn.Linear`` call (forward hooks: 2 x in x out FLOPs per
input row) while LoG encodes the first ``--pools`` SciFact dev 50-passage pools, and the same
for the bundled cross-encoder (its pairs and its bi-encoder prior pass), then measures this
machine's sustained float32 rate on the model's own matrix shapes (``torch.nn.functional.linear``
on 4,096 rows: 384 -> 384, 384 -> 1536, 1536 -> 384; ``--threads``). The Linear layers are most
of a transformer layer's work (attention on 128-token packed rows adds about 5 % more), so
``linear FLOPs / sustained rate`` is a lower bound on the transformer time: no runtime or kernel
choice that keeps the model and the precision makes the call faster than that.

    python research/bench/flops.py --pools 5 --threads 2 --out runs/bench/flops.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

from logrerank.data.pools import load_benchmark
from logrerank.data.schema import example_passages
from logrerank.pipeline import LoGReranker


def count_linear_flops(module: torch.nn.Module, box: list[float]) -> list:
    """Hook every Linear of ``module``: add its FLOPs to ``box[0]``; returns the handles."""

    def hook(m: torch.nn.Linear, args: tuple, _out) -> None:
        rows = args[0].numel() // m.in_features
        box[0] += 2.0 * rows * m.in_features * m.out_features

    return [
        m.register_forward_hook(hook) for m in module.modules() if isinstance(m, torch.nn.Linear)
    ]


def sustained_rate(rows: int = 4096, repeats: int = 20) -> dict[str, float]:
    """GFLOP/s of float32 ``F.linear`` on the model's shapes (best of ``repeats``)."""
    out = {}
    for d_in, d_out in ((384, 384), (384, 1536), (1536, 384)):
        x, w = torch.randn(rows, d_in), torch.randn(d_out, d_in)
        b = torch.randn(d_out)
        torch.nn.functional.linear(x, w, b)
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            torch.nn.functional.linear(x, w, b)
            best = min(best, time.perf_counter() - t0)
        out[f"{d_in}->{d_out}"] = 2.0 * rows * d_in * d_out / best / 1e9
    # a layer's Linear FLOPs: 4 of 384x384 (Q, K, V, output), one 384x1536, one 1536x384
    gf = [4 * 384 * 384, 384 * 1536, 1536 * 384]
    secs = 4 * 384 * 384 / out["384->384"] + 384 * 1536 / out["384->1536"]
    secs += 1536 * 384 / out["1536->384"]
    out["layer mix"] = sum(gf) / secs
    return out


def run(args: argparse.Namespace) -> dict:
    torch.set_num_threads(args.threads)
    model = LoGReranker.from_pretrained(None, device="cpu")
    from logrerank.baselines.cross_encoder import CrossEncoderRanker
    from logrerank.models.cross_encoder import CrossEncoder

    ce = CrossEncoder(None, device="cpu")
    ranker = CrossEncoderRanker(ce)  # title + the first 1,000 characters, as in the bench
    exs, _ = load_benchmark("scifact", split="dev", limit=args.pools)
    res: dict = {"pools": len(exs), "threads": args.threads, "log": [], "ce": []}
    box = [0.0]
    handles = count_linear_flops(model.local, box)
    for ex in exs:
        box[0] = 0.0
        enc = model.encode(ex.query, example_passages(ex))
        res["log"].append({"gflop": box[0] / 1e9, "local_s": enc.timings["local"]})
    for h in handles:
        h.remove()
    prior_box = [0.0]
    handles = count_linear_flops(ce.model, box)
    if ce.prior is not None:
        handles += count_linear_flops(ce.prior.encoder.model, prior_box)
    for ex in exs:
        box[0] = prior_box[0] = 0.0
        t0 = time.perf_counter()
        ranker.rank(ex.query, example_passages(ex))
        res["ce"].append(
            {
                "gflop": box[0] / 1e9,
                "prior_gflop": prior_box[0] / 1e9,
                "s": time.perf_counter() - t0,
            }
        )
    for h in handles:
        h.remove()
    res["rate_gflops"] = sustained_rate()
    rate = res["rate_gflops"]["layer mix"]
    gl = statistics.median(r["gflop"] for r in res["log"])
    ls = statistics.median(r["local_s"] for r in res["log"])
    res["summary"] = {
        "log_linear_gflop_p50": gl,
        "log_local_s_p50": ls,
        "log_achieved_gflops": gl / ls,
        "sustained_gflops": rate,
        "log_lower_bound_s": gl / rate,
        "gflops_needed_for_1s": gl / 1.0,
        "ce_linear_gflop_p50": statistics.median(r["gflop"] + r["prior_gflop"] for r in res["ce"]),
        "ce_prior_gflop_p50": statistics.median(r["prior_gflop"] for r in res["ce"]),
    }
    print(json.dumps(res["summary"], indent=1), flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pools", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="runs/bench/flops.json")
    args = ap.parse_args()
    res = run(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
