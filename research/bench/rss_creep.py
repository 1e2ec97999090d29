"""Resident memory after each of a series of LoG encodes (does it creep with new inputs?).

Encodes ``--pools`` distinct SciFact dev pools in one process and prints, after each, the RSS
(after ``gc.collect`` and ``malloc_trim``), and the mean encode time over all but the first two.

    python research/bench/rss_creep.py                        # default
    python research/bench/rss_creep.py --pad-multiple 64      # batch lengths padded to multiples of 64
    python research/bench/rss_creep.py --pack-length 128     # frozen layers on packed 128-token rows
    python research/bench/rss_creep.py --no-mkldnn            # oneDNN off (very slow; isolates the cause)
    ONEDNN_PRIMITIVE_CACHE_CAPACITY=0 python research/bench/rss_creep.py
"""

from __future__ import annotations

import argparse
import gc
import time

import torch

from logrerank.evaluation.speed_inputs import scifact_pools
from logrerank.memory import rss_mb, trim_heap
from logrerank.pipeline import LoGReranker


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", type=int, default=8)
    ap.add_argument("--pad-multiple", type=int, default=None, help="LocalConfig.pad_multiple")
    ap.add_argument("--pack-length", type=int, default=None, help="LocalConfig.pack_length")
    ap.add_argument("--no-mkldnn", action="store_true", help="torch.backends.mkldnn off")
    ap.add_argument("--checkpoint", default=None)
    args = ap.parse_args()
    if args.no_mkldnn:
        torch.backends.mkldnn.enabled = False
    model = LoGReranker.from_pretrained(args.checkpoint)
    if args.pad_multiple is not None:
        model.config.local.pad_multiple = args.pad_multiple
    if args.pack_length is not None:
        model.config.local.pack_length = args.pack_length
    rss, times = [], []
    for query, passages in scifact_pools(args.pools, 50, None):
        t0 = time.perf_counter()
        model.encode(query, passages)
        times.append(time.perf_counter() - t0)
        gc.collect()
        trim_heap()
        rss.append(round(rss_mb()))
    tail = times[2:] or times
    print(f"RSS MB after each encode: {rss}")
    print(
        f"growth first -> last: {rss[-1] - rss[0]} MB; mean encode s: {sum(tail) / len(tail):.3f}"
    )


if __name__ == "__main__":
    main()
