"""``logrerank train`` (one stage from a run config, or the stage-2 sweep) and
``logrerank tune-score`` (the score adjustments chosen on train queries, written to a checkpoint).

Together they build the bundled LoG model: ``train local``, ``train global --sweep``, then
``tune-score`` (README, "Reproduce").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..types import InputError

TASKS = ("local", "global", "passage", "crossencoder", "roles", "intent")


def _config_path(args: argparse.Namespace) -> str:
    """``--config``, else ``configs/<task>.json`` (from the working directory); must exist."""
    path = args.config or f"configs/{args.task}.json"
    if not Path(path).is_file():
        raise InputError(f"config file {path} not found")
    return path


def _command() -> str:
    return "logrerank " + " ".join(sys.argv[1:])


def _run_training(
    task: str, config: str, overrides: list[str], dry_run: bool, steps: tuple[str, ...] = ()
) -> dict:
    """:func:`logrerank.training.run.run_training`; a missing input becomes an InputError."""
    from ..training.run import MissingTrainingInputError, run_training

    try:
        return run_training(task, config, overrides, dry_run, steps, _command())
    except MissingTrainingInputError as exc:
        raise InputError(str(exc)) from exc


def cmd_train(args: argparse.Namespace) -> int:
    """Train one task from its run config (``--dry-run``: print the plan only)."""
    config = _config_path(args)
    if args.sweep:
        return _sweep(args, config)
    if args.settings:
        raise InputError("--settings goes with --sweep")
    steps = tuple(s for s in ("cv", "final", "eval") if getattr(args, s, False))
    summary = _run_training(args.task, config, args.set or [], args.dry_run, steps)
    print(json.dumps(summary, indent=1, default=str))
    return 0


def _sweep(args: argparse.Namespace, config: str) -> int:
    """``train global --sweep``: every stage-2 setting from one encoding, the best saved."""
    if args.task != "global":
        raise InputError(f"--sweep compares stage-2 settings: use `train global`, not {args.task}")
    from ..training.log.log_config import TrainConfig
    from ..training.log.sweep import SETTINGS, sweep_global, sweep_plan

    names = [n.strip() for n in (args.settings or ",".join(SETTINGS)).split(",") if n.strip()]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown or not names:
        raise InputError(f"unknown --settings {unknown}; known: {', '.join(SETTINGS)}")
    overrides = args.set or []
    plan = _run_training("global", config, overrides, dry_run=True)  # checks config and inputs
    if args.dry_run:
        print(json.dumps({**plan, **sweep_plan(names)}, indent=1, default=str))
        return 0
    cfg = TrainConfig.load(config).override(overrides)
    summary = sweep_global(cfg, names, _command())
    print(json.dumps(summary, indent=1, default=str))
    return 0


def cmd_tune_score(args: argparse.Namespace) -> int:
    """Choose the score adjustments on the selection sets; write them unless ``--dry-run``."""
    from ..training.log.score_tuning import tune_lexical, tune_score

    if not (Path(args.checkpoint) / "config.json").is_file():
        raise InputError(f"{args.checkpoint} is not a checkpoint folder (no config.json)")
    if args.citint_train < 1:
        raise InputError("--citint-train must be >= 1")
    tune = tune_lexical if args.lexical else tune_score
    result = tune(
        args.checkpoint, args.citint_train, args.cache, write=not args.dry_run, command=_command()
    )
    print(json.dumps(result, indent=1, default=str))
    return 0


def cmd_tune_ce_prior(args: argparse.Namespace) -> int:
    """Tune the bundled cross-encoder's lexical prior and calibration on held-out train pools
    (:mod:`logrerank.training.cross_encoder.lexical_prior`, its options unchanged)."""
    from ..training.cross_encoder.lexical_prior import main

    return main(args.options)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``train``, ``tune-score`` and ``tune-ce-prior``."""
    c = sub.add_parser(
        "tune-ce-prior",
        help="choose a trained cross-encoder's lexical prior weight and score calibration",
        description="Tune the lexical prior weight and the score calibration of a cross-encoder "
        "trained by `logrerank train crossencoder` on the run's held-out TRAIN pools "
        "(logrerank/training/cross_encoder/lexical_prior.py). Every option is passed on: "
        "`logrerank tune-ce-prior --config configs/crossencoder-fair.json [--checkpoint DIR] "
        "[--grid 0,1,2,4] [--scores FILE] [--calibrate-only] [--dry-run]`; "
        "`logrerank tune-ce-prior --help` lists them.",
        prefix_chars="\x00",  # no option is parsed here: all go to the tuning script
        add_help=False,
    )
    c.add_argument("options", nargs="*", metavar="ARG", help="the tuning options")
    c.set_defaults(func=cmd_tune_ce_prior)
    t = sub.add_parser(
        "train",
        help="train a model from a JSON run config (see configs/)",
        description="Train one task from a JSON run config. Every --set value is checked by the "
        "config's own types before anything loads; --dry-run checks the config, the data files "
        "(under $LOGRERANK_DATA, default ../shared/data) and the input checkpoints, prints the "
        "plan and trains nothing.",
    )
    t.add_argument("task", choices=TASKS)
    t.add_argument("--config", "-c", help="JSON run config (default: configs/<task>.json)")
    t.add_argument(
        "--set",
        action="append",
        metavar="FIELD=VALUE",
        help="override a field of the run config, e.g. --set seed=17, or a field inside a "
        "section with dots, e.g. --set model.graph.tau_sim=0.8 (repeatable; values are JSON "
        "or a bare string, checked before anything loads; --dry-run prints the result)",
    )
    t.add_argument("--dry-run", action="store_true", help="print the plan, train nothing")
    t.add_argument(
        "--sweep",
        action="store_true",
        help="global only: train every stage-2 setting from one encoding of the pools and save "
        "the best on held-out train queries at the config's out",
    )
    t.add_argument("--settings", help="with --sweep: comma-separated setting names (default all)")
    for step, what in (
        ("cv", "K-fold cross-validation over the multi-hop questions (out-of-fold figures)"),
        ("final", "one model per seed on every training question, saved at the config's out"),
        ("eval", "the final models and their ablations on the cached dev pools"),
    ):
        t.add_argument(
            f"--{step}",
            action="store_true",
            help=f"global with a multi-hop config only: {what} (none given = all three)",
        )
    t.set_defaults(func=cmd_train)

    s = sub.add_parser(
        "tune-score",
        help="choose LoG's score adjustments on unused train queries; write them to a checkpoint",
        description="Encodes the selection sets (SciFact train held-out slice, Citation-Integrity "
        "train claims after the first 300) with the checkpoint's model, scores a grid of the "
        "three score adjustments (head weight, duplicate merging, passage weight) and stores the "
        "best in the checkpoint's config.json (model.score, training.score_selection). A "
        "checkpoint without a graph stage (the cross-encoder twin, use_global false) is chosen "
        "on its local passage scores (no sentence term).",
    )
    s.add_argument("--checkpoint", required=True, help="LoG checkpoint folder (rewritten)")
    s.add_argument(
        "--citint-train",
        type=int,
        default=100,
        help="Citation-Integrity train claims after the first 300 (default 100)",
    )
    s.add_argument("--cache", help="folder for the encoded sets' rows (reused when present)")
    s.add_argument("--dry-run", action="store_true", help="choose and print; write nothing")
    s.add_argument(
        "--lexical",
        action="store_true",
        help="choose only score.lexical_weight (the lexical prior added to every pool's final "
        "logits) on both selection sets; the other score settings are kept",
    )
    s.set_defaults(func=cmd_tune_score)
