"""Stage 2 of LoG training: the graph encoder and global scorer on frozen local encodings.

The stage-1 model is frozen; each train query's full 50-candidate pool is encoded once
(:func:`encode_pools`, cached) and only the graph encoder and global scorer train, on
cross-passage preference pairs (paper eq. 23) or one of the other objectives of
``TrainConfig.pairs`` (:func:`global_pool_loss`). Selection uses held-out TRAIN queries.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from ...config import LoGConfig
from ...data.schema import Example, example_passages
from ...jsonconfig import deep_merge
from ...log_checkpoint import read_meta
from ...ranking.losses import (
    aligned_pool_loss,
    drop_duplicate_negatives,
    lambda_pair_loss,
    preference_pairs,
    softmax_pool_loss,
    text_best_grade,
)
from ...ranking.scoring import duplicate_groups
from ..loop import TimeLimit, TrainLoop, make_optimizer, set_seed
from ..queries import load_train_queries
from .heldout import score_rankings
from .log_config import TrainConfig


def pool_targets(ex: Example, enc) -> tuple[torch.Tensor, torch.Tensor]:
    """Passage ranks (gold 1, else 2) and within-passage sentence ranks for eq. 23 pairs.

    Rationale sentences of a cited passage rank 1 and its other sentences 2; without sentence
    labels (Citation-Integrity) every sentence of a cited passage ranks 1. Sentences of
    non-cited passages rank 1, so pairs put every sentence of a cited passage whose rank is 1
    above every sentence of a non-cited passage.
    """
    gold = set(ex.gold_doc_ids)
    P = len(ex.candidates)
    prank = torch.tensor([1 if d.doc_id in gold else 2 for d in ex.candidates], dtype=torch.float)
    srank = torch.ones(len(enc.sentences))
    for s in enc.sentences:
        d = ex.candidates[s.passage_idx]
        if d.doc_id in gold and d.doc_id in ex.gold_sentences:
            srank[s.node] = 1.0 if s.sent_idx in ex.gold_sentences[d.doc_id] else 2.0
    assert prank.numel() == P
    return prank, srank


def node_grades(ex: Example, enc) -> torch.Tensor:
    """``[N]`` label grade per node: 2 a rationale sentence (or any sentence of a cited passage
    without sentence labels), 1 another sentence of a cited passage, 0 a non-cited passage."""
    gold = set(ex.gold_doc_ids)
    grade = torch.zeros(len(enc.sentences))
    for s in enc.sentences:
        d = ex.candidates[s.passage_idx]
        if d.doc_id in gold:
            labels = ex.gold_sentences.get(d.doc_id)
            grade[s.node] = 2.0 if labels is None or s.sent_idx in labels else 1.0
    return grade


def graded_pairs(ex: Example, enc, max_pairs: int | None = None) -> torch.Tensor:
    """All (u, v) with grade(u) > grade(v), within and across passages (``pairs = "graded"``).

    Grade 2: a rationale sentence (SciFact) or any sentence of a cited passage without sentence
    labels (Citation-Integrity); 1: another sentence of a cited passage; 0: a sentence of a
    non-cited passage. Eq. 23's pairs are the cross-passage subset; this adds the pairs that
    keep non-rationale sentences of a cited passage below its rationale.
    """
    grade = node_grades(ex, enc)
    u, v = (grade[:, None] > grade[None, :]).nonzero(as_tuple=True)
    pairs = torch.stack([u, v])
    if max_pairs is not None and pairs.size(1) > max_pairs:
        idx = torch.linspace(0, pairs.size(1) - 1, max_pairs).round().long()
        pairs = pairs[:, idx]
    return pairs


def encode_pools(model, examples: list[Example], log=sys.stdout, t_start: float = 0.0) -> list:
    """Encode each example's whole pool once (stage-2 inputs; the local model is frozen)."""
    encs = []
    for i, ex in enumerate(examples):
        enc = model.encode(ex.query, example_passages(ex))
        # inference-mode tensors cannot enter autograd: clone them into normal tensors
        for name in ("h", "role_probs", "local_logits", "passage_of"):
            setattr(enc, name, getattr(enc, name).clone())
        encs.append(enc)
        if (i + 1) % 50 == 0:
            el = time.perf_counter() - (t_start or time.perf_counter())
            print(f"encoded {i + 1}/{len(examples)} ({el / 60:.1f} min)", file=log, flush=True)
    return encs


