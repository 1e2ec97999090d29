"""The checkpoint folder layout shared by the reranker and the role tagger.

A checkpoint is a folder with ``model.safetensors`` (weights) and ``config.json`` (a JSON object
whose ``"format"`` names the model kind, optionally with a ``"format_version"``).
:func:`read_config` checks that layout and returns the parsed ``config.json``; what the model
does with it (which tensors, which config section) stays with the model.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

WEIGHTS_NAME = "model.safetensors"
CONFIG_NAME = "config.json"


class CheckpointError(RuntimeError):
    """A checkpoint folder is missing files, truncated, or does not match the model."""


def read_config(
    path: str | os.PathLike[str],
    format: str,
    version: int | None = None,
    *,
    section: str | None = None,
    label: str = "",
    kind: str | None = None,
    hint: str = "",
    error: type[Exception] = CheckpointError,
) -> dict[str, Any]:
    """Check a checkpoint folder and return its parsed ``config.json``.

    Args:
        path: the checkpoint folder.
        format: the required value of ``config["format"]``.
        version: the required ``config["format_version"]``; None = not checked.
        section: a key that ``config.json`` must hold (the model's own config section).
        label: prefix of the folder in messages, e.g. ``"role-tagger"``.
        kind: what a valid ``config.json`` is called in the wrong-format message; None =
            ``"<format> checkpoint config"``.
        hint: appended in parentheses when the folder does not exist (how to make one).
        error: the exception class raised (a model's own :class:`CheckpointError` subclass).

    Returns:
        The ``config.json`` object.

    Raises:
        CheckpointError: (or ``error``) the folder or one of its two files is missing,
            ``config.json`` is not valid JSON, has another format, lacks ``section`` or has
            another ``format_version``.
    """
    path = Path(path)
    prefix = f"{label} " if label else ""
    if not path.is_dir():
        suffix = f" ({hint})" if hint else ""
        raise error(f"{prefix}checkpoint folder {path} does not exist{suffix}")
    for name in (CONFIG_NAME, WEIGHTS_NAME):
        if not (path / name).is_file():
            raise error(f"{prefix}checkpoint {path} is missing {name}")
    try:
        raw = json.loads((path / CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise error(f"{path / CONFIG_NAME} is not valid JSON: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("format") != format or (section and section not in raw):
        raise error(f"{path / CONFIG_NAME} is not a {kind or format + ' checkpoint config'}")
    if version is not None and raw.get("format_version") != version:
        raise error(f"{path}: format_version {raw.get('format_version')} is not {version}")
    return raw
