"""Train the project's cross-encoder baseline (DESIGN §6, seed 001) and store it as a delta.

The like-for-like cross-encoder: the same packaged all-MiniLM-L6-v2 backbone the LoG reranker
uses, fine-tuned as a ``BertForSequenceClassification`` with one output (a relevance logit) on
the same public training data (SciFact train + Citation-Integrity train, passage level), and
reading the same text the seed-001 stage shows it (:func:`~logrerank.baselines.cross_encoder.
pair_text`: title + first 1,000 body characters, 256 tokens).

Data. For each TRAIN query with its BM25 50-candidate TRAIN pool, a group is the gold passages
plus ``negatives`` BM25 hard negatives sampled among the ``negative_depth`` best-ranked non-gold
candidates (LoG's ``train.py`` samples among the top ``2 * negatives``; the shipped config uses the
whole pool, see its model card). A candidate whose shown text equals a gold's
(Citation-Integrity repeats passages under different ids) is never a negative. A fraction
``dev_fraction`` of the TRAIN queries, chosen by a hash of ``"<source>:<qid>"`` (same rule as
``logrerank.training.stages.held_out``), is held out for model selection and the reported held-out
numbers. SciFact dev and Citation-Integrity dev are never read here: they are the benchmarks.

Loss per group: listwise softmax cross-entropy over its passages with a uniform target over the
gold passages, plus ``bce_weight`` times a pointwise binary cross-entropy (gold = 1).

Only the top ``trainable_layers`` transformer layers, the pooler and the classifier train. The
checkpoint folder therefore stores only what differs from the packaged backbone::

    config.json            the sequence-classification config (num_labels = 1)
    delta.safetensors      the trained tensors (top layers, pooler, classifier), fp32
    logrerank_delta.json   format tag, the base model and its weights' sha256, tensor names
    tokenizer files        so the folder's tokenizer loads like any HF folder's

:func:`load_delta_checkpoint` rebuilds the full model: the base weights, then the stored
tensors on top. About 15 MB instead of 90 MB for a full fp32 MiniLM.

Run: ``python -m logrerank.training.cross_encoder --config configs/crossencoder.json``. Training is resumable
(state under ``state_dir``: trainable tensors, AdamW moments and the step, safetensors + JSON),
seeded, prints progress with an ETA, and stops at ``max_minutes`` if given.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import math
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from ..backbone import PACKAGED, load_tokenizer, resolve
from ..baselines.base import minmax
from ..baselines.cross_encoder import pair_text
from ..data.schema import Example
from ..evaluation.metrics import evaluate_query, macro_average
from ..types import Passage
from .common import (
    Progress,
    freeze_encoder_layers,
    load_state,
    make_optimizer,
    save_state,
    set_seed,
)

DELTA_WEIGHTS = "delta.safetensors"
"""File name of the stored (trained) tensors in a delta checkpoint."""

DELTA_META = "logrerank_delta.json"
"""File name of the delta description (format tag, base model, base hash, tensor names)."""

DELTA_FORMAT = "logrerank-delta"
DELTA_VERSION = 1


class DeltaCheckpointError(RuntimeError):
    """A delta checkpoint cannot be loaded (missing files, wrong base, bad tensors)."""


# ----------------------------------------------------------------------------- config
@dataclass
class CrossEncoderTrainConfig:
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
    out: str = "checkpoints/cross-encoder"
    # resumable training state (gitignored)
    state_dir: str = "runs/crossencoder/state"
    # device: "cpu", "cuda" or "auto"
    device: str = "cpu"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CrossEncoderTrainConfig:
        """Build from a dict, rejecting unknown fields and checking values."""
        if not isinstance(data, dict):
            raise ValueError("a cross-encoder training config is a JSON object")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown cross-encoder training config field(s) {unknown}")
        cfg = cls(**data)
        cfg.validate()
        return cfg

    @classmethod
    def load(cls, path: str | Path) -> CrossEncoderTrainConfig:
        """Read a JSON config file (unknown fields raise ``ValueError``)."""
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    def validate(self) -> None:
        """Raise ``ValueError`` for values that cannot work."""
        if not self.sources:
            raise ValueError("sources is empty")
        checks = {
            "negatives": self.negatives >= 1,
            "negative_depth": self.negative_depth >= self.negatives,
            "trainable_layers": self.trainable_layers >= 0,
            "max_length": self.max_length >= 8,
            "epochs": self.epochs >= 1,
            "grad_accum": self.grad_accum >= 1,
            "lr": self.lr > 0 and self.lr_head > 0,
            "bce_weight": self.bce_weight >= 0,
            "warmup": 0 <= self.warmup < 1,
            "dev_fraction": 0 <= self.dev_fraction < 1,
            "save_every": self.save_every >= 1 and self.log_every >= 1,
            "threads": self.threads >= 0,
            "max_minutes": self.max_minutes >= 0,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise ValueError(f"invalid cross-encoder training config value(s): {bad}")

    def fingerprint(self) -> str:
        """Hash of the fields that determine the training trajectory (for safe resuming)."""
        skip = {"max_minutes", "eval_queries", "log_every", "save_every", "out", "threads"}
        data = {k: v for k, v in self.to_dict().items() if k not in skip}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


# ----------------------------------------------------------------------------- data
def held_out(key: str, fraction: float) -> bool:
    """Deterministic held-out split of TRAIN queries by ``sha256("<source>:<qid>")``.

    The same rule as ``logrerank.training.stages.held_out``, so LoG and the cross-encoder hold out the
    same queries.
    """
    h = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    return (h % 1000) < fraction * 1000


def load_train_queries(cfg: CrossEncoderTrainConfig) -> tuple[list[Example], list[Example]]:
    """``(train, held_out)`` examples with their 50-candidate pools, from TRAIN splits only."""
    from ..data.pools import load_benchmark

    train: list[Example] = []
    dev: list[Example] = []
    for src in cfg.sources:
        exs, _ = load_benchmark(src, split="train", limit=cfg.max_queries.get(src) or None)
        for ex in exs:
            ex.meta["source"] = src
            if not ex.gold_doc_ids:
                continue
            (dev if held_out(f"{src}:{ex.qid}", cfg.dev_fraction) else train).append(ex)
    return train, dev


def as_passage(doc: Any) -> Passage:
    """A pool candidate (:class:`~logrerank.data.schema.Doc`) as a :class:`Passage`."""
    return Passage(text=doc.text, title=doc.title, pid=getattr(doc, "doc_id", None))


def query_group(
    ex: Example, negatives: int, depth: int, max_chars: int, rng: random.Random
) -> tuple[list[str], list[float]]:
    """One training group: ``(texts, labels)``, gold passages first, then sampled negatives.

    Negatives are sampled (without replacement) among the ``depth`` best-ranked non-gold
    candidates of the pool; a candidate whose shown text equals a gold passage's text is never
    a negative (duplicated passages under different ids).
    """
    gold_ids = set(ex.gold_doc_ids)
    gold = [pair_text(as_passage(d), max_chars) for d in ex.candidates if d.doc_id in gold_ids]
    if not gold:
        return [], []
    gold_texts = set(gold)
    pool = []
    for d in ex.candidates:
        if d.doc_id in gold_ids:
            continue
        t = pair_text(as_passage(d), max_chars)
        if t not in gold_texts and t.strip():
            pool.append(t)
    hard = pool[:depth]
    neg = rng.sample(hard, min(negatives, len(hard)))
    return gold + neg, [1.0] * len(gold) + [0.0] * len(neg)


def group_loss(logits: torch.Tensor, labels: torch.Tensor, bce_weight: float) -> torch.Tensor:
    """Listwise softmax CE (uniform target over the golds) + ``bce_weight`` * pointwise BCE."""
    logits = logits.float().reshape(-1)
    labels = labels.float().reshape(-1)
    target = labels / labels.sum().clamp_min(1.0)
    loss = -(target * F.log_softmax(logits, dim=0)).sum()
    if bce_weight > 0:
        loss = loss + bce_weight * F.binary_cross_entropy_with_logits(logits, labels)
    return loss


def _group_rng(seed: int, epoch: int, key: str) -> random.Random:
    h = hashlib.sha256(f"{seed}:{epoch}:{key}".encode()).hexdigest()[:16]
    return random.Random(int(h, 16))


def schedule(train: list[Example], cfg: CrossEncoderTrainConfig) -> list[tuple[int, Example]]:
    """The full, seeded sequence of ``(epoch, example)`` groups for the run."""
    rng = random.Random(cfg.seed)
    pool = list(train)
    if cfg.train_queries and cfg.train_queries < len(pool):
        pool = rng.sample(pool, cfg.train_queries)
    order: list[tuple[int, Example]] = []
    for epoch in range(cfg.epochs):
        ep = list(pool)
        random.Random(cfg.seed * 1000 + epoch).shuffle(ep)
        order.extend((epoch, ex) for ex in ep)
    return order


# ----------------------------------------------------------------------------- model
def _hf_quiet() -> Any:
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    return verbosity


def load_base_classifier(base: str, seed: int, config: Any = None) -> tuple[torch.nn.Module, Any]:
    """The base encoder as a 1-label sequence classifier (missing head seeded with ``seed``).

    Returns:
        ``(model, loading_info)``.
    """
    import os

    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    path = resolve(base)
    kwargs: dict[str, Any] = {"config": config} if config is not None else {"num_labels": 1}
    verbosity = _hf_quiet()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model, info = AutoModelForSequenceClassification.from_pretrained(
                path,
                local_files_only=True,
                use_safetensors=True,
                output_loading_info=True,
                **kwargs,
            )
    finally:
        hf_logging.set_verbosity(verbosity)
    return model.float(), info


def mark_trainable(model: torch.nn.Module, trainable_layers: int) -> list[str]:
    """Freeze everything but the top ``trainable_layers`` layers, the pooler and the head.

    Returns:
        Names (as in ``model.state_dict()``) of the trainable parameters.
    """
    base = getattr(model, model.base_model_prefix)
    freeze_encoder_layers(base, trainable_layers)
    for name, p in model.named_parameters():
        if not name.startswith(model.base_model_prefix + "."):
            p.requires_grad = True  # classifier (and any other head module)
    pooler = getattr(base, "pooler", None)
    if pooler is not None:
        for p in pooler.parameters():
            p.requires_grad = True
    return [n for n, p in model.named_parameters() if p.requires_grad]


def train_mode(model: torch.nn.Module) -> None:
    """Train mode for the trainable part only; fully frozen modules run in eval mode.

    The frozen embeddings and lower layers are a fixed feature extractor: no dropout there,
    which also makes a training step about 1.7x faster on CPU.
    """
    model.train()
    for m in model.modules():
        params = list(m.parameters())
        if params and not any(p.requires_grad for p in params):
            m.eval()


def base_fingerprint(base: str) -> str | None:
    """sha256 over the base folder's ``*.safetensors`` files (None when it is not a folder)."""
    path = Path(resolve(base))
    if not path.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(path.glob("*.safetensors")):
        h.update(f.name.encode())
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                h.update(chunk)
    return h.hexdigest()