def encode_pools_cached(
    model, examples: list[Example], cache_dir: str, log=sys.stdout, t_start: float = 0.0
) -> list:
    """:func:`encode_pools`, kept under ``cache_dir`` for the next run: one cache per query list
    (``stage2-<hash of the source:qid list>``), reused only when it holds the same queries and
    was written by the same stage 1 (:func:`~.encode_cache.local_digest`); ``""`` = no cache."""
    if not cache_dir:
        return encode_pools(model, examples, log, t_start)
    import hashlib

    from .encode_cache import load_encodings, local_digest, read_digest, save_encodings

    qids = [f"{ex.meta.get('source', '')}:{ex.qid}" for ex in examples]
    key = hashlib.sha256("\n".join(qids).encode()).hexdigest()[:16]
    stem = Path(cache_dir) / f"stage2-{key}"
    digest = local_digest(model)
    if read_digest(stem) == digest:
        cached_qids, encs = load_encodings(stem)
        if cached_qids == qids:
            print(f"encodings: {len(encs)} cached pools from {stem}", file=log, flush=True)
            return encs
    encs = encode_pools(model, examples, log, t_start)
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    save_encodings(stem, qids, encs, digest)
    return encs


@dataclass
class AlignedTargets:
    """Labels and score settings of one pool for :func:`aligned_pool_loss`."""

    passage_positive: torch.Tensor  # [P] cited passages that have a node
    sentence_positive: torch.Tensor | None  # [N] rationale sentences (None: no sentence labels)
    groups: torch.Tensor | None  # [N] duplicate-text groups (None: no merge)
    head: torch.Tensor | None  # [N] learned part of the local logits (l_local - prior)


def aligned_targets(ex: Example, enc, score) -> AlignedTargets | None:
    """Targets of ``pairs = "aligned"`` for one pool under the ``score`` settings (None when the
    pool has no cited passage)."""
    gold = set(ex.gold_doc_ids)
    pos = torch.tensor([d.doc_id in gold for d in ex.candidates])
    pos &= torch.bincount(enc.passage_of, minlength=pos.numel()) > 0  # passages with a node
    if not bool(pos.any()):
        return None
    labelled = any(d in ex.gold_sentences for d in gold)
    sent = (node_grades(ex, enc) == 2) if labelled else None
    texts = [s.text for s in enc.sentences]
    if sent is not None and score.merge_duplicates:
        sent = text_best_grade(sent.float(), texts) > 0  # a copy of a rationale is one
    head = None if enc.prior_logits is None else enc.local_logits - enc.prior_logits
    groups = duplicate_groups(texts) if score.merge_duplicates else None
    return AlignedTargets(pos, sent, groups, head)


def global_pool_loss(model, cfg: TrainConfig, ex: Example, enc, data) -> torch.Tensor | None:
    """The stage-2 loss of one pool under ``cfg.pairs`` (None when the pool gives no signal)."""

    def logits() -> torch.Tensor:
        out, _ = model.global_model(
            enc.h, enc.role_probs, enc.local_logits, data.edge_index, data.edge_type
        )
        return out.logits

    if cfg.pairs == "aligned":
        t = aligned_targets(ex, enc, model.config.score)
        if t is None:
            return None
        score = model.config.score
        return aligned_pool_loss(
            logits(), enc.passage_of, t.passage_positive, t.sentence_positive, t.groups, t.head,
            score.passage_weight, score.head_weight,
        )  # fmt: skip
    if cfg.pairs in ("lambda", "listwise"):  # losses over the whole pool's grades
        grade = node_grades(ex, enc)
        if cfg.dedupe_pairs:  # a copy of a positive sentence is positive too
            grade = text_best_grade(grade, [s.text for s in enc.sentences])
        if grade.max() <= 0:
            return None
        if cfg.pairs == "lambda":
            return lambda_pair_loss(logits(), grade)
        return softmax_pool_loss(logits(), grade == grade.max())
    if cfg.pairs == "graded":
        pairs = graded_pairs(ex, enc, cfg.max_pairs)
    else:
        prank, srank = pool_targets(ex, enc)
        pairs = preference_pairs(prank, srank, enc.passage_of, cfg.max_pairs)
    if cfg.dedupe_pairs:
        pairs = drop_duplicate_negatives(
            pairs, [s.text for s in enc.sentences], node_grades(ex, enc)
        )
    if pairs.numel() == 0:
        return None
    _, loss = model.global_model(
        enc.h, enc.role_probs, enc.local_logits, data.edge_index, data.edge_type, pairs=pairs
    )
    return loss


