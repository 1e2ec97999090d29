"""Stage-2 settings chosen on held-out TRAIN queries (never on the reported dev sets).

Encodes the train and held-out pools once with the frozen stage-1 model, then trains the graph
encoder + global scorer under each setting from the same initialisation and reports held-out
passage / sentence nDCG@10 of LoG against its local-only ranking. The best setting is saved as a
checkpoint (same procedure as ``logrerank train global``, which re-encodes the pools).

    python scripts/stage2_sweep.py --config configs/global.json --out checkpoints/log-reranker
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import time
from pathlib import Path

import torch

from logrerank.training.stages import TrainConfig, evaluate_encoded, fit_global, prepare_global

SETTINGS = {  # name -> TrainConfig overrides
    "paper-lr3e-4-ep8": {"pairs": "paper", "lr": 3e-4, "epochs": 8},
    "paper-lr1e-4-ep2": {"pairs": "paper", "lr": 1e-4, "epochs": 2},
    "graded-lr3e-4-ep8": {"pairs": "graded", "lr": 3e-4, "epochs": 8},
    "graded-lr1e-4-ep2": {"pairs": "graded", "lr": 1e-4, "epochs": 2},
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="configs/global.json")
    ap.add_argument("--out", default="checkpoints/log-reranker")
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    args = ap.parse_args()
    cfg = TrainConfig.load(args.config).override(args.set)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t0 = time.perf_counter()
    model, train, encs, dev, dev_encs, stats = prepare_global(cfg)
    init = copy.deepcopy(model.global_model.state_dict())
    local = evaluate_encoded(model, dev, dev_encs, use_global=False)
    print(f"held-out local only: {json.dumps(local)}", flush=True)
    results, best, best_key = {}, None, -1.0
    for name in args.settings.split(","):
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
        "command": "python scripts/stage2_sweep.py --config " + args.config + " --out " + args.out,
    }
    prev = json.loads((Path(cfg.init) / "config.json").read_text())
    model.save_pretrained(
        args.out, extra={"training": summary, "training_local": prev.get("training")}
    )
    print(f"selected {name}; saved {args.out}", flush=True)


if __name__ == "__main__":
    main()
