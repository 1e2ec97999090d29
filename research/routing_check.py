"""Check of the routing rule on training claims no stage trained on.

A routed LoG model (docs/method.md, "two global stages") sends pools without titles to its
single-passage global stage. This script scores Citation-Integrity TRAIN claims that neither
stage 1 (the first 300 claims) nor stage 2 (the first 40) trained on, from the encoding cache of
``logrerank train global``, with the model routed (the single-passage stage), unrouted (the
multi-passage stage on untitled pools), local only, BM25 and the selector, and prints passage
nDCG@10 with a paired sign-flip test of routed vs unrouted.

    python research/routing_check.py --checkpoint runs/ckpt-bundled --offset 340 --limit 100
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from logrerank.config import SingleStageConfig
from logrerank.evaluation.paired import paired_test
from logrerank.pipeline import LoGReranker
from logrerank.training.cv import baseline_rows, by_source, score_encoded
from logrerank.training.encode_cache import cached_prefix


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--cache-dir", default="runs/enc")
    ap.add_argument("--offset", type=int, default=340)
    ap.add_argument("--limit", type=int, default=100)
    args = ap.parse_args()
    exs, encs = cached_prefix("citint", "train", args.limit, args.cache_dir, args.offset)
    pools = list(zip(exs, encs))
    routed = LoGReranker.from_pretrained(args.checkpoint, device="cpu")
    unrouted = LoGReranker.from_pretrained(args.checkpoint, device="cpu")
    unrouted.config = dataclasses.replace(unrouted.config, single=SingleStageConfig())
    rows = {
        "log (routed: single-passage stage)": score_encoded(routed, pools, ()),
        "log unrouted (multi-passage stage)": score_encoded(unrouted, pools, ()),
        "log-local": score_encoded(routed, pools, (), use_global=False),
    }
    rows |= baseline_rows(pools, coverage=())
    table = {n: by_source(r)["citint"]["P-ndcg@10"] for n, r in rows.items()}
    a = {
        r["qid"]: 100 * r["passage"]["ndcg@10"] for r in rows["log (routed: single-passage stage)"]
    }
    b = {
        r["qid"]: 100 * r["passage"]["ndcg@10"] for r in rows["log unrouted (multi-passage stage)"]
    }
    out = {"claims": len(pools), "offset": args.offset, "P-ndcg@10": table}
    out["routed_minus_unrouted"] = paired_test(a, b)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
