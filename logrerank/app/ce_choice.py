"""The cross-encoders the app's comparison can use, loaded on demand and cached per process.

Three kinds of choice, listed in the app's "cross-encoder of the comparison" menu with a
trained / UNTRAINED / UNAVAILABLE badge:

* ``"bundled"``: the bundled cross-encoder (``logrerank/checkpoints/cross-encoder``);
* ``"twin"``: the cross-encoder twin, LoG's local scorer trained the same way on passage units
  (``logrerank/checkpoints/cross-encoder-twin``; :class:`~logrerank.baselines.twin.
  TwinCrossEncoder`);
* a folder: any sentence-transformers or Hugging Face sequence-classification folder, given by
  ``--cross-encoder DIR`` or ``$LOGRERANK_CROSS_ENCODER`` (it is then the default choice).

A choice that cannot be loaded is UNAVAILABLE with its error; it is never raised.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUNDLED = "bundled"
"""Choice value of the bundled cross-encoder."""

TWIN = "twin"
"""Choice value of the cross-encoder twin."""


@dataclass
class Loaded:
    """One choice after loading: the (memoised) model, or None and why."""

    model: Any = None
    error: str | None = None


def label(choice: str) -> str:
    """What a choice is called in the status panel and the menu."""
    if choice == BUNDLED:
        return "cross-encoder (bundled)"
    if choice == TWIN:
        return "cross-encoder twin"
    return f"cross-encoder ({Path(choice).name or choice})" if choice else "cross-encoder"


def load(choice: str, runtime: str = "torch") -> Loaded:
    """Load one choice (a folder, :data:`BUNDLED` or :data:`TWIN`), never raising."""
    try:
        if choice == TWIN:
            from ..baselines.twin import load_twin_cross_encoder

            model = load_twin_cross_encoder()
        else:
            from ..models.cross_encoder import CrossEncoder

            model = CrossEncoder(None if choice == BUNDLED else choice, runtime=runtime)
    except Exception as exc:  # degrade visibly, never crash the app
        return Loaded(None, f"{type(exc).__name__}: {exc}")
    from ..baselines.cross_encoder_ranker import MemoCrossEncoder

    return Loaded(MemoCrossEncoder.wrap(model))


def twin_state() -> bool | None:
    """The twin's badge without loading it: None when there is no checkpoint, else whether its
    ``config.json`` says it was trained."""
    from ..baselines.twin import twin_checkpoint_dir

    cfg = twin_checkpoint_dir() / "config.json"
    try:
        model = json.loads(cfg.read_text(encoding="utf-8")).get("model", {})
        return bool(model.get("trained", False))
    except (OSError, ValueError, AttributeError):
        return None


def badge_text(state: bool | None) -> str:
    """The menu's plain-text badge of a state (the status panel draws it coloured)."""
    return {True: "trained", False: "UNTRAINED", None: "UNAVAILABLE"}[state]


SOURCE_NAMES = {
    "scifact": "SciFact",
    "citint": "Citation-Integrity",
    "evinf": "Evidence Inference",
    "scisumm": "ScisummNet",
    "scisumm-hand": "CL-SciSumm hand-annotated",
    "hotpotqa": "HotpotQA",
    "musique": "MuSiQue",
}
"""Display names of the training sources (``logrerank.training.queries``)."""


def trained_on(choice: str) -> str:
    """``"trained on A, B, ..."`` from a bundled choice's training record (the cross-encoder's
    ``logrerank_delta.json``, the twin's records through :func:`logrerank.log_checkpoint.read_meta`);
    ``""`` for a user folder or when the record is missing or unreadable."""
    from ..checkpoint import CheckpointError

    try:
        if choice == BUNDLED:
            from ..models.cross_encoder import default_checkpoint_dir
            from ..models.delta_checkpoint import DELTA_META

            path = default_checkpoint_dir() / DELTA_META
            meta = json.loads(path.read_text(encoding="utf-8"))
        elif choice == TWIN:
            from ..baselines.twin import twin_checkpoint_dir
            from ..log_checkpoint import read_meta

            meta = read_meta(twin_checkpoint_dir())
        else:
            return ""
        sources = meta["training"]["config"]["sources"]
    except (OSError, ValueError, KeyError, TypeError, CheckpointError):
        return ""
    return "trained on " + ", ".join(SOURCE_NAMES.get(s, str(s)) for s in sources)


def options(default: str, loaded: dict[str, Loaded]) -> list[tuple[str, str]]:
    """``(menu label, value)`` per choice: the bundled model, the twin, and the default
    folder when one was given; a choice not loaded yet shows the badge it will have, and a
    bundled one what it was trained on (:func:`trained_on`)."""
    values = [BUNDLED, TWIN] + ([default] if default not in ("", BUNDLED, TWIN) else [])
    out = []
    for value in values:
        if value in loaded:
            m = loaded[value].model
            state = None if m is None else bool(m.trained)
        elif value == TWIN:
            state = twin_state()
        elif value == BUNDLED:
            from ..models.cross_encoder import default_checkpoint_dir

            state = (default_checkpoint_dir() / "config.json").is_file()
        else:
            state = True if Path(value).is_dir() else None
        badge = badge_text(state)
        data = trained_on(value) if state else ""  # "trained" becomes "trained on A, B, ..."
        out.append((f"{label(value)} · {data or badge}", value))
    return out


def resolve(choice: Any) -> str:
    """A choice value from a widget or caller value: ``""`` / None = the default choice,
    ``"default"`` = ``$LOGRERANK_CROSS_ENCODER`` when set, else :data:`BUNDLED`."""
    if choice is None:
        return ""
    value = str(choice).strip()
    if value == "default":
        return os.environ.get("LOGRERANK_CROSS_ENCODER", "").strip() or BUNDLED
    return value
