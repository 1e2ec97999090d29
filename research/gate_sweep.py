"""Diagnostic: the bundled LoG with its learned gate replaced by a fixed graph share g.

Writes one checkpoint per g (gate weights 0, bias logit(g); everything else the bundled model's)
so that ``logrerank eval --checkpoint DIR --encodings ENC`` re-ranks cached pools with that share
and no transformer pass. It shows how much any per-pool gate could recover on a set; it chooses
nothing (evaluation sets are never used to choose).

Usage: python research/gate_sweep.py OUT_DIR [G ...]   (default 0 0.25 0.5 0.75 1)
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    out, shares = Path(args[0]), [float(g) for g in args[1:]] or [0.0, 0.25, 0.5, 0.75, 1.0]
    from logrerank import LoGReranker

    model = LoGReranker.from_pretrained()
    gate = model.global_model.gate
    for g in shares:
        with torch.no_grad():
            gate.weight.zero_()
            gate.bias.fill_(math.log(g / (1 - g)) if 0 < g < 1 else (-40.0 if g == 0 else 40.0))
        folder = out / f"g{g:.2f}"
        model.save_pretrained(folder)
        print(folder)


if __name__ == "__main__":
    main()
