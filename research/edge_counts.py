"""Edges per relation type of the bundled LoG model's graph on cached pool encodings.

Mean edges per pool for each relation (the paper's adjacency and similarity relations and the
link relations), with the graph of the stage each pool is routed to (docs/method.md, "two global
stages"). Reads the encodings cached by ``logrerank train global --config
configs/global-multihop.json`` (``runs/enc``).

    python research/edge_counts.py --checkpoint logrerank/checkpoints/log-reranker \\
        --sets hotpotqa:train musique:train scifact:dev citint:dev
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from logrerank.graph import edge_counts
from logrerank.graph_inputs import graph_inputs, route, stage_configs
from logrerank.pipeline import LoGReranker
from logrerank.training.encode_cache import cached_prefix


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--cache-dir", default="runs/enc")
    ap.add_argument("--sets", nargs="+", default=["hotpotqa:train", "scifact:dev"])
    args = ap.parse_args()
    model = LoGReranker.from_pretrained(args.checkpoint, device="cpu")
    out = {}
    for spec in args.sets:
        src, split = spec.split(":")
        _, encs = cached_prefix(src, split, None, args.cache_dir)
        total: Counter = Counter()
        stages: Counter = Counter()
        for enc in encs:
            stage = route(model.config, enc)
            gcfg, gl = stage_configs(model.config, stage)
            data, _ = graph_inputs(model.config, enc, gcfg, True, gl)
            total.update(edge_counts(data))
            stages[stage] += 1
        n = max(1, len(encs))
        out[spec] = {
            "pools": len(encs),
            "stages": dict(stages),
            "edges_per_pool": {k: round(v / n, 1) for k, v in total.items() if v},
        }
        print(spec, json.dumps(out[spec]), flush=True)


if __name__ == "__main__":
    main()
