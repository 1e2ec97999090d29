"""Configuration of the sentence role tagger (:class:`~logrerank.models.role_tagger.RoleTagger`).

One JSON object holds the model's shape and its training run (``configs/roles.json``); a
checkpoint's ``config.json`` stores it under ``"tagger"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..jsonconfig import ConfigError, JsonConfig

SOURCES = ("csabstruct", "nicta", "pubmedqa")
"""Training corpora the tagger knows (train splits; PubMedQA = its 500 non-test abstracts)."""
CLASS_WEIGHT_MODES = ("none", "balanced", "both")
DEVICES = ("auto", "cpu", "cuda", "mps")
"""Device names (``"cuda:N"`` is accepted too)."""


@dataclass
class RoleTaggerConfig(JsonConfig):
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
    data_root: str | None = None  # public data folder; None = data.common.default_data_root()
    run_dir: str = "runs/roles"  # resumable state, per-variant best checkpoints, metrics.json
    # final checkpoint folder; None = the bundled one, default_checkpoint_dir() (overwrites it)
    out_dir: str | None = "runs/role-tagger"

    LABEL = "role-tagger config"
    KEY_PREFIX = "role-tagger."

    def check(self) -> RoleTaggerConfig:
        """Check value ranges and enumerated fields; returns self.

        Raises:
            ConfigError: a value is out of range or unknown (the message names it).
        """
        if not self.sources or any(s not in SOURCES for s in self.sources):
            raise ConfigError(
                f"sources must be a non-empty subset of {list(SOURCES)}, got {self.sources}"
            )
        if len(set(self.sources)) != len(self.sources):
            raise ConfigError(f"sources has duplicates: {self.sources}")
        if self.class_weights not in CLASS_WEIGHT_MODES:
            raise ConfigError(
                f"class_weights must be one of {list(CLASS_WEIGHT_MODES)}, "
                f"got {self.class_weights!r}"
            )
        if self.device not in DEVICES and not self.device.startswith("cuda:"):
            raise ConfigError(
                f"device must be one of {list(DEVICES)} or 'cuda:N', got {self.device!r}"
            )
        for name in ("trainable_layers",):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("max_length", "head_hidden", "epochs", "batch_windows", "threads"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.max_length < 8:
            raise ConfigError(f"max_length must be >= 8, got {self.max_length}")
        if not 0.0 <= self.dropout < 1.0 or not 0.0 <= self.warmup < 1.0:
            raise ConfigError(
                f"dropout and warmup must be in [0, 1), got {self.dropout} and {self.warmup}"
            )
        if self.save_every < 1 or self.eval_batch_tokens < 1 or self.max_minutes <= 0:
            raise ConfigError("save_every, eval_batch_tokens and max_minutes must be positive")
        return self
