"""Two-stage LoG training (paper eqs. 19-23) on public data, from a JSON config per run.

Stage 1 (``local``): the local scorer (top encoder layers + heads) on SciFact train (rationale
sentences) and Citation-Integrity train (passage labels only, DESIGN §4), optionally PubMedQA
non-test questions with silver sentence labels (source ``"pubmedqa-silver"``, see
:mod:`logrerank.data.silver`), with BM25 hard-negative passages from each query's train pool.
Loss per query::

    L = L_rank^loc (eq. 20, within each cited passage: rationale sentences rank 1, the rest 2)
      + lambda * L_role (eq. 21, soft targets from the role tagger)
      + mu * L_cal

``L_cal`` is our addition (eq. 20 alone never compares sentences of different passages, yet the
graph's delta constraint and the final ranking do): a listwise softmax over all sampled sentences
of the query with the rationale sentences as targets (SciFact), or over passages with
``logsumexp`` of their sentence logits as passage logit and the cited passages as targets
(Citation-Integrity, whose sentence labels are degenerate).

Stage 2 (``global``): local model frozen; each train query's full 50-candidate pool is encoded
once (cached), and only the graph encoder and global scorer train on cross-passage preference
pairs (eq. 23).

Hyperparameters are chosen on a held-out slice of the TRAIN queries (``dev_fraction``), never on
SciFact dev or Citation-Integrity dev, which are reported benchmarks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ..config import LoGConfig
from ..data.schema import Example
from ..evaluation.evaluate import example_passages
from ..evaluation.metrics import evaluate_query, macro_average
from ..local import SegmentCache
from ..losses import (
    aligned_pool_loss,
    drop_duplicate_negatives,
    lambda_pair_loss,
    listwise_loss,
    preference_pairs,
    role_kl_loss,
    softmax_pool_loss,
    text_best_grade,
)
from ..scoring import duplicate_groups
from .common import (
    Progress,
    freeze_encoder_layers,
    load_state,
    make_optimizer,
    save_state,
    set_seed,
)

PAIR_MODES = ("paper", "graded", "listwise", "lambda", "aligned")  # TrainConfig.pairs


@dataclass
class TrainConfig:
    stage: str = "local"  # "local" (stage 1) or "global" (stage 2)
    # train sets: "scifact", "citint", "pubmedqa-silver" (PubMedQA non-test questions, test
    # abstracts removed from the pools, silver sentence labels; logrerank.data.silver)
    sources: list[str] = field(default_factory=lambda: ["scifact", "citint"])
    max_queries: dict[str, int] = field(default_factory=dict)  # per-source cap (0/absent = all)
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
    seed: int = 13  # random seed (paper: 13)
    threads: int = 0  # torch threads (0 = default)
    bf16: bool = True  # bf16 autocast where supported
    max_minutes: float = 0.0  # stop training after this many minutes (0 = no cap)
    init: str | None = None  # stage 2: the stage-1 checkpoint to start from (frozen local part)
    out: str = "checkpoints/log-reranker"  # output checkpoint folder
    state_dir: str = "runs/train-state"  # resumable state (gitignored)
    model: dict[str, Any] = field(default_factory=dict)  # LoGConfig overrides (nested dict)

    def __post_init__(self) -> None:
        self.check()

    def check(self) -> None:
        """Reject values with no meaning (a typo must not train a different objective)."""
        if self.pairs not in PAIR_MODES:
            raise ValueError(f"pairs must be one of {PAIR_MODES}, got {self.pairs!r}")

    def override(self, items: list[str]) -> TrainConfig:
        """Apply ``FIELD=VALUE`` overrides (VALUE parsed as JSON, else a string); returns self.

        Raises:
            ValueError: an item is not ``FIELD=VALUE`` with a known field.
        """
        for item in items:
            key, sep, raw = item.partition("=")
            if not sep or not hasattr(self, key):
                raise ValueError(f"{item!r}: expected FIELD=VALUE with a training config field")
            try:
                value = json.loads(raw)
            except json.JSONDecodeError:
                value = raw  # a bare string, e.g. a path
            setattr(self, key, value)
        self.check()
        return self

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        """Read a JSON run config, rejecting unknown fields."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown training config field(s) {unknown}")
        return cls(**data)


# ----------------------------------------------------------------------------- data
def held_out(qid: str, fraction: float) -> bool:
    """Deterministic split of train queries by a hash of the qid."""
    h = int(hashlib.sha256(qid.encode()).hexdigest()[:8], 16)
    return (h % 1000) < fraction * 1000


