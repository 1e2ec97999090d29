"""The role tagger's checkpoint format: fine-tuned top layers + head, and ``config.json``.

A role-tagger checkpoint folder holds ``model.safetensors`` with only the trained tensors (the
top encoder layers and the role MLP, fp32) and ``config.json`` with the format tag
(``"logrerank-role-tagger"``, version 1), the role names, the tagger config (``"tagger"``), a
sha256 fingerprint of the frozen base encoder weights and the training summary. The rest of the
encoder is loaded from the packaged backbone and checked against the fingerprint.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from safetensors.torch import load_file, save_file
from torch import Tensor

from ..checkpoint import CONFIG_NAME, WEIGHTS_NAME, CheckpointError, read_config
from ..config import ROLE_NAMES, ConfigError
from ..resources import checkpoint_dir
from .role_tagger_config import RoleTaggerConfig

FORMAT = "logrerank-role-tagger"
FORMAT_VERSION = 1


class RoleCheckpointError(CheckpointError):
    """A role-tagger checkpoint folder is missing, incomplete or does not match the model."""


def default_checkpoint_dir() -> Path:
    """``<checkpoints root>/role-tagger``; the root is ``$LOGRERANK_CHECKPOINTS`` when set,
    else the package's bundled copy."""
    return checkpoint_dir("role-tagger")


def write_checkpoint(
    path: str | Path,
    state: dict[str, Tensor],
    config: RoleTaggerConfig,
    base_fingerprint: str,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write ``model.safetensors`` (``state``) and ``config.json`` into ``path`` (created).

    Args:
        path: output folder.
        state: the stored tensors (fp32, CPU, contiguous).
        config: the tagger config (stored under ``"tagger"``).
        base_fingerprint: sha256 of the frozen encoder weights the tensors sit on.
        extra: JSON-serialisable facts stored under ``"training"`` (metrics, run info).
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tmp = path / (WEIGHTS_NAME + ".tmp")
    save_file(state, str(tmp), metadata={"format": FORMAT})
    tmp.chmod(0o644)  # safetensors creates files 0600; a shipped checkpoint must be readable
    tmp.replace(path / WEIGHTS_NAME)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "roles": list(ROLE_NAMES),
        "tagger": config.to_dict(),
        "base_fingerprint": base_fingerprint,
        "stored_tensors": len(state),
        "training": extra or {},
    }
    (path / CONFIG_NAME).write_text(
        json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8"
    )
    return path


def read_checkpoint(
    path: Path, overrides: dict[str, Any]
) -> tuple[dict[str, Any], RoleTaggerConfig, dict[str, Tensor]]:
    """Check a checkpoint folder and read it.

    Args:
        path: the folder.
        overrides: config fields replacing the stored ones (``device="cuda"``, ...).

    Returns:
        ``(config.json object, tagger config with the overrides, stored tensors)``.

    Raises:
        RoleCheckpointError: missing folder or files, invalid JSON, wrong format or version,
            other role names, a bad config, or unreadable weights.
    """
    raw = read_config(
        path,
        FORMAT,
        FORMAT_VERSION,
        section="tagger",
        label="role-tagger",
        kind="role-tagger checkpoint",
        hint="train one with: logrerank train roles --config configs/roles.json",
        error=RoleCheckpointError,
    )
    if list(raw.get("roles") or []) != list(ROLE_NAMES):
        raise RoleCheckpointError(f"{path}: roles {raw.get('roles')} != {list(ROLE_NAMES)}")
    try:
        config = RoleTaggerConfig.from_dict({**raw["tagger"], **overrides})
    except ConfigError as exc:
        raise RoleCheckpointError(f"{path / CONFIG_NAME}: {exc}") from exc
    try:
        state = load_file(str(path / WEIGHTS_NAME))
    except Exception as exc:
        raise RoleCheckpointError(f"cannot read {path / WEIGHTS_NAME} (truncated?): {exc}") from exc
    return raw, config, state


def check_tensors(own: dict[str, Tensor], state: dict[str, Tensor], path: Path) -> None:
    """The stored tensors must be exactly the model's stored set, with the same shapes.

    Raises:
        RoleCheckpointError: missing, unexpected or mis-shaped tensors.
    """
    missing = sorted(set(own) - set(state))
    unexpected = sorted(set(state) - set(own))
    if missing or unexpected:
        raise RoleCheckpointError(
            f"{path}: tensors do not match the model (config mismatch?): "
            f"missing {missing[:5]}, unexpected {unexpected[:5]}"
        )
    for k, v in state.items():
        if tuple(own[k].shape) != tuple(v.shape):
            raise RoleCheckpointError(
                f"{path}: tensor {k} has shape {tuple(v.shape)}, "
                f"the model expects {tuple(own[k].shape)}"
            )


def check_fingerprint(
    raw: dict[str, Any], fingerprint: Callable[[], str], path: Path, backbone: str
) -> None:
    """The frozen base must be the one the tagger was trained on (when recorded).

    Args:
        raw: the ``config.json`` object.
        fingerprint: computes the loaded base's fingerprint (only called when one is recorded).
        path: the folder (messages).
        backbone: the base encoder's name (messages).

    Raises:
        RoleCheckpointError: the recorded ``base_fingerprint`` differs.
    """
    fp = raw.get("base_fingerprint")
    if fp is not None and fp != fingerprint():
        raise RoleCheckpointError(
            f"{path}: the base encoder {backbone} differs from the one "
            "this tagger was trained on (frozen-weight fingerprint mismatch)"
        )
