"""Run config of the cross-validated stage-2 training on multi-passage pools
(:mod:`logrerank.training.log.graph_cv`; ``configs/global-multihop.json``).

A ``logrerank train global`` config whose ``stage`` is ``"global-multihop"`` is this config (a
``stage`` of ``"global"`` is :class:`~logrerank.training.log.log_config.TrainConfig`); ``--set
FIELD=VALUE`` overrides are type-checked like every other run config
(:class:`~logrerank.jsonconfig.JsonConfig`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import LoGConfig
from ...jsonconfig import ConfigError, JsonConfig

MULTI_HOP_SOURCES = ("hotpotqa", "musique")
# single-passage and scientific multi-paper train pools that can join every fold
AUX_SOURCES = ("scifact", "citint", "evinf", "scisumm")
DEV_SOURCES = ("scifact", "citint")  # cached dev splits `--eval` reads
LOSSES = ("aligned", "listwise")
# model config sections a run may override (``score``: the adjustments the CV rows are scored
# with, e.g. ``paper_global_weight = 1`` to see the graph stage alone on paper pools)
MODEL_SECTIONS = ("graph", "global", "score")
STAGE = "global-multihop"  # GraphCVConfig.stage: what makes a global config this one
# fields that do not change the trained models (left out of the run digest)
_NOT_IN_DIGEST = (
    "stage",
    "seeds",
    "out",
    "work_dir",
    "threads",
    "dev",
    "encode",
)


@dataclass
class GraphCVConfig(JsonConfig):
    LABEL = "multi-hop stage-2 config"
    PARTIAL = {"model": LoGConfig}  # --set model.graph.tau_sim=0.8

    stage: str = STAGE  # always STAGE: names this config class (logrerank train global)
    init: str = "logrerank/checkpoints/log-reranker"  # stage-1 (+ stage-2) checkpoint; local frozen
    cache_dir: str = "runs/enc"  # encoded pools (training.encode_cache, one pair of files a split)
    # multi-hop train samples -> query limit (0 = all); the K folds are over these questions
    multihop: dict[str, int] = field(default_factory=lambda: {"hotpotqa": 0, "musique": 0})
    # single-passage train pools in the training part of every fold and of the final fit
    aux: dict[str, int] = field(default_factory=lambda: {"scifact": 100, "citint": 100})
    # aux pools start after this many queries of their train split (e.g. {"citint": 300}: the
    # claims stage 1 did not train on, whose local scores look like test-time ones)
    aux_offset: dict[str, int] = field(default_factory=dict)
    # further train pools beside aux, as "source:split:limit:offset" slices of an aux source
    # (e.g. "scisumm:train:20:5000": a paper-ordered split's later papers); treated as aux
    aux_extra: list[str] = field(default_factory=list)
    dev: dict[str, int] = field(default_factory=lambda: {"scifact": 0, "citint": 0})  # evaluated
    folds: int = 5  # K of the K-fold cross-validation over the multi-hop questions
    # "gold": questions that share a gold passage share a fold (SciFact claims often cite the
    # same abstract: folds over questions alone let a fold train on its test golds);
    # "question": one fold per question hash (the runs before this field existed)
    fold_groups: str = "gold"
    # True: the aux pools are folded as well (out-of-fold figures for them; the final fit still
    # trains on all); False: they are in the training part of every fold
    aux_folds: bool = True
    seeds: list[int] = field(default_factory=lambda: [13, 14, 15])  # one final model per seed
    cv_seed: int = 13  # seed of the cross-validation models
    epochs: int = 6
    lr: float = 1e-3
    weight_decay: float = 0.01
    warmup: float = 0.06  # fraction of the steps with a linear warmup
    grad_accum: int = 8  # pools per optimiser step
    loss: str = "aligned"  # "aligned" (passage max + rationale softmax) or "listwise"
    sentence_weight: float = 1.0  # weight of the rationale-sentence term of "aligned"
    # title dropout: each visit of a training pool reads its titles under one of these conditions,
    # drawn uniformly (logrerank/data/titles.py: "full", "first3", "none"); ["full"] = the runs before
    titles: list[str] = field(default_factory=lambda: ["full"])
    # held-out train pools ("source:split:limit:offset", none a training pool) on which --final
    # fits each seed's score calibration (logrerank/training/log/score_calibration.py), in every
    # title condition of `titles`; [] = no calibration (scores shown as sigmoid of the logits)
    calibration: list[str] = field(default_factory=list)
    aux_weight: float = 1.0  # loss weight of the single-passage (aux) pools
    threads: int = 1  # torch threads
    # True: encode the pools the cache lacks first; False: use the cached prefix of each split
    encode: bool = False
    # {"graph": {...}, "global": {...}, "score": {...}}: overrides of the init's model config
    model: dict[str, Any] = field(default_factory=dict)
    out: str = "runs/ckpt-multihop"  # final checkpoints (seed<k>/ subfolders for > 1 seed)
    work_dir: str = "runs/cv"  # fold results (resumable), under the run digest

    def check(self) -> GraphCVConfig:
        """Ranges and names; the ``model`` overrides must give a valid model config."""
        if self.stage != STAGE:
            raise ConfigError(
                f"stage of a multi-hop stage-2 config is {STAGE!r}, got {self.stage!r}"
            )
        if self.folds < 2 or self.epochs < 1 or self.grad_accum < 1 or self.threads < 1:
            raise ConfigError("folds must be >= 2 and epochs, grad_accum, threads >= 1")
        if self.loss not in LOSSES:
            raise ConfigError(f"loss must be one of {list(LOSSES)}, got {self.loss!r}")
        bad = [s for s in self.multihop if s not in MULTI_HOP_SOURCES]
        bad += [s for s in self.aux if s not in AUX_SOURCES]
        for spec in [*self.aux_extra, *self.calibration]:
            parts = spec.split(":")
            if len(parts) != 4 or not all(p.isdigit() for p in parts[2:]):
                raise ConfigError(f"aux_extra takes source:split:limit:offset, got {spec!r}")
            bad += [parts[0]] if parts[0] not in AUX_SOURCES else []
        bad += [s for s in self.dev if s not in DEV_SOURCES]
        if bad or not self.multihop:
            raise ConfigError(
                f"multihop takes {list(MULTI_HOP_SOURCES)} (at least one), aux takes "
                f"{list(AUX_SOURCES)}, dev takes {list(DEV_SOURCES)}; got {bad}"
            )
        if self.fold_groups not in ("gold", "question"):
            raise ConfigError(f"fold_groups must be 'gold' or 'question', got {self.fold_groups!r}")
        if not self.seeds or self.lr <= 0 or self.aux_weight < 0 or self.sentence_weight < 0:
            raise ConfigError("seeds must be non-empty, lr > 0, aux_weight/sentence_weight >= 0")
        from ...data.titles import TITLE_CONDITIONS

        if not self.titles or any(t not in TITLE_CONDITIONS for t in self.titles):
            raise ConfigError(
                f"titles takes conditions of {list(TITLE_CONDITIONS)}, got {self.titles}"
            )
        unknown = sorted(set(self.model) - set(MODEL_SECTIONS))
        if unknown:
            raise ConfigError(f"model takes the sections {list(MODEL_SECTIONS)}, got {unknown}")
        return self

    def digest(self) -> str:
        """Hash of every field that changes the trained models (names the CV work folder)."""
        d = dataclasses.asdict(self)
        for k in _NOT_IN_DIGEST:
            d.pop(k)
        for k in ("aux_offset", "aux_extra", "calibration"):  # the digest of runs from before these
            if not d[k]:
                d.pop(k)
        if d["titles"] == ["full"]:  # likewise
            d.pop("titles")
        if d["fold_groups"] == "question":  # likewise
            d.pop("fold_groups")
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:10]


def is_graph_cv_config(data: Any) -> bool:
    """Whether a loaded JSON config is a :class:`GraphCVConfig`: its ``stage`` field says
    ``"global-multihop"`` (a stage-2 :class:`~logrerank.training.log.log_config.TrainConfig` says
    ``"global"``)."""
    return isinstance(data, dict) and data.get("stage") == STAGE


def plan(cfg: GraphCVConfig) -> dict[str, Any]:
    """What a run would read and write (``--dry-run``)."""
    from .encode_cache import cache_stem

    splits = [(s, "train", n) for s, n in {**cfg.multihop, **cfg.aux}.items()]
    splits += [(s, "dev", n) for s, n in cfg.dev.items()]
    caches = {f"{s}-{sp}": str(cache_stem(cfg.cache_dir, s, sp, n or None)) for s, sp, n in splits}
    return {
        "inputs": {"init": cfg.init},
        "encodings": caches,
        "work_dir": str(Path(cfg.work_dir) / cfg.digest()),
        "output": cfg.out,
        "config": dataclasses.asdict(cfg),
    }
