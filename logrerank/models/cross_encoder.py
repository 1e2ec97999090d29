"""The cross-encoder model: ``(query, text) -> relevance logit``, loaded offline.

:class:`CrossEncoder` works in the style of the sentence-transformers ``CrossEncoder``: any
Hugging Face sequence-classification checkpoint folder (``config.json`` with a
``...ForSequenceClassification`` architecture) with one output label (the relevance logit) or
two (not relevant / relevant: the score is the positive class's log-odds), a
sentence-transformers cross-encoder folder (the same HF model at its root, e.g. a local copy of
ms-marco-MiniLM-L-6-v2; a ``max_length`` / ``max_seq_length`` in ``sentence_bert_config.json``
or ``config_sentence_transformers.json`` caps the pair length), a bare encoder folder (fresh
head), or the project's delta checkpoint
(:mod:`logrerank.models.delta_checkpoint`), loaded offline from safetensors only. ``None``
loads the project's trained cross-encoder from ``logrerank/checkpoints/cross-encoder/`` when it
exists, else the packaged all-MiniLM-L6-v2 with a fresh, seeded regression head
(``trained = False``: its scores are not meaningful yet). :func:`pair_text` is what it reads for a passage.

The rankers built on it (the cross-encoder alone, the cross-encoder stage) are in
:mod:`logrerank.baselines.cross_encoder_ranker` and :mod:`logrerank.baselines.cross_encoder_stage`.
Nothing is downloaded and no pickle is ever loaded.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..local.backbone import (
    PACKAGED,
    autocast,
    autocast_dtype,
    load_tokenizer,
    packaged_path,
    pick_device,
)
from ..local.memory import TRIM_BUDGET_MB, HeapBudget, trim_heap
from ..local.tokenize import pad_encoded, pad_length
from ..resources import checkpoint_dir
from ..runtime.ce_runtime import classifier_runtime
from ..types import Passage
from .bi_encoder import PAD_MULTIPLE
from .ce_prior import BiEncoderPrior, calibration_from_meta, lexical_from_meta, prior_from_meta
from .cross_encoder_folder import cap_length as _cap_length
from .cross_encoder_folder import read_json as _read_json
from .delta_checkpoint import DELTA_META, load_delta_checkpoint

HEAD_SEED = 13
"""Seed of the fresh regression head when a checkpoint has none (e.g. the packaged backbone)."""

DEFAULT_MAX_CHARS = 1000
"""Passage characters (after the title) shown to the cross-encoder (the cross-encoder stage)."""

POSITIVE_LABELS = ("relevant", "positive", "yes", "true", "entailment", "1")
"""Label names (lower case) taken as the relevant class of a 2-label classifier; when no label
has one of these names the relevant class is label 1."""


class CrossEncoderError(RuntimeError):
    """The cross-encoder cannot be loaded offline (missing folder, no safetensors, bad files)."""


def default_checkpoint_dir() -> Path:
    """Where the project's trained cross-encoder lives.

    ``$LOGRERANK_CHECKPOINTS/cross-encoder`` when the variable is set, else
    the copy bundled in the package (:func:`logrerank.resources.checkpoint_dir`). It is used by
    ``CrossEncoder(None)`` only when it holds a ``config.json``.
    """
    return checkpoint_dir("cross-encoder")


def _head_missing(loading_info: dict[str, Any] | None) -> bool:
    """Whether some weights (in practice the classification head) were freshly initialised.

    Any weight missing from the checkpoint or re-initialised for a shape mismatch counts
    (position-id buffers aside): the logits then depend on random weights.
    """
    if not loading_info:
        return False
    keys = [str(k) for k in loading_info.get("missing_keys") or ()]
    keys += [str(k) for k in loading_info.get("mismatched_keys") or ()]
    return any(not k.endswith("position_ids") for k in keys)


def sigmoid(x: float) -> float:
    """Numerically stable logistic function (``nan`` stays ``nan``)."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def pair_text(p: Passage, max_chars: int | None = DEFAULT_MAX_CHARS) -> str:
    """What the cross-encoder reads for a passage: ``title + ". " + text[:max_chars]``.

    The title (when present) is always kept whole; only the body is cut (the cross-encoder stage
    reads the title plus the first 1,000 abstract characters). ``max_chars`` None or <= 0 keeps
    the whole body.
    """
    body = p.text[:max_chars] if max_chars and max_chars > 0 else p.text
    return f"{p.title}. {body}" if p.title else body


