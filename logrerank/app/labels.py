"""What the app's headers call the active rankers, and when a calibrated score says nothing.

* :func:`log_label` names the LoG ranking with its ablations ("LoG", "LoG (local only)",
  "LoG without typed relations, lexical node inputs");
* :func:`ce_label` names the comparison's cross-encoder ("cross-encoder twin", ...);
* :func:`saturated` tells when calibrated scores crowd at an end of [0, 1] (the twin's
  0.98-0.999), so the views show the raw logits beside them;
* :func:`role_note` and :func:`intent_title` say where the shown roles and question intent come
  from and how accurate they are, with the figures read from the checkpoints' config.json.
"""

from __future__ import annotations

import functools
import json
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


ROLE_SPLITS = {"csabstruct/test": "CSAbstruct", "nicta/test": "NICTA-PIBOSO"}
"""Role-tagger test splits quoted in the role tooltip, with their display names."""

LOG_ROLE_HEAD_ACCURACY = {"CSAbstruct": 0.570, "NICTA-PIBOSO": 0.660}
"""Test accuracy of the shown role (the bundled LoG model's role head, each abstract ranked alone
with a neutral question), measured 2026-12-05 by ``python research/role_head_accuracy.py``; to
be re-measured when the bundled LoG model changes."""


@functools.lru_cache(maxsize=1)
def role_tagger_test_accuracy() -> dict[str, float]:
    """Display name -> test accuracy of the bundled role tagger (its config.json; empty when the
    checkpoint or the figures are missing)."""
    from ..models.role_checkpoint import default_checkpoint_dir

    try:
        raw = json.loads((default_checkpoint_dir() / "config.json").read_text(encoding="utf-8"))
        test = raw["training"]["test"]
        return {name: float(test[key]["accuracy"]) for key, name in ROLE_SPLITS.items()}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def role_note() -> str:
    """Where the shown sentence roles come from and the role tagger's test accuracy per corpus."""
    acc = role_tagger_test_accuracy()
    figures = ", ".join(f"{name} {100 * a:.1f} %" for name, a in acc.items())
    shown = ", ".join(f"{name} {100 * a:.1f} %" for name, a in LOG_ROLE_HEAD_ACCURACY.items())
    return (
        f"Role = argmax of the LoG local scorer's role head (eq. 3); its sentence accuracy on "
        f"the test splits: {shown}. It was trained to match the role tagger "
        "(logrerank/checkpoints/role-tagger/MODEL_CARD.md)"
        + (f", whose own test accuracy is {figures}" if figures else "")
        + "."
    )


def intent_title(info: dict[str, Any] | None) -> str:
    """The Explain header of the question intent: ``"question intent (classifier: 24 of 27
    hand-written test questions right, 46 % on weakly labelled held-out questions)"``, or
    ``""`` when the ranking carries no classifier intent."""
    from ..models.question_intent import accuracy_text

    if not info or not info.get("probs"):
        return ""
    shown = accuracy_text(info)
    return f"question intent (classifier: {shown})" if shown else "question intent (classifier)"


__all__ = [
    "LOG_ROLE_HEAD_ACCURACY",
    "ce_label",
    "intent_title",
    "log_label",
    "role_note",
    "role_tagger_test_accuracy",
    "saturated",
]
