"""The twin's score-selection table (its MODEL_CARD.md, "Score adjustments") from the rows that
`logrerank tune-score --checkpoint runs/twin --cache runs/eval-twin/select` cached: the best
passage term per head weight, the raw trained twin, the prior alone and the first pass.

    python research/ce/twin_selection.py runs/eval-twin/select
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from logrerank.training.log.score_tuning import BETAS, WEIGHTS, score


def main(folder: str) -> None:
    sf = json.loads((Path(folder) / "select-scifact.json").read_text())
    ci = json.loads((Path(folder) / "select-citint.json").read_text())

    def pair(beta: float, w: float) -> tuple[float, float]:
        return score(sf, 2, beta, False, w)[0], score(ci, 2, beta, False, w)[0]

    print("| w | best beta | SciFact select | Citation-Integrity select | mean |")
    for w in WEIGHTS:
        b = max(BETAS, key=lambda b: sum(pair(b, w)) / 2)
        s, c = pair(b, w)
        print(f"| {w} | {b} | {s:.2f} | {c:.2f} | {(s + c) / 2:.2f} |")
    print("raw trained (w 1, beta 0): {:.2f} / {:.2f}".format(*pair(0.0, 1.0)))
    print("prior alone (w 0, beta 0): {:.2f} / {:.2f}".format(*pair(0.0, 0.0)))
    print(f"first pass: {score(sf, -1)[0]:.2f} / {score(ci, -1)[0]:.2f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "runs/eval-twin/select")