class CrossEncoder:
    """A ``(query, text) -> relevance logit`` model (sentence-transformers CrossEncoder style).

    Attributes:
        path: the folder (or cached hub id) the weights came from.
        source: human-readable provenance, e.g. ``"checkpoint /x/cross-encoder"`` or
            ``"UNTRAINED head on packaged all-MiniLM-L6-v2"``.
        trained: False when some weights (in practice the regression head) were freshly
            initialised, seeded with :data:`HEAD_SEED`, because the checkpoint lacked them; its
            logits are then not meaningful relevance scores. True means only "every weight
            was read from the checkpoint": a model saved with :meth:`save_pretrained` right
            after loading an untrained head reloads as ``trained``.
        max_length: token budget per pair (capped by the tokenizer, the position table and a
            sentence-transformers ``max_length`` / ``max_seq_length``).
        positive: None for a 1-label model (the logit is the score); for a 2-label classifier
            the index of the relevant class (the score is its log-odds,
            ``logit[positive] - logit[other]``, so :func:`sigmoid` of it is the softmax
            probability of "relevant").
        device: torch device the model runs on.
        autocast: the autocast dtype (bf16) or None for fp32.
        batch_size: pairs per forward pass.
        model: the ``AutoModelForSequenceClassification`` (eval mode).
        tokenizer: its tokenizer.
        runtime_backend: the ONNX Runtime session (:mod:`logrerank.runtime.ce_runtime`) or
            None (torch); ``runtime_warning`` says why a requested runtime fell back to torch.
        trim_budget_mb: growth of the resident memory within one :meth:`predict` above which
            the heap is trimmed after a batch (:class:`~logrerank.local.memory.HeapBudget`).
        pad_multiple: each batch is padded to a multiple of this many tokens (at most
            ``max_length``); see ``__init__``.
        prior: the bi-encoder prior added to every logit
            (:class:`~logrerank.models.ce_prior.BiEncoderPrior`) of a prior-anchored delta
            checkpoint, else None.
        lexical_weight: weight of the lexical prior the rankers add over a query's texts
            (``w * minmax(BM25)``; :func:`~logrerank.baselines.cross_encoder_ranker.add_lexical`), 0.0
            for a model without one.
        calibration: ``(a, b)`` of the reported score ``sigmoid(a * logit + b)`` (a Platt fit
            on held-out TRAIN logits, :func:`~logrerank.models.ce_prior.fit_platt`); ``(1, 0)``
            (a plain sigmoid) for a model without one.
    """

    trim_budget_mb: float = TRIM_BUDGET_MB
    pad_multiple: int = PAD_MULTIPLE
    runtime_backend: Any = None  # set by __init__ (class defaults: a plain sigmoid on torch)
    calibration: tuple[float, float] = (1.0, 0.0)

    @property
    def runtime(self) -> str:
        """The runtime :meth:`predict` uses: ``"torch"``, ``"onnx"`` or ``"onnx-int8"``."""
        backend = self.runtime_backend
        return backend.name if backend is not None else "torch"

    def __init__(
        self,
        model_name_or_path: str | os.PathLike[str] | None = None,
        max_length: int = 256,
        device: str = "auto",
        precision: str = "auto",
        batch_size: int = 32,
        runtime: str = "torch",
        pad_multiple: int = PAD_MULTIPLE,
    ) -> None:
        """Load a cross-encoder offline.

        Args:
            model_name_or_path: a sequence-classification checkpoint folder (or an id already in
                the local HF cache). None: the trained project checkpoint under
                :func:`default_checkpoint_dir` when it exists, else the packaged
                all-MiniLM-L6-v2 with a fresh seeded head (``trained = False``).
                ``"packaged:all-MiniLM-L6-v2"`` always means the latter.
            max_length: max tokens per (query, text) pair; longer pairs are cut
                (``longest_first``).
            device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``, ...
            precision: ``"auto"``/``"bf16"`` (bf16 autocast where supported) or ``"fp32"``.
            batch_size: pairs per forward pass.
            runtime: ``"torch"``, or ONNX Runtime on CPU: ``"onnx"`` (float32) or
                ``"onnx-int8"`` (:mod:`logrerank.runtime`; falls back to torch with a warning,
                :attr:`runtime_warning`, where it cannot run).
            pad_multiple: pad each batch's length up to a multiple of this (0 or 1: to its
                longest pair only). Few distinct shapes keep a long-running process's memory
                flat: oneDNN keeps one primitive per shape it has seen (bench/README.md,
                "Decisions"); the attention mask
                makes the padding inert.

        Raises:
            CrossEncoderError: the model or tokenizer cannot be loaded offline.
            ValueError: bad ``max_length``, ``batch_size`` or ``precision``.
        """
        if max_length < 8:
            raise ValueError(f"max_length must be >= 8, got {max_length}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.device = pick_device(device)
        self.autocast = autocast_dtype(self.device, precision)
        self.precision = precision
        self.batch_size = int(batch_size)
        self.pad_multiple = max(0, int(pad_multiple))

        if model_name_or_path in (None, ""):
            ckpt = default_checkpoint_dir()
            if (ckpt / "config.json").is_file():
                path, packaged = str(ckpt), False
            else:
                path, packaged = _packaged_path(), True
        elif str(model_name_or_path) == PACKAGED:
            path, packaged = _packaged_path(), True
        else:
            path, packaged = str(model_name_or_path), False  # checked by _load_model
        self.path = path
        self.model, fresh_head, self.positive = _load_model(path)
        self.model.to(self.device).eval()
        self.runtime_backend, self.runtime_warning = classifier_runtime(
            self.model, runtime, self.device
        )
        try:
            self.tokenizer = load_tokenizer(path)
        except Exception as exc:
            raise CrossEncoderError(f"cannot load the cross-encoder tokenizer: {exc}") from exc
        self.trained = not fresh_head
        meta = _read_json(Path(path) / DELTA_META) if Path(path).is_dir() else {}
        prior_cfg = prior_from_meta(meta)
        base = str(meta.get("base") or PACKAGED)
        self.prior = BiEncoderPrior(prior_cfg, base, self.device, precision) if prior_cfg else None
        self.lexical_weight = lexical_from_meta(meta)
        self.calibration = calibration_from_meta(meta)  # (a, b): score = sigmoid(a * logit + b)
        where = "packaged all-MiniLM-L6-v2" if packaged else path
        self.source = f"UNTRAINED head on {where}" if fresh_head else f"checkpoint {where}"
        self.max_length = _cap_length(int(max_length), self.tokenizer, self.model, Path(path))

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str], **kwargs: Any) -> CrossEncoder:
        """Load a folder written by :meth:`save_pretrained` (or any compatible checkpoint).

        Args:
            path: the folder.
            **kwargs: ``max_length``, ``device``, ``precision``, ``batch_size``, ``runtime``.
        """
        return cls(str(path), **kwargs)

    def save_pretrained(self, path: str | os.PathLike[str]) -> None:
        """Write ``model.safetensors``, ``config.json`` and the tokenizer files to ``path``.

        Raises:
            CrossEncoderError: no safetensors file was written.
        """
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        _save_model(self.model, out)
        self.tokenizer.save_pretrained(str(out))
        if not any(out.glob("*.safetensors")):
            raise CrossEncoderError(f"saving to {str(out)!r} produced no .safetensors file")

    def probability(self, logit: float) -> float:
        """The reported score of a logit: ``sigmoid(a * logit + b)`` (:attr:`calibration`)."""
        a, b = self.calibration
        return sigmoid(a * logit + b)

    @torch.inference_mode()
    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Relevance logits, one per ``(query, text)`` pair, in input order.

        Pairs are tokenised once, sorted by token length and batched so that each batch pads
        only to its own longest pair; results are returned in the caller's order, so they do
        not depend on ``batch_size`` (up to float rounding).

        Args:
            pairs: ``(query, text)`` tuples.

        Returns:
            Raw logits (higher = more relevant); map with a sigmoid for [0, 1]. A
            prior-anchored model adds its bi-encoder prior (:attr:`prior`).
        """
        if not pairs:
            return []
        queries = [str(q) for q, _ in pairs]
        texts = [str(t) for _, t in pairs]
        out = self._predict_encoded(queries, texts)
        if self.prior is not None:
            out = [x + p for x, p in zip(out, self.prior.logits(list(zip(queries, texts))))]
        return out

    def _predict_encoded(self, queries: list[str], texts: list[str]) -> list[float]:
        """The model's own logits for the pairs (length-sorted batches, input order)."""
        enc = self.tokenizer(
            queries,
            texts,
            truncation="longest_first",
            max_length=self.max_length,
            padding=False,
        )
        keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
        lengths = [len(ids) for ids in enc["input_ids"]]
        order = sorted(range(len(queries)), key=lambda i: (lengths[i], i))
        pad_id = self.tokenizer.pad_token_id or 0
        left = getattr(self.tokenizer, "padding_side", "right") == "left"
        out = [0.0] * len(queries)
        budget = HeapBudget(self.trim_budget_mb)
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            width = pad_length(max(lengths[i] for i in idx), self.pad_multiple, self.max_length)
            rows = {k: [enc[k][i] for i in idx] for k in keys}
            batch = pad_encoded(rows, width, pad_id, left, self.device)
            if self.runtime_backend is not None:
                logits = self.runtime_backend.logits(batch)
            else:
                with autocast(self.device, self.autocast):
                    logits = self.model(**batch).logits
            vals = relevance(logits.float().reshape(len(idx), -1), self.positive).cpu().tolist()
            for i, v in zip(idx, vals):
                out[i] = float(v)
            del logits, batch
            budget.check()  # bounded growth on large inputs (logrerank/local/memory.py)
        trim_heap()  # keep a long-running process's RSS flat
        return out


