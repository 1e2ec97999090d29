"""What the app's headers call the active rankers, and when a calibrated score says nothing.

* :func:`log_label` names the LoG ranking with its ablations ("LoG", "LoG (local only)",
  "LoG without typed relations, lexical node inputs");
* :func:`ce_label` names the comparison's cross-encoder ("cross-encoder twin", ...);
* :func:`saturated` tells when calibrated scores crowd at an end of [0, 1] (the twin's
  0.98-0.999), so the views show the raw logits beside them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from . import ce_choice
from .state import ABLATIONS

GAT = "graph stage (GAT)"

SATURATION_MARGIN = 0.03
"""Scores within this of 0 or 1 are saturated (:func:`saturated`)."""

SATURATION_SPREAD = 0.02
"""Scores whose range is below this say nothing about the order either."""


def log_label(switches: Iterable[str] = tuple(ABLATIONS)) -> str:
    """The LoG ranking's name with its ablations (unchecked parts)."""
    on = set(switches)
    if GAT not in on:
        return "LoG (local only)"
    off = [name for name in ABLATIONS if name not in on and name != GAT]
    return "LoG" if not off else "LoG without " + ", ".join(off)


def ce_label(backend: Any, choice: str = "") -> str:
    """The comparison's cross-encoder by name (``""`` = the app's default choice)."""
    key = ce_choice.resolve(choice) or getattr(backend, "cross_encoder_choice", "")
    if key == ce_choice.BUNDLED:
        return "bundled cross-encoder"
    if key == ce_choice.TWIN:
        return "cross-encoder twin"
    return f"cross-encoder {Path(key).name or key}" if key else "cross-encoder"


def saturated(scores: Iterable[float | None]) -> bool:
    """Whether calibrated scores in [0, 1] say too little at display precision: at least two,
    and a third of them or more within :data:`SATURATION_MARGIN` of 0 or 1 (0.98, 0.99, 0.999
    look alike), or all of them spread less than :data:`SATURATION_SPREAD`."""
    xs = [float(x) for x in scores if x is not None and math.isfinite(x)]
    if len(xs) < 2:
        return False
    near = sum(1 for x in xs if min(x, 1 - x) <= SATURATION_MARGIN)
    return 3 * near >= len(xs) or max(xs) - min(xs) < SATURATION_SPREAD


__all__ = ["ce_label", "log_label", "saturated"]
