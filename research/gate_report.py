"""What the learned graph gate reads and what it learned, per pool kind and title condition.

For each checkpoint: the gate's weights on its eight pool features
(``logrerank/graph/pool_features.py``) and, for every cached pool of an ``eval --encodings``
folder (the pools of ``research/one_eval.sh``), the gate ``g`` (the graph's share) with the
passages' titles full, cut to three words and removed. No transformer pass: the encodings are
reused, only the titles change (the local stage does not read them).

Usage: python research/gate_report.py ENCODINGS_DIR CHECKPOINT [CHECKPOINT ...]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("encodings", help="folder of eval --encodings caches")
    ap.add_argument("checkpoints", nargs="+", help="'bundled' or checkpoint folders")
    args = ap.parse_args(argv)
    from logrerank import LoGReranker
    from logrerank.data.titles import TITLE_CONDITIONS, cut_title
    from logrerank.graph.pool_features import POOL_FEATURES
    from logrerank.ranking.results import retitled
    from logrerank.training.log.encode_cache import load_encodings

    stems = sorted(p.with_suffix("") for p in Path(args.encodings).glob("*.safetensors"))
    pools = {s.name.removesuffix("-eval"): load_encodings(s)[1] for s in stems}
    for path in args.checkpoints:
        model = LoGReranker.from_pretrained(None if path == "bundled" else path)
        gate = model.global_model.gate
        w = ", ".join(f"{n} {v:+.2f}" for n, v in zip(POOL_FEATURES, gate.weight[0].tolist()))
        print(f"\n## {path}\n\ngate weights: {w}; bias {float(gate.bias):+.2f}\n")
        print("| pools | " + " | ".join(TITLE_CONDITIONS) + " |")
        print("|---|" + "---|" * len(TITLE_CONDITIONS))
        for name, encs in pools.items():
            cells = []
            for cond in TITLE_CONDITIONS:
                g = [
                    model.rank_encoded(
                        retitled(e, [cut_title(p.title, cond) for p in e.passages])
                    ).info["graph_gate"]
                    for e in encs
                ]
                cells.append(f"{statistics.mean(g):.2f} ({min(g):.2f}-{max(g):.2f})")
            print(f"| {name} ({len(encs)}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
