"""Out-of-fold figures of cross-encoder training on the cross-validated (multi-hop) sources.

The HotpotQA and MuSiQue train samples are both training data and the multi-hop benchmarks, so
a cross-encoder trained on them is reported out of fold, as the graph stage is
(:mod:`logrerank.training.log.graph_cv`): for each fold ``k`` a model trains on everything but fold
``k`` of ``cv_sources`` (:func:`~logrerank.training.cross_encoder.ce_data.split_cv`; the other
sources train as in the final run), then ranks fold ``k``'s pools. The per-query rows of every
fold make one ``results.json`` per run (the ``logrerank eval --out`` layout, so ``logrerank
paired-test`` reads it), with BM25 and the bi-encoders on the same pools.

Run: ``python -m logrerank.training.cross_encoder.ce_cv --config configs/crossencoder.json
--folds 5 --out runs/ce-cv`` (``--fold K`` trains and scores one fold; ``--report`` only
gathers the folds already done). Each fold resumes like any cross-encoder run.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from ...data.schema import example_passages
from ..cv import by_source, print_table, ranking_row, write_results
from ..queries import load_train_queries
from .ce_config import CrossEncoderTrainConfig
from .ce_data import split_cv
from .ce_train import train

RANKERS = ("bm25", "bi-encoder", "bi-encoder-passage", "cross-encoder", "ce-stage")
"""What ranks each out-of-fold pool (the fold's cross-encoder in the last two)."""


def fold_config(cfg: CrossEncoderTrainConfig, folds: int, k: int, out: Path):
    """The run config of fold ``k``: its own checkpoint and state folders, no held-out eval."""
    return dataclasses.replace(
        cfg,
        cv_folds=folds,
        cv_fold=k,
        out=str(out / f"fold{k}"),
        state_dir=str(out / f"state-fold{k}"),
        eval_every=0,
    )


def score_fold(cfg: CrossEncoderTrainConfig, examples, log=sys.stdout) -> dict[str, list]:
    """Rows of every :data:`RANKERS` entry on the fold's out-of-fold ``examples``."""
    from ...rankers import Models, build_rankers

    models = Models(cross_encoder_path=cfg.out, device=cfg.device, memo_cross_encoder=True)
    rankers = build_rankers(list(RANKERS), models)
    rows: dict[str, list] = {name: [] for name in RANKERS}
    for i, ex in enumerate(examples, 1):
        ps = example_passages(ex)
        for name, r in rankers.items():
            rows[name].append(ranking_row(ex, r.rank(ex.query, ps)))
        if i % 10 == 0 or i == len(examples):
            print(f"  scored {i}/{len(examples)} out-of-fold pools", file=log, flush=True)
    return rows


def run_fold(cfg: CrossEncoderTrainConfig, folds: int, k: int, out: Path, log=sys.stdout):
    """Train fold ``k`` (resuming) and write its rows to ``out/fold{k}.rows.json``."""
    fcfg = fold_config(cfg, folds, k, out)
    train_ex, dev_ex = load_train_queries(fcfg, require_gold=True)
    summary = train(fcfg, log=log, data=(train_ex, dev_ex), evaluate=False)
    _, _, oof = split_cv(train_ex, dev_ex, fcfg)
    print(f"fold {k}: scoring {len(oof)} out-of-fold pools", file=log, flush=True)
    rows = score_fold(fcfg, oof, log)
    payload = {"fold": k, "train_minutes": summary["train_minutes"], "rows": rows}
    (out / f"fold{k}.rows.json").write_text(json.dumps(payload), encoding="utf-8")
    return payload


def report(out: Path, folds: int, log=sys.stdout) -> dict[str, Any]:
    """Gather the folds' rows into ``out/results.json`` and print the per-source table."""
    merged: dict[str, list] = {}
    minutes = []
    for k in range(folds):
        f = out / f"fold{k}.rows.json"
        if not f.is_file():
            print(f"fold {k} not done ({f} missing)", file=log, flush=True)
            continue
        payload = json.loads(f.read_text(encoding="utf-8"))
        minutes.append(payload["train_minutes"])
        for name, rows in payload["rows"].items():
            merged.setdefault(name, []).extend(rows)
    table = {name: by_source(rows) for name, rows in merged.items()}
    write_results(out / "results.json", merged)
    (out / "table.json").write_text(
        json.dumps({"table": table, "fold_train_minutes": minutes}, indent=1), encoding="utf-8"
    )
    print_table(table, log)
    return table


def main(argv: list[str] | None = None) -> int:
    """``python -m logrerank.training.cross_encoder.ce_cv --config C --folds 5 --out DIR``."""
    ap = argparse.ArgumentParser(prog="python -m logrerank.training.cross_encoder.ce_cv")
    ap.add_argument("--config", required=True, help="the final run's JSON config")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--out", required=True, help="folder for fold checkpoints and results")
    ap.add_argument("--fold", type=int, action="append", help="only these folds (repeatable)")
    ap.add_argument("--report", action="store_true", help="only gather finished folds")
    ap.add_argument("--set", action="append", default=[], help="override FIELD=JSON")
    args = ap.parse_args(argv)
    cfg = CrossEncoderTrainConfig.load(args.config)
    for item in args.set:
        key, _, value = item.partition("=")
        cfg = dataclasses.replace(cfg, **{key: json.loads(value)})
    cfg.check()
    if not cfg.cv_sources:
        ap.error("the config has no cv_sources: nothing to cross-validate")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.report:
        for k in args.fold or range(args.folds):
            run_fold(cfg, args.folds, k, out)
    report(out, args.folds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