def _packaged_path() -> str:
    try:
        return packaged_path()
    except Exception as exc:
        raise CrossEncoderError(str(exc)) from exc


def relevance(logits: torch.Tensor, positive: int | None) -> torch.Tensor:
    """One relevance score per row of ``(batch, labels)`` logits.

    Args:
        logits: the classifier's logits, one row per pair.
        positive: None: 1 label, the logit itself; else the relevant class of a 2-label
            classifier, whose log-odds ``logit[positive] - logit[1 - positive]`` is returned.
    """
    if positive is None:
        return logits[:, 0]
    return logits[:, positive] - logits[:, 1 - positive]


def _labels(folder: Path) -> tuple[int, int | None]:
    """``(num_labels, positive)`` to load ``folder`` with.

    A folder whose ``config.json`` names a ``...ForSequenceClassification`` architecture keeps
    its own labels (none written means the Hugging Face default, 2): 1 (positive None) or 2
    (positive from :data:`POSITIVE_LABELS`, else 1). Any
    other folder (a bare encoder, a hub id) gets a 1-label head.

    Raises:
        CrossEncoderError: a classifier with more than 2 labels (no single relevance score).
    """
    cfg = _read_json(folder / "config.json")
    archs = [str(a) for a in cfg.get("architectures") or ()]
    if not any(a.endswith("ForSequenceClassification") for a in archs):
        return 1, None
    id2label = cfg.get("id2label") or {}
    n = int(cfg.get("num_labels") or len(id2label) or 2)  # HF default: 2 (not written)
    if n == 1:
        return 1, None
    if n != 2:
        raise CrossEncoderError(
            f"cross-encoder folder {str(folder)!r} is a {n}-label classifier; a cross-encoder "
            "needs 1 label (a relevance logit) or 2 (not relevant / relevant)"
        )
    names = {str(v).strip().lower(): int(k) for k, v in id2label.items() if str(k).isdigit()}
    hits = [i for name, i in names.items() if name in POSITIVE_LABELS and i in (0, 1)]
    return 2, hits[0] if len(hits) == 1 else 1


