"""The LoG-Reranker checkpoint: its format, default folder, and how it is read and written.

A LoG checkpoint is the folder layout of :mod:`logrerank.checkpoint` with ``"format":
"logrerank"`` and the model's :class:`~logrerank.config.LoGConfig` under ``"model"``. The
weights hold the heads, the graph model and only those backbone tensors that differ from the
packaged backbone (the rest are loaded from the backbone itself). Loading checks every tensor
against the model before any is used.

``config.json`` holds the model's configuration only; the training records (every top-level
``training*`` key: the run summaries, tuning tables, how each choice was made) sit beside it in
``training.json`` (:func:`read_meta` / :func:`write_meta`). Loading a model never reads them.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import Tensor

from .checkpoint import CONFIG_NAME, WEIGHTS_NAME, CheckpointError, read_config
from .config import ConfigError, LoGConfig
from .resources import checkpoint_dir

FORMAT = "logrerank"
FORMAT_VERSION = 1
ENCODER_PREFIX = "local.encoder."  # state-dict prefix of the backbone tensors
RECORDS_NAME = "training.json"  # the training records, beside config.json


def is_record(key: str) -> bool:
    """Whether a top-level checkpoint key is a training record (``training``, ``training_*``)."""
    return key == "training" or key.startswith("training_")


def read_meta(path: Path) -> dict[str, Any]:
    """``config.json`` of the folder ``path`` with its training records merged in.

    Records come from ``training.json`` where it exists (and from ``config.json`` itself in
    folders written before the split).

    Raises:
        CheckpointError: not a LoG checkpoint folder (:func:`logrerank.checkpoint.read_config`).
        ValueError: ``training.json`` is not valid JSON.
    """
    path = Path(path)
    meta = read_config(path, FORMAT)
    records = path / RECORDS_NAME
    if records.is_file():
        meta.update(json.loads(records.read_text(encoding="utf-8")))
    return meta


def write_meta(path: Path, meta: dict[str, Any]) -> None:
    """Write ``meta`` as ``config.json`` (the model) and ``training.json`` (its records)."""
    path = Path(path)
    config = {k: v for k, v in meta.items() if not is_record(k)}
    records = {k: v for k, v in meta.items() if is_record(k)}
    (path / CONFIG_NAME).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    target = path / RECORDS_NAME
    if records:
        target.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    elif target.exists():
        target.unlink()


def default_checkpoint_dir() -> Path:
    """Where the bundled LoG checkpoint lives (``$LOGRERANK_CHECKPOINTS`` overrides)."""
    return checkpoint_dir("log-reranker")


def has_checkpoint(path: Path) -> bool:
    """True if ``path`` holds a checkpoint config (the bundled default may be absent)."""
    return (path / CONFIG_NAME).exists()


def read_log_config(path: Path, **overrides: Any) -> LoGConfig:
    """The :class:`LoGConfig` of the checkpoint folder ``path``, with top-level overrides.

    Raises:
        CheckpointError: missing folder or files, invalid JSON, not a LoG checkpoint, or a config
            the model refuses.
    """
    raw = read_config(path, FORMAT, section="model")
    try:
        config = LoGConfig.from_dict(raw["model"])
        return dataclasses.replace(config, **overrides)
    except (ConfigError, TypeError) as exc:
        raise CheckpointError(f"{path / CONFIG_NAME}: {exc}") from exc


def read_weights(path: Path) -> dict[str, Tensor]:
    """The stored tensors of the checkpoint folder ``path`` (safetensors: no code runs).

    Raises:
        CheckpointError: the weights file cannot be read (truncated, not safetensors).
    """
    try:
        return load_file(str(path / WEIGHTS_NAME))
    except Exception as exc:
        raise CheckpointError(f"cannot read {path / WEIGHTS_NAME} (truncated?): {exc}") from exc


def check_state(own: dict[str, Tensor], state: dict[str, Tensor], path: Path) -> None:
    """Check stored tensors against the model's state dict before loading them.

    Backbone tensors may be absent (they come from the packaged backbone); every other tensor
    must be present, finite and of the model's shape, and no unknown tensor may be stored.

    Raises:
        CheckpointError: unknown, missing, non-finite or mis-shaped tensors.
    """
    unexpected = sorted(set(state) - set(own))
    if unexpected:
        raise CheckpointError(f"{path}: unknown tensors {unexpected[:5]} (config mismatch?)")
    missing = sorted(k for k in own if k not in state and not k.startswith(ENCODER_PREFIX))
    if missing:
        raise CheckpointError(f"{path}: missing tensors {missing[:5]}")
    for k, v in state.items():
        if v.is_floating_point() and not torch.isfinite(v).all():
            raise CheckpointError(f"{path}: tensor {k} has NaN or infinite values")
        if own[k].shape != v.shape:
            raise CheckpointError(
                f"{path}: tensor {k} has shape {tuple(v.shape)}, model expects {tuple(own[k].shape)}"
            )


def write_checkpoint(
    path: Path,
    state: dict[str, Tensor],
    base: dict[str, Tensor],
    config: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write a LoG checkpoint folder (created).

    Args:
        path: output folder.
        state: the model's state dict.
        base: the packaged backbone's state dict; backbone tensors equal to it are not stored.
        config: ``LoGConfig.to_dict()``.
        extra: extra JSON-serialisable facts (training run, metrics): ``training*`` keys go to
            ``training.json``, any other to ``config.json`` (:func:`write_meta`).

    Returns:
        ``path``.
    """
    path.mkdir(parents=True, exist_ok=True)
    stored = {}
    for k, v in state.items():
        if k.startswith(ENCODER_PREFIX):
            b = base.get(k.removeprefix(ENCODER_PREFIX))
            if b is not None and b.shape == v.shape and torch.equal(b, v.detach().cpu()):
                continue
        stored[k] = v.detach().cpu().contiguous()
    save_file(stored, str(path / WEIGHTS_NAME))
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "model": config,
        "backbone_tensors_stored": sum(k.startswith(ENCODER_PREFIX) for k in stored),
        **(extra or {}),
    }
    write_meta(path, meta)
    return path
