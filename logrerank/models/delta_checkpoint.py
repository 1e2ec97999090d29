"""The cross-encoder's delta checkpoint: only the tensors that differ from the packaged base.

The project's cross-encoder is the packaged all-MiniLM-L6-v2 fine-tuned as a
``BertForSequenceClassification`` with one output, of which only the top layers, the pooler and
the classifier train (:mod:`logrerank.training.cross_encoder.ce_train`). Its checkpoint folder therefore
stores only what differs from the base::

    config.json            the sequence-classification config (num_labels = 1)
    delta.safetensors      the trained tensors (top layers, pooler, classifier), fp32
    logrerank_delta.json   format tag, the base model and its weights' sha256, tensor names
    tokenizer files        so the folder's tokenizer loads like any HF folder's

:func:`load_delta_checkpoint` rebuilds the full model: the base weights, then the stored
tensors on top. About 15 MB instead of 90 MB for a full fp32 MiniLM.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import torch

from ..local.backbone import PACKAGED, resolve

DELTA_WEIGHTS = "delta.safetensors"
"""File name of the stored (trained) tensors in a delta checkpoint."""

DELTA_META = "logrerank_delta.json"
"""File name of the delta description (format tag, base model, base hash, tensor names)."""

DELTA_FORMAT = "logrerank-delta"
DELTA_VERSION = 1


class DeltaCheckpointError(RuntimeError):
    """A delta checkpoint cannot be loaded (missing files, wrong base, bad tensors)."""


def _hf_quiet() -> Any:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    return verbosity


def load_base_classifier(base: str, seed: int, config: Any = None) -> tuple[torch.nn.Module, Any]:
    """The base encoder as a 1-label sequence classifier (missing head seeded with ``seed``).

    Returns:
        ``(model, loading_info)``.
    """
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    path = resolve(base)
    kwargs: dict[str, Any] = {"config": config} if config is not None else {"num_labels": 1}
    verbosity = _hf_quiet()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model, info = AutoModelForSequenceClassification.from_pretrained(
                path,
                local_files_only=True,
                use_safetensors=True,
                output_loading_info=True,
                **kwargs,
            )
    finally:
        hf_logging.set_verbosity(verbosity)
    return model.float(), info


def base_fingerprint(base: str) -> str | None:
    """sha256 over the base folder's ``*.safetensors`` files (None when it is not a folder)."""
    path = Path(resolve(base))
    if not path.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(path.glob("*.safetensors")):
        h.update(f.name.encode())
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                h.update(chunk)
    return h.hexdigest()


def save_delta_checkpoint(
    model: torch.nn.Module,
    tokenizer: Any,
    out: str | Path,
    base: str,
    names: list[str],
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write a delta checkpoint: config, the tensors ``names`` (fp32), description, tokenizer.

    Args:
        model: the sequence classifier (its other tensors must equal the base's).
        tokenizer: its tokenizer (saved with the folder).
        out: the folder (created; files of an older delta are replaced, others kept).
        base: the base spec (``"packaged:all-MiniLM-L6-v2"`` or a folder) the delta applies to.
        names: ``state_dict`` keys to store.
        extra: more JSON-able information for ``logrerank_delta.json`` (e.g. training summary).
    """
    from safetensors.torch import save_file

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state = model.state_dict()
    tensors = {n: state[n].detach().float().cpu().contiguous() for n in names}
    tmp = out / (DELTA_WEIGHTS + ".tmp")
    save_file(tensors, str(tmp), metadata={"format": DELTA_FORMAT})
    tmp.chmod(0o644)
    tmp.replace(out / DELTA_WEIGHTS)
    model.config.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    meta = {
        "format": DELTA_FORMAT,
        "version": DELTA_VERSION,
        "base": base,
        "base_sha256": base_fingerprint(base),
        "architecture": type(model).__name__,
        "tensors": sorted(tensors),
        "n_parameters": int(sum(t.numel() for t in tensors.values())),
        **(extra or {}),
    }
    (out / DELTA_META).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return out


def is_delta_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is a folder holding a delta checkpoint."""
    p = Path(path)
    return (p / DELTA_META).is_file() and (p / DELTA_WEIGHTS).is_file()


def load_delta_checkpoint(path: str | Path, check_base: bool = True) -> torch.nn.Module:
    """Rebuild the full sequence classifier of a delta checkpoint (eval mode, fp32, CPU).

    Loads the base named in ``logrerank_delta.json`` with the folder's ``config.json``, then
    overlays ``delta.safetensors``. Every weight the base lacks (the classifier) must be in
    the delta, every stored tensor must exist in the model with the same shape, and, when
    ``check_base``, the base weights must hash to the recorded ``base_sha256``.

    Raises:
        DeltaCheckpointError: missing files, a different base, or tensors that do not fit.
    """
    from safetensors.torch import load_file
    from transformers import AutoConfig

    p = Path(path)
    if not is_delta_checkpoint(p):
        raise DeltaCheckpointError(f"{str(p)!r} has no {DELTA_META} + {DELTA_WEIGHTS}")
    try:
        meta = json.loads((p / DELTA_META).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DeltaCheckpointError(f"unreadable {DELTA_META} in {str(p)!r}: {exc}") from exc
    if meta.get("format") != DELTA_FORMAT or int(meta.get("version", 0)) > DELTA_VERSION:
        raise DeltaCheckpointError(
            f"{DELTA_META} in {str(p)!r} is not a {DELTA_FORMAT} v{DELTA_VERSION} description"
        )
    base = str(meta.get("base") or PACKAGED)
    if check_base and meta.get("base_sha256"):
        try:
            found = base_fingerprint(base)
        except Exception as exc:
            raise DeltaCheckpointError(f"cannot read the base {base!r}: {exc}") from exc
        if found is not None and found != meta["base_sha256"]:
            raise DeltaCheckpointError(
                f"the base {base!r} differs from the one the delta was trained on "
                f"(sha256 {found[:12]} != {meta['base_sha256'][:12]})"
            )
    try:
        config = AutoConfig.from_pretrained(str(p), local_files_only=True)
        model, info = load_base_classifier(base, seed=0, config=config)
        delta = load_file(str(p / DELTA_WEIGHTS))
    except DeltaCheckpointError:
        raise
    except Exception as exc:
        raise DeltaCheckpointError(f"cannot load delta checkpoint {str(p)!r}: {exc}") from exc
    state = model.state_dict()
    unknown = sorted(k for k in delta if k not in state)
    bad = sorted(k for k in delta if k in state and tuple(state[k].shape) != tuple(delta[k].shape))
    missing = [str(k) for k in (info.get("missing_keys") or ())]
    missing += [str(k) for k in (info.get("mismatched_keys") or ())]
    uncovered = sorted(k for k in missing if not k.endswith("position_ids") and k not in delta)
    if unknown or bad or uncovered:
        raise DeltaCheckpointError(
            f"delta {str(p)!r} does not fit its base {base!r}: unknown {unknown[:5]}, "
            f"shape mismatch {bad[:5]}, not covered {uncovered[:5]}"
        )
    with torch.no_grad():
        for k, v in delta.items():
            state[k].copy_(v.to(state[k].dtype))
    return model.eval()
