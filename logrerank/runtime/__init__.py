"""Optional CPU inference runtime for the transformer layers: torch (default) or ONNX Runtime.

``runtime`` is one switch, the same for LoG and the cross-encoder:

* ``"torch"``: the Hugging Face modules under the model's autocast precision (the default);
* ``"onnx"``: ONNX Runtime's CPU execution provider, float32, graph optimisations on;
* ``"onnx-int8"``: the same graphs with int8 weights (dynamic quantisation of every ``MatMul``
  with a constant weight, per output channel, by ``onnxruntime.quantization``; activations are
  quantised on the fly, attention, LayerNorm and embeddings stay float32).

For LoG the runtime covers the frozen packaged layers of isolated mode (the five lower layers
and the frozen top layer of the prior branch) and the trainable joint top layer, i.e. every
transformer layer of the local stage (the LoG-Reranker paper's eq. 1 encoder; docs/method.md);
the heads, the graph and the GAT stay torch. For the cross-encoder it covers the whole sequence
classifier. The graphs are written from the loaded weights on first use into a cache folder
(:func:`logrerank.resources.model_cache_dir`), keyed by a hash of those weights
(:mod:`logrerank.runtime.onnx_models`); nothing is downloaded.

ONNX Runtime is an optional dependency (``pip install "logrerank[onnx]"``) imported lazily.
When it is missing, the device is not a CPU, or the model is not a BERT the graph builder
writes, the model runs on torch and says so: a ``RuntimeWarning`` and a line in every ranking's
warnings (:func:`fallback_message`). Speed and quality figures: bench/README.md, "CPU runtime".
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

RUNTIMES: tuple[str, ...] = ("torch", "onnx", "onnx-int8")
"""The accepted ``runtime`` values (CLI ``--runtime``)."""

INSTALL_HINT = 'pip install "logrerank[onnx]"'


class RuntimeUnavailable(RuntimeError):
    """The requested runtime cannot run here (package missing, not a CPU, unsupported model)."""


def check_runtime(name: str) -> str:
    """Return ``name`` if it is one of :data:`RUNTIMES`.

    Raises:
        ValueError: any other value (the message lists the accepted ones).
    """
    if name not in RUNTIMES:
        raise ValueError(f"runtime must be one of {', '.join(RUNTIMES)}; got {name!r}")
    return name


def import_onnxruntime() -> Any:
    """Import ``onnxruntime`` (and check ``onnx``, which writes the graphs).

    Raises:
        RuntimeUnavailable: either package is missing (the message says how to install them).
    """
    try:
        importlib.import_module("onnx")
        return importlib.import_module("onnxruntime")
    except ImportError as exc:
        raise RuntimeUnavailable(f"{exc.name or 'onnxruntime'} is not installed") from exc


def fallback_message(requested: str, reason: str) -> str:
    """The warning shown when ``requested`` cannot run and torch is used instead."""
    hint = f"; {INSTALL_HINT}" if "not installed" in reason else ""
    return f"runtime {requested!r} unavailable ({reason}); ran on torch instead{hint}"


def warn_fallback(requested: str, reason: str) -> str:
    """Emit :func:`fallback_message` as a ``RuntimeWarning`` and return it."""
    msg = fallback_message(requested, reason)
    warnings.warn(msg, RuntimeWarning, stacklevel=3)
    return msg


__all__ = [
    "INSTALL_HINT",
    "RUNTIMES",
    "RuntimeUnavailable",
    "check_runtime",
    "fallback_message",
    "import_onnxruntime",
    "warn_fallback",
]
