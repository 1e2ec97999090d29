"""Stage 1 of LoG training: the local scorer on sampled passages (paper eqs. 19-22 + L_cal).

The local scorer (top encoder layers + heads) trains on SciFact train (rationale sentences) and
Citation-Integrity train (passage labels only), optionally PubMedQA non-test questions with
silver sentence labels (source ``"pubmedqa-silver"``, see :mod:`logrerank.data.silver`),
Evidence Inference train (evidence sentences of the prompt's trial) and ScisummNet (the cited
sentences of a citance), with BM25 hard-negative passages from each query's train pool. With
``init`` set, training continues from that checkpoint's local stage (``configs/local-scientific.json``).
Loss per query::

    L = L_rank^loc (eq. 20, within each cited passage: rationale sentences rank 1, the rest 2)
      + lambda * L_role (eq. 21, soft targets from the role tagger)
      + mu * L_cal

``L_cal`` is our addition (eq. 20 alone never compares sentences of different passages, yet the
graph's delta constraint and the final ranking do): a listwise softmax over all sampled sentences
of the query with the rationale sentences as targets (SciFact), or over passages with
``logsumexp`` of their sentence logits as passage logit and the cited passages as targets
(Citation-Integrity, whose sentence labels are degenerate).

Hyperparameters are chosen on a held-out slice of the TRAIN queries (``dev_fraction``,
:func:`logrerank.training.queries.held_out`), never on SciFact dev or Citation-Integrity dev, which
are reported benchmarks.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

from ...config import LoGConfig
from ...data.schema import Example
from ...local.backbone import autocast, freeze_encoder_layers
from ...local.segment_cache import SegmentCache
from ...ranking.losses import listwise_loss, role_kl_loss
from ..loop import TimeLimit, TrainLoop, make_optimizer, set_seed
from ..queries import load_train_queries
from .heldout import evaluate_examples
from .log_config import TrainConfig
from .unit_loss import node_logits, unit_step_loss


def sample_passages(
    ex: Example, negatives: int, rng: random.Random, random_negatives: int = 0
) -> list[int]:
    """Indices of the gold candidates, ``negatives`` BM25 hard negatives (drawn from the top
    ``2 * negatives`` non-gold candidates) and ``random_negatives`` from the rest (pool order)."""
    gold = [i for i, d in enumerate(ex.candidates) if d.doc_id in set(ex.gold_doc_ids)]
    neg = [i for i, d in enumerate(ex.candidates) if d.doc_id not in set(ex.gold_doc_ids)]
    hard, rest = neg[: negatives * 2], neg[negatives * 2 :]
    picked = rng.sample(hard, min(negatives, len(hard)))
    picked += rng.sample(rest, min(random_negatives, len(rest)))
    return sorted(gold + picked)


class RoleTargets:
    """Soft role targets for training sentences from the role tagger (cached per doc id)."""

    def __init__(self, path: str | None):
        self.tagger = None
        self.cache: dict[str, torch.Tensor] = {}
        if path is None:
            return
        from ...models.role_tagger import RoleTagger

        self.tagger = RoleTagger.from_pretrained(None if path == "default" else path)

    def get(self, docs: list[tuple[str, list[str]]]) -> list[torch.Tensor | None]:
        if self.tagger is None:
            return [None] * len(docs)
        todo = [(d, s) for d, s in docs if d not in self.cache]
        if todo:
            probs = self.tagger.predict([s for _, s in todo])
            for (d, _), p in zip(todo, probs):
                self.cache[d] = p.float()
        return [self.cache[d] for d, _ in docs]


def local_step_loss(
    model, ex: Example, idx: list[int], roles: RoleTargets, cfg: TrainConfig, cache=None
):
    """Loss of one query (eqs. 20-22 + L_cal) on the sampled passages ``idx``; passage units
    (the cross-encoder twin) have passage-level L_cal only (:mod:`.unit_loss`)."""
    if model.config.local.unit == "passage":
        return unit_step_loss(model, ex, idx, cfg.mu, cache)
    docs = [ex.candidates[i] for i in idx]
    sents = [list(d.sentences) for d in docs]
    if not any(sents):
        return None
    out, tok, logits = node_logits(model, ex.query, sents, cache)
    nodes = out.nodes  # [M] node ids in document order of the sampled passages
    role_logits = torch.empty(tok.num_nodes, 3, device=out.logits.device)
    role_logits[nodes] = out.role_logits.float()
    group = torch.tensor([p for p, s in enumerate(sents) for _ in s], device=logits.device)
    gold_docs = set(ex.gold_doc_ids)
    gold_sent = torch.zeros(tok.num_nodes, dtype=torch.bool)
    has_sent_labels = bool(ex.gold_sentences)
    n = 0
    for d in docs:
        for j in ex.gold_sentences.get(d.doc_id, []):
            if j < len(d.sentences):
                gold_sent[n + j] = True
        n += len(d.sentences)
    gold_sent = gold_sent.to(logits.device)
    loss = logits.sum() * 0.0
    # eq. 20 within cited passages that have sentence labels
    if has_sent_labels:
        cited = [
            p for p, d in enumerate(docs) if d.doc_id in gold_docs and d.doc_id in ex.gold_sentences
        ]
        mask = torch.isin(group, torch.tensor(cited, device=group.device))
        if mask.any():
            g = torch.unique(group[mask], return_inverse=True)[1]
            ranks = torch.where(gold_sent[mask], 1.0, 2.0)
            loss = loss + listwise_loss(logits[mask], ranks, g, cfg.tau, reduction="mean")
    # L_cal across passages
    if cfg.mu > 0:
        if has_sent_labels and gold_sent.any():
            target = gold_sent.float() / gold_sent.sum()
            loss = loss + cfg.mu * -(target * torch.log_softmax(logits, 0)).sum()
        else:
            P = len(docs)
            plogit = torch.stack([torch.logsumexp(logits[group == p], 0) for p in range(P)])
            gold_p = torch.tensor([d.doc_id in gold_docs for d in docs], device=logits.device)
            if gold_p.any():
                target = gold_p.float() / gold_p.sum()
                loss = loss + cfg.mu * -(target * torch.log_softmax(plogit, 0)).sum()
    # eq. 21 role KL with soft targets from the tagger
    if cfg.lam > 0:
        targets = roles.get([(d.doc_id, list(d.sentences)) for d in docs])
        if all(t is not None for t in targets):
            rt = torch.cat(targets).to(logits.device)
            loss = loss + cfg.lam * role_kl_loss(role_logits, rt, reduction="mean")
    return loss


def train_local(cfg: TrainConfig, log=sys.stdout) -> dict[str, Any]:
    """Stage 1. Returns the run summary (also written to the checkpoint's config.json)."""
    from ...pipeline import LoGReranker

    set_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t_start = time.perf_counter()
    precision = {} if cfg.bf16 else {"precision": "fp32"}
    if cfg.init:  # warm start: the checkpoint's config, not cfg.model
        model = LoGReranker.from_pretrained(cfg.init, **precision)
        print(f"warm start from {cfg.init} (model overrides ignored)", file=log, flush=True)
    else:
        model_cfg = LoGConfig.from_dict(cfg.model) if cfg.model else LoGConfig()
        model = LoGReranker(dataclasses.replace(model_cfg, **precision))
    train, dev = load_train_queries(cfg, log)
    print(f"train queries {len(train)}, held-out {len(dev)}", file=log, flush=True)
    isolated = model.config.local.isolated_layers > 0
    # isolated mode: the packaged encoder is frozen whole (it is the prior); the joint copy of
    # its top layers trains at ``lr``
    enc_names = freeze_encoder_layers(model.local.encoder, 0 if isolated else cfg.trainable_layers)
    for p in model.global_model.parameters():
        p.requires_grad = False
    head = model.local.head_parameters()
    enc = [p for p in model.local.encoder.parameters() if p.requires_grad]
    enc += model.local.joint_parameters()
    enc_names += (
        [f"joint_layers ({len(model.local.joint_parameters())} tensors)"] if isolated else []
    )
    steps_per_epoch = max(1, len(train) // cfg.grad_accum)
    total = steps_per_epoch * cfg.epochs
    groups = [{"params": head, "lr": cfg.lr_heads}, {"params": enc, "lr": cfg.lr}]
    opt, sched = make_optimizer(groups, cfg.lr, cfg.weight_decay, total, cfg.warmup)
    limit = TimeLimit(cfg.max_minutes, start=t_start)
    loop = TrainLoop(total, model, opt, sched, Path(cfg.state_dir) / "local", limit, 10, log)
    step = loop.resume()
    if step:
        print(f"resumed at step {step}", file=log, flush=True)
    roles = RoleTargets(cfg.role_tagger if cfg.lam > 0 else None)
    cache = SegmentCache(model.local) if isolated else None
    print(
        f"trainable encoder tensors {len(enc_names)}, role targets: "
        f"{'tagger' if roles.tagger else 'none (lambda ignored)'}",
        file=log,
        flush=True,
    )
    dev = dev[: cfg.heldout_limit or None]
    before = {}
    if isolated and step == 0 and dev:
        model.eval()
        before = evaluate_examples(model, dev, use_global=False)
        what = f"the warm start {cfg.init}" if cfg.init else "the bi-encoder prior"
        print(f"held-out before training ({what}): {json.dumps(before)}", file=log)
    curve = [{"step": 0} | before] if before else []
    loop.start()
    rng = random.Random(cfg.seed)
    order_all = [list(range(len(train))) for _ in range(cfg.epochs)]
    for o in order_all:
        rng.shuffle(o)
    flat = [i for o in order_all for i in o]
    model.train()
    stopped = False
    for s in range(step, total):
        opt.zero_grad(set_to_none=True)
        acc = 0.0
        for k in range(cfg.grad_accum):
            ex = train[flat[(s * cfg.grad_accum + k) % len(flat)]]
            idx = sample_passages(
                ex,
                cfg.negatives,
                random.Random(cfg.seed * 1_000_003 + s * 31 + k),
                cfg.random_negatives,
            )
            with autocast(model.device_, model.autocast_dtype if cfg.bf16 else None):
                loss = local_step_loss(model, ex, idx, roles, cfg, cache)
            if loss is None:
                continue
            (loss / cfg.grad_accum).backward()
            acc += float(loss.detach()) / cfg.grad_accum
        torch.nn.utils.clip_grad_norm_(head + enc, 1.0)
        opt.step()
        sched.step()
        loop.update(s + 1, acc)
        if (s + 1) % 50 == 0:
            loop.save(s + 1, {"stage": "local"})
        if cfg.heldout_every and dev and (s + 1) % cfg.heldout_every == 0 and s + 1 < total:
            curve.append({"step": s + 1} | evaluate_examples(model, dev, use_global=False))
            print(f"held-out at step {s + 1}: {json.dumps(curve[-1])}", file=log, flush=True)
            model.train()
        if loop.out_of_time():
            print(f"time cap reached at step {s + 1}/{total}", file=log, flush=True)
            stopped = True
            loop.save(s + 1, {"stage": "local"})
            break
    model.eval()
    heldout = evaluate_examples(model, dev, use_global=False) if dev else {}
    print(f"held-out (local only): {json.dumps(heldout)}", file=log, flush=True)
    model.config.trained = True
    summary = {
        "stage": "local",
        "train_queries": len(train),
        "heldout_queries": len(dev),
        "steps": s + 1 if total else 0,
        "total_steps": total,
        "stopped_by_time_cap": stopped,
        "wall_minutes": round((time.perf_counter() - t_start) / 60, 1),
        "heldout_local": heldout,
        "heldout_before_training": before,
        "heldout_curve": curve + [{"step": s + 1 if total else 0} | heldout],
        "config": dataclasses.asdict(cfg),
    }
    model.save_pretrained(cfg.out, extra={"training": summary} | _carried_records(cfg.init))
    print(f"saved {cfg.out}", file=log, flush=True)
    return summary


def _carried_records(init: str | None) -> dict:
    """A warm start carries the init's global stage unchanged, so it keeps its training record
    (``training_global``: the init's own ``training`` when that is a global stage)."""
    if not init:
        return {}
    from ...log_checkpoint import read_meta

    meta = read_meta(Path(init))
    out = {}
    own = meta.get("training") or {}
    if own.get("stage") not in (None, "local"):
        out["training_global"] = own
    return out