def load_train_queries(cfg: TrainConfig, log=sys.stdout) -> tuple[list[Example], list[Example]]:
    """(train, held-out) examples with 50-candidate pools from the TRAIN splits.

    ``"pubmedqa-silver"`` loads the PubMedQA non-test questions, removes the test abstracts
    from their pools and labels silver sentences (:func:`logrerank.data.silver.silver_examples`;
    its pools are therefore smaller than 50); its statistics are printed to ``log``.
    """
    from ..data.pools import load_benchmark
    from ..data.silver import SILVER_SOURCE, pubmedqa_test_ids, silver_examples

    train, dev = [], []
    for src in cfg.sources:
        limit = cfg.max_queries.get(src) or None
        if src == SILVER_SOURCE:
            exs, _ = load_benchmark("pubmedqa", split="train", limit=limit)
            exs, st = silver_examples(
                exs,
                pubmedqa_test_ids(),
                cfg.silver_top,
                cfg.silver_min_f1,
                roles=cfg.silver_roles or None,
            )
            print(
                f"{src}: kept {st['kept']}/{st['loaded']} questions "
                f"(dropped: {st['dropped_no_silver']} without a silver sentence, "
                f"{st['dropped_gold_removed']} gold removed, {st['dropped_test_query']} test ids); "
                f"{st['test_candidates_removed']} test-abstract candidates removed, "
                f"{st['mean_candidates']:.1f} candidates left per question; "
                f"mean silver sentences {st['mean_silver']:.2f}, "
                f"mean ROUGE-1 F1 {st['mean_silver_f1']:.3f}",
                file=log,
                flush=True,
            )
        else:
            exs, _ = load_benchmark(src, split="train", limit=limit)
        for ex in exs:
            ex.meta["source"] = src
            (dev if held_out(f"{src}:{ex.qid}", cfg.dev_fraction) else train).append(ex)
    return train, dev


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
        from ..models.role_tagger import RoleTagger

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


# ----------------------------------------------------------------------------- stage 1
def local_step_loss(
    model, ex: Example, idx: list[int], roles: RoleTargets, cfg: TrainConfig, cache=None
):
    """Loss of one query (eqs. 20-22 + L_cal) on the sampled passages ``idx``."""
    from ..local import collate, tokenize

    docs = [ex.candidates[i] for i in idx]
    sents = [list(d.sentences) for d in docs]
    if not any(sents):
        return None
    c = model.config
    tok = tokenize(
        model.tokenizer,
        ex.query,
        sents,
        c.backbone.max_length,
        c.backbone.max_query_tokens,
        isolated=c.local.isolated_layers > 0,
    )
    batch = collate(tok.windows, model.device_)
    if cache is not None:
        cache.fill(batch, tok.windows)
    out, _ = model.local(batch)
    nodes = out.nodes  # [M] node ids in document order of the sampled passages
    logits = torch.empty(tok.num_nodes, device=out.logits.device)
    logits[nodes] = out.logits.float()
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


def _autocast(model, enabled: bool):
    import contextlib

    if enabled and model.autocast_dtype is not None:
        return torch.autocast(model.device_.type, dtype=model.autocast_dtype)
    return contextlib.nullcontext()


def score_rankings(examples: list[Example], rankings) -> dict[str, float]:
    """Passage and sentence nDCG/MAP/R@10 (percent) of one ranking per example."""
    prow, srow = [], []
    for ex, r in zip(examples, rankings):
        ids = [ex.candidates[i].doc_id for i in r.passage_order()]
        prow.append(evaluate_query(ids, set(ex.gold_doc_ids)))
        gold_s = {(d, j) for d, js in ex.gold_sentences.items() for j in js}
        if gold_s:
            sids = [(ex.candidates[s.passage_idx].doc_id, s.sent_idx) for s in r.sentences]
            srow.append(evaluate_query(sids, gold_s))
    out = {f"passage_{k}": v for k, v in macro_average(prow).items()}
    if srow:
        out |= {f"sentence_{k}": v for k, v in macro_average(srow).items()}
    return out


def evaluate_examples(model, examples: list[Example], **switches) -> dict[str, float]:
    """Passage and sentence nDCG/MAP/R@10 of ``model`` on ``examples`` (percent)."""
    model.eval()
    rankings = (model.rerank(ex.query, example_passages(ex), **switches) for ex in examples)
    return score_rankings(examples, rankings)


