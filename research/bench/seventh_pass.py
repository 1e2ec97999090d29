"""Probe: what LoG's seventh layer pass costs, and what dropping it would cost in quality.

In isolated mode (``LocalConfig.isolated_layers = 5``) the local scorer runs the 5 lower packaged
layers on isolated sentence segments, then layer 6 twice: frozen on the same segments (the
packaged bi-encoder embeddings, whose cosine is the prior in l_local) and as the trainable joint
copy over the real windows (query and sentences attending to each other). This probe

1. times the three parts per pool (forward hooks around every layer call; ``--threads``), and
2. scores local-only LoG with the prior taken from the layer-5 states instead (the frozen
   layer-6 pass skipped, nothing retrained) on the first ``--limit`` SciFact dev and
   Citation-Integrity dev pools: passage / sentence nDCG@10, both variants on the same pools.

    python research/bench/seventh_pass.py --limit 40 --out runs/bench/seventh_pass.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import torch

from logrerank.data.pools import load_benchmark
from logrerank.data.schema import example_passages
from logrerank.evaluation.metrics import macro_average
from logrerank.pipeline import LoGReranker
from logrerank.training.cv import ranking_row


def time_layers(model: LoGReranker, clock: dict[str, float]) -> None:
    """Accumulate seconds per part in ``clock`` (lower 5, frozen top = prior, joint top)."""
    enc_layers = model.local.encoder.encoder.layer
    k = model.config.local.isolated_layers
    parts = {id(m): ("lower" if i < k else "prior_top") for i, m in enumerate(enc_layers)}
    parts |= {id(m): "joint_top" for m in model.local.joint_layers}
    for layer in [*enc_layers, *model.local.joint_layers]:
        part = parts[id(layer)]

        def pre(_m, _a, part=part):
            clock[f"_{part}"] = time.perf_counter()

        def post(_m, _a, _o, part=part):
            clock[part] += time.perf_counter() - clock.pop(f"_{part}")

        layer.register_forward_pre_hook(pre)
        layer.register_forward_hook(post)


def prior_from_lower(model: LoGReranker) -> None:
    """Skip the frozen top layer: the prior branch reads the layer-5 states."""
    scorer = model.local
    k = scorer.config.isolated_layers
    top = scorer.encoder.encoder.layer[k:]
    scorer.encoder.encoder.layer = scorer.encoder.encoder.layer[:k]  # _frozen_layers: P = x
    scorer._dropped_top = top  # keep a reference (nothing else changes)


def run(args: argparse.Namespace) -> dict:
    torch.set_num_threads(args.threads)
    out: dict = {"limit": args.limit, "threads": args.threads}
    base = LoGReranker.from_pretrained(None, device="cpu")
    clock: dict[str, float] = defaultdict(float)
    time_layers(base, clock)
    cut = LoGReranker.from_pretrained(None, device="cpu")
    prior_from_lower(cut)
    for bench in ("scifact", "citint"):
        exs, _ = load_benchmark(bench, split="dev", limit=args.limit)
        rows = {"7 passes (bundled)": [], "6 passes (prior from layer 5)": []}
        e2e = 0.0
        for ex in exs:
            t0 = time.perf_counter()
            r = base.rerank(ex.query, example_passages(ex), use_global=False)
            e2e += time.perf_counter() - t0
            rows["7 passes (bundled)"].append(ranking_row(ex, r, ()))
            r = cut.rerank(ex.query, example_passages(ex), use_global=False)
            rows["6 passes (prior from layer 5)"].append(ranking_row(ex, r, ()))
        res = {}
        for name, rs in rows.items():
            res[name] = {"P-ndcg@10": macro_average([x["passage"] for x in rs])["ndcg@10"]}
            sent = [x["sentence"] for x in rs if "sentence" in x]
            if sent:
                res[name]["S-ndcg@10"] = macro_average(sent)["ndcg@10"]
        out[bench] = {"quality": res, "bundled_e2e_s": e2e, "pools": len(exs)}
        print(bench, json.dumps(res), flush=True)
    total = sum(v for k, v in clock.items() if not k.startswith("_"))
    out["layer_seconds"] = {k: v for k, v in clock.items() if not k.startswith("_")}
    out["layer_share"] = {k: v / total for k, v in out["layer_seconds"].items()}
    print(json.dumps(out["layer_share"]), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=40, help="dev pools per benchmark")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="runs/bench/seventh_pass.json")
    args = ap.parse_args()
    res = run(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
