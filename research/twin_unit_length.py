"""Which unit length should the cross-encoder twin use? The untrained twin on held-out TRAIN.

An untrained twin (``LocalConfig.unit = "passage"``, zero-initialised local head) scores each
passage unit by the packaged bi-encoder prior alone, so its ranking is the zero-shot passage
bi-encoder over ``title + ". " + window`` units, a passage by its best unit. MiniLM was trained
on short inputs; this compares unit lengths on the held-out slice of the TRAIN queries (the
same slice training selects on; SciFact dev and Citation-Integrity dev are never read), with the
sentence-level prior (the untrained LoG local scorer) as a reference row:

    python research/twin_unit_length.py --tokens 128,192,256 --limit 40 --out runs/twin-units.json
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from logrerank.config import LocalConfig, LoGConfig
from logrerank.pipeline import LoGReranker
from logrerank.training.config import TrainConfig
from logrerank.training.data import load_train_queries
from logrerank.training.heldout import evaluate_examples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="configs/twin.json", help="run config (data, split)")
    ap.add_argument("--tokens", default="128,192,256", help="unit lengths to compare")
    ap.add_argument("--limit", type=int, default=40, help="held-out queries per source at most")
    ap.add_argument("--no-sentence", action="store_true", help="skip the sentence-level row")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", help="JSON file for the table")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = TrainConfig.load(args.config)
    _, dev = load_train_queries(cfg)
    sets: dict[str, list] = {}
    for ex in dev:
        sets.setdefault(ex.meta["source"], [])
        if len(sets[ex.meta["source"]]) < args.limit:
            sets[ex.meta["source"]].append(ex)
    print({k: len(v) for k, v in sets.items()}, flush=True)
    rows = [("sentence", 0)] * (not args.no_sentence)
    rows += [("passage", int(n)) for n in args.tokens.split(",")]
    table = []
    for unit, n in rows:
        local = LocalConfig(isolated_layers=5, unit=unit, unit_tokens=n or 256)
        model = LoGReranker.untrained(LoGConfig(local=local, use_global=False, precision="fp32"))
        row = {"unit": unit, "unit_tokens": n}
        for name, exs in sets.items():
            t0 = time.perf_counter()
            m = evaluate_examples(model, exs, use_global=False)
            row[name] = {k: round(v, 2) for k, v in m.items() if k.startswith("passage_")}
            row[f"{name}_seconds"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(row), flush=True)
        table.append(row)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
