"""Tune a cross-encoder's lexical prior weight on held-out TRAIN queries.

The lexical prior (:mod:`logrerank.models.ce_prior`) adds ``w * minmax(BM25)`` over a query's
texts to the cross-encoder's logits. After training, this scores the held-out TRAIN pools of
the run (the ``dev_fraction`` split of :func:`~logrerank.training.queries.load_train_queries`,
never a benchmark's dev split) once with the model, then for each ``w`` of a grid computes
passage nDCG@10 per source, picks the ``w`` with the best mean over sources (ties: the smaller
``w``) and records it, with the whole table, in the checkpoint's ``logrerank_delta.json``
(``"lexical"``). The model then ranks with it wherever it is loaded.

On the same held-out logits (lexical term at the chosen ``w`` included) it fits the score
calibration ``P(gold) = sigmoid(a * logit + b)`` (:func:`~logrerank.models.ce_prior.fit_platt`,
labels = "the candidate is a gold passage") and records it as ``"calibration"``: the rankers
report that probability as the score, so a prior-anchored model's scores do not all read 1.000.

Run: ``logrerank tune-ce-prior --config configs/crossencoder.json
[--checkpoint DIR] [--grid 0,1,2,4] [--scores runs/x/heldout_scores.json]`` (``--scores``
keeps the scored pools, so a rerun refits without scoring again).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from ...evaluation.metrics import ndcg_at_k
from ...models.ce_prior import CALIBRATION_KEY, LEXICAL_KEY, fit_platt, read_lexical_weight
from ...models.cross_encoder import CrossEncoder, pair_text
from ...models.delta_checkpoint import DELTA_META
from ...text.bm25 import bm25_scores, minmax
from ..queries import load_train_queries
from .ce_config import CrossEncoderTrainConfig
from .ce_data import as_passage, split_cv

GRID = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0)
"""Default weights tried (the prior-anchored model's logits spread about 5 within a pool)."""


def pool_scores(model: CrossEncoder, examples, log=sys.stdout) -> list[dict[str, Any]]:
    """Per held-out pool: ids, gold, the model's logits and the min-max BM25 of its texts."""
    from ...baselines.cross_encoder_ranker import lexical_text

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


def _set_meta(folder: str | Path, key: str, value: dict[str, Any]) -> None:
    """Set one entry of the checkpoint's ``logrerank_delta.json``, keeping the rest."""
    path = Path(folder) / DELTA_META
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta[key] = value
    path.write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def record(folder: str | Path, weight: float, table, queries: dict[str, int]) -> None:
    """Write the chosen weight and its table into the checkpoint's ``logrerank_delta.json``."""
    _set_meta(
        folder,
        LEXICAL_KEY,
        {
            "weight": weight,
            "feature": "minmax over the ranked texts of BM25(query, title + ' ' + text)",
            "tuned_on": "held-out TRAIN queries (dev_fraction split), passage nDCG@10",
            "queries": queries,
            "grid": table,
        },
    )


def first_per_source(examples: list[Any], n: int) -> list[Any]:
    """The first ``n`` examples of each ``meta["source"]``, in their order."""
    seen: dict[Any, int] = {}
    out = []
    for ex in examples:
        src = ex.meta.get("source")
        if seen.get(src, 0) < n:
            seen[src] = seen.get(src, 0) + 1
            out.append(ex)
    return out


def calibrate(rows: list[dict[str, Any]], weight: float) -> dict[str, Any]:
    """Platt fit of ``P(gold)`` on every held-out candidate's logit (lexical term at ``weight``).

    Returns:
        ``{"a", "b", "pairs", "positives", "log_loss"}`` (mean log loss of the fitted model).
    """
    xs, ys = [], []
    for r in rows:
        gold = set(r["gold"])
        xs += [x + weight * v for x, v in zip(r["logits"], r["lex"])]
        ys += [int(i in gold) for i in r["ids"]]
    a, b = fit_platt(xs, ys)
    loss = 0.0
    for x, y in zip(xs, ys):
        z = a * x + b  # log loss via softplus, stable for large |z|
        loss += math.log1p(math.exp(-abs(z))) + max(z, 0.0) - y * z
    return {
        "a": round(a, 6),
        "b": round(b, 6),
        "pairs": len(xs),
        "positives": sum(ys),
        "log_loss": round(loss / len(xs), 4),
    }


def record_calibration(folder: str | Path, fit: dict[str, Any]) -> None:
    """Write the calibration into the checkpoint's ``logrerank_delta.json``."""
    _set_meta(
        folder,
        CALIBRATION_KEY,
        {
            **fit,
            "formula": "score = sigmoid(a * logit + b), logit including the lexical prior",
            "fit_on": "held-out TRAIN candidates (dev_fraction split), label = gold passage",
        },
    )


def main(argv: list[str] | None = None) -> int:
    """``logrerank tune-ce-prior --config C [--checkpoint DIR]``."""
    ap = argparse.ArgumentParser(prog="logrerank tune-ce-prior")
    ap.add_argument("--config", required=True, help="the run's JSON config (its held-out split)")
    ap.add_argument("--checkpoint", help="the trained folder (default: the config's out)")
    ap.add_argument("--grid", help="comma-separated weights (default: %(default)s)")
    ap.add_argument(
        "--scores", help="JSON file of the scored pools: read if it exists, else written"
    )
    ap.add_argument(
        "--calibrate-only",
        action="store_true",
        help="keep the recorded lexical weight; fit and record the calibration only",
    )
    ap.add_argument(
        "--per-source", type=int, help="score only the first N held-out pools per source"
    )
    ap.add_argument("--dry-run", action="store_true", help="print the table, write nothing")
    args = ap.parse_args(argv)
    cfg = CrossEncoderTrainConfig.load(args.config)
    folder = args.checkpoint or cfg.out
    grid = tuple(float(x) for x in args.grid.split(",")) if args.grid else GRID
    cache = Path(args.scores) if args.scores else None
    if cache is not None and cache.is_file():  # the held-out pools were scored before
        rows = json.loads(cache.read_text(encoding="utf-8"))
        print(f"read {len(rows)} scored pools from {cache}")
    else:
        train_ex, dev_ex = load_train_queries(cfg, require_gold=True)
        _, dev_ex, _ = split_cv(train_ex, dev_ex, cfg)
        if args.per_source:
            dev_ex = first_per_source(dev_ex, args.per_source)
        model = CrossEncoder(folder, device=cfg.device)
        model.lexical_weight = 0.0
        rows = pool_scores(model, dev_ex)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps(rows), encoding="utf-8")
    queries: dict[str, int] = {}
    for r in rows:
        queries[r["source"]] = queries.get(r["source"], 0) + 1
    if args.calibrate_only:
        weight = read_lexical_weight(folder)
        print(f"recorded lexical weight: {weight:g} (held-out queries {queries})")
    else:
        table = grid_table(rows, grid)
        for w, t in table.items():
            print(f"w = {w:>4}: " + "  ".join(f"{k} {v:.2f}" for k, v in t.items()))
        weight = choose(table)
        print(f"chosen lexical weight: {weight:g} (held-out queries {queries})")
    fit = {**calibrate(rows, weight), "queries": queries}
    print(f"calibration: sigmoid({fit['a']:g} * logit + {fit['b']:g}), log loss {fit['log_loss']}")
    if not args.dry_run:
        if not args.calibrate_only:
            record(folder, weight, table, queries)
        record_calibration(folder, fit)
        print(f"recorded in {Path(folder) / DELTA_META}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
