"""Which global stage helps on which kind of pool: passage nDCG@10 of every stage choice.

For every cached encoded pool of a benchmark split (``runs/enc``, written by ``logrerank eval
--encodings`` or ``logrerank train``), the frozen LoG model's final logits are computed with no
graph stage (local only), with the single-passage stage and with the multi-passage stage; the
passage score is the model's own (the learned passage head when the checkpoint has one, else the
best sentence). Printed per split: the mean of each, the paired difference to local only, and
per-pool features a routing rule could read (titled share, mean title length in words).

    python research/scientific_routes.py --checkpoint logrerank/checkpoints/log-reranker \\
        evinf:validation scisumm:train scifact:train citint:train

No transformer runs: only cached pools are scored (a split without a cache is skipped).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

import torch

from logrerank.evaluation.metrics import ndcg_at_k
from logrerank.graph.inputs import MULTI, SINGLE, global_scores, graph_inputs, stage_graph
from logrerank.ranking.results import final_logits
from logrerank.ranking.routing import pool_route
from logrerank.text.lexical import pool_lexical
from logrerank.training.log.encode_cache import encodings_for, load_examples
from logrerank.training.log.route_tuning import passage_order

MODES = ("local", SINGLE, MULTI)
BLENDS = (0.25, 0.5, 0.75)


def title_words(passages) -> float:
    """Mean number of words of the passages' titles (0 for untitled passages)."""
    return statistics.fmean(len((p.title or "").split()) for p in passages) if passages else 0.0


def mode_logits(model, enc, mode: str) -> torch.Tensor:
    """``[N]`` final sentence logits of a pool under one stage choice."""
    cfg = model.config
    route = pool_route(cfg, enc.passages, enc.query)
    l_global = None
    if mode != "local":
        gcfg, stage_cfg = stage_graph(cfg, mode, None)
        data, lex = graph_inputs(cfg, enc, gcfg, True, stage_cfg)
        gm = model.global_single if mode == SINGLE else model.global_model
        with torch.no_grad():
            _, l_global, _ = global_scores(gm, enc, data, lex, model.device_)
    return final_logits(enc, l_global, cfg.score, route.lexical_weight).float()


def pool_signals(enc, local_order: list[int]) -> dict[str, float]:
    """Label-free pool statistics a routing rule could read: the overlap of the local stage's
    top-10 passages with BM25's (``agree10``), the best query-title match (``qt_max``)."""
    lex = pool_lexical(enc)
    P = len(enc.passages)
    psg = torch.zeros(P).index_copy(0, enc.passage_of, lex[:, 1].float())
    qt = torch.zeros(P).index_copy(0, enc.passage_of, lex[:, 2].float())
    bm25_top = set(sorted(range(P), key=lambda i: (-float(psg[i]), i))[:10])
    return {
        "agree10": len(bm25_top & set(local_order[:10])) / min(10, P),
        "qt_max": float(qt.max()) if P else 0.0,
    }


def study(model, source: str, split: str, cache_dir: str) -> list[dict]:
    """One row per cached pool of ``source``/``split`` with gold."""
    encs, _ = encodings_for(model, cache_dir, source)
    rows = []
    for ex in load_examples(source, split):
        key = (ex.query, tuple((c.title, c.text) for c in ex.candidates))
        enc = encs.get(key)
        if enc is None or not ex.gold_doc_ids:
            continue
        ids = [c.doc_id for c in ex.candidates]
        row = {"qid": ex.qid, "titled": pool_route(model.config, enc.passages).titled_fraction}
        row["title_words"] = title_words(enc.passages)
        orders, logits = {}, {}
        for mode in MODES:
            logits[mode] = mode_logits(model, enc, mode)
            orders[mode] = passage_order(model, enc, logits[mode])
            row[mode] = 100 * ndcg_at_k([ids[i] for i in orders[mode]], set(ex.gold_doc_ids), 10)
        for a in BLENDS:  # a x multi-passage + (1 - a) x local, sentence logits
            mix = a * logits[MULTI] + (1 - a) * logits["local"]
            order = passage_order(model, enc, mix)
            row[f"blend{a:g}"] = 100 * ndcg_at_k([ids[i] for i in order], set(ex.gold_doc_ids), 10)
        row.update(pool_signals(enc, orders["local"]))
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    from logrerank.pipeline import LoGReranker

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("splits", nargs="+", help="source:split, e.g. evinf:validation")
    ap.add_argument("--checkpoint", default="logrerank/checkpoints/log-reranker")
    ap.add_argument("--cache-dir", default="runs/enc")
    ap.add_argument("--json", help="write the per-pool rows here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    model = LoGReranker.from_pretrained(args.checkpoint, device="cpu").eval()
    out = {}
    for spec in args.splits:
        source, split = spec.split(":")[:2]
        rows = study(model, source, split, args.cache_dir)
        out[spec] = rows
        if not rows:
            print(f"{spec}: no cached pools", file=sys.stderr)
            continue
        mean = {m: statistics.fmean(r[m] for r in rows) for m in MODES}
        tw = statistics.fmean(r["title_words"] for r in rows)
        ti = statistics.fmean(r["titled"] for r in rows)
        mean.update(
            {f"blend{a:g}": statistics.fmean(r[f"blend{a:g}"] for r in rows) for a in BLENDS}
        )
        cells = "  ".join(f"{m} {v:.1f}" for m, v in mean.items())
        print(f"{spec:24s} n={len(rows):4d} titled {ti:.2f} title words {tw:.1f}  {cells}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
