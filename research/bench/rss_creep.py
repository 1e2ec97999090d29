"""Resident memory after each of a series of LoG encodes (does it creep with new inputs?).

Encodes ``--pools`` distinct SciFact dev pools in one process and prints, after each, the RSS
(after ``gc.collect`` and ``malloc_trim``), and the mean encode time over all but the first two.
``--ranker ce`` / ``ce-full`` runs the bundled cross-encoder (title + 1,000 characters / every
window of the whole passage) instead, ``--ce-pad-multiple`` setting its batch padding.

    python research/bench/rss_creep.py                        # default
    python research/bench/rss_creep.py --pad-multiple 64      # batch lengths padded to multiples of 64
    python research/bench/rss_creep.py --pack-length 128     # frozen layers on packed 128-token rows
    python research/bench/rss_creep.py --no-mkldnn            # oneDNN off (very slow; isolates the cause)
    ONEDNN_PRIMITIVE_CACHE_CAPACITY=0 python research/bench/rss_creep.py
    python research/bench/rss_creep.py --ranker ce-full --pools 20 --ce-pad-multiple 0|16|32
"""

from __future__ import annotations

import argparse
import gc
import resource
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
    ap.add_argument("--ranker", choices=("log", "ce", "ce-full"), default="log")
    ap.add_argument("--ce-pad-multiple", type=int, default=None, help="CrossEncoder.pad_multiple")
    args = ap.parse_args()
    if args.no_mkldnn:
        torch.backends.mkldnn.enabled = False
    run = _ranker(args)
    rss, times = [], []
    for query, passages in scifact_pools(args.pools, 50, None):
        t0 = time.perf_counter()
        run(query, passages)
        times.append(time.perf_counter() - t0)
        gc.collect()
        trim_heap()
        rss.append(round(rss_mb()))
    tail = times[2:] or times
    print(f"RSS MB after each encode: {rss}")
    print(
        f"growth first -> last: {rss[-1] - rss[0]} MB; mean encode s: {sum(tail) / len(tail):.3f}"
    )
    print(
        f"process peak RSS MB: {round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}"
    )


def _ranker(args: argparse.Namespace):
    """``run(query, passages)`` for the chosen ranker."""
    if args.ranker == "log":
        model = LoGReranker.from_pretrained(args.checkpoint)
        if args.pad_multiple is not None:
            model.config.local.pad_multiple = args.pad_multiple
        if args.pack_length is not None:
            model.config.local.pack_length = args.pack_length
        return model.encode
    from logrerank.baselines.cross_encoder import CrossEncoderRanker
    from logrerank.models.cross_encoder import CrossEncoder

    ce = CrossEncoder()
    if args.ce_pad_multiple is not None:
        ce.pad_multiple = args.ce_pad_multiple
        if ce.prior is not None:
            ce.prior.encoder.pad_multiple = args.ce_pad_multiple
    ranker = CrossEncoderRanker(ce, level="full" if args.ranker == "ce-full" else "passage")
    return ranker.rank


if __name__ == "__main__":
    main()