def train_local(cfg: TrainConfig, log=sys.stdout) -> dict[str, Any]:
    """Stage 1. Returns the run summary (also written to the checkpoint's config.json)."""
    from ..pipeline import LoGReranker

    set_seed(cfg.seed)
    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    t_start = time.perf_counter()
    model_cfg = LoGConfig.from_dict(cfg.model) if cfg.model else LoGConfig()
    if not cfg.bf16:
        model_cfg.precision = "fp32"
    model = LoGReranker(model_cfg)
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
    state_dir = Path(cfg.state_dir) / "local"
    step = load_state(state_dir, model, opt, sched)
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
        print(f"held-out before training (the bi-encoder prior): {json.dumps(before)}", file=log)
    prog = Progress(total, every=10, start=step, out=log)
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
            with _autocast(model, cfg.bf16):
                loss = local_step_loss(model, ex, idx, roles, cfg, cache)
            if loss is None:
                continue
            (loss / cfg.grad_accum).backward()
            acc += float(loss.detach()) / cfg.grad_accum
        torch.nn.utils.clip_grad_norm_(head + enc, 1.0)
        opt.step()
        sched.step()
        prog.update(s + 1, acc)
        if (s + 1) % 50 == 0:
            save_state(state_dir, model, opt, sched, s + 1, {"stage": "local"})
        if cfg.max_minutes and (time.perf_counter() - t_start) / 60 > cfg.max_minutes:
            print(f"time cap reached at step {s + 1}/{total}", file=log, flush=True)
            stopped = True
            save_state(state_dir, model, opt, sched, s + 1, {"stage": "local"})
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
        "config": dataclasses.asdict(cfg),
    }
    model.save_pretrained(cfg.out, extra={"training": summary})
    print(f"saved {cfg.out}", file=log, flush=True)
    return summary


# ----------------------------------------------------------------------------- stage 2
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
    from ..graph import build_graph

    set_seed(cfg.seed)
    t_start = time.perf_counter()
    params = list(model.global_model.parameters())
    steps_per_epoch = max(1, len(train) // cfg.grad_accum)
    total = steps_per_epoch * cfg.epochs
    opt, sched = make_optimizer(params, cfg.lr, cfg.weight_decay, total, cfg.warmup)
    prog = Progress(total, every=20, out=log)
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
        prog.update(s + 1, acc)
        if cfg.max_minutes and (time.perf_counter() - t_start) / 60 > cfg.max_minutes:
            print(f"time cap reached at step {s + 1}/{total}", file=log, flush=True)
            break
    model.global_model.eval()
    return s + 1


def evaluate_encoded(model, examples: list[Example], encs: list, **switches) -> dict[str, float]:
    """As :func:`evaluate_examples` on pre-encoded pools (graph stages only)."""
    return score_rankings(examples, (model.rank_encoded(enc, **switches) for enc in encs))


def prepare_global(cfg: TrainConfig, log=sys.stdout):
    """Load the frozen stage-1 model, encode train and held-out pools, calibrate tau_sim."""
    from ..pipeline import LoGReranker
    from .calibrate import graph_stats

    t_start = time.perf_counter()
    model = LoGReranker.from_pretrained(cfg.init)
    if cfg.model:
        merged = LoGConfig.from_dict({**model.config.to_dict(), **cfg.model})
        model.config.graph, model.config.global_ = merged.graph, merged.global_
    for p in model.local.parameters():
        p.requires_grad = False
    train, dev = load_train_queries(cfg, log)
    dev = dev[: cfg.heldout_limit or None]
    print(f"train queries {len(train)}, held-out {len(dev)}; encoding pools...", file=log)
    encs = encode_pools(model, train, log, t_start)
    dev_encs = encode_pools(model, dev, log, t_start)
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
    prev = (
        json.loads((Path(cfg.init) / "config.json").read_text()).get("training")
        if cfg.init
        else None
    )
    model.save_pretrained(cfg.out, extra={"training": summary, "training_local": prev})
    print(f"saved {cfg.out}", file=log, flush=True)
    return summary


def run(config_path: str | Path) -> dict[str, Any]:
    """Run the stage named in the config file."""
    cfg = TrainConfig.load(config_path)
    if cfg.stage == "local":
        return train_local(cfg)
    if cfg.stage == "global":
        return train_global(cfg)
    raise ValueError(f"stage must be 'local' or 'global', got {cfg.stage!r}")
