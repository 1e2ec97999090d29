"""The cross-encoder training run config (``configs/crossencoder.json``).

See :mod:`logrerank.training.cross_encoder.ce_train` for what the fields drive.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

from ...jsonconfig import ConfigError, JsonConfig
from ...local.backbone import PACKAGED
from ..log.log_config import BENCHMARK_SOURCES
from ..queries import HAND_SCISUMM


@dataclass
class CrossEncoderTrainConfig(JsonConfig):
    """One cross-encoder training run (JSON file; unknown fields are rejected)."""

    # TRAIN splits used (load_benchmark names); dev splits are never read
    sources: list[str] = field(default_factory=lambda: ["scifact", "citint"])
    # per-source cap on queries read (file order, before the held-out split); 0/absent = all
    max_queries: dict[str, int] = field(default_factory=dict)
    # training queries used per epoch after the split, a seeded sample (0 = all)
    train_queries: int = 0
    # BM25 hard negatives per query, from the query's TRAIN pool, gold excluded
    negatives: int = 7
    # negatives are sampled among this many best-ranked non-gold pool candidates
    negative_depth: int = 14
    # backbone the delta is stored against ("packaged:all-MiniLM-L6-v2" or a local folder)
    base: str = PACKAGED
    # top transformer layers that train (plus pooler + classifier); the rest stay packaged
    trainable_layers: int = 2
    # max tokens per (query, passage) pair, cut longest_first (as CrossEncoder does)
    max_length: int = 256
    # passage body characters shown, after the title (pair_text; same as the stage)
    max_chars: int = 1000
    # learning rate of the trainable encoder layers and the pooler
    lr: float = 5e-5
    # learning rate of the freshly initialised classifier
    lr_head: float = 1e-3
    # passes over the training queries
    epochs: int = 1
    # AdamW weight decay
    weight_decay: float = 0.01
    # linear warmup fraction of the optimizer steps (then linear decay to 0)
    warmup: float = 0.06
    # query groups per optimizer step (gradient accumulation)
    grad_accum: int = 4
    # weight of the pointwise BCE term added to the listwise loss (0 = listwise only)
    bce_weight: float = 0.0
    # weight of the listwise distillation term from the zero-shot bi-encoder (0 = off;
    # training.cross_encoder_teacher)
    distill_weight: float = 0.0
    # teacher logit = teacher_scale * cosine of the packaged bi-encoder embeddings
    teacher_scale: float = 20.0
    # softmax temperature of the distillation term
    distill_temperature: float = 1.0
    # of the negatives, this many are the teacher's highest-scored non-gold candidates among
    # the negative_depth first ones (bi-encoder hard negatives; 0 = all sampled)
    teacher_negatives: int = 0
    # prior-anchored model (logrerank.models.ce_prior): logit = classifier + prior_scale *
    # bi-encoder cosine, with the classifier zero-initialised so training starts at the
    # bi-encoder's ranking (0 = a plain cross-encoder)
    prior_scale: float = 0.0
    # sources cross-validated instead of hash-held-out (their queries all train, but for
    # cv_fold when cv_folds > 0; training.cv.grouped_folds); e.g. the multi-hop samples
    cv_sources: list[str] = field(default_factory=list)
    # folds of cv_sources (0 = no fold left out: the final model)
    cv_folds: int = 0
    # the fold left out of training (its queries are the out-of-fold evaluation set)
    cv_fold: int = 0
    # optimizer steps between held-out evaluations during training (the training curve;
    # 0 = only after training); each scores eval_queries per source
    eval_every: int = 0
    # gradient-norm clip (0 = none)
    max_grad_norm: float = 1.0
    # random seed (data order, negatives, head init, dropout)
    seed: int = 13
    # torch CPU threads (0 = torch default)
    threads: int = 1
    # bf16 autocast where the device supports it
    bf16: bool = True
    # stop training after this many minutes (0 = no cap); the model trained so far is saved
    max_minutes: float = 0.0
    # share of TRAIN queries held out (by qid hash) for model selection / held-out numbers
    dev_fraction: float = 0.1
    # held-out queries scored after training, per source (0 = all held-out queries)
    eval_queries: int = 30
    # optimizer steps between resumable state saves
    save_every: int = 50
    # optimizer steps between progress lines
    log_every: int = 10
    # output checkpoint folder (the delta)
    out: str = "runs/cross-encoder"
    # resumable training state (gitignored)
    state_dir: str = "runs/crossencoder/state"
    # device: "cpu", "cuda" or "auto"
    device: str = "cpu"

    LABEL = "cross-encoder training config"

    def check(self) -> CrossEncoderTrainConfig:
        """Reject values that cannot work; returns self.

        Raises:
            ConfigError: an unknown source or device, or values out of range (named with
                their values).
        """
        known = (*BENCHMARK_SOURCES, HAND_SCISUMM)
        bad_sources = [s for s in self.sources if s not in known]
        if not self.sources or bad_sources:
            raise ConfigError(
                f"sources must be benchmark names from {list(known)}, got {self.sources}"
            )
        if self.device not in ("cpu", "cuda", "auto") and not self.device.startswith("cuda:"):
            raise ConfigError(f"device must be 'cpu', 'cuda' or 'auto', got {self.device!r}")
        checks = {
            "negatives": self.negatives >= 1,
            "negative_depth": self.negative_depth >= self.negatives,
            "trainable_layers": self.trainable_layers >= 0,
            "max_length": self.max_length >= 8,
            "epochs": self.epochs >= 1,
            "grad_accum": self.grad_accum >= 1,
            "lr": self.lr > 0 and self.lr_head > 0,
            "bce_weight": self.bce_weight >= 0,
            "distill_weight": self.distill_weight >= 0 and self.teacher_scale > 0,
            "distill_temperature": self.distill_temperature > 0,
            "teacher_negatives": 0 <= self.teacher_negatives <= self.negatives,
            "eval_every": self.eval_every >= 0,
            "prior_scale": self.prior_scale >= 0,
            "cv_folds": self.cv_folds >= 0
            and (self.cv_folds == 0 or 0 <= self.cv_fold < self.cv_folds),
            "cv_sources": set(self.cv_sources) <= set(self.sources)
            and (HAND_SCISUMM not in self.sources or HAND_SCISUMM in self.cv_sources),
            "warmup": 0 <= self.warmup < 1,
            "dev_fraction": 0 <= self.dev_fraction < 1,
            "save_every": self.save_every >= 1 and self.log_every >= 1,
            "threads": self.threads >= 0,
            "max_minutes": self.max_minutes >= 0,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            shown = ", ".join(f"{k}={getattr(self, k)!r}" for k in bad)
            raise ConfigError(f"invalid cross-encoder training config value(s): {bad} ({shown})")
        return self

    def fingerprint(self) -> str:
        """Hash of the fields that determine the training trajectory (for safe resuming)."""
        skip = {
            "max_minutes",
            "eval_queries",
            "log_every",
            "save_every",
            "out",
            "threads",
            "eval_every",
        }
        data = {k: v for k, v in self.to_dict().items() if k not in skip}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
