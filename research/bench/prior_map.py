"""Probe: can LoG's prior be read without the frozen layer-6 pass (the seventh layer pass)?

In isolated mode the prior of l_local is the cosine of the packaged bi-encoder's embeddings,
mean-pooled layer-6 states of every ``[CLS] x [SEP]`` segment alone. That frozen layer 6 is the
seventh layer pass (bench/README.md, "The seventh layer pass"). Reading the prior from the
layer-5 states as they are loses about 40 nDCG@10 points. This probe tries cheaper stand-ins for
the layer-6 embedding of a segment, computed from its layer-5 states ``x``:

* ``map``: a ridge-regression linear map of the mean of ``x`` (no layer-6 pass at all);
* ``pooled``: layer 6 run for one query per segment, the mean of ``x``, attending to the
  segment's tokens (keys and values are still projected for every token: about a sixth of the
  layer's multiply-adds; the feed-forward runs once per segment);
* ``pooled+map``: ``pooled`` followed by a ridge map.

The maps are fitted on TRAIN pools only (SciFact train and Citation-Integrity train claims'
BM25 pools: segment texts, no labels), targets the true mean-pooled layer-6 states. Then every
variant scores the first ``--limit`` SciFact dev and Citation-Integrity dev pools (LoG and
local only, passage / sentence nDCG@10), with the agreement of its embeddings and prior cosines
with the true ones, and the seconds spent in the true layer 6 and in each stand-in.

    python research/bench/prior_map.py --fit-limit 40 --limit 30 --out runs/bench/prior_map.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from pathlib import Path

import torch
from torch import Tensor

from logrerank.data.pools import load_benchmark
from logrerank.data.schema import example_passages
from logrerank.evaluation.metrics import macro_average
from logrerank.pipeline import LoGReranker
from logrerank.training.cv import ranking_row


def segment_index(seg: Tensor) -> tuple[Tensor, Tensor, int]:
    """Group id of every real token (one group per (row, segment)), and the real-token mask."""
    real = seg >= 0  # [R, N]
    rows = torch.arange(seg.size(0), device=seg.device)[:, None].expand_as(seg)
    key = rows[real] * (int(seg.max()) + 2) + seg[real]  # [T]
    uniq, gid = torch.unique(key, return_inverse=True)
    return gid, real, uniq.numel()


def group_mean(states: Tensor, gid: Tensor, real: Tensor, G: int) -> Tensor:
    """[G, d] mean of the real tokens of each group."""
    s = states[real].float()
    out = torch.zeros(G, s.size(-1)).index_add_(0, gid, s)
    n = torch.zeros(G).index_add_(0, gid, torch.ones_like(gid, dtype=torch.float))
    return out / n[:, None]


def pooled_layer(layer: torch.nn.Module, x: Tensor, gid: Tensor, real: Tensor, G: int) -> Tensor:
    """Layer 6 for one query per segment (the mean of its layer-5 states) over its tokens.

    Returns:
        [G, d] the layer's output for the pooled query of each segment.
    """
    att = layer.attention.self
    h = att.num_attention_heads
    m = group_mean(x, gid, real, G)  # [G, d]
    t = x[real].float()  # [T, d]
    q = att.query(m).view(G, h, -1)  # [G, h, dh]
    k = att.key(t).view(t.size(0), h, -1)  # [T, h, dh]
    v = att.value(t).view(t.size(0), h, -1)
    s = (q[gid] * k).sum(-1) * att.scaling  # [T, h]
    smax = torch.full((G, h), -1e9).index_reduce_(0, gid, s, "amax")
    w = (s - smax[gid]).exp()  # [T, h]
    z = torch.zeros(G, h).index_add_(0, gid, w)
    ctx = torch.zeros(G, h, v.size(-1)).index_add_(0, gid, w[..., None] * v) / z[..., None]
    a = layer.attention.output.LayerNorm(layer.attention.output.dense(ctx.reshape(G, -1)) + m)
    return layer.output.LayerNorm(layer.output.dense(layer.intermediate(a)) + a)


class Probe:
    """Patches a LoG model's frozen layers to collect features or substitute the prior states."""

    def __init__(self, model: LoGReranker):
        self.scorer = model.local
        self.orig = self.scorer._frozen_layers
        self.top = self.scorer.encoder.encoder.layer[self.scorer.config.isolated_layers]
        self.mode = "true"  # true | collect | map | pooled | pooled+map
        self.maps: dict[str, Tensor] = {}
        self.rows: dict[str, list[Tensor]] = defaultdict(list)
        self.clock: dict[str, float] = defaultdict(float)
        self.agree: dict[str, list[float]] = defaultdict(list)
        self.scorer._frozen_layers = self.frozen

    def frozen(self, ids: Tensor, pos: Tensor, seg: Tensor) -> tuple[Tensor, Tensor]:
        x, P = self.orig(ids, pos, seg)
        if self.mode == "true":
            return x, P
        gid, real, G = segment_index(seg)
        with torch.no_grad():
            t0 = time.perf_counter()
            self.top(x, None)  # timing only: layer 6 over every token, without a mask
            self.clock["layer6 (unmasked, timing)"] += time.perf_counter() - t0
            true = group_mean(P, gid, real, G)
            t0 = time.perf_counter()
            m = group_mean(x, gid, real, G)
            self.clock["mean"] += time.perf_counter() - t0
            t0 = time.perf_counter()
            pooled = pooled_layer(self.top, x, gid, real, G)
            self.clock["pooled"] += time.perf_counter() - t0
        if self.mode == "collect":
            self.rows["mean"].append(m)
            self.rows["pooled"].append(pooled)
            self.rows["true"].append(true)
            return x, P
        feat = {"map": m, "pooled": pooled, "pooled+map": pooled}[self.mode]
        if self.mode in self.maps:
            W = self.maps[self.mode]
            feat = torch.cat([feat, torch.ones(G, 1)], 1) @ W
        cos = torch.nn.functional.cosine_similarity(feat, true, dim=-1)
        self.agree[self.mode].extend(cos.tolist())
        out = torch.zeros_like(P)
        out[real] = feat[gid].to(P.dtype)  # every token of a segment: its stand-in vector
        return x, out

    def fit(self, lam: float) -> dict[str, float]:
        """Ridge maps feature -> true mean layer-6 state; returns the train cosine per map."""
        y = torch.cat(self.rows["true"]).double()
        res = {}
        for name, src in (("map", "mean"), ("pooled+map", "pooled")):
            X = torch.cat(self.rows[src]).double()
            X = torch.cat([X, torch.ones(X.size(0), 1, dtype=X.dtype)], 1)
            reg = lam * X.size(0) * torch.eye(X.size(1), dtype=X.dtype)
            reg[-1, -1] = 0  # no penalty on the bias
            W = torch.linalg.solve(X.T @ X + reg, X.T @ y)
            self.maps[name] = W.float()
            res[name] = torch.nn.functional.cosine_similarity(X @ W, y, dim=-1).mean().item()
        raw = torch.cat(self.rows["pooled"]).double()
        res["pooled (no map)"] = torch.nn.functional.cosine_similarity(raw, y, dim=-1).mean().item()
        res["segments"] = int(y.size(0))
        return res


