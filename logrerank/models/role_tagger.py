"""Sentence role tagger (background / method / result): the paper's UniFAR step (Appendix B).

The paper runs a pretrained scientific facet model (UniFAR) over every training sentence to get a
soft role distribution, which supervises the role head through the KL term of eq. 21. UniFAR is
not available here, so this module trains a substitute on public sentence-role corpora (train
splits only): CSAbstruct, NICTA-PIBOSO and the section labels of the PubMedQA PQA-L *non-test*
abstracts, all mapped to background / method / result by :mod:`logrerank.data.readers`.

Model: the packaged all-MiniLM-L6-v2 encoder (only its top ``trainable_layers`` layers are
fine-tuned) encodes each abstract jointly, ``[CLS] [SEP] s_1 [SEP] s_2 ... [SEP]`` (eq. 1 with an
empty query, so every sentence sees its neighbours), split into windows on sentence boundaries
when it is longer than ``max_length``; each sentence vector is the mean of its token states and a
two-layer MLP gives 3 role logits (the same shape as the reranker's ``MLP_role``, eq. 3).

Training: cross-entropy on labelled sentences (unmapped labels are ignored), with and without
inverse-frequency class weights; the epoch and the weighting with the best mean macro-F1 on the
CSAbstruct and NICTA dev splits are kept, and accuracy / macro-F1 are reported on the test
splits. Because the lower layers are frozen, their outputs are computed once and cached
(``cache_frozen``), so each epoch only runs the trainable top layers (about 3x faster on CPU).

Checkpoints hold only the fine-tuned top layers and the head (safetensors + ``config.json``);
the rest is loaded from the packaged backbone and checked against a fingerprint.

Public API::

    tagger = RoleTagger.from_pretrained()               # checkpoints/role-tagger
    probs = tagger.predict([["sent 1", "sent 2"], ["other abstract ..."]])  # [m, 3] per doc
    summary = train_roles("configs/roles.json")          # = logrerank train roles --config ...
    metrics = evaluate_roles(tagger)                     # test splits, accuracy and macro-F1
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from .. import backbone as bb
from ..config import ROLE_NAMES, ConfigError, check_field
from ..local import Window, batches, collate, tokenize
from ..resources import checkpoint_dir
from ..training.common import (
    Progress,
    freeze_encoder_layers,
    load_state,
    make_optimizer,
    save_state,
    set_seed,
)

logger = logging.getLogger(__name__)

WEIGHTS_NAME = "model.safetensors"
CONFIG_NAME = "config.json"
FORMAT = "logrerank-role-tagger"
FORMAT_VERSION = 1
SOURCES = ("csabstruct", "nicta", "pubmedqa")
"""Training corpora the tagger knows (train splits; PubMedQA = its 500 non-test abstracts)."""
CLASS_WEIGHT_MODES = ("none", "balanced", "both")
IGNORE = -100  # label id of sentences without a role (CSAbstruct/NICTA "other", unmapped headings)


class RoleCheckpointError(RuntimeError):
    """A role-tagger checkpoint folder is missing, incomplete or does not match the model."""


# ---------------------------------------------------------------------------------------------
# Config
# ---------------------------------------------------------------------------------------------


@dataclass
class RoleTaggerConfig:
    backbone: str | None = None  # HF encoder folder or id; None = packaged all-MiniLM-L6-v2
    trainable_layers: int = 2  # top transformer layers fine-tuned; the others stay packaged
    max_length: int = 512  # tokens per joint window [CLS] [SEP] s1 [SEP] ...; split on sentences
    head_hidden: int = 256  # hidden width of the role MLP (like MLP_role, eq. 3)
    dropout: float = 0.1  # dropout inside the role MLP
    lr: float = 1e-4  # AdamW peak learning rate of the fine-tuned encoder layers
    head_lr: float = 1e-3  # AdamW peak learning rate of the randomly initialised role MLP
    epochs: int = 4  # epochs per class-weighting variant; the best epoch on dev is kept
    batch_windows: int = 16  # windows (whole abstracts, mostly) per optimiser step
    weight_decay: float = 0.01  # AdamW weight decay (paper value)
    warmup: float = 0.06  # fraction of steps with linear warmup, then linear decay (paper)
    seed: int = 13  # seed for the head init, batch order and dropout (paper value)
    threads: int = 1  # torch CPU threads (torch.set_num_threads); the machine is shared
    # training corpora, train splits only ("pubmedqa" = section labels of the non-test ids)
    sources: list[str] = field(default_factory=lambda: list(SOURCES))
    class_weights: str = "both"  # "none", "balanced" (inverse frequency) or "both" (pick on dev)
    bf16: bool = True  # bf16 autocast where supported (AMX/AVX512-BF16 CPUs, CUDA), else fp32
    max_minutes: float = 25.0  # wall cap of one training invocation (caching + all variants)
    cache_frozen: bool = True  # run the frozen lower layers once and cache their outputs
    save_every: int = 50  # optimiser steps between resumable state saves
    eval_batch_tokens: int = 16384  # padded tokens per inference batch
    device: str = "cpu"  # "cpu", "cuda", "cuda:1" or "auto"
    data_root: str | None = None  # public data folder; None = readers.default_data_root()
    run_dir: str = "runs/roles"  # resumable state, per-variant best checkpoints, metrics.json
    out_dir: str | None = None  # final checkpoint folder; None = default_checkpoint_dir()

    def validate(self) -> RoleTaggerConfig:
        """Check value ranges; returns self.

        Raises:
            ConfigError: a value is out of range or unknown.
        """
        if not self.sources or any(s not in SOURCES for s in self.sources):
            raise ConfigError(f"sources must be a non-empty subset of {list(SOURCES)}")
        if len(set(self.sources)) != len(self.sources):
            raise ConfigError(f"sources has duplicates: {self.sources}")
        if self.class_weights not in CLASS_WEIGHT_MODES:
            raise ConfigError(f"class_weights must be one of {list(CLASS_WEIGHT_MODES)}")
        for name in ("trainable_layers",):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0")
        for name in ("max_length", "head_hidden", "epochs", "batch_windows", "threads"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1")
        if self.max_length < 8:
            raise ConfigError("max_length must be >= 8")
        if not 0.0 <= self.dropout < 1.0 or not 0.0 <= self.warmup < 1.0:
            raise ConfigError("dropout and warmup must be in [0, 1)")
        if self.save_every < 1 or self.eval_batch_tokens < 1 or self.max_minutes <= 0:
            raise ConfigError("save_every, eval_batch_tokens and max_minutes must be positive")
        return self

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> RoleTaggerConfig:
        """Build a config, rejecting unknown fields and wrong types.

        Raises:
            ConfigError: not an object, an unknown field, a wrong type or a bad value.
        """
        if not isinstance(d, dict):
            raise ConfigError(f"role-tagger config must be a JSON object, got {type(d).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - set(fields))
        if unknown:
            raise ConfigError(
                f"unknown role-tagger config field(s) {unknown}; known: {sorted(fields)}"
            )
        kwargs = {k: check_field(fields[k], v, f"role-tagger.{k}") for k, v in d.items()}
        return cls(**kwargs).validate()

    def save(self, path: str | Path) -> None:
        """Write the config as indented JSON."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> RoleTaggerConfig:
        """Read a config file written by :meth:`save` (or by hand).

        Raises:
            ConfigError: unreadable, not JSON, or not a valid config.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read role-tagger config {path}: {exc}") from exc
        return cls.from_dict(data)


def default_checkpoint_dir() -> Path:
    """``<checkpoints root>/role-tagger``; the root is ``$LOGRERANK_CHECKPOINTS`` when set,
    else the package's bundled copy."""
    return checkpoint_dir("role-tagger")


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------