def fit_global(model, cfg: TrainConfig, train: list[Example], encs: list, log=sys.stdout) -> int:
    """Train the graph encoder + global scorer on pre-encoded pools; returns the steps run."""
    from ...graph.sentence_graph import build_graph

    set_seed(cfg.seed)
    t_start = time.perf_counter()
    params = list(model.global_model.parameters())
    steps_per_epoch = max(1, len(train) // cfg.grad_accum)
    total = steps_per_epoch * cfg.epochs
    opt, sched = make_optimizer(params, cfg.lr, cfg.weight_decay, total, cfg.warmup)
    loop = TrainLoop(total, limit=TimeLimit(cfg.max_minutes, start=t_start), every=20, out=log)
    rng = random.Random(cfg.seed)
    order = [i for _ in range(cfg.epochs) for i in rng.sample(range(len(train)), len(train))]
    model.global_model.train()
    s = 0
    for s in range(total):
        opt.zero_grad(set_to_none=True)
        acc = 0.0
        for k in range(cfg.grad_accum):
            j = order[(s * cfg.grad_accum + k) % len(order)]
            ex, enc = train[j], encs[j]
            z = torch.sigmoid(enc.local_logits)
            data = build_graph(enc.h, enc.role_probs, z, enc.passage_of, model.config.graph)
            loss = global_pool_loss(model, cfg, ex, enc, data)
            if loss is None:
                continue
            (loss / cfg.grad_accum).backward()
            acc += float(loss.detach()) / cfg.grad_accum
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        loop.update(s + 1, acc)
        if loop.out_of_time():
            print(f"time cap reached at step {s + 1}/{total}", file=log, flush=True)
            break
    model.global_model.eval()
    return s + 1


def evaluate_encoded(model, examples: list[Example], encs: list, **switches) -> dict[str, float]:
    """As :func:`evaluate_examples` on pre-encoded pools (graph stages only)."""
    return score_rankings(examples, (model.rank_encoded(enc, **switches) for enc in encs))


def prepare_global(cfg: TrainConfig, log=sys.stdout):
    """Load the frozen stage-1 model, encode train and held-out pools, calibrate tau_sim."""
    from ...pipeline import LoGReranker
    from .calibrate import graph_stats

    t_start = time.perf_counter()
    model = LoGReranker.from_pretrained(cfg.init)
    if cfg.model:
        merged = LoGConfig.from_dict(deep_merge(model.config.to_dict(), cfg.model))
        model.config.graph, model.config.global_ = merged.graph, merged.global_
    for p in model.local.parameters():
        p.requires_grad = False
    train, dev = load_train_queries(cfg, log)
    dev = dev[: cfg.heldout_limit or None]
    print(f"train queries {len(train)}, held-out {len(dev)}; encoding pools...", file=log)
    encs = encode_pools_cached(model, train, cfg.cache_dir, log, t_start)
    dev_encs = encode_pools_cached(model, dev, cfg.cache_dir, log, t_start)
    taus = [round(0.5 + 0.05 * i, 2) for i in range(10)]
    stats = graph_stats(model, encs, taus)
    for t in taus:
        st = stats[t]
        print(
            f"tau_sim {t:.2f}: nodes {st['nodes']:.1f}, similar {st['similar']:.1f} "
            f"({st['similar_per_node']:.2f}/node), all edges {st['all_edges']:.1f}",
            file=log,
            flush=True,
        )
    if cfg.tau_target_sim_per_node > 0:
        best = min(
            taus, key=lambda t: abs(stats[t]["similar_per_node"] - cfg.tau_target_sim_per_node)
        )
        print(f"calibrated tau_sim = {best} on train pools", file=log, flush=True)
        model.config.graph.tau_sim = best
    return model, train, encs, dev, dev_encs, stats


def train_global(cfg: TrainConfig, log=sys.stdout) -> dict[str, Any]:
    """Stage 2: freeze the stage-1 model, train the graph encoder + global scorer (eq. 23)."""
    set_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t_start = time.perf_counter()
    model, train, encs, dev, dev_encs, stats = prepare_global(cfg, log)
    steps = fit_global(model, cfg, train, encs, log)
    heldout = {
        "log": evaluate_encoded(model, dev, dev_encs),
        "log-local": evaluate_encoded(model, dev, dev_encs, use_global=False),
    }
    print(f"held-out: {json.dumps(heldout)}", file=log, flush=True)
    summary = {
        "stage": "global",
        "train_queries": len(train),
        "heldout_queries": len(dev),
        "steps": steps,
        "wall_minutes": round((time.perf_counter() - t_start) / 60, 1),
        "heldout": heldout,
        "graph_stats_train": {str(t): v for t, v in stats.items()},
        "tau_sim": model.config.graph.tau_sim,
        "config": dataclasses.asdict(cfg),
    }
    prev = read_meta(Path(cfg.init)).get("training") if cfg.init else None
    model.save_pretrained(cfg.out, extra={"training": summary, "training_local": prev})
    print(f"saved {cfg.out}", file=log, flush=True)
    return summary
