"""The ONNX runtime of the cross-encoder (:class:`~logrerank.models.cross_encoder.CrossEncoder`).

The whole ``BertForSequenceClassification`` runs as one graph
(:func:`~logrerank.runtime.bert_graph.classifier_graph`), exported on first use into the model
cache keyed by its weights; ``CrossEncoder.predict`` batches and pads exactly as on torch and
only swaps the forward pass (:meth:`ClassifierRuntime.logits`).
"""

from __future__ import annotations

import time

import torch
from torch import Tensor

from . import RuntimeUnavailable, check_runtime, warn_fallback
from .bert_graph import classifier_graph, graph_settings
from .onnx_models import ensure_exported, run, session, weights_key


class ClassifierRuntime:
    """An ONNX Runtime session of one sequence classifier.

    Args:
        model: the loaded ``BertForSequenceClassification`` (eval mode, CPU).
        runtime: ``"onnx"`` or ``"onnx-int8"``.

    Raises:
        RuntimeUnavailable: onnxruntime or onnx is missing.
        UnsupportedModel: not a BERT sequence classifier.
    """

    def __init__(self, model: torch.nn.Module, runtime: str):
        self.name = check_runtime(runtime)
        t0 = time.perf_counter()
        settings = graph_settings(model.config)  # UnsupportedModel for a non-BERT classifier
        key = weights_key("cross-encoder", [model], f"{settings},labels={model.config.num_labels}")
        exported = ensure_exported(
            "cross-encoder", key, lambda: classifier_graph(model), runtime == "onnx-int8"
        )
        self.export_s = exported.export_s
        self._session = session(exported.path)
        self.load_s = time.perf_counter() - t0  # export (first use) + session creation

    def __deepcopy__(self, memo: dict) -> ClassifierRuntime:
        return self  # sessions are read-only and thread-safe: copies share them

    def logits(self, batch: dict[str, Tensor]) -> Tensor:
        """``[B, num_labels]`` float32 logits of a padded batch (``input_ids``,
        ``attention_mask`` and, when the tokenizer gives them, ``token_type_ids``)."""
        ids = batch["input_ids"]
        feeds = {
            "input_ids": ids,
            "attention_mask": batch.get("attention_mask", torch.ones_like(ids)),
            "token_type_ids": batch.get("token_type_ids", torch.zeros_like(ids)),
            "position_ids": torch.arange(ids.size(1)).expand(ids.size(0), -1),
        }
        return run(self._session, feeds)[0]


def classifier_runtime(
    model: torch.nn.Module, runtime: str, device: torch.device
) -> tuple[ClassifierRuntime | None, str | None]:
    """``(backend, warning)`` for ``runtime``: no backend for ``"torch"``; on any failure
    (package missing, not a CPU, not a BERT classifier) no backend and the fallback warning
    (also emitted as a ``RuntimeWarning``)."""
    if check_runtime(runtime) == "torch":
        return None, None
    try:
        if device.type != "cpu":
            raise RuntimeUnavailable(f"it runs on CPU only; the model is on {device}")
        return ClassifierRuntime(model, runtime), None
    except Exception as exc:  # missing package, unsupported model, export error
        reason = str(exc) if isinstance(exc, (RuntimeUnavailable, ValueError)) else repr(exc)
        return None, warn_fallback(runtime, reason)
