"""The arguments of the app's ``/rerank`` API: their names, defaults and checks (no Gradio).

Every argument is checked before anything is ranked (:func:`check_args`), and a bad one is
answered by :class:`ApiArgError` whose message names it, e.g. ``tau_sim must be a number from
-1 to 1, got 5``: no value is clamped, no unknown name is dropped, no type is coerced. The same
checks serve ``gradio_client`` and plain HTTP (:mod:`logrerank.app.api_http` completes and
checks the request body before Gradio reads it). ``None`` (JSON ``null``) means "the default"
for every optional argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import ce_choice
from .state import ABLATIONS

REQUIRED = ("question", "passages")
"""Arguments without a default."""

PARAMS = (
    "question",
    "passages",
    "upload",
    "top_k",
    "tau_sim",
    "delta",
    "k",
    "blend",
    "ablations",
    "cross_encoder",
)
"""The endpoint's arguments in positional order (the order of a plain-HTTP ``data`` list)."""

RANGES: dict[str, tuple[float, float, bool]] = {
    "top_k": (1, 100, True),
    "tau_sim": (-1.0, 1.0, False),
    "delta": (0.0, 1.0, False),
    "k": (0, 64, True),
    "blend": (0.0, 1.0, False),
}
"""Numeric arguments: (lowest, highest, whole number)."""

PART_KEYS: dict[str, str] = {switch: label for label, switch in ABLATIONS.items()}
"""Short names of the parts (``use_global``, ``cross_passage``, ``typed``, ``links``,
``lexical``) -> their labels; either spelling may be given in ``ablations``."""

CE_NAMES = ("", "default", ce_choice.BUNDLED, ce_choice.TWIN)
"""Cross-encoder choices besides a folder."""


class ApiArgError(ValueError):
    """A bad ``/rerank`` argument; the message names it and says what is allowed."""


@dataclass(frozen=True)
class Checked:
    """The checked arguments, defaults filled in (``parts``: the labels of the parts on)."""

    question: str
    passages: str
    top_k: int
    tau_sim: float
    delta: float
    k: int
    blend: float
    parts: tuple[str, ...]
    cross_encoder: str


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ApiArgError(f"{name} must be a string, got {_type(value)} ({value!r:.60})")
    if not value.strip():
        raise ApiArgError(f"{name} is empty")
    return value


def _number(name: str, value: Any) -> float:
    lo, hi, whole = RANGES[name]
    what = f"a whole number from {lo:g} to {hi:g}" if whole else f"a number from {lo:g} to {hi:g}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ApiArgError(f"{name} must be {what}, got {_type(value)} ({value!r:.60})")
    if not math.isfinite(value) or not lo <= value <= hi or (whole and value != int(value)):
        raise ApiArgError(f"{name} must be {what}, got {value!r}")
    return int(value) if whole else float(value)


def check_parts(value: Any) -> tuple[str, ...]:
    """The labels of the parts kept on: ``None`` = all; else a list of labels or short names
    (an empty list = every part off, i.e. local scores only without the graph's inputs).

    Raises:
        ApiArgError: not a list of strings, or an unknown part (the message lists them all).
    """
    if value is None:
        return tuple(ABLATIONS)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ApiArgError(
            f"ablations must be a list of part names (the parts kept on), got {_type(value)} "
            f"({value!r:.60})"
        )
    known = ", ".join(f"{key!r} ({label})" for key, label in PART_KEYS.items())
    out = []
    for name in value:
        label = PART_KEYS.get(name.strip(), name.strip())
        if label not in ABLATIONS:
            raise ApiArgError(f"ablations: unknown part {name!r}; the parts are {known}")
        out.append(label)
    return tuple(label for label in ABLATIONS if label in out)


def check_cross_encoder(value: Any) -> str:
    """A cross-encoder choice: ``""`` / ``"default"``, ``"bundled"``, ``"twin"`` or an existing
    folder (whether it loads is checked when it is used, :func:`logrerank.app.api.make_rerank`).

    Raises:
        ApiArgError: not a string, or neither a choice nor an existing folder.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ApiArgError(f"cross_encoder must be a string, got {_type(value)} ({value!r:.60})")
    name = value.strip()
    if name in CE_NAMES or Path(name).is_dir():
        return name
    raise ApiArgError(
        f"cross_encoder {value!r:.200} is not 'bundled', 'twin', 'default' or an existing folder"
    )


def check_args(defaults: dict[str, Any], **args: Any) -> Checked:
    """Check every ``/rerank`` argument; ``None`` (or an omitted one) takes ``defaults[name]``.

    Args:
        defaults: the page's defaults of the numeric arguments (``top_k`` ... ``blend``).
        **args: the call's arguments by name (:data:`PARAMS`).

    Raises:
        ApiArgError: the first bad argument, named in the message.
    """
    unknown = sorted(set(args) - set(PARAMS))
    if unknown:
        raise ApiArgError(f"unknown argument {unknown[0]!r}; the arguments are {', '.join(PARAMS)}")
    upload = args.get("upload")
    if upload not in (None, ""):
        raise ApiArgError(
            "upload must be empty: the API takes the passages as text; upload files through the page"
        )
    question = _text("question", args.get("question"))
    passages = _text("passages", args.get("passages"))
    nums = {}
    for name in RANGES:
        value = args.get(name)
        nums[name] = _number(name, defaults[name] if value is None else value)
    return Checked(
        question=question,
        passages=passages,
        parts=check_parts(args.get("ablations")),
        cross_encoder=check_cross_encoder(args.get("cross_encoder")),
        **nums,
    )


__all__ = [
    "CE_NAMES",
    "PARAMS",
    "PART_KEYS",
    "RANGES",
    "REQUIRED",
    "ApiArgError",
    "Checked",
    "check_args",
    "check_cross_encoder",
    "check_parts",
]
