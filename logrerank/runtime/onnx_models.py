"""Exported ONNX models on disk and their ONNX Runtime sessions.

A graph (:mod:`logrerank.runtime.bert_graph`) is written on first use into
``model_cache_dir("onnx") / "<kind>-<key>"`` (:func:`logrerank.resources.model_cache_dir`),
where ``<key>`` hashes the exporter version, the graph's settings and every weight it holds,
so a changed checkpoint gets its own folder and an unchanged one is never exported twice.
Files are written under a temporary name and renamed, so concurrent processes never read half a
file. The int8 model is quantised from the float32 one (``model.onnx`` ->
``model.int8.onnx``). These are build artefacts: never committed, safe to delete.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ..resources import model_cache_dir
from . import import_onnxruntime

EXPORT_VERSION = 3
"""Bumped whenever the graphs change, so older exports are not reused."""


def weights_key(kind: str, modules: list[nn.Module], settings: str = "") -> str:
    """Hash of the exporter version, ``settings`` and every tensor of ``modules`` (20 hex)."""
    h = hashlib.blake2b(digest_size=10)
    h.update(f"{kind}|v{EXPORT_VERSION}|{settings}".encode())
    for i, module in enumerate(modules):
        for name, t in module.state_dict().items():
            t = t.detach().cpu().contiguous()
            h.update(f"{i}.{name}|{t.dtype}|{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _atomic_write(dest: Path, write: Callable[[Path], None]) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def quantize_int8(src: Path, dest: Path) -> None:
    """Dynamic int8 quantisation of every constant-weight ``MatMul`` of ``src`` (per channel)."""
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)  # the quantiser's advice to pre-process goes to the root log
    try:
        _quantize(src, dest, onnx, QuantType, quantize_dynamic)
    finally:
        logging.disable(previous)


def _quantize(src: Path, dest: Path, onnx: Any, QuantType: Any, quantize_dynamic: Any) -> None:
    quantize_dynamic(
        str(src),
        str(dest),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=["MatMul"],
        # shape inference stops at the contrib attention op; every tensor here is float32
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT, "MatMulConstBOnly": True},
    )


@dataclass
class Exported:
    """An exported model file and what it cost."""

    path: Path
    export_s: float  # seconds spent writing / quantising now (0.0 when it was in the cache)


def ensure_exported(kind: str, key: str, build: Callable[[], Any], int8: bool) -> Exported:
    """The cached model ``kind-key`` (written by ``build()`` first when missing).

    Args:
        kind: ``"frozen"``, ``"joint"``, ``"encoder"``, ``"cross-encoder"`` (folder prefix).
        key: :func:`weights_key` of the weights ``build`` writes.
        build: returns the float32 ``onnx.ModelProto``.
        int8: return the int8-quantised model (made from the float32 one).

    Raises:
        RuntimeUnavailable: onnxruntime or onnx is missing.
    """
    import_onnxruntime()  # RuntimeUnavailable (with the install hint) before any work
    import onnx

    folder = model_cache_dir("onnx") / f"{kind}-{key}"
    fp32 = folder / "model.onnx"
    t0, wrote = time.perf_counter(), False
    if not fp32.is_file():
        _atomic_write(fp32, lambda tmp: onnx.save(build(), str(tmp)))
        wrote = True
    path = fp32
    if int8:
        import onnxruntime

        path = folder / f"model.int8-ort{onnxruntime.__version__}.onnx"
        if not path.is_file():
            _atomic_write(path, lambda tmp: quantize_int8(fp32, tmp))
            wrote = True
    return Exported(path, time.perf_counter() - t0 if wrote else 0.0)


def session(path: Path, threads: int | None = None) -> Any:
    """An ONNX Runtime CPU session on ``path``: all graph optimisations, ``threads`` intra-op
    threads (default: torch's current thread count, so ``--threads`` applies to both)."""
    ort = import_onnxruntime()
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = int(threads or torch.get_num_threads())
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3  # errors only (shape-merge notes of the contrib ops are noise)
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def run(sess: Any, feeds: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """Run ``sess`` on CPU tensors (int64 / float32 as the graph declares); torch outputs."""
    arrays = {}
    for name, t in feeds.items():
        t = t.detach().cpu()
        t = t.to(torch.int64) if not t.is_floating_point() else t.to(torch.float32)
        arrays[name] = np.ascontiguousarray(t.numpy())
    return [torch.from_numpy(o) for o in sess.run(None, arrays)]