class _Given(nn.Module):
    """Stands in for an encoder's embedding module and returns precomputed hidden states."""

    def __init__(self, states: Tensor):
        super().__init__()
        self.states = states

    def forward(self, *args: Any, **kwargs: Any) -> Tensor:
        return self.states


def _role_mlp(d_in: int, d_hidden: int, dropout: float) -> nn.Sequential:
    """Two-layer MLP with GELU -> 3 role logits (shape of MLP_role, eq. 3)."""
    return nn.Sequential(
        nn.Linear(d_in, d_hidden),
        nn.GELU(),
        nn.Dropout(dropout),
        nn.Linear(d_hidden, len(ROLE_NAMES)),
    )


class RoleTagger(nn.Module):
    """Encoder (top layers trainable) + role MLP over span-mean-pooled sentence vectors.

    Args:
        config: tagger config; None = defaults.
        encoder: an already loaded encoder (tests); None = load ``config.backbone`` offline.
        tokenizer: its tokenizer; None = load ``config.backbone`` offline.
    """

    def __init__(
        self,
        config: RoleTaggerConfig | None = None,
        encoder: nn.Module | None = None,
        tokenizer: Any = None,
    ):
        super().__init__()
        self.config = (config or RoleTaggerConfig()).validate()
        self.encoder = encoder if encoder is not None else bb.load_encoder(self.config.backbone)
        self.tokenizer = (
            tokenizer if tokenizer is not None else bb.load_tokenizer(self.config.backbone)
        )
        max_pos = getattr(self.encoder.config, "max_position_embeddings", None)
        if max_pos is not None and self.config.max_length > max_pos:
            raise ConfigError(
                f"max_length {self.config.max_length} exceeds the encoder's {max_pos} positions"
            )
        self.trainable_encoder_names = freeze_encoder_layers(
            self.encoder, self.config.trainable_layers
        )
        self.head = _role_mlp(
            self.encoder.config.hidden_size, self.config.head_hidden, self.config.dropout
        )
        self.source: str | None = None  # checkpoint folder it was loaded from
        self.eval()

    # ------------------------------------------------------------------ helpers
    @property
    def device_(self) -> torch.device:
        return next(self.head.parameters()).device

    def _layers(self) -> nn.ModuleList | None:
        """The encoder's transformer layer list for BERT-like encoders, else None."""
        inner = getattr(self.encoder, "encoder", None)
        layers = getattr(inner, "layer", None)
        if isinstance(layers, nn.ModuleList) and hasattr(self.encoder, "embeddings"):
            return layers
        return None

    @property
    def can_cache(self) -> bool:
        """Whether the frozen lower part can be run separately (BERT-like encoders)."""
        return self._layers() is not None

    def _split_point(self) -> int:
        layers = self._layers()
        assert layers is not None
        return len(layers) - min(self.config.trainable_layers, len(layers))

    @contextlib.contextmanager
    def _part(self, part: str, given: Tensor | None = None) -> Iterator[None]:
        """Temporarily make the encoder run only its frozen lower part or its top part.

        ``part="lower"``: embeddings + frozen layers (the output is what the top layers read).
        ``part="top"``: the embeddings module is replaced by ``given`` (cached lower output)
        and only the trainable top layers run. The attention mask is still built by the
        encoder's own forward, so both parts together equal the full forward exactly.
        """
        layers = self._layers()
        if layers is None:
            raise RuntimeError("this encoder does not expose embeddings + encoder.layer")
        k = self._split_point()
        inner, emb = self.encoder.encoder, self.encoder.embeddings
        try:
            if part == "lower":
                inner.layer = nn.ModuleList(list(layers)[:k])
            elif part == "top":
                if given is None:
                    raise ValueError("part='top' needs the cached lower states")
                inner.layer = nn.ModuleList(list(layers)[k:])
                self.encoder.embeddings = _Given(given)
            else:
                raise ValueError(f"unknown part {part!r}")
            yield
        finally:
            inner.layer = layers
            self.encoder.embeddings = emb

    def train(self, mode: bool = True) -> RoleTagger:
        """Train mode for the trainable parts only: frozen embeddings/layers stay in eval
        mode (no dropout), so cached and uncached training see the same function."""
        super().train(mode)
        layers = self._layers()
        if mode and layers is not None:
            self.encoder.embeddings.eval()
            for layer in list(layers)[: self._split_point()]:
                layer.eval()
        return self

    def _autocast(self):
        dev = self.device_
        if self.config.bf16 and bb.bf16_supported(dev):
            return torch.autocast(dev.type, dtype=torch.bfloat16)
        return contextlib.nullcontext()

    def _encoder_kwargs(self, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        kwargs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
        if getattr(self.encoder.config, "type_vocab_size", 0) > 1:
            kwargs["token_type_ids"] = batch["token_type_ids"]
        return kwargs

    # ------------------------------------------------------------------ forward
    def forward(self, batch: dict[str, Tensor], lower: Tensor | None = None) -> Tensor:
        """Role logits ``[M, 3]`` for the sentences of a collated batch (window order).

        Args:
            batch: output of :func:`logrerank.local.collate`.
            lower: optional cached output of the frozen lower part, ``[B, L, d]`` (padded like
                ``batch``); then only the trainable top layers run.
        """
        kwargs = self._encoder_kwargs(batch)
        if lower is None:
            H = self.encoder(**kwargs).last_hidden_state
        else:
            with self._part("top", lower):
                H = self.encoder(**kwargs).last_hidden_state
        H = H.float()  # [B, L, d]
        span = batch["span"]
        W, M = span.size(0), batch["nodes"].numel()
        keep = span >= 0
        idx = span[keep]
        pooled = torch.zeros(W + M, H.size(-1), device=H.device).index_add(0, idx, H[keep])
        counts = torch.zeros(W + M, device=H.device).index_add(
            0, idx, torch.ones_like(idx, dtype=torch.float)
        )
        h_s = (pooled / counts.clamp_min(1.0)[:, None])[W:]  # [M, d] sentence span means
        return self.head(h_s)  # [M, 3]

    def tokenize_docs(self, docs: Sequence[Sequence[str]]):
        """Joint windows ``[CLS] [SEP] s1 [SEP] ...`` of each abstract (empty query).

        Raises:
            TypeError: a doc is a plain string instead of a list of sentences.
        """
        for i, d in enumerate(docs):
            if isinstance(d, str):
                raise TypeError(f"doc {i} is a string; pass each doc as a list of sentences")
        return tokenize(self.tokenizer, "", [list(d) for d in docs], self.config.max_length, 1)

    @torch.no_grad()
    def lower_states(self, windows: list[Window], batch_tokens: int | None = None) -> list[Tensor]:
        """Outputs of the frozen lower part for each window, ``[len, d]`` float32 on CPU."""
        out: list[Tensor | None] = [None] * len(windows)
        was = self.training
        self.eval()
        try:
            for idx in batches(windows, batch_tokens or self.config.eval_batch_tokens, 64):
                batch = collate([windows[i] for i in idx], self.device_)
                with self._autocast(), self._part("lower"):
                    H = self.encoder(**self._encoder_kwargs(batch)).last_hidden_state
                H = H.float().cpu()
                for b, i in enumerate(idx):
                    out[i] = H[b, : len(windows[i].input_ids)].clone()
        finally:
            self.train(was)
        return out  # type: ignore[return-value]

    def _pad_lower(self, states: list[Tensor]) -> Tensor:
        L = max(s.size(0) for s in states)
        x = torch.zeros(len(states), L, states[0].size(-1))
        for b, s in enumerate(states):
            x[b, : s.size(0)] = s
        return x.to(self.device_)

    def _probs(
        self, windows: list[Window], num_nodes: int, lower: list[Tensor] | None = None
    ) -> Tensor:
        """Role probabilities ``[num_nodes, 3]`` (float32, CPU) for tokenised windows."""
        probs = torch.zeros(num_nodes, len(ROLE_NAMES))
        was = self.training
        self.eval()
        try:
            with torch.inference_mode():
                for idx in batches(windows, self.config.eval_batch_tokens, 64):
                    batch = collate([windows[i] for i in idx], self.device_)
                    given = None if lower is None else self._pad_lower([lower[i] for i in idx])
                    with self._autocast():
                        logits = self(batch, given)
                    probs[batch["nodes"].cpu()] = logits.float().softmax(-1).cpu()
        finally:
            self.train(was)
        return probs.clone()  # a normal tensor (usable as a training target), not an inference one

    def predict(self, docs: Sequence[Sequence[str]]) -> list[Tensor]:
        """Soft role distributions for every sentence of every doc.

        Each abstract is encoded jointly (windows on sentence boundaries when it exceeds
        ``max_length``; a single sentence longer than a window is cut and a warning logged).
        Batched, under ``inference_mode`` and bf16 autocast where supported.

        Args:
            docs: per doc, its sentence texts.

        Returns:
            Per doc a float32 CPU tensor ``[m, 3]`` of probabilities over
            :data:`~logrerank.config.ROLE_NAMES` (rows sum to 1; ``[0, 3]`` for an empty doc).
        """
        docs = list(docs)
        if not docs:
            return []
        tk = self.tokenize_docs(docs)
        if tk.truncated_nodes:
            logger.warning(
                "role tagger: %d sentence(s) longer than a %d-token window were cut",
                len(tk.truncated_nodes),
                self.config.max_length,
            )
        probs = self._probs(tk.windows, tk.num_nodes)
        return list(torch.split(probs, [len(d) for d in docs]))

    # ------------------------------------------------------------------ checkpoints
    def _base_fingerprint(self) -> str:
        """sha256 of the frozen encoder parameters (what the checkpoint does not store)."""
        h = hashlib.sha256()
        trainable = set(self.trainable_encoder_names)
        for name, p in sorted(self.encoder.named_parameters()):
            if name in trainable:
                continue
            h.update(name.encode())
            h.update(p.detach().to("cpu", torch.float32).contiguous().numpy().tobytes())
        return h.hexdigest()

    def _stored_state(self) -> dict[str, Tensor]:
        params = dict(self.encoder.named_parameters())
        state = {f"encoder.{n}": params[n] for n in self.trainable_encoder_names}
        state.update({f"head.{n}": p for n, p in self.head.named_parameters()})
        return {k: v.detach().to("cpu", torch.float32).contiguous() for k, v in state.items()}

    def save_pretrained(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Save the fine-tuned top layers + the head (safetensors) and ``config.json``.

        The frozen rest of the encoder is not stored; ``config.json`` records a fingerprint of
        it so that loading onto a different base fails loudly.

        Args:
            path: output folder (created).
            extra: JSON-serialisable facts stored under ``"training"`` (metrics, run info).
        """
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        tmp = path / (WEIGHTS_NAME + ".tmp")
        save_file(self._stored_state(), str(tmp), metadata={"format": FORMAT})
        tmp.chmod(0o644)  # safetensors creates files 0600; a shipped checkpoint must be readable
        tmp.replace(path / WEIGHTS_NAME)
        meta = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "roles": list(ROLE_NAMES),
            "tagger": self.config.to_dict(),
            "base_fingerprint": self._base_fingerprint(),
            "stored_tensors": len(self._stored_state()),
            "training": extra or {},
        }
        (path / CONFIG_NAME).write_text(
            json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8"
        )
        return path

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path | None = None,
        *,
        encoder: nn.Module | None = None,
        tokenizer: Any = None,
        **overrides: Any,
    ) -> RoleTagger:
        """Load a checkpoint written by :meth:`save_pretrained`.

        Args:
            path: checkpoint folder; None = :func:`default_checkpoint_dir`
                (``checkpoints/role-tagger``, or under ``$LOGRERANK_CHECKPOINTS``).
            encoder, tokenizer: preloaded base (tests); None = load ``config.backbone``.
            **overrides: config fields to override, e.g. ``device="cuda"``, ``bf16=False``.

        Raises:
            RoleCheckpointError: missing folder or files, invalid JSON, wrong format,
                missing / unexpected / mis-shaped tensors, or a different base encoder.
        """
        path = default_checkpoint_dir() if path is None else Path(path)
        if not path.is_dir():
            raise RoleCheckpointError(
                f"role-tagger checkpoint folder {path} does not exist "
                "(train one with: logrerank train roles --config configs/roles.json)"
            )
        for name in (CONFIG_NAME, WEIGHTS_NAME):
            if not (path / name).is_file():
                raise RoleCheckpointError(f"role-tagger checkpoint {path} is missing {name}")
        try:
            raw = json.loads((path / CONFIG_NAME).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise RoleCheckpointError(f"{path / CONFIG_NAME} is not valid JSON: {exc}") from exc
        if not isinstance(raw, dict) or raw.get("format") != FORMAT or "tagger" not in raw:
            raise RoleCheckpointError(f"{path / CONFIG_NAME} is not a role-tagger checkpoint")
        if raw.get("format_version") != FORMAT_VERSION:
            raise RoleCheckpointError(
                f"{path}: format_version {raw.get('format_version')} is not {FORMAT_VERSION}"
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
            raise RoleCheckpointError(
                f"cannot read {path / WEIGHTS_NAME} (truncated?): {exc}"
            ) from exc
        model = cls(config, encoder=encoder, tokenizer=tokenizer)
        own = model._stored_state()
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
        fp = raw.get("base_fingerprint")
        if fp is not None and fp != model._base_fingerprint():
            raise RoleCheckpointError(
                f"{path}: the base encoder {config.backbone or bb.PACKAGED} differs from the one "
                "this tagger was trained on (frozen-weight fingerprint mismatch)"
            )
        params = dict(model.named_parameters())
        with torch.no_grad():
            for k, v in state.items():
                params[k].copy_(v)
        model.to(bb.pick_device(config.device))
        model.source = str(path)
        return model.eval()


# ---------------------------------------------------------------------------------------------
# Data and metrics
# ---------------------------------------------------------------------------------------------

RoleDocs = tuple[list[list[str]], list[list[str | None]]]  # (sentences per doc, labels per doc)


def _data_root(data_root: str | os.PathLike[str] | None) -> Path:
    from ..data.readers import default_data_root

    return Path(data_root) if data_root else default_data_root()


def load_role_split(
    dataset: str, split: str, data_root: str | os.PathLike[str] | None = None
) -> RoleDocs:
    """Sentences and mapped role labels of one split.

    Args:
        dataset: ``"csabstruct"``, ``"nicta"`` or ``"pubmedqa"``.
        split: ``"train"``, ``"dev"`` or ``"test"``; PubMedQA has ``"train"`` (the 500 non-test
            ids) and ``"test"`` (the 500 official test ids) only.
        data_root: public data folder; None = the default.

    Raises:
        FileNotFoundError: the split's file is absent. ValueError: unknown dataset/split.
    """
    from ..data.readers import read_csabstruct, read_nicta, read_pubmedqa

    root = _data_root(data_root)
    if dataset == "pubmedqa":
        if split not in ("train", "test"):
            raise ValueError("PubMedQA has a train (non-test ids) and a test split only")
        path = root / "pubmedqa" / "ori_pqal.json"
        if not path.is_file():
            raise FileNotFoundError(path)
        examples, corpus = read_pubmedqa(path, split=split)
        docs, labels = [], []
        for ex in examples:
            sents, roles = list(corpus[ex.qid].sentences), list(ex.roles[ex.qid])
            if len(sents) != len(roles):
                raise ValueError(f"PubMedQA {ex.qid}: {len(sents)} sentences, {len(roles)} roles")
            docs.append(sents)
            labels.append(roles)
        return docs, labels
    if split not in ("train", "dev", "test"):
        raise ValueError(f"unknown split {split!r}")
    if dataset == "csabstruct":
        path, reader = root / "csabstruct" / f"{split}.jsonl", read_csabstruct
    elif dataset == "nicta":
        path, reader = root / "nicta_piboso" / f"{split}_clean.txt", read_nicta
    else:
        raise ValueError(f"unknown role dataset {dataset!r}")
    if not path.is_file():
        raise FileNotFoundError(path)
    rows = reader(path)
    return [list(r.sentences) for r in rows], [list(r.labels) for r in rows]


def _label_ids(labels: list[list[str | None]]) -> list[int]:
    index = {r: i for i, r in enumerate(ROLE_NAMES)}
    return [index[x] if x is not None else IGNORE for doc in labels for x in doc]


def role_metrics(pred: Sequence[int], gold: Sequence[int]) -> dict[str, Any]:
    """Accuracy, macro-F1, per-class precision/recall/F1 and the confusion matrix.

    Sentences whose gold label is :data:`IGNORE` are skipped. Macro-F1 averages the three
    classes (F1 = 0 for a class with no prediction and no gold sentence).
    """
    pairs = [(p, g) for p, g in zip(pred, gold) if g != IGNORE]
    n = len(pairs)
    conf = [[0] * len(ROLE_NAMES) for _ in ROLE_NAMES]  # conf[gold][pred]
    for p, g in pairs:
        conf[g][p] += 1
    per_class = {}
    for c, name in enumerate(ROLE_NAMES):
        tp = conf[c][c]
        n_pred = sum(conf[g][c] for g in range(len(ROLE_NAMES)))
        n_gold = sum(conf[c])
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per_class[name] = {"precision": prec, "recall": rec, "f1": f1, "support": n_gold}
    return {
        "n": n,
        "accuracy": sum(p == g for p, g in pairs) / n if n else 0.0,
        "macro_f1": sum(v["f1"] for v in per_class.values()) / len(ROLE_NAMES),
        "per_class": per_class,
        "confusion_gold_by_pred": conf,
    }


EVAL_SETS = {
    "csabstruct/test": ("csabstruct", "test", "CSAbstruct test (in-domain, CS)"),
    "nicta/test": ("nicta", "test", "NICTA-PIBOSO test (in-domain, medical)"),
    "pubmedqa/test": (
        "pubmedqa",
        "test",
        "PubMedQA PQA-L official test ids, section-heading labels per sentence (extra check; "
        "never trained on; headings are noisy sentence labels)",
    ),
}


def evaluate_roles(
    tagger: RoleTagger,
    data_root: str | os.PathLike[str] | None = None,
    *,
    splits: Sequence[str] = ("test",),
    max_docs: int | None = None,
) -> dict[str, Any]:
    """Accuracy and macro-F1 of ``tagger`` on CSAbstruct, NICTA and PubMedQA splits.

    Args:
        tagger: a :class:`RoleTagger`.
        data_root: public data folder; None = the default.
        splits: ``"test"`` (CSAbstruct, NICTA, PubMedQA test ids) and/or ``"dev"``
            (CSAbstruct, NICTA).
        max_docs: evaluate only the first N abstracts of each split (quick checks).

    Returns:
        ``{"csabstruct/test": metrics, ...}`` with :func:`role_metrics` plus ``n_docs`` and
        ``description``; a split whose files are absent is skipped.
    """
    out: dict[str, Any] = {}
    sets = []
    for split in splits:
        if split == "test":
            sets += list(EVAL_SETS.items())
        elif split == "dev":
            sets += [
                ("csabstruct/dev", ("csabstruct", "dev", "CSAbstruct dev (model selection)")),
                ("nicta/dev", ("nicta", "dev", "NICTA-PIBOSO dev (model selection)")),
            ]
        else:
            raise ValueError(f"unknown split {split!r}")
    for key, (dataset, split, desc) in sets:
        try:
            docs, labels = load_role_split(dataset, split, data_root)
        except FileNotFoundError as exc:
            logger.warning("skipping %s: %s not found", key, exc)
            continue
        if max_docs is not None:
            docs, labels = docs[:max_docs], labels[:max_docs]
        probs = tagger.predict(docs)
        pred = torch.cat(probs).argmax(-1).tolist() if probs else []
        out[key] = {
            "description": desc,
            "n_docs": len(docs),
            **role_metrics(pred, _label_ids(labels)),
        }
    return out


# ---------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------


@dataclass
class _Prepared:
    """Tokenised windows + labels (flat node order) of a set of abstracts."""

    windows: list[Window]
    num_nodes: int
    labels: Tensor  # [num_nodes] long, IGNORE where unlabelled
    lower: list[Tensor] | None = None  # cached frozen-part outputs per window


def _prepare(tagger: RoleTagger, docs: RoleDocs) -> _Prepared:
    sents, labels = docs
    tk = tagger.tokenize_docs(sents)
    if tk.truncated_nodes:
        print(f"  note: {len(tk.truncated_nodes)} over-long sentence(s) cut to fit a window")
    return _Prepared(tk.windows, tk.num_nodes, torch.tensor(_label_ids(labels), dtype=torch.long))


def _epoch_plan(n: int, lengths: list[int], batch_windows: int, seed: int, epoch: int):
    """Shuffled, length-bucketed batches of window indices (same for every variant)."""
    rng = random.Random(seed * 100_003 + epoch)
    order = list(range(n))
    rng.shuffle(order)
    chunk = batch_windows * 50
    plan: list[list[int]] = []
    for c in range(0, n, chunk):
        part = sorted(order[c : c + chunk], key=lambda i: lengths[i])
        plan += [part[j : j + batch_windows] for j in range(0, len(part), batch_windows)]
    rng.shuffle(plan)
    return plan


def _class_weights(labels: Tensor) -> Tensor:
    """Inverse-frequency weights, normalised so the labelled-sentence mean weight is 1."""
    y = labels[labels != IGNORE]
    counts = torch.bincount(y, minlength=len(ROLE_NAMES)).float().clamp_min(1.0)
    w = counts.sum() / (len(ROLE_NAMES) * counts)
    return w


def _dev_eval(tagger: RoleTagger, dev: dict[str, _Prepared]) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for key, prep in dev.items():
        probs = tagger._probs(prep.windows, prep.num_nodes, prep.lower)
        res[key] = role_metrics(probs.argmax(-1).tolist(), prep.labels.tolist())
    res["score"] = sum(v["macro_f1"] for v in res.values()) / max(1, len(dev))
    return res


def _short(m: dict[str, Any]) -> str:
    return " ".join(
        f"{k}: acc {v['accuracy']:.3f} mF1 {v['macro_f1']:.3f}"
        for k, v in m.items()
        if isinstance(v, dict)
    )


def _train_variant(
    cfg: RoleTaggerConfig,
    variant: str,
    train: _Prepared,
    dev: dict[str, _Prepared],
    run_dir: Path,
    deadline: float,
    base: tuple[nn.Module, Any],
) -> dict[str, Any]:
    """Train one class-weighting variant; keeps its best dev epoch in ``run_dir/variant/best``."""
    vdir = run_dir / variant
    done = vdir / "done.json"
    if done.is_file():
        info = json.loads(done.read_text(encoding="utf-8"))
        print(f"[{variant}] already done (best epoch {info['best_epoch']}), skipping", flush=True)
        return info
    set_seed(cfg.seed)
    encoder, tokenizer = base
    tagger = RoleTagger(cfg, encoder=_fresh_copy(encoder), tokenizer=tokenizer)
    device = bb.pick_device(cfg.device)
    tagger.to(device)
    enc_params = [p for p in tagger.encoder.parameters() if p.requires_grad]
    groups = [{"params": enc_params, "lr": cfg.lr}] if enc_params else []
    groups.append({"params": list(tagger.head.parameters()), "lr": cfg.head_lr})
    lengths = [len(w.input_ids) for w in train.windows]
    spe = len(_epoch_plan(len(train.windows), lengths, cfg.batch_windows, cfg.seed, 0))
    total = spe * cfg.epochs
    opt, sched = make_optimizer(groups, cfg.lr, cfg.weight_decay, total, cfg.warmup)
    weight = _class_weights(train.labels).to(device) if variant == "balanced" else None
    if weight is not None:
        print(f"[{variant}] class weights {dict(zip(ROLE_NAMES, weight.tolist()))}", flush=True)
    state_dir = vdir / "state"
    step = load_state(state_dir, tagger, opt, sched)
    history: list[dict[str, Any]] = []
    best = {"score": -1.0, "epoch": None}
    if step:
        info = json.loads((state_dir / "state.json").read_text(encoding="utf-8"))
        history, best = info["history"], info["best"]
        if history and history[-1].get("partial"):
            history.pop()  # a time-capped partial epoch: continue it
        print(f"[{variant}] resumed at step {step}/{total}", flush=True)
        random.seed(cfg.seed + step)
        torch.manual_seed(cfg.seed + step)
    meta = lambda: {"variant": variant, "history": history, "best": best}  # noqa: E731
    progress = Progress(total, every=20, start=step)
    stopped = False
    for epoch in range(len(history), cfg.epochs):
        plan = _epoch_plan(len(train.windows), lengths, cfg.batch_windows, cfg.seed, epoch)
        tagger.train()
        for b in range(step - epoch * spe, spe):
            idx = plan[b]
            windows = [train.windows[i] for i in idx]
            batch = collate(windows, device)
            y = train.labels[batch["nodes"].cpu()].to(device)
            lower = tagger._pad_lower([train.lower[i] for i in idx]) if train.lower else None
            if (y != IGNORE).any():
                with tagger._autocast():
                    logits = tagger(batch, lower)
                loss = F.cross_entropy(logits.float(), y, weight=weight, ignore_index=IGNORE)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_([p for g in groups for p in g["params"]], 1.0)
                opt.step()
                loss_value = float(loss.detach())
            else:
                loss_value = 0.0
            sched.step()
            step += 1
            progress.update(step, loss_value, lr=sched.get_last_lr()[0], epoch=epoch + 1)
            if step % cfg.save_every == 0:
                save_state(state_dir, tagger, opt, sched, step, meta())
            if time.perf_counter() > deadline and step < (epoch + 1) * spe:
                print(f"[{variant}] time cap reached at step {step}/{total}", flush=True)
                stopped = True
                break
        tagger.eval()
        res = _dev_eval(tagger, dev)
        res["epoch"] = epoch + 1
        res["steps"] = step
        if stopped:
            res["partial"] = True
        history.append(res)
        print(
            f"[{variant}] epoch {epoch + 1} dev {_short(res)} score {res['score']:.4f}", flush=True
        )
        if res["score"] > best["score"]:
            best = {"score": res["score"], "epoch": epoch + 1, "steps": step}
            tagger.save_pretrained(
                vdir / "best", extra={"variant": variant, "epoch": epoch + 1, "dev": res}
            )
        save_state(state_dir, tagger, opt, sched, step, meta())
        if stopped or time.perf_counter() > deadline:
            stopped = stopped or epoch + 1 < cfg.epochs
            break
    info = {
        "variant": variant,
        "history": history,
        "best_epoch": best["epoch"],
        "best_score": best["score"],
        "steps_per_epoch": spe,
        "steps_done": step,
        "stopped_by_time_cap": stopped,
    }
    if not stopped:
        done.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def _fresh_copy(encoder: nn.Module) -> nn.Module:
    """A fresh copy of the base encoder (each variant starts from the packaged weights)."""
    import copy

    return copy.deepcopy(encoder)


def _command() -> str:
    """The command line of this process, as a user would type it."""
    prog = Path(sys.argv[0]).name if sys.argv else "python"
    if prog in ("roles.py", "__main__.py", "-m"):
        prog = "python -m logrerank.models.role_tagger"
    return " ".join([prog, *sys.argv[1:]])


def train_roles(config_path: str | os.PathLike[str]) -> dict[str, Any]:
    """Train the role tagger from a JSON config (``logrerank train roles --config FILE``).

    Steps: load the train splits of ``sources`` (PubMedQA: non-test ids only) and the
    CSAbstruct/NICTA dev splits; cache the frozen lower layers once; train each class-weighting
    variant (``class_weights``: none / balanced / both) for ``epochs``, evaluating dev macro-F1
    after each epoch; keep the variant + epoch with the best mean dev macro-F1; copy it to
    ``out_dir``; evaluate it on the test splits (never used for any choice). Resumable: rerun
    the same command after an interruption (state in ``run_dir``; delete ``run_dir`` to start
    over). Results go to ``run_dir/metrics.json`` and the checkpoint's ``config.json``.

    Returns:
        The summary written to ``metrics.json``.
    """
    t_start = time.perf_counter()
    cfg = RoleTaggerConfig.load(config_path)
    torch.set_num_threads(cfg.threads)
    deadline = t_start + cfg.max_minutes * 60.0
    run_dir = Path(cfg.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    out_dir = Path(cfg.out_dir) if cfg.out_dir else default_checkpoint_dir()
    print(f"role tagger: config {config_path} -> {out_dir}", flush=True)
    print(json.dumps(cfg.to_dict()), flush=True)
    set_seed(cfg.seed)

    encoder = bb.load_encoder(cfg.backbone)
    tokenizer = bb.load_tokenizer(cfg.backbone)
    probe = RoleTagger(cfg, encoder=encoder, tokenizer=tokenizer)
    probe.to(bb.pick_device(cfg.device))

    t0 = time.perf_counter()
    train_docs: RoleDocs = ([], [])
    counts: dict[str, Any] = {}
    for src in cfg.sources:
        docs = load_role_split(src, "train", cfg.data_root)
        train_docs[0].extend(docs[0])
        train_docs[1].extend(docs[1])
        labelled = [x for d in docs[1] for x in d if x is not None]
        counts[f"{src}/train"] = {
            "docs": len(docs[0]),
            "sentences": sum(len(d) for d in docs[0]),
            "labelled": len(labelled),
            **{r: labelled.count(r) for r in ROLE_NAMES},
        }
    train = _prepare(probe, train_docs)
    dev: dict[str, _Prepared] = {}
    for src in ("csabstruct", "nicta"):
        if src in cfg.sources:
            dev[f"{src}/dev"] = _prepare(probe, load_role_split(src, "dev", cfg.data_root))
    if not dev:
        raise ConfigError("sources must include csabstruct or nicta (their dev splits select)")
    n_tok = sum(len(w.input_ids) for w in train.windows)
    print(
        f"data: {counts}\ntrain windows {len(train.windows)} tokens {n_tok} "
        f"(read + tokenised in {time.perf_counter() - t0:.0f}s)",
        flush=True,
    )
    if cfg.cache_frozen and probe.can_cache:
        t0 = time.perf_counter()
        train.lower = probe.lower_states(train.windows)
        for prep in dev.values():
            prep.lower = probe.lower_states(prep.windows)
        print(
            f"cached frozen layers ({probe._split_point()} of {len(probe._layers())}) in "
            f"{time.perf_counter() - t0:.0f}s",
            flush=True,
        )
    del probe

    variants = ["none", "balanced"] if cfg.class_weights == "both" else [cfg.class_weights]
    results: dict[str, Any] = {}
    for i, variant in enumerate(variants):
        remaining = deadline - time.perf_counter()
        v_deadline = time.perf_counter() + remaining / (len(variants) - i)
        print(
            f"[{variant}] training, time budget {remaining / (len(variants) - i) / 60:.1f} min",
            flush=True,
        )
        results[variant] = _train_variant(
            cfg, variant, train, dev, run_dir, v_deadline, (encoder, tokenizer)
        )
    scored = [(r["best_score"], v) for v, r in results.items() if r["best_epoch"] is not None]
    if not scored:
        raise RuntimeError("no variant finished an evaluation; raise max_minutes")
    best_variant = max(scored)[1]
    best = results[best_variant]
    print(
        f"selected: class_weights={best_variant} epoch {best['best_epoch']} "
        f"dev score {best['best_score']:.4f}",
        flush=True,
    )
    train_minutes = (time.perf_counter() - t_start) / 60.0

    tagger = RoleTagger.from_pretrained(
        run_dir / best_variant / "best", encoder=_fresh_copy(encoder), tokenizer=tokenizer
    )
    t0 = time.perf_counter()
    test = evaluate_roles(tagger, cfg.data_root, splits=("test",))
    print(f"test: {_short(test)} ({time.perf_counter() - t0:.0f}s)", flush=True)
    best_dev = next(h for h in best["history"] if h["epoch"] == best["best_epoch"])
    summary = {
        "selected": {
            "class_weights": best_variant,
            "epoch": best["best_epoch"],
            "dev_score_mean_macro_f1": best["best_score"],
        },
        "dev": {k: v for k, v in best_dev.items() if isinstance(v, dict)},
        "test": test,
        "variants": results,
        "train_data": counts,
        "train_windows": len(train.windows),
        "train_tokens": n_tok,
        "threads": cfg.threads,
        "bf16_autocast": bool(cfg.bf16 and bb.bf16_supported(bb.pick_device(cfg.device))),
        "train_minutes_this_invocation": train_minutes,
        "wall_minutes_this_invocation": (time.perf_counter() - t_start) / 60.0,
        "command": _command(),
        "config": cfg.to_dict(),
    }
    tagger.save_pretrained(out_dir, extra=summary)  # the selected weights + the full summary
    summary["checkpoint"] = str(out_dir)
    summary["checkpoint_mb"] = (out_dir / WEIGHTS_NAME).stat().st_size / 2**20
    (run_dir / "metrics.json").write_text(
        json.dumps(summary, indent=1, default=str) + "\n", encoding="utf-8"
    )
    print(
        f"wrote {out_dir} ({summary['checkpoint_mb']:.1f} MB) and {run_dir / 'metrics.json'}",
        flush=True,
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    """``python -m logrerank.models.role_tagger --config configs/roles.json`` (train) or
    ``python -m logrerank.models.role_tagger --evaluate [CHECKPOINT]`` (test-split metrics as JSON)."""
    parser = argparse.ArgumentParser(prog="python -m logrerank.models.role_tagger", description=__doc__)
    g = parser.add_mutually_exclusive_group(required=True)
    g.add_argument("--config", help="train from this JSON run config")
    g.add_argument(
        "--evaluate",
        nargs="?",
        const="",
        metavar="CHECKPOINT",
        help="evaluate a checkpoint (default: checkpoints/role-tagger) on the test splits",
    )
    parser.add_argument("--data-root", default=None, help="public data folder (evaluation)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (evaluation)")
    parser.add_argument("--max-docs", type=int, default=None, help="abstracts per split")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.config:
        summary = train_roles(args.config)
        print(json.dumps({k: summary[k] for k in ("selected", "checkpoint", "checkpoint_mb")}))
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    tagger = RoleTagger.from_pretrained(args.evaluate or None)
    res = evaluate_roles(tagger, args.data_root, max_docs=args.max_docs)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
