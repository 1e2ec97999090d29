"""Interleaved A/B of ``LocalConfig.pack_length`` on SciFact dev pools (local stage only).

A setting is a pack length, or ``<pack length>:call`` for the same rows packed over the whole
call (``LoGReranker.segment_cache``: :meth:`SegmentCache.prefill`) instead of window batch by
window batch. Each pool is encoded once per setting, the settings in turn, after ``--warmup`` untimed pools;
the sentence-split memo is emptied before every call so each one pays the same. Prints the
median local-stage seconds per setting and the largest local-logit difference from the first
setting (bf16 rounding; in fp32 the layouts agree to 1e-5). ``--profile`` also prints the
``torch.profiler`` operator table of one cold call under the first setting (where the time goes).

    python research/bench/pack_ab.py --pack-lengths 0,64,128,256 --pools 12 --warmup 2
    python research/bench/pack_ab.py --pack-lengths 0 --pools 3 --warmup 1 --profile
    python research/bench/pack_ab.py --pack-lengths 128:nextfit,128,128:call --pools 22 --warmup 2
"""

from __future__ import annotations

import argparse
import statistics

from logrerank import packing
from logrerank.evaluation.speed_inputs import scifact_pools
from logrerank.memory import freeze_startup_objects
from logrerank.pipeline import LoGReranker
from logrerank.segment import clear_cache

FFD = packing.first_fit_decreasing


def next_fit(lengths: list[int], width: int) -> list[list[int]]:
    """Rows of next fit in input order (the 0.1.0 rule)."""
    rows: list[list[int]] = []
    used = width + 1
    for i, n in enumerate(lengths):
        if used + n > width:
            rows.append([])
            used = 0
        rows[-1].append(i)
        used += n
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pack-lengths", default="0,64,128,256")
    ap.add_argument("--pools", type=int, default=12, help="pools in all, warm-up included")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    pools = scifact_pools(args.pools, 50, None)
    model = LoGReranker.from_pretrained(args.checkpoint)
    freeze_startup_objects()
    widths = args.pack_lengths.split(",")
    local = model.config.local

    def encode(setting: str, query: str, passages: list) -> object:
        width, _, layout = setting.partition(":")
        local.pack_length = int(width)
        model.segment_cache = layout == "call"
        packing.first_fit_decreasing = next_fit if layout == "nextfit" else FFD
        clear_cache()
        return model.encode(query, passages)

    for query, passages in pools[: args.warmup]:
        for w in widths:
            encode(w, query, passages)
    times: dict[str, list[float]] = {w: [] for w in widths}
    diff = {w: 0.0 for w in widths}
    for query, passages in pools[args.warmup :]:
        ref = None
        for w in widths:
            enc = encode(w, query, passages)
            times[w].append(enc.timings["local"])
            if ref is None:
                ref = enc.local_logits
            diff[w] = max(diff[w], float((enc.local_logits - ref).abs().max()))
    print(f"{len(pools) - args.warmup} pools timed, {args.warmup} warm-up")
    print("| pack_length | local stage median s | max |logit - first setting| |")
    print("|---|---|---|")
    for w in widths:
        print(f"| {w} | {statistics.median(times[w]):.3f} | {diff[w]:.4f} |")
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        query, passages = pools[-1]
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            encode(widths[0], query, passages)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))


if __name__ == "__main__":
    main()
