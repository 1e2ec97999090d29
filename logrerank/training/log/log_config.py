"""The LoG training run config (stages 1 and 2): one JSON file per run (``configs/local.json``).

See :mod:`logrerank.training.log.local_stage` and :mod:`logrerank.training.log.global_stage` for what
the fields drive; ``docs/method.md`` for the losses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...config import ROLE_NAMES, LoGConfig
from ...data.silver import SILVER_SOURCE
from ...jsonconfig import ConfigError, JsonConfig

PAIR_MODES = ("paper", "graded", "listwise", "lambda", "aligned")  # TrainConfig.pairs
STAGES = ("local", "global")  # TrainConfig.stage
BENCHMARK_SOURCES = ("scifact", "citint", "pubmedqa", "hotpotqa", "musique", "evinf", "scisumm")
"""Benchmarks with a public train split (:data:`logrerank.data.pools.BENCHMARKS`; ``scisumm``'s is
ScisummNet)."""
TRAIN_SOURCES = (*BENCHMARK_SOURCES, SILVER_SOURCE)  # TrainConfig.sources


@dataclass
class TrainConfig(JsonConfig):
    stage: str = "local"  # "local" (stage 1) or "global" (stage 2)
    # train sets: "scifact", "citint", "pubmedqa-silver" (PubMedQA non-test questions, test
    # abstracts removed from the pools, silver sentence labels; logrerank.data.silver)
    sources: list[str] = field(default_factory=lambda: ["scifact", "citint"])
    max_queries: dict[str, int] = field(default_factory=dict)  # per-source cap (0/absent = all)
    # per-source number of leading train queries to skip before the cap (e.g. the claims another
    # stage trained on, or a selection slice); 0/absent = none
    skip_queries: dict[str, int] = field(default_factory=dict)
    negatives: int = 7  # BM25 hard-negative passages per query (stage 1)
    # further negatives drawn uniformly from the rest of the 50-candidate pool (stage 1), so the
    # model also sees the easy candidates it must keep down at test time
    random_negatives: int = 0
    # "pubmedqa-silver": at most this many silver sentences per gold abstract (the ones with the
    # highest ROUGE-1 F1 against the withheld conclusion)
    silver_top: int = 2
    # "pubmedqa-silver": a silver sentence needs ROUGE-1 F1 >= this; abstracts with none are dropped
    silver_min_f1: float = 0.2
    # "pubmedqa-silver": section roles a silver sentence may have ([] = any; ["result"] = findings)
    silver_roles: list[str] = field(default_factory=list)
    trainable_layers: int = 2  # top encoder layers fine-tuned (stage 1); the rest stay packaged
    epochs: int = 2  # passes over the training queries
    lr: float = 2e-5  # learning rate of the encoder layers (stage 1) / graph model (stage 2)
    lr_heads: float = 1e-3  # learning rate of the heads (stage 1)
    weight_decay: float = 0.01  # AdamW weight decay (paper)
    warmup: float = 0.06  # warmup fraction (paper)
    grad_accum: int = 8  # queries per optimizer step (paper: 8-step accumulation)
    lam: float = 0.5  # role-loss weight lambda (eq. 22; paper 0.5)
    tau: float = 1.0  # soft-target temperature of eq. 19
    mu: float = 1.0  # weight of the cross-passage calibration loss L_cal (our addition)
    role_tagger: str | None = "default"  # role-tagger checkpoint for soft targets; None = no L_role
    max_pairs: int = 4096  # preference pairs per query at most (stage 2)
    # stage-2 pairs: "paper" = eq. 23's cross-passage pairs; "graded" = every pair of sentences
    # with different grades (rationale > other sentence of a cited passage > non-cited);
    # "listwise" = no pairs: softmax cross-entropy over the pool's nodes with the top-grade
    # sentences as targets (top-heavy, like nDCG@10; softmax_pool_loss); "lambda" = graded
    # pairs weighted by their nDCG@10 change if swapped (LambdaRank; lambda_pair_loss);
    # "aligned" = softmax losses on the adjusted scores ranked at inference, cited passages by
    # their best sentence + rationale sentences where labelled (aligned_pool_loss)
    pairs: str = "paper"
    # stage 2: drop pairs whose less-preferred sentence has the same text as a preferred one
    # (Citation-Integrity passages overlap: a cited sentence also sits in non-cited candidates)
    dedupe_pairs: bool = False
    # Stage 2: if > 0, pick tau_sim on the TRAIN pools so that the mean number of similarity
    # edges per node is closest to this (the paper's pools: (3387.3 - ~480 adjacency) / 530.6
    # nodes ~= 5.5); 0 = keep the configured tau_sim.
    tau_target_sim_per_node: float = 0.0
    dev_fraction: float = 0.1  # share of train queries held out for model selection
    heldout_limit: int = 0  # evaluate on at most this many held-out queries (0 = all)
    heldout_every: int = 0  # stage 1: held-out figures every this many steps (0 = start and end)
    seed: int = 13  # random seed (paper: 13)
    threads: int = 0  # torch threads (0 = default)
    bf16: bool = True  # bf16 autocast where supported
    max_minutes: float = 0.0  # stop training after this many minutes (0 = no cap)
    # stage 2: the stage-1 checkpoint to start from (frozen local part); stage 1: a checkpoint
    # whose local stage training continues from (warm start; its other parts are carried over)
    init: str | None = None
    out: str = "runs/log-reranker"  # output checkpoint folder (the bundled one is a copy of it)
    state_dir: str = "runs/train-state"  # resumable state (gitignored)
    # global stage: folder of the frozen stage 1's pool encodings, reused by later runs on the
    # same queries and stage 1 (training.log.encode_cache; "" = encode every run)
    cache_dir: str = ""
    model: dict[str, Any] = field(default_factory=dict)  # LoGConfig overrides (nested dict)

    LABEL = "training config"
    PARTIAL = {"model": LoGConfig}  # --set model.graph.tau_sim=0.8

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> TrainConfig:
        """Reject values with no meaning (a typo must not train a different objective).

        Raises:
            ConfigError: an unknown stage, pair mode, source or role, or a value out of range
                (the message names the field and the value).
        """
        if self.pairs not in PAIR_MODES:
            raise ConfigError(f"pairs must be one of {PAIR_MODES}, got {self.pairs!r}")
        if self.stage not in STAGES:
            raise ConfigError(f"stage must be 'local' or 'global', got {self.stage!r}")
        bad = [s for s in self.sources if s not in TRAIN_SOURCES]
        if not self.sources or bad or len(set(self.sources)) != len(self.sources):
            raise ConfigError(
                f"sources must be distinct names from {list(TRAIN_SOURCES)}, got {self.sources}"
            )
        bad = [r for r in self.silver_roles if r not in ROLE_NAMES]
        if bad:
            raise ConfigError(f"silver_roles must be among {list(ROLE_NAMES)}, got {bad}")
        ranges = {
            "negatives": self.negatives >= 0,
            "random_negatives": self.random_negatives >= 0,
            "trainable_layers": self.trainable_layers >= 0,
            "epochs": self.epochs >= 1,
            "grad_accum": self.grad_accum >= 1,
            "max_pairs": self.max_pairs >= 1,
            "dev_fraction": 0.0 <= self.dev_fraction < 1.0,
            "warmup": 0.0 <= self.warmup < 1.0,
            "max_minutes": self.max_minutes >= 0,
            "heldout_every": self.heldout_every >= 0,
        }
        bad = [f"{k}={getattr(self, k)!r}" for k, ok in ranges.items() if not ok]
        if bad:
            raise ConfigError(f"training config value(s) out of range: {', '.join(bad)}")
        return self
