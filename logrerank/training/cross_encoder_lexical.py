"""Tune a cross-encoder's lexical prior weight on held-out TRAIN queries.

The lexical prior (:mod:`logrerank.models.ce_prior`) adds ``w * minmax(BM25)`` over a query's
texts to the cross-encoder's logits. After training, this scores the held-out TRAIN pools of
the run (the ``dev_fraction`` split of :func:`~logrerank.training.data.load_train_queries`,
never a benchmark's dev split) once with the model, then for each ``w`` of a grid computes
passage nDCG@10 per source, picks the ``w`` with the best mean over sources (ties: the smaller
``w``) and records it, with the whole table, in the checkpoint's ``logrerank_delta.json``
(``"lexical"``). The model then ranks with it wherever it is loaded.

Run: ``python -m logrerank.training.cross_encoder_lexical --config configs/crossencoder.json
[--checkpoint DIR] [--grid 0,1,2,4]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..baselines.base import minmax
from ..baselines.bm25 import bm25_scores
from ..baselines.cross_encoder import lexical_text
from ..evaluation.metrics import ndcg_at_k
from ..models.ce_prior import LEXICAL_KEY
from ..models.cross_encoder import CrossEncoder, pair_text
from ..models.delta_checkpoint import DELTA_META
from .cross_encoder_config import CrossEncoderTrainConfig
from .cross_encoder_data import as_passage, split_cv
from .data import load_train_queries

GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
"""Default weights tried (the prior-anchored model's logits spread about 5 within a pool)."""


def pool_scores(model: CrossEncoder, examples, log=sys.stdout) -> list[dict[str, Any]]:
    """Per held-out pool: ids, gold, the model's logits and the min-max BM25 of its texts."""
    rows = []
    t0 = time.perf_counter()
    for i, ex in enumerate(examples, 1):
        ps = [as_passage(d) for d in ex.candidates]
        logits = model.predict([(ex.query, pair_text(p)) for p in ps])
        lex = minmax(bm25_scores(ex.query, [lexical_text(p) for p in ps]))
        rows.append(
            {
                "source": ex.meta.get("source"),
                "ids": [d.doc_id for d in ex.candidates],
                "gold": list(ex.gold_doc_ids),
                "logits": logits,
                "lex": lex,
            }
        )
        if i % 20 == 0 or i == len(examples):
            el = time.perf_counter() - t0
            print(f"scored {i}/{len(examples)} held-out pools ({el / 60:.1f} min)", file=log)
    return rows


def grid_table(rows: list[dict[str, Any]], grid=GRID) -> dict[str, dict[str, float]]:
    """``table[w][source]`` = passage nDCG@10 (percent) with weight ``w``, and ``"mean"``."""
    table: dict[str, dict[str, float]] = {}
    for w in grid:
        per: dict[str, list[float]] = {}
        for r in rows:
            s = [x + w * v for x, v in zip(r["logits"], r["lex"])]
            order = sorted(range(len(s)), key=lambda i: (-s[i], i))
            per.setdefault(r["source"], []).append(
                ndcg_at_k([r["ids"][i] for i in order], r["gold"], 10)
            )
        t = {src: 100 * sum(v) / len(v) for src, v in per.items()}
        t["mean"] = sum(t.values()) / len(t)
        table[f"{w:g}"] = {k: round(v, 2) for k, v in t.items()}
    return table


def choose(table: dict[str, dict[str, float]]) -> float:
    """The weight with the best mean over sources (ties: the smaller weight)."""
    return float(min(table, key=lambda w: (-table[w]["mean"], float(w))))


def record(folder: str | Path, weight: float, table, queries: dict[str, int]) -> None:
    """Write the chosen weight and its table into the checkpoint's ``logrerank_delta.json``."""
    path = Path(folder) / DELTA_META
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta[LEXICAL_KEY] = {
        "weight": weight,
        "feature": "minmax over the ranked texts of BM25(query, title + ' ' + text)",
        "tuned_on": "held-out TRAIN queries (dev_fraction split), passage nDCG@10",
        "queries": queries,
        "grid": table,
    }
    path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """``python -m logrerank.training.cross_encoder_lexical --config C [--checkpoint DIR]``."""
    ap = argparse.ArgumentParser(prog="python -m logrerank.training.cross_encoder_lexical")
    ap.add_argument("--config", required=True, help="the run's JSON config (its held-out split)")
    ap.add_argument("--checkpoint", help="the trained folder (default: the config's out)")
    ap.add_argument("--grid", help="comma-separated weights (default: %(default)s)")
    ap.add_argument("--dry-run", action="store_true", help="print the table, write nothing")
    args = ap.parse_args(argv)
    cfg = CrossEncoderTrainConfig.load(args.config)
    folder = args.checkpoint or cfg.out
    grid = tuple(float(x) for x in args.grid.split(",")) if args.grid else GRID
    train_ex, dev_ex = load_train_queries(cfg, require_gold=True)
    _, dev_ex, _ = split_cv(train_ex, dev_ex, cfg)
    model = CrossEncoder(folder, device=cfg.device)
    model.lexical_weight = 0.0
    rows = pool_scores(model, dev_ex)
    table = grid_table(rows, grid)
    for w, t in table.items():
        print(f"w = {w:>4}: " + "  ".join(f"{k} {v:.2f}" for k, v in t.items()))
    weight = choose(table)
    queries = {}
    for r in rows:
        queries[r["source"]] = queries.get(r["source"], 0) + 1
    print(f"chosen lexical weight: {weight:g} (held-out queries {queries})")
    if not args.dry_run:
        record(folder, weight, table, queries)
        print(f"recorded in {Path(folder) / DELTA_META}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
