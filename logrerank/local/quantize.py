"""int8 dynamic quantisation of the transformer layers, for CPU inference.

``torch.ao.quantization.quantize_dynamic`` replaces every ``nn.Linear`` of a module with a
dynamically quantised one: int8 weights (per tensor), activations quantised on the fly per
batch, float32 in and out. It runs on CPU only (fbgemm / x86 / onednn kernels) and without
bf16 autocast, so the helpers here refuse modules that live on another device, and the callers
switch autocast off (:func:`quantize_log_reranker`, :func:`quantize_cross_encoder`).

The quantised copy is for inference: it cannot be trained nor saved with ``save_pretrained``.
Every use must report its quality change against the fp32 run (``logrerank eval``); the
project's rule is at most 0.2 nDCG@10 below fp32 (figures in bench/README.md).
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch import nn


class QuantizationError(RuntimeError):
    """The module cannot be quantised here (not on CPU, no quantised engine)."""


def _check_cpu(module: nn.Module) -> None:
    devices = {p.device.type for p in module.parameters()}
    devices |= {b.device.type for b in module.buffers()}
    if devices - {"cpu"}:
        raise QuantizationError(
            f"int8 dynamic quantisation runs on CPU only; the module is on {sorted(devices)} "
            "(use --device cpu, or --quantize none on a GPU)"
        )
    if not torch.backends.quantized.supported_engines or torch.backends.quantized.engine == "none":
        raise QuantizationError("this torch build has no quantised CPU engine")


def count_linear(module: nn.Module) -> tuple[int, int]:
    """``(float nn.Linear layers, dynamically quantised Linear layers)`` inside ``module``."""
    from torch.ao.nn.quantized import dynamic as nnqd

    n_float = sum(type(m) is nn.Linear for m in module.modules())
    n_quant = sum(isinstance(m, nnqd.Linear) for m in module.modules())
    return n_float, n_quant


def quantize_dynamic_int8(module: nn.Module) -> nn.Module:
    """Replace every ``nn.Linear`` in ``module`` by an int8 dynamically quantised Linear.

    In place where possible (the children of ``module`` are swapped, no copy of the weights);
    always use the returned module (a bare ``nn.Linear`` comes back as a new object).

    Args:
        module: a float32 module on CPU, in eval mode for inference.

    Returns:
        The quantised module (eval mode).

    Raises:
        QuantizationError: the module is not on CPU, or torch has no quantised engine.
    """
    _check_cpu(module)
    if type(module) is nn.Linear:  # quantize_dynamic swaps children only, never the root
        return quantize_dynamic_int8(nn.Sequential(module))[0]
    was_training = module.training
    module.eval()
    with warnings.catch_warnings():
        # torch.ao.quantization is deprecated in favour of torchao, which is not a dependency;
        # the eager dynamic API still works in the pinned torch.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        from torch.ao.quantization import quantize_dynamic

        out = quantize_dynamic(module, {nn.Linear}, dtype=torch.qint8, inplace=True)
    if was_training:  # pragma: no cover - callers quantise eval-mode models
        out.train()
    return out


def quantize_log_reranker(model: Any) -> dict[str, int]:
    """Quantise a :class:`~logrerank.pipeline.LoGReranker`'s transformer in place.

    The local encoder and (isolated mode) the joint top layers are quantised; the small heads
    and the graph model stay float32 (they are a few percent of the time). bf16 autocast is
    switched off (``model.autocast_dtype = None``): the quantised kernels take float32.

    Returns:
        ``{"quantized_linear": n, "float_linear_left": m}`` over the whole model.
    """
    local = model.local
    local.encoder = quantize_dynamic_int8(local.encoder)
    if getattr(local, "joint_layers", None) is not None:
        local.joint_layers = quantize_dynamic_int8(local.joint_layers)
    model.autocast_dtype = None
    n_float, n_quant = count_linear(model)
    return {"quantized_linear": n_quant, "float_linear_left": n_float}


def quantize_cross_encoder(ce: Any) -> dict[str, int]:
    """Quantise a :class:`~logrerank.models.cross_encoder.CrossEncoder` in place.

    Every Linear of the sequence classifier (encoder and head) is quantised and autocast is
    switched off (``ce.autocast = None``).

    Returns:
        ``{"quantized_linear": n, "float_linear_left": m}``.
    """
    ce.model = quantize_dynamic_int8(ce.model)
    ce.autocast = None
    ce.runtime_backend = None  # an ONNX runtime would still run the unquantised weights
    n_float, n_quant = count_linear(ce.model)
    return {"quantized_linear": n_quant, "float_linear_left": n_float}