def _load_model(path: str) -> tuple[torch.nn.Module, bool, int | None]:
    """Load a sequence classifier offline; returns (model, head_was_fresh, positive)."""
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise CrossEncoderError(f"cross-encoder path {path!r} is not a folder")
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise CrossEncoderError(f"cross-encoder folder {path!r} has no config.json")
        if not any(p.glob("*.safetensors")):
            raise CrossEncoderError(
                f"cross-encoder folder {path!r} has no .safetensors weights "
                "(pickle checkpoints are refused)"
            )
    elif p.is_absolute() or path.startswith((".", "~")):
        raise CrossEncoderError(f"cross-encoder folder {path!r} does not exist")
    if p.is_dir() and (p / DELTA_META).is_file():
        # Project delta checkpoint: packaged backbone + stored top layers/head
        # (logrerank/models/delta_checkpoint.py).
        try:
            return load_delta_checkpoint(p), False, None
        except Exception as exc:
            raise CrossEncoderError(f"cannot load cross-encoder delta {path!r}: {exc}") from exc
    num_labels, positive = _labels(p) if p.is_dir() else (1, None)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(HEAD_SEED)
            model, info = AutoModelForSequenceClassification.from_pretrained(
                path,
                local_files_only=True,
                use_safetensors=True,
                num_labels=num_labels,
                output_loading_info=True,
            )
    except Exception as exc:
        raise CrossEncoderError(f"cannot load cross-encoder from {path!r} offline: {exc}") from exc
    finally:
        hf_logging.set_verbosity(verbosity)
    return model.eval(), _head_missing(info), positive


def _save_model(model: torch.nn.Module, out: Path) -> None:
    import inspect

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    params = inspect.signature(model.save_pretrained).parameters
    if "safe_serialization" in params:  # transformers 4.x; 5.x always writes safetensors
        model.save_pretrained(str(out), safe_serialization=True)
    else:
        model.save_pretrained(str(out))
