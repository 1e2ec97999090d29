"""Cross-encoder training groups: a query's gold passages and sampled BM25 hard negatives.

For each TRAIN query with its BM25 50-candidate TRAIN pool, a group is the gold passages plus
``negatives`` BM25 hard negatives sampled among the ``negative_depth`` best-ranked non-gold
candidates (LoG's stage 1 samples among the top ``2 * negatives``; the shipped config uses the
whole pool, see its model card). A candidate whose shown text equals a gold's
(Citation-Integrity repeats passages under different ids) is never a negative. The loss per
group is listwise softmax cross-entropy with a uniform target over the gold passages, plus
``bce_weight`` times a pointwise binary cross-entropy (gold = 1).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

import torch
import torch.nn.functional as F

from ...data.schema import Example
from ...models.cross_encoder import pair_text
from ...types import Passage
from .ce_config import CrossEncoderTrainConfig


def as_passage(doc: Any) -> Passage:
    """A pool candidate (:class:`~logrerank.data.schema.Doc`) as a :class:`Passage`."""
    return Passage(text=doc.text, title=doc.title, pid=getattr(doc, "doc_id", None))


def query_group(
    ex: Example,
    negatives: int,
    depth: int,
    max_chars: int,
    rng: random.Random,
    pick_hard=None,
    hard: int = 0,
) -> tuple[list[str], list[float]]:
    """One training group: ``(texts, labels)``, gold passages first, then sampled negatives.

    Negatives are sampled (without replacement) among the ``depth`` best-ranked non-gold
    candidates of the pool; a candidate whose shown text equals a gold passage's text is never
    a negative (duplicated passages under different ids). With ``pick_hard`` (a function
    ``texts, k -> indices``, e.g. the distillation teacher's hardest,
    :func:`~logrerank.training.cross_encoder.teacher.teacher_negatives`) ``hard`` of the
    negatives are its picks among those candidates and the rest are sampled from the others.
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
    top = pool[:depth]
    picked = pick_hard(top, min(hard, negatives)) if pick_hard is not None and hard > 0 else []
    rest = [t for i, t in enumerate(top) if i not in set(picked)]
    neg = [top[i] for i in picked]
    neg += rng.sample(rest, min(negatives - len(neg), len(rest)))
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


def group_rng(seed: int, epoch: int, key: str) -> random.Random:
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


def held_out_sample(dev: list[Example], cfg: CrossEncoderTrainConfig) -> list[Example]:
    """The held-out queries scored after training: ``eval_queries`` per source, seeded."""
    out: list[Example] = []
    for src in cfg.sources:
        exs = [ex for ex in dev if ex.meta.get("source") == src]
        if cfg.eval_queries and cfg.eval_queries < len(exs):
            exs = random.Random(cfg.seed + 7).sample(exs, cfg.eval_queries)
        out.extend(exs)
    return out


def split_cv(
    train: list[Example], held_out: list[Example], cfg: CrossEncoderTrainConfig
) -> tuple[list[Example], list[Example], list[Example]]:
    """``(train, held_out, out_of_fold)`` once ``cfg.cv_sources`` are cross-validated.

    Queries of a cross-validated source are never hash-held-out: all of them train, except,
    when ``cfg.cv_folds > 0``, those of fold ``cfg.cv_fold``
    (:func:`~logrerank.training.cv.grouped_folds`: questions that share a gold passage share a
    fold), which are returned as the out-of-fold set.
    """
    from ..cv import grouped_folds

    cv = set(cfg.cv_sources)
    if not cv:
        return train, held_out, []
    pooled = [ex for ex in train + held_out if ex.meta.get("source") in cv]
    rest_train = [ex for ex in train if ex.meta.get("source") not in cv]
    rest_held = [ex for ex in held_out if ex.meta.get("source") not in cv]
    if not cfg.cv_folds:
        return rest_train + pooled, rest_held, []
    folds = grouped_folds(pooled, cfg.cv_folds)
    keep = [ex for ex, f in zip(pooled, folds) if f != cfg.cv_fold]
    oof = [ex for ex, f in zip(pooled, folds) if f == cfg.cv_fold]
    return rest_train + keep, rest_held, oof