def run(args: argparse.Namespace) -> dict:
    torch.set_num_threads(args.threads)
    model = LoGReranker.from_pretrained(None, device="cpu")
    probe = Probe(model)
    out: dict = {"fit_limit": args.fit_limit, "limit": args.limit, "lambda": args.lam}
    probe.mode = "collect"
    for bench in ("scifact", "citint"):
        exs, _ = load_benchmark(bench, split="train", limit=args.fit_limit)
        for ex in exs:
            model.encode(ex.query, example_passages(ex))
    out["fit"] = probe.fit(args.lam)
    print("fit", json.dumps(out["fit"]), flush=True)
    probe.clock.clear()
    modes = ["true", "map", "pooled", "pooled+map"]
    for bench in ("scifact", "citint"):
        exs, _ = load_benchmark(bench, split="dev", limit=args.limit)
        rows: dict[str, list[dict]] = defaultdict(list)
        for ex in exs:
            for mode in modes:
                probe.mode = mode
                enc = model.encode(ex.query, example_passages(ex))
                rows[f"{mode} LoG"].append(ranking_row(ex, model.rank_encoded(enc), ()))
                local = model.rank_encoded(enc, use_global=False)
                rows[f"{mode} local"].append(ranking_row(ex, local, ()))
        res = {}
        for name, rs in rows.items():
            res[name] = {"P": macro_average([x["passage"] for x in rs])["ndcg@10"]}
            sent = [x["sentence"] for x in rs if "sentence" in x]
            if sent:
                res[name]["S"] = macro_average(sent)["ndcg@10"]
        out[bench] = res
        print(bench, json.dumps(res), flush=True)
    out["embedding_cosine_dev"] = {k: sum(v) / len(v) for k, v in probe.agree.items()}
    out["seconds"] = dict(probe.clock)
    print(json.dumps({k: out[k] for k in ("embedding_cosine_dev", "seconds")}), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit-limit", type=int, default=40, help="train claims per benchmark")
    ap.add_argument("--limit", type=int, default=30, help="dev pools per benchmark")
    ap.add_argument("--lam", type=float, default=1e-3, help="ridge penalty per sample")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default="runs/bench/prior_map.json")
    args = ap.parse_args()
    res = run(args)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
