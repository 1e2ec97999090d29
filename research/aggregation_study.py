"""Score-adjustment study: every setting of the grid on the selection and dev sets.

The product step is ``logrerank tune-score`` (:mod:`logrerank.training.score_tuning`: the
adjustments, the grid, the selection sets and the objective are defined there); this study
prints the full tables behind that choice: per set (the two selection sets, SciFact dev,
Citation-Integrity dev), passage / sentence nDCG@10 of the first-pass order, the bi-encoder
prior, and LoG's local and global scores under every head weight, duplicate merging and passage
weight, then the chosen setting and its figures on every set.

    python research/aggregation_study.py --out runs/agg          # encode + cache + report
    python research/aggregation_study.py --out runs/agg --report # report from the cache only
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from logrerank.training.score_tuning import (
    BETAS,
    SELECT,
    WEIGHTS,
    choose,
    collect,
    score,
    selection_sets,
)


def _cell(p: float, s: float | None) -> str:
    return f"{p:.1f}" + (f" / {s:.1f}" if s is not None else "")


def report(sets: dict[str, list[dict]]) -> str:
    """Tables per set, then the setting chosen on the selection sets and its dev figures.

    Selection objective, fixed before looking: the mean of SciFact-select passage nDCG@10,
    SciFact-select sentence nDCG@10 and CitInt-select passage nDCG@10 (the three figures the bar
    is about), LoG full (global) scores.
    """
    lines = []
    for name, rows in sets.items():
        lines += [
            f"### {name} ({len(rows)} queries), P-nDCG@10 / S-nDCG@10",
            "",
            "| scores | w | dedup | " + " | ".join(f"beta={b}" for b in BETAS) + " |",
            "|---|---|---|" + "---|" * len(BETAS),
        ]
        lines.append(f"| first-pass | | | {_cell(*score(rows, -1))} |")
        lines.append(f"| prior (bi-encoder cosine) | | | {_cell(*score(rows, 6))} |")
        for col, label in ((2, "local"), (3, "global")):
            for w in WEIGHTS:
                for dedup in (False, True):
                    if not dedup and w != 1.0:
                        continue
                    cells = [_cell(*score(rows, col, b, dedup, w)) for b in BETAS]
                    lines.append(f"| {label} | {w} | {dedup} | " + " | ".join(cells) + " |")
        lines.append("")
    if all(n in sets for n in SELECT):
        (w, dedup, b), best_val = choose(sets)
        lines.append(
            f"Chosen on the selection sets (mean of the three figures {best_val:.2f}): "
            f"head_weight={w}, merge_duplicates={dedup}, passage_weight={b}"
        )
        for name, rows in sets.items():
            for col, label in ((3, "log"), (2, "log-local")):
                lines.append(f"- {name}: {label} {_cell(*score(rows, col, b, dedup, w))}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="runs/agg")
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--report", action="store_true", help="report from the cache only")
    ap.add_argument("--citint-train", type=int, default=100, help="unused CitInt train claims")
    ap.add_argument("--bi", action="store_true", help="also store the bi-encoder cosine (slower)")
    ap.add_argument("--sets", default="select-scifact,select-citint,scifact-dev,citint-dev")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = args.sets.split(",")
    sets = {}
    if args.report:
        for n in wanted:
            if (out / f"{n}.json").exists():
                sets[n] = json.loads((out / f"{n}.json").read_text())
    else:
        from logrerank.baselines.bi_encoder import BiEncoder, BiEncoderRanker
        from logrerank.data.pools import load_benchmark
        from logrerank.pipeline import LoGReranker

        model = LoGReranker.from_pretrained(args.checkpoint)
        bi = BiEncoderRanker("sentence", BiEncoder()) if args.bi else None
        select = selection_sets(args.citint_train) if set(SELECT) & set(wanted) else {}
        for n in wanted:
            if n in select:
                exs = select[n]
            elif n == "scifact-dev":
                exs, _ = load_benchmark("scifact")
            elif n == "citint-dev":
                exs, _ = load_benchmark("citint")
            else:
                raise SystemExit(f"unknown set {n}")
            sets[n] = collect(n, exs, model, bi, out / f"{n}.json")
    text = report(sets)
    print(text)
    (out / "report.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
