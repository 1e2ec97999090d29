"""Print nDCG@10 of two ``logrerank eval`` runs side by side (the 0.2-point rule of issue 6).

python scripts/compare_runs.py runs/final4/scifact runs/pack128/scifact
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    a, b = (json.loads((Path(p) / "results.json").read_text())["summary"] for p in sys.argv[1:3])
    worst = 0.0
    for name in a:
        if name not in b:
            continue
        for level in ("passage", "sentence"):
            if a[name].get(level) and b[name].get(level):
                x, y = a[name][level]["ndcg@10"], b[name][level]["ndcg@10"]
                worst = max(worst, abs(y - x))
                print(f"{name:14s} {level:8s} nDCG@10 {x:6.2f} -> {y:6.2f} ({y - x:+.2f})")
    print(f"largest change: {worst:.2f}")


if __name__ == "__main__":
    main()