def save_delta_checkpoint(
    model: torch.nn.Module,
    tokenizer: Any,
    out: str | Path,
    base: str,
    names: list[str],
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write a delta checkpoint: config, the tensors ``names`` (fp32), description, tokenizer.

    Args:
        model: the sequence classifier (its other tensors must equal the base's).
        tokenizer: its tokenizer (saved with the folder).
        out: the folder (created; files of an older delta are replaced, others kept).
        base: the base spec (``"packaged:all-MiniLM-L6-v2"`` or a folder) the delta applies to.
        names: ``state_dict`` keys to store.
        extra: more JSON-able information for ``logrerank_delta.json`` (e.g. training summary).
    """
    from safetensors.torch import save_file

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state = model.state_dict()
    tensors = {n: state[n].detach().float().cpu().contiguous() for n in names}
    tmp = out / (DELTA_WEIGHTS + ".tmp")
    save_file(tensors, str(tmp), metadata={"format": DELTA_FORMAT})
    tmp.chmod(0o644)
    tmp.replace(out / DELTA_WEIGHTS)
    model.config.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    meta = {
        "format": DELTA_FORMAT,
        "version": DELTA_VERSION,
        "base": base,
        "base_sha256": base_fingerprint(base),
        "architecture": type(model).__name__,
        "tensors": sorted(tensors),
        "n_parameters": int(sum(t.numel() for t in tensors.values())),
        **(extra or {}),
    }
    (out / DELTA_META).write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return out


def is_delta_checkpoint(path: str | Path) -> bool:
    """Whether ``path`` is a folder holding a delta checkpoint."""
    p = Path(path)
    return (p / DELTA_META).is_file() and (p / DELTA_WEIGHTS).is_file()


def load_delta_checkpoint(path: str | Path, check_base: bool = True) -> torch.nn.Module:
    """Rebuild the full sequence classifier of a delta checkpoint (eval mode, fp32, CPU).

    Loads the base named in ``logrerank_delta.json`` with the folder's ``config.json``, then
    overlays ``delta.safetensors``. Every weight the base lacks (the classifier) must be in
    the delta, every stored tensor must exist in the model with the same shape, and, when
    ``check_base``, the base weights must hash to the recorded ``base_sha256``.

    Raises:
        DeltaCheckpointError: missing files, a different base, or tensors that do not fit.
    """
    from safetensors.torch import load_file
    from transformers import AutoConfig

    p = Path(path)
    if not is_delta_checkpoint(p):
        raise DeltaCheckpointError(f"{str(p)!r} has no {DELTA_META} + {DELTA_WEIGHTS}")
    try:
        meta = json.loads((p / DELTA_META).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DeltaCheckpointError(f"unreadable {DELTA_META} in {str(p)!r}: {exc}") from exc
    if meta.get("format") != DELTA_FORMAT or int(meta.get("version", 0)) > DELTA_VERSION:
        raise DeltaCheckpointError(
            f"{DELTA_META} in {str(p)!r} is not a {DELTA_FORMAT} v{DELTA_VERSION} description"
        )
    base = str(meta.get("base") or PACKAGED)
    if check_base and meta.get("base_sha256"):
        try:
            found = base_fingerprint(base)
        except Exception as exc:
            raise DeltaCheckpointError(f"cannot read the base {base!r}: {exc}") from exc
        if found is not None and found != meta["base_sha256"]:
            raise DeltaCheckpointError(
                f"the base {base!r} differs from the one the delta was trained on "
                f"(sha256 {found[:12]} != {meta['base_sha256'][:12]})"
            )
    try:
        config = AutoConfig.from_pretrained(str(p), local_files_only=True)
        model, info = load_base_classifier(base, seed=0, config=config)
        delta = load_file(str(p / DELTA_WEIGHTS))
    except DeltaCheckpointError:
        raise
    except Exception as exc:
        raise DeltaCheckpointError(f"cannot load delta checkpoint {str(p)!r}: {exc}") from exc
    state = model.state_dict()
    unknown = sorted(k for k in delta if k not in state)
    bad = sorted(k for k in delta if k in state and tuple(state[k].shape) != tuple(delta[k].shape))
    missing = [str(k) for k in (info.get("missing_keys") or ())]
    missing += [str(k) for k in (info.get("mismatched_keys") or ())]
    uncovered = sorted(k for k in missing if not k.endswith("position_ids") and k not in delta)
    if unknown or bad or uncovered:
        raise DeltaCheckpointError(
            f"delta {str(p)!r} does not fit its base {base!r}: unknown {unknown[:5]}, "
            f"shape mismatch {bad[:5]}, not covered {uncovered[:5]}"
        )
    with torch.no_grad():
        for k, v in delta.items():
            state[k].copy_(v.to(state[k].dtype))
    return model.eval()


# ----------------------------------------------------------------------------- scoring
def _autocast(device: torch.device, enabled: bool) -> contextlib.AbstractContextManager[Any]:
    from ..backbone import bf16_supported

    if enabled and bf16_supported(device):
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext()


def _encode(tokenizer: Any, queries: list[str], texts: list[str], max_length: int, device):
    enc = tokenizer(
        queries,
        texts,
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )
    return {k: v.to(device) for k, v in enc.items()}


@torch.inference_mode()
def score_pairs(
    model: torch.nn.Module,
    tokenizer: Any,
    query: str,
    texts: list[str],
    max_length: int,
    bf16: bool,
    batch_size: int = 32,
) -> list[float]:
    """Logits of ``(query, text)`` pairs (length-sorted batches, input order returned)."""
    device = next(model.parameters()).device
    lengths = [len(t) for t in texts]
    order = sorted(range(len(texts)), key=lambda i: (lengths[i], i))
    out = [0.0] * len(texts)
    for b in range(0, len(order), batch_size):
        idx = order[b : b + batch_size]
        enc = _encode(tokenizer, [query] * len(idx), [texts[i] for i in idx], max_length, device)
        with _autocast(device, bf16):
            logits = model(**enc).logits
        for i, v in zip(idx, logits.float().reshape(len(idx), -1)[:, 0].tolist()):
            out[i] = float(v)
    return out


def evaluate_held_out(
    model: torch.nn.Module,
    tokenizer: Any,
    examples: list[Example],
    cfg: CrossEncoderTrainConfig,
    top_n: int = 25,
    blend_weight: float = 0.5,
    log=sys.stdout,
) -> dict[str, Any]:
    """Passage ranking metrics (@10, percent) on held-out TRAIN queries, per source and all.

    Rankers over each query's 50-candidate pool: ``first-pass`` (the BM25 pool order),
    ``cross-encoder`` (the model alone on every candidate) and ``ce-stage`` (the model over the
    pool order's top ``top_n``, min-max blended ``w * ce + (1 - w) * first_pass`` with
    first-pass score ``1 - i / n``; the rest keep their order).
    """
    model.eval()
    rows: dict[str, dict[str, list[dict[str, float]]]] = {}
    t0 = time.perf_counter()
    for qi, ex in enumerate(examples, 1):
        ids = [d.doc_id for d in ex.candidates]
        texts = [pair_text(as_passage(d), cfg.max_chars) for d in ex.candidates]
        logits = score_pairs(model, tokenizer, ex.query, texts, cfg.max_length, cfg.bf16)
        n = len(ids)
        ce_order = sorted(range(n), key=lambda i: (-logits[i], i))
        top = list(range(min(top_n, n)))
        ce = minmax([logits[i] for i in top])
        fp = minmax([1 - i / n for i in top])
        final = [blend_weight * c + (1 - blend_weight) * f for c, f in zip(ce, fp)]
        stage = sorted(top, key=lambda i: (-final[i], i)) + list(range(len(top), n))
        src = ex.meta.get("source", "?")
        per = rows.setdefault(src, {"first-pass": [], "cross-encoder": [], "ce-stage": []})
        per["first-pass"].append(evaluate_query(ids, ex.gold_doc_ids))
        per["cross-encoder"].append(evaluate_query([ids[i] for i in ce_order], ex.gold_doc_ids))
        per["ce-stage"].append(evaluate_query([ids[i] for i in stage], ex.gold_doc_ids))
        if qi % 10 == 0 or qi == len(examples):
            el = time.perf_counter() - t0
            print(
                f"held-out eval {qi}/{len(examples)} elapsed {el / 60:.1f} min "
                f"ETA {el / qi * (len(examples) - qi) / 60:.1f} min",
                file=log,
                flush=True,
            )
    result: dict[str, Any] = {"queries": {s: len(r["first-pass"]) for s, r in rows.items()}}
    for src, per in rows.items():
        result[src] = {name: macro_average(v) for name, v in per.items()}
    if rows:
        result["all"] = {
            name: macro_average([q for per in rows.values() for q in per[name]])
            for name in ("first-pass", "cross-encoder", "ce-stage")
        }
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


def held_out_sample(dev: list[Example], cfg: CrossEncoderTrainConfig) -> list[Example]:
    """The held-out queries scored after training: ``eval_queries`` per source, seeded."""
    out: list[Example] = []
    for src in cfg.sources:
        exs = [ex for ex in dev if ex.meta.get("source") == src]
        if cfg.eval_queries and cfg.eval_queries < len(exs):
            exs = random.Random(cfg.seed + 7).sample(exs, cfg.eval_queries)
        out.extend(exs)
    return out


# ----------------------------------------------------------------------------- training
def train(
    cfg: CrossEncoderTrainConfig,
    log=sys.stdout,
    data: tuple[list[Example], list[Example]] | None = None,
    max_steps: int | None = None,
    evaluate: bool = True,
) -> dict[str, Any]:
    """Train (or resume), export the delta checkpoint to ``cfg.out``, score held-out queries.

    Args:
        cfg: the run configuration.
        log: where progress goes.
        data: ``(train, held_out)`` examples; default :func:`load_train_queries`.
        max_steps: stop after this optimizer step (tests); the state is saved there.
        evaluate: score the held-out sample after training.

    Returns:
        A summary: steps, pairs seen, wall time, held-out metrics, checkpoint size, ...
    """
    wall0 = time.perf_counter()
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    set_seed(cfg.seed)
    device = torch.device(cfg.device if cfg.device != "auto" else "cpu")
    if cfg.device == "auto" and torch.cuda.is_available():
        device = torch.device("cuda")
    train_ex, dev_ex = data if data is not None else load_train_queries(cfg)
    order = schedule(train_ex, cfg)
    total = math.ceil(len(order) / cfg.grad_accum)
    print(
        f"cross-encoder training: {len({id(e) for _, e in order})} train queries x "
        f"{cfg.epochs} epoch(s) = {len(order)} groups, {total} optimizer steps "
        f"(held out: {len(dev_ex)} queries); threads {torch.get_num_threads()}, "
        f"bf16 {cfg.bf16}, device {device}",
        file=log,
        flush=True,
    )

    model, _ = load_base_classifier(cfg.base, seed=cfg.seed)
    tokenizer = load_tokenizer(resolve(cfg.base))
    names = mark_trainable(model, cfg.trainable_layers)
    model.to(device)
    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"trainable tensors: {len(names)} ({n_train:,} parameters)", file=log, flush=True)
    head = [p for n, p in model.named_parameters() if p.requires_grad and n in _head_names(model)]
    body = [
        p for n, p in model.named_parameters() if p.requires_grad and n not in _head_names(model)
    ]
    groups = [{"params": body, "lr": cfg.lr}, {"params": head, "lr": cfg.lr_head}]
    opt, sched = make_optimizer(groups, cfg.lr, cfg.weight_decay, total, cfg.warmup)

    state_dir = Path(cfg.state_dir)
    fp = cfg.fingerprint()
    meta_file = state_dir / "state.json"
    pairs_seen, groups_seen, train_seconds = 0, 0, 0.0
    if meta_file.is_file():
        old = json.loads(meta_file.read_text(encoding="utf-8"))
        if old.get("fingerprint") != fp:
            raise RuntimeError(
                f"{state_dir} holds the state of a different run (config changed); "
                "remove it or pass --fresh"
            )
    step = load_state(state_dir, model, opt, sched)
    if step:
        # LambdaLR.load_state_dict does not reset the optimizer's current lr; do it here.
        for group, lr in zip(opt.param_groups, sched.get_last_lr()):
            group["lr"] = lr
        old = json.loads(meta_file.read_text(encoding="utf-8"))
        pairs_seen = int(old.get("pairs_seen", 0))
        groups_seen = int(old.get("groups_seen", 0))
        train_seconds = float(old.get("train_seconds", 0.0))
        print(f"resumed at step {step}/{total} ({pairs_seen} pairs seen)", file=log, flush=True)

    def meta() -> dict[str, Any]:
        return {
            "fingerprint": fp,
            "pairs_seen": pairs_seen,
            "groups_seen": groups_seen,
            "train_seconds": round(train_seconds + (time.perf_counter() - t_start), 1),
            "total_steps": total,
        }

    progress = Progress(total, every=cfg.log_every, start=step, out=log)
    train_mode(model)
    t_start = time.perf_counter()
    stopped_early = False
    last = min(total, max_steps) if max_steps is not None else total
    while step < last:
        if cfg.max_minutes and (time.perf_counter() - wall0) / 60 >= cfg.max_minutes:
            stopped_early = True
            print(f"max_minutes {cfg.max_minutes} reached at step {step}", file=log, flush=True)
            break
        torch.manual_seed(cfg.seed * 100_003 + step)  # dropout, reproducible on resume
        chunk = order[step * cfg.grad_accum : (step + 1) * cfg.grad_accum]
        loss_sum = 0.0
        for epoch, ex in chunk:
            rng = _group_rng(cfg.seed, epoch, f"{ex.meta.get('source', '')}:{ex.qid}")
            texts, labels = query_group(ex, cfg.negatives, cfg.negative_depth, cfg.max_chars, rng)
            if not texts:
                continue
            enc = _encode(tokenizer, [ex.query] * len(texts), texts, cfg.max_length, device)
            with _autocast(device, cfg.bf16):
                logits = model(**enc).logits
            loss = group_loss(logits, torch.tensor(labels, device=device), cfg.bce_weight)
            (loss / len(chunk)).backward()
            loss_sum += float(loss.detach())
            pairs_seen += len(texts)
            groups_seen += 1
        if cfg.max_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(
                [p for p in model.parameters() if p.requires_grad], cfg.max_grad_norm
            )
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        progress.update(step, loss_sum / max(1, len(chunk)), pairs=pairs_seen)
        if step % cfg.save_every == 0 or step == last:
            save_state(state_dir, model, opt, sched, step, meta())
    if stopped_early:
        save_state(state_dir, model, opt, sched, step, meta())
    train_secs = train_seconds + (time.perf_counter() - t_start)
    print(
        f"training done: step {step}/{total}, {pairs_seen} training pairs seen "
        f"({groups_seen} query groups), {train_secs / 60:.1f} min training",
        file=log,
        flush=True,
    )

    summary: dict[str, Any] = {
        "step": step,
        "total_steps": total,
        "stopped_early": stopped_early,
        "pairs_seen": pairs_seen,
        "groups_seen": groups_seen,
        "train_queries": len({id(e) for _, e in order}),
        "held_out_queries": len(dev_ex),
        "train_minutes": round(train_secs / 60, 2),
        "threads": torch.get_num_threads(),
        "config": cfg.to_dict(),
    }
    if evaluate and dev_ex:
        sample = held_out_sample(dev_ex, cfg)
        print(f"scoring {len(sample)} held-out TRAIN queries", file=log, flush=True)
        summary["held_out"] = evaluate_held_out(model, tokenizer, sample, cfg, log=log)
        _print_held_out(summary["held_out"], log)
    summary["wall_minutes"] = round((time.perf_counter() - wall0) / 60, 2)
    out = save_delta_checkpoint(
        model.cpu(), tokenizer, cfg.out, cfg.base, names, extra={"training": summary}
    )
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    summary["checkpoint"] = str(out)
    summary["checkpoint_bytes"] = size
    print(f"wrote {out} ({size / 1e6:.1f} MB)", file=log, flush=True)
    return summary


def _head_names(model: torch.nn.Module) -> set[str]:
    """Parameters outside the base model (the classifier), trained with ``lr_head``."""
    prefix = model.base_model_prefix + "."
    return {n for n, _ in model.named_parameters() if not n.startswith(prefix)}


def _print_held_out(res: dict[str, Any], log) -> None:
    for src in [k for k in res if isinstance(res[k], dict) and "first-pass" in res[k]]:
        n = res["queries"].get(src, sum(res["queries"].values()))
        for name, m in res[src].items():
            vals = " ".join(f"{k} {v:.1f}" for k, v in m.items())
            print(f"held-out {src} ({n} q) {name}: {vals}", file=log, flush=True)


def train_crossencoder(config_path: str | Path) -> dict[str, Any]:
    """Train the cross-encoder from a JSON config file; returns the run summary."""
    return train(CrossEncoderTrainConfig.load(config_path))


def main(argv: list[str] | None = None) -> int:
    """``python -m logrerank.training.cross_encoder --config configs/crossencoder.json [--fresh]``."""
    ap = argparse.ArgumentParser(prog="python -m logrerank.training.cross_encoder", description=__doc__)
    ap.add_argument("--config", required=True, help="JSON run config")
    ap.add_argument("--fresh", action="store_true", help="discard saved state, start over")
    ap.add_argument("--summary", help="also write the run summary JSON here")
    args = ap.parse_args(argv)
    cfg = CrossEncoderTrainConfig.load(args.config)
    if args.fresh and Path(cfg.state_dir).exists():
        shutil.rmtree(cfg.state_dir)
    summary = train(cfg)
    text = json.dumps(summary, indent=1)
    if args.summary:
        Path(args.summary).parent.mkdir(parents=True, exist_ok=True)
        Path(args.summary).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
