"""What the app's headers call the active rankers, and when a calibrated score says nothing.

* :func:`log_label` names the LoG ranking with its ablations ("LoG", "LoG (local only)",
  "LoG without typed relations, lexical node inputs");
* :func:`ce_label` names the comparison's cross-encoder ("cross-encoder twin", ...);
* :func:`saturated` tells when calibrated scores crowd at an end of [0, 1] (the twin's
  0.98-0.999), so the views show the raw logits beside them;
* :func:`role_title`, :func:`role_note` and :func:`intent_title` say where the shown roles (the
  role tagger's) and question intent come from and how accurate they are, with the figures read
  from the checkpoints' config.json.
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


ROLE_SPLITS = {
    "csabstruct/test": "CSAbstruct",
    "nicta/test": "NICTA-PIBOSO",
    "pubmedqa/test": "PubMedQA",
}
"""Role-tagger test splits quoted in the role panel, with their display names (PubMedQA's labels
are its abstracts' section headings, a noisier check the tagger was never trained on)."""

LOG_ROLE_HEAD_ACCURACY = {"CSAbstruct": 0.570, "NICTA-PIBOSO": 0.660, "PubMedQA": 0.727}
"""Test accuracy of the bundled LoG model's role head (eq. 3; each abstract ranked alone with a
neutral question), measured 2026-12-05 by ``python research/role_head_accuracy.py``
(logrerank/checkpoints/role-tagger/MODEL_CARD.md); to be re-measured when the bundled LoG model
changes."""

LOG_ROLE_HEAD = "LoG role head (eq. 3, used inside the local score)"
"""What the role panel calls the LoG role head when it shows its reading beside the tagger's."""


def role_tagger_test_accuracy() -> dict[str, float]:
    """Display name -> test accuracy of the bundled role tagger (its config.json; empty when the
    checkpoint or the figures are missing; a missing split is left out)."""
    from ..models.role_checkpoint import default_checkpoint_dir

    return dict(_tagger_accuracy(str(default_checkpoint_dir())))


@functools.lru_cache(maxsize=4)
def _tagger_accuracy(folder: str) -> tuple[tuple[str, float], ...]:
    """:func:`role_tagger_test_accuracy` of one checkpoint folder, read once."""
    try:
        raw = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
        test = raw["training"]["test"]
        return tuple(
            (name, float(test[key]["accuracy"])) for key, name in ROLE_SPLITS.items() if key in test
        )
    except (OSError, ValueError, KeyError, TypeError):
        return ()


def _figures(acc: dict[str, float]) -> str:
    return ", ".join(f"{name} {100 * a:.1f} %" for name, a in acc.items())


def role_title(tagger: bool = True) -> str:
    """The role panel's header: which model the shown role comes from and its test accuracy,
    ``"role (role tagger; test accuracy CSAbstruct 78.3 %, ...)"``; ``tagger=False`` names the
    LoG role head (a ranking whose roles were not replaced by the tagger's)."""
    if tagger:
        figures = _figures(role_tagger_test_accuracy())
        return f"role (role tagger; test accuracy {figures})" if figures else "role (role tagger)"
    return f"role (LoG role head, eq. 3; test accuracy {_figures(LOG_ROLE_HEAD_ACCURACY)})"


def role_note(tagger: bool = True) -> str:
    """Where the shown sentence roles come from, with the test accuracy of the role tagger
    (read from its checkpoint's config.json) and of the LoG role head.

    Args:
        tagger: the shown roles are the role tagger's (the app's default); False: the LoG role
            head's (a ranking not retagged, e.g. when the tagger could not be loaded).
    """
    figures = _figures(role_tagger_test_accuracy())
    head = _figures(LOG_ROLE_HEAD_ACCURACY)
    if "PubMedQA" in role_tagger_test_accuracy():
        figures += " (PubMedQA: section headings as labels)"
    if tagger:
        return (
            "Role = argmax of the role tagger (logrerank/checkpoints/role-tagger/MODEL_CARD.md), "
            "which reads each passage as one abstract"
            + (f"; its sentence accuracy on the test splits: {figures}" if figures else "")
            + ". The LoG local scorer's own role head (eq. 3), whose reading the LoG scores use "
            f"(eq. 4), is often wrong as a label ({head}); its reading is shown below the bars. "
            "The graph's typed relations (e.g. result->method) are built from the head's roles."
        )
    return (
        "Role = argmax of the LoG local scorer's role head (eq. 3), not the role tagger's (the "
        "status panel warns when the tagger could not be loaded); its sentence accuracy on the "
        f"test splits: {head}. The role tagger (logrerank/checkpoints/role-tagger/MODEL_CARD.md) "
        "does better" + (f": {figures}." if figures else ".")
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
    "LOG_ROLE_HEAD",
    "LOG_ROLE_HEAD_ACCURACY",
    "ce_label",
    "intent_title",
    "log_label",
    "role_note",
    "role_title",
    "role_tagger_test_accuracy",
    "saturated",
]
