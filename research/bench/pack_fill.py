"""How full the frozen layers' packed rows are, per layout, on SciFact dev pools (no forward pass).

Tokenises each pool as ``LoGReranker.encode`` does and counts, for the frozen isolated layers,
the real tokens and the slots (rows x ``pack_length``, rows rounded as ``LocalScorer`` rounds
them) of three layouts:

* ``next fit / batch``: the 0.1.0 layout (2026-11-30 to 2026-12-03): segments of each window
  batch in reading order into the current row while they fit;
* ``FFD / batch``: the same batches, first fit decreasing (:func:`first_fit_decreasing`);
* ``FFD / call``: every distinct segment of the call packed at once, ``batch_tokens /
  pack_length`` rows per frozen-layer call (:meth:`SegmentCache.prefill`).

It also counts the joint layer's padded window slots (the same in every layout) and prints the
share of real tokens and the transformer slots per pool (six frozen layer passes + one joint).

    python research/bench/pack_fill.py --pools 20
"""

from __future__ import annotations

import argparse
import statistics

from logrerank.evaluation.speed_inputs import scifact_pools
from logrerank.io import prepare_input
from logrerank.packing import PACK_ROW_MULTIPLE, first_fit_decreasing
from logrerank.passage_units import scoring_units
from logrerank.pipeline import LoGReranker
from logrerank.segment_cache import SegmentCache
from logrerank.tokenize import batches, collate, tokenize

FROZEN_PASSES = 6  # five isolated layers + the prior's layer 6 (the joint layer is the seventh)


def up(n: int, m: int) -> int:
    return -(-n // m) * m


def next_fit_rows(lengths: list[int], width: int) -> int:
    """Rows of next fit in input order (the 0.1.0 rule)."""
    rows, used = 0, width + 1
    for n in lengths:
        if used + n > width:
            rows, used = rows + 1, 0
        used += n
    return rows


def short_slots(rows: int, width: int) -> int:
    return up(rows, PACK_ROW_MULTIPLE) * width if rows else 0


def long_slots(lengths: list[int], pad: int) -> int:
    return len(lengths) * up(max(lengths), pad) if lengths else 0


def pool_counts(windows, width: int, batch_tokens: int, max_windows: int, pad: int) -> dict:
    """Real tokens and slots of each layout for one call's windows."""
    c = {"batch real": 0, "next fit / batch": 0, "FFD / batch": 0, "joint slots": 0}
    for group in batches(windows, batch_tokens, max_windows):
        wins = [windows[i] for i in group]
        segs, seen_query = [], False
        for b, k, a, e in SegmentCache.segments(wins):
            if k == 0 and seen_query:  # one question per call: its segment runs once per batch
                continue
            seen_query |= k == 0
            segs.append(tuple(wins[b].input_ids[a:e]))
        lens = [len(s) for s in segs]
        short = [n for n in lens if n <= width]
        long = [n for n in lens if n > width]
        c["batch real"] += sum(lens)
        c["next fit / batch"] += short_slots(next_fit_rows(short, width), width)
        c["FFD / batch"] += short_slots(len(first_fit_decreasing(short, width)), width)
        for key in ("next fit / batch", "FFD / batch"):
            c[key] += long_slots(long, pad)
        c["joint slots"] += collate(wins, "cpu", pad, 512)["input_ids"].numel()
    keys = {tuple(w.input_ids[a:e]) for w in windows for _, _, a, e in SegmentCache.segments([w])}
    lens = sorted((len(k) for k in keys), reverse=True)
    short = [n for n in lens if n <= width]
    long = [n for n in lens if n > width]
    rows = len(first_fit_decreasing(short, width))
    per = max(1, batch_tokens // width)
    slots = sum(short_slots(min(per, rows - r), width) for r in range(0, rows, per))
    i = 0
    while i < len(long):
        n = max(1, batch_tokens // long[i])
        slots += long_slots(long[i : i + n], pad)
        i += n
    c["call real"], c["FFD / call"] = sum(lens), slots
    return c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", type=int, default=20)
    ap.add_argument("--checkpoint", default=None)
    args = ap.parse_args()
    model = LoGReranker.from_pretrained(args.checkpoint)
    cfg = model.config
    lc = cfg.local
    rows = []
    for query, passages in scifact_pools(args.pools, 50, None):
        query, plist, _ = prepare_input(query, passages, model.limits)
        _, texts = scoring_units(plist, lc, model.tokenizer)
        tok = tokenize(
            model.tokenizer, query, texts, cfg.backbone.max_length,
            cfg.backbone.max_query_tokens, isolated=True,
        )  # fmt: skip
        rows.append(
            pool_counts(tok.windows, lc.pack_length, lc.batch_tokens, lc.max_batch_windows,
                        lc.pad_multiple)
        )  # fmt: skip
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    print(f"{len(rows)} SciFact dev pools of 50 passages, pack_length {lc.pack_length}, medians")
    print("| layout | frozen real tokens | frozen slots | real share | transformer slots |")
    print("|---|---|---|---|---|")
    for name, real in (("next fit / batch", "batch real"), ("FFD / batch", "batch real"),
                       ("FFD / call", "call real")):  # fmt: skip
        share = statistics.median(r[real] / r[name] for r in rows)
        total = FROZEN_PASSES * med[name] + med["joint slots"]
        print(f"| {name} | {med[real]:,.0f} | {med[name]:,.0f} | {share:.1%} | {total:,.0f} |")
    print(f"joint layer: {med['joint slots']:,.0f} padded window slots")


if __name__ == "__main__":
    main()
