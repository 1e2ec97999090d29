"""Interleaved A/B of the cross-encoder's batch padding (``CrossEncoder.pad_multiple``).

One process, the bundled cross-encoder (its bi-encoder prior padded the same way), the first
``--pools`` SciFact dev pools of 50 passages; for each pool every setting runs once, in a
rotating order, at passage level (title + 1,000 characters) and ``full`` (every window). Prints
the median seconds per setting and level and the largest logit change against the first setting.

    python research/bench/ce_pad_ab.py --pools 12 --warmup 2 --pad-multiples 0,32
    python research/bench/ce_pad_ab.py --quality citint --levels passage --pad-multiples 0,32

``--quality BENCH`` scores every dev query of ``BENCH`` (``scifact``, ``citint``) instead and
prints passage nDCG@10 per setting (no timing).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from logrerank.baselines.cross_encoder import CrossEncoderRanker
from logrerank.evaluation.speed_inputs import scifact_pools
from logrerank.models.cross_encoder import CrossEncoder


def _set_pad(ce: CrossEncoder, m: int) -> None:
    ce.pad_multiple = m
    if ce.prior is not None:
        ce.prior.encoder.pad_multiple = m


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--pad-multiples", default="0,32")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quality", default=None, help="benchmark for an nDCG@10 comparison")
    ap.add_argument("--levels", default="passage,full")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    pads = [int(x) for x in args.pad_multiples.split(",")]
    ce = CrossEncoder()
    levels = tuple(args.levels.split(","))
    if args.quality:
        return _quality(ce, args.quality, pads, levels)
    times = {(m, lv): [] for m in pads for lv in levels}
    change = {(m, lv): 0.0 for m in pads for lv in levels}
    for i, (query, passages) in enumerate(scifact_pools(args.pools + args.warmup, 50, None)):
        order = pads[i % len(pads) :] + pads[: i % len(pads)]
        for lv in levels:
            scores = {}
            for m in order:
                _set_pad(ce, m)
                t0 = time.perf_counter()
                r = CrossEncoderRanker(ce, level=lv).rank(query, passages)
                dt = time.perf_counter() - t0
                scores[m] = {p.passage_idx: p.score for p in r.passages_ranked}
                if i >= args.warmup:
                    times[(m, lv)].append(dt)
            ref = scores[pads[0]]
            for m in pads:
                diff = max(abs(scores[m][k] - ref[k]) for k in ref)
                change[(m, lv)] = max(change[(m, lv)], diff)
    for (m, lv), ts in times.items():
        print(
            f"pad_multiple {m:>3} {lv:>7}: median {statistics.median(ts):.3f} s over {len(ts)}"
            f" pools; max score change vs {pads[0]}: {change[(m, lv)]:.4f}"
        )


def _quality(ce: CrossEncoder, bench: str, pads: list[int], levels: tuple[str, ...]) -> None:
    """Passage nDCG@10 of every setting on the whole dev set of ``bench``."""
    from logrerank.data.pools import load_benchmark
    from logrerank.evaluation.metrics import ndcg_at_k

    examples, _ = load_benchmark(bench)
    got = {(m, lv): [] for m in pads for lv in levels}
    for ex in examples:
        passages = [{"title": d.title, "text": d.text} for d in ex.candidates]
        ids = [d.doc_id for d in ex.candidates]
        for lv in levels:
            for m in pads:
                _set_pad(ce, m)
                r = CrossEncoderRanker(ce, level=lv).rank(ex.query, passages)
                ranked = [ids[i] for i in r.passage_order()]
                got[(m, lv)].append(ndcg_at_k(ranked, ex.gold_doc_ids, 10))
    for (m, lv), vals in got.items():
        print(
            f"{bench} {lv} pad_multiple {m}: nDCG@10 {100 * sum(vals) / len(vals):.2f} ({len(vals)} queries)"
        )


if __name__ == "__main__":
    main()
