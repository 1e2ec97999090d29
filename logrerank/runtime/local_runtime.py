"""The ONNX runtime of LoG's local stage: which layers it runs and when it is (re)built.

:class:`LocalRuntime` holds the ONNX Runtime sessions of one
:class:`~logrerank.local.scorer.LocalScorer`: in isolated mode the frozen packaged layers (on packed
rows or windows, as ``LocalScorer._frozen_layers`` gets them) and the trainable joint top
layer; without isolated layers the whole joint encoder. The scorer calls it through its
``runtime_backend`` attribute, in eval mode only and only while its weights are those the
sessions were exported from (:meth:`LocalRuntime.serves`), so training never runs stale graphs.

:func:`sync_local_runtime` is what :class:`~logrerank.pipeline.LoGReranker` calls before every
encode: it (re)builds the backend when ``config.runtime``, the weights or the device changed,
and falls back to torch with a visible warning when the runtime cannot run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..local.batches import params_key
from . import RuntimeUnavailable, check_runtime, warn_fallback
from .bert_graph import encoder_graph, frozen_graph, graph_settings, joint_graph
from .onnx_models import ensure_exported, run, session, weights_key


class LocalRuntime:
    """ONNX Runtime sessions for the transformer layers of one local scorer.

    Args:
        scorer: the :class:`~logrerank.local.scorer.LocalScorer` (eval mode, on CPU).
        runtime: ``"onnx"`` or ``"onnx-int8"``.

    Raises:
        RuntimeUnavailable: onnxruntime or onnx is missing.
        UnsupportedModel: the backbone is not a BERT (:func:`~.bert_graph.check_bert`).
    """

    def __init__(self, scorer: Any, runtime: str):
        int8 = check_runtime(runtime) == "onnx-int8"
        self.name = runtime
        self.key = params_key(scorer)
        enc, k = scorer.encoder, scorer.config.isolated_layers
        t0 = time.perf_counter()
        settings = graph_settings(enc.config)  # UnsupportedModel for a non-BERT backbone
        if k:
            key = weights_key("frozen", [enc], f"{settings},k={k}")
            frozen = ensure_exported("frozen", key, lambda: frozen_graph(enc, k), int8)
            layers = scorer.joint_layers
            joint = ensure_exported(
                "joint",
                weights_key("joint", [layers], settings),
                lambda: joint_graph(layers, enc.config),
                int8,
            )
            self.export_s = frozen.export_s + joint.export_s
            self._frozen, self._joint, self._encoder = (
                session(frozen.path),
                session(joint.path),
                None,
            )
        else:
            full = ensure_exported(
                "encoder", weights_key("encoder", [enc], settings), lambda: encoder_graph(enc), int8
            )
            self.export_s = full.export_s
            self._frozen = self._joint = None
            self._encoder = session(full.path)
        self.load_s = time.perf_counter() - t0  # export (first use) + session creation

    def __deepcopy__(self, memo: dict) -> None:
        """Copies of the scorer (e.g. ``bf16_linear_copy``) do not inherit the sessions."""
        return None

    def serves(self, scorer: Any) -> bool:
        """Whether ``scorer``'s parameters are still those the sessions were exported from."""
        return params_key(scorer) == self.key

    def frozen(self, ids: Tensor, pos: Tensor, seg: Tensor) -> tuple[Tensor, Tensor]:
        """``LocalScorer._frozen_layers``: ``(x, P)`` float32 ``[R, N, d]``."""
        x, P = run(self._frozen, {"ids": ids, "pos": pos, "seg": seg})
        return x, P

    def joint(self, h: Tensor, keep: Tensor) -> Tensor:
        """The joint top layer(s) over ``h`` ``[B, L, d]``; ``keep`` ``[B, L]`` marks real tokens."""
        return run(self._joint, {"h": h, "keep": keep})[0]

    def encoder(self, ids: Tensor, attention_mask: Tensor, token_type_ids: Tensor | None) -> Tensor:
        """The whole encoder's ``last_hidden_state`` ``[B, L, d]`` (no isolated layers)."""
        types = torch.zeros_like(ids) if token_type_ids is None else token_type_ids
        pos = torch.arange(ids.size(1)).expand(ids.size(0), -1)
        feeds = {
            "input_ids": ids,
            "attention_mask": attention_mask,
            "token_type_ids": types,
            "position_ids": pos,
        }
        return run(self._encoder, feeds)[0]


@dataclass
class RuntimeState:
    """The runtime LoG's local stage runs on, as last synchronised."""

    requested: str  # config.runtime
    key: tuple  # (requested, device, parameter identities) it was built for
    backend: LocalRuntime | None  # None = torch
    warning: str | None = None  # why the requested runtime fell back to torch

    @property
    def effective(self) -> str:
        """The runtime actually used: ``requested``, or ``"torch"`` after a fallback."""
        return self.backend.name if self.backend is not None else "torch"


def sync_local_runtime(model: Any) -> RuntimeState:
    """Make ``model.local`` run on ``model.config.runtime`` (build, rebuild or detach).

    Cheap when nothing changed (a parameter-identity check). A runtime that cannot run here
    (package missing, not a CPU, not a BERT backbone, export error) leaves the scorer on torch,
    emits a ``RuntimeWarning`` once and keeps the message for every ranking's warnings.

    Args:
        model: a :class:`~logrerank.pipeline.LoGReranker`.
    """
    requested = check_runtime(model.config.runtime)
    scorer = model.local
    key = (requested, str(model.device_), params_key(scorer))
    state = model.caches.runtime
    if state is None or state.key != key:
        backend, warning = None, None
        if requested != "torch":
            try:
                if model.device_.type != "cpu":
                    raise RuntimeUnavailable(
                        f"it runs on CPU only; the model is on {model.device_}"
                    )
                backend = LocalRuntime(scorer, requested)
            except Exception as exc:  # missing package, unsupported backbone, export error
                warning = warn_fallback(requested, _reason(exc))
        state = RuntimeState(requested, key, backend, warning)
        model.caches.runtime = state  # logrerank.local.batches.LocalCaches: not saved
    scorer.runtime_backend = state.backend
    return state


def _reason(exc: Exception) -> str:
    return str(exc) if isinstance(exc, (RuntimeUnavailable, ValueError)) else repr(exc)
