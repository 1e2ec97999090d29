"""Sentence role tagger (background / method / result): the paper's UniFAR step (Appendix B).

The paper runs a pretrained scientific facet model (UniFAR) over every training sentence to get a
soft role distribution, which supervises the role head through the KL term of eq. 21. UniFAR is
not available here, so the project trains a substitute on public sentence-role corpora (train
splits only; :mod:`logrerank.training.roles.tagger_train`).

Model: the packaged all-MiniLM-L6-v2 encoder (only its top ``trainable_layers`` layers are
fine-tuned) encodes each abstract jointly, ``[CLS] [SEP] s_1 [SEP] s_2 ... [SEP]`` (eq. 1 with an
empty query, so every sentence sees its neighbours), split into windows on sentence boundaries
when it is longer than ``max_length``; each sentence vector is the mean of its token states and a
two-layer MLP gives 3 role logits (the same shape as the reranker's ``MLP_role``, eq. 3). The
frozen lower layers can run on their own (:meth:`RoleTagger.lower_states`) so that training
caches their outputs once.

Checkpoints hold only the fine-tuned top layers and the head
(:mod:`logrerank.models.role_checkpoint`); the rest is loaded from the packaged backbone and
checked against a fingerprint.

Public API::

    tagger = RoleTagger.from_pretrained()               # logrerank/checkpoints/role-tagger
    tagger = load_default()                             # the same, loaded once per process
    probs = tagger.predict([["sent 1", "sent 2"], ["other abstract ..."]])  # [m, 3] per doc
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from ..config import ROLE_NAMES, ConfigError
from ..local import backbone as bb
from ..local.tokenize import Window, batches, collate, tokenize
from .role_checkpoint import (
    check_fingerprint,
    check_tensors,
    default_checkpoint_dir,
    read_checkpoint,
    write_checkpoint,
)
from .role_tagger_config import RoleTaggerConfig

logger = logging.getLogger(__name__)


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
        self.config = (config or RoleTaggerConfig()).check()
        self.encoder = encoder if encoder is not None else bb.load_encoder(self.config.backbone)
        self.tokenizer = (
            tokenizer if tokenizer is not None else bb.load_tokenizer(self.config.backbone)
        )
        max_pos = getattr(self.encoder.config, "max_position_embeddings", None)
        if max_pos is not None and self.config.max_length > max_pos:
            raise ConfigError(
                f"max_length {self.config.max_length} exceeds the encoder's {max_pos} positions"
            )
        self.trainable_encoder_names = bb.freeze_encoder_layers(
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

    @property
    def autocast_dtype(self) -> torch.dtype | None:
        """bf16 where ``config.bf16`` and the device supports it, else None (fp32)."""
        return bb.autocast_dtype(self.device_, "auto" if self.config.bf16 else "fp32")

    def _encoder_kwargs(self, batch: dict[str, Tensor]) -> dict[str, Tensor]:
        kwargs = {"input_ids": batch["input_ids"], "attention_mask": batch["attention_mask"]}
        if getattr(self.encoder.config, "type_vocab_size", 0) > 1:
            kwargs["token_type_ids"] = batch["token_type_ids"]
        return kwargs

    # ------------------------------------------------------------------ forward
    def forward(self, batch: dict[str, Tensor], lower: Tensor | None = None) -> Tensor:
        """Role logits ``[M, 3]`` for the sentences of a collated batch (window order).

        Args:
            batch: output of :func:`logrerank.local.tokenize.collate`.
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
                with bb.autocast(self.device_, self.autocast_dtype), self._part("lower"):
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
                    with bb.autocast(self.device_, self.autocast_dtype):
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
        it so that loading onto a different base fails loudly
        (:mod:`logrerank.models.role_checkpoint`).

        Args:
            path: output folder (created).
            extra: JSON-serialisable facts stored under ``"training"`` (metrics, run info).
        """
        return write_checkpoint(
            path, self._stored_state(), self.config, self._base_fingerprint(), extra
        )

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
            path: checkpoint folder; None = :func:`~logrerank.models.role_checkpoint.
                default_checkpoint_dir` (``logrerank/checkpoints/role-tagger``, or under
                ``$LOGRERANK_CHECKPOINTS``).
            encoder, tokenizer: preloaded base (tests); None = load ``config.backbone``.
            **overrides: config fields to override, e.g. ``device="cuda"``, ``bf16=False``.

        Raises:
            RoleCheckpointError: missing folder or files, invalid JSON, wrong format,
                missing / unexpected / mis-shaped tensors, or a different base encoder.
        """
        path = default_checkpoint_dir() if path is None else Path(path)
        raw, config, state = read_checkpoint(path, overrides)
        model = cls(config, encoder=encoder, tokenizer=tokenizer)
        check_tensors(model._stored_state(), state, path)
        check_fingerprint(raw, model._base_fingerprint, path, config.backbone or bb.PACKAGED)
        params = dict(model.named_parameters())
        with torch.no_grad():
            for k, v in state.items():
                params[k].copy_(v)
        model.to(bb.pick_device(config.device))
        model.source = str(path)
        return model.eval()


_DEFAULT_LOCK = threading.Lock()
_DEFAULTS: dict[str, RoleTagger] = {}


def load_default() -> RoleTagger:
    """The tagger of :func:`~logrerank.models.role_checkpoint.default_checkpoint_dir`, loaded
    once per process and folder and shared by its users (the roles the app shows, the
    question-intent features). Thread-safe.

    Raises:
        RoleCheckpointError: as :meth:`RoleTagger.from_pretrained` (nothing is cached then).
    """
    key = str(default_checkpoint_dir())
    with _DEFAULT_LOCK:
        if key not in _DEFAULTS:
            _DEFAULTS[key] = RoleTagger.from_pretrained(key)
        return _DEFAULTS[key]
