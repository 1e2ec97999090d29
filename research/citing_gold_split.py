"""On ScisummNet training citances: the checkpoint's citing route against local only with the
same priors, split by the number of gold passages (one, as most hand-annotated citances have,
or two or more, as the automatic labels' two cited sentences often give).

    python research/citing_gold_split.py runs/ckpt-evinf-y/seed13 --encodings runs/enc-evinf

Uses the route tuner's own rows (``logrerank/training/log/route_tuning.py: pool_rows``) on the
six ScisummNet selection slices, at the checkpoint's chosen citing cell (a, w, v, u) and at
(0, w, v, u). Training pools only; prints one line per group.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

SPECS = (
    "scisumm:train:20:3000",
    "scisumm:train:30:6000",
    "scisumm:train:30:12000",
    "scisumm:train:100:2000",
    "scisumm:train:100:7000",
    "scisumm:train:100:14000",
)


def main(argv: list[str] | None = None) -> int:
    from logrerank.training.log import route_tuning as rt

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--encodings", default="runs/enc-evinf")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    model = rt._frozen_model(args.checkpoint, args.threads)
    rt.load_kept(model, args.encodings, sys.stderr)
    config = Path(args.checkpoint) / "config.json"
    sc = json.loads(config.read_text(encoding="utf-8"))["model"]["score"]
    a, w = sc["citance_global_weight"], sc["citance_lexical_weight"]
    v, u = sc["citance_dense_weight"], sc["citance_sentence_weight"]
    chosen, local = rt.cell(a, w, v, u), rt.cell(0, w, v, u)
    groups: dict[str, list[tuple[float, float]]] = {}
    for _, exs, encs in rt._spec_pools(model, SPECS, args.encodings, sys.stderr):
        for ex, enc in zip(exs, encs):  # one pool at a time: its row (if any) is its own
            for row in rt.pool_rows(model, [ex], [enc], (0, a), (w,), (v,), (u,)):
                if row["kind"] == "citance":
                    n = "one gold passage" if len(ex.gold_doc_ids) == 1 else "two or more"
                    for key in (n, "all"):
                        groups.setdefault(key, []).append((row[chosen], row[local]))
    print(f"cells: chosen {chosen}, local only {local}")
    for key, pairs in sorted(groups.items()):
        d = [g - lo for g, lo in pairs]
        print(
            f"{key}: n={len(pairs)} route {statistics.fmean(g for g, _ in pairs):.2f} "
            f"local {statistics.fmean(lo for _, lo in pairs):.2f} diff {statistics.fmean(d):+.2f} "
            f"better {sum(x > 0 for x in d)} worse {sum(x < 0 for x in d)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
