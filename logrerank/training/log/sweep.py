"""Stage-2 settings chosen on held-out TRAIN queries (never on the reported dev sets).

Encodes the train and held-out pools once with the frozen stage-1 model, then trains the graph
encoder + global scorer under each setting of :data:`SETTINGS` from the same initialisation and
reports held-out passage / sentence nDCG@10 of LoG against its local-only ranking. The best
setting (passage + sentence nDCG@10) is saved as a checkpoint at the config's ``out`` (the same
procedure as ``logrerank train global``, which trains one setting)::

    logrerank train global --config configs/global.json --sweep
    logrerank train global --sweep --settings paper-lr1e-4-ep2,graded-lr1e-4-ep2 --set out=runs/s2
"""

from __future__ import annotations

import copy
import dataclasses
import json
import time
from pathlib import Path

from ...log_checkpoint import read_meta

SETTINGS = {  # name -> TrainConfig overrides
    "paper-lr3e-4-ep8": {"pairs": "paper", "lr": 3e-4, "epochs": 8},
    "paper-lr1e-4-ep2": {"pairs": "paper", "lr": 1e-4, "epochs": 2},
    "graded-lr3e-4-ep8": {"pairs": "graded", "lr": 3e-4, "epochs": 8},
    "graded-lr1e-4-ep2": {"pairs": "graded", "lr": 1e-4, "epochs": 2},
}
"""The compared stage-2 settings: name -> :class:`~logrerank.training.log.log_config.TrainConfig`
overrides."""


def sweep_plan(settings: list[str]) -> dict:
    """The settings :func:`sweep_global` would compare (printed by ``--dry-run``)."""
    return {
        "sweep": {name: SETTINGS[name] for name in settings},
        "selected_by": "held-out train queries: passage + sentence nDCG@10",
    }


def sweep_global(cfg, settings: list[str], command: str) -> dict:
    """Train stage 2 under every setting in ``settings`` and save the best at ``cfg.out``.

    Args:
        cfg: the global-stage :class:`~logrerank.training.log.log_config.TrainConfig` (every setting
            starts from it).
        settings: names in :data:`SETTINGS`.
        command: the command line recorded in the checkpoint.

    Returns:
        The training summary stored in the checkpoint (held-out figures of every setting).
    """
    import torch

    from .global_stage import evaluate_encoded, fit_global, prepare_global

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t0 = time.perf_counter()
    model, train, encs, dev, dev_encs, stats = prepare_global(cfg)
    init = copy.deepcopy(model.global_model.state_dict())
    local = evaluate_encoded(model, dev, dev_encs, use_global=False)
    print(f"held-out local only: {json.dumps(local)}", flush=True)
    results, best, best_key = {}, None, -1.0
    for name in settings:
        run = dataclasses.replace(cfg, **SETTINGS[name])
        model.global_model.load_state_dict(init)
        fit_global(model, run, train, encs)
        res = evaluate_encoded(model, dev, dev_encs)
        results[name] = res
        key = res["passage_ndcg@10"] + res.get("sentence_ndcg@10", 0.0)
        print(f"{name}: {json.dumps(res)}", flush=True)
        if key > best_key:
            best, best_key = (name, copy.deepcopy(model.global_model.state_dict())), key
    name, state = best
    model.global_model.load_state_dict(state)
    summary = {
        "stage": "global",
        "selected": name,
        "selected_by": "held-out train queries: passage + sentence nDCG@10",
        "settings": SETTINGS,
        "heldout_local": local,
        "heldout": results,
        "train_queries": len(train),
        "heldout_queries": len(dev),
        "tau_sim": model.config.graph.tau_sim,
        "graph_stats_train": {str(t): v for t, v in stats.items()},
        "wall_minutes": round((time.perf_counter() - t0) / 60, 1),
        "config": dataclasses.asdict(dataclasses.replace(cfg, **SETTINGS[name])),
        "command": command,
    }
    prev = read_meta(Path(cfg.init))
    model.save_pretrained(
        cfg.out, extra={"training": summary, "training_local": prev.get("training")}
    )
    print(f"selected {name}; saved {cfg.out}", flush=True)
    return summary
