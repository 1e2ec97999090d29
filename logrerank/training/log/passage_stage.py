"""Training the learned passage score (:class:`~logrerank.ranking.passage_head.PassageHead`).

The local scorer and the graph stages of ``init`` are frozen: every pool is encoded once by the
local stage and cached (:mod:`logrerank.training.log.encode_cache`), its final sentence logits are
computed once with and once without the graph stage (so the head serves LoG and its local-only
ablation alike), and only the small head is trained, listwise over each pool's passages:

    L = -1/|G| sum_{g in G} log softmax(s)_g       (G = the pool's gold passages)

The epoch is chosen by passage nDCG@10 on the ``select`` pools (macro over their sources; epoch 0
= no head, the best-sentence rule), and the chosen head is saved into a copy of ``init``.

``logrerank train passage --config configs/passage.json``.
"""

from __future__ import annotations

import copy
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ...checkpoint import CheckpointError
from ...config import PassageConfig
from ...evaluation.metrics import ndcg_at_k
from ...graph.inputs import global_scores, graph_inputs
from ...jsonconfig import ConfigError, JsonConfig
from ...log_checkpoint import read_meta
from ...ranking.losses import softmax_pool_loss
from ...ranking.passage_head import PassageHead, passage_features
from ...ranking.results import final_logits
from ...text.lexical import pool_lexical
from ..loop import make_optimizer, set_seed
from .encode_cache import encode_cached


@dataclass
class PassageTrainConfig(JsonConfig):
    init: str = "logrerank/checkpoints/log-reranker"  # the frozen LoG model the head is added to
    cache_dir: str = "runs/enc"  # encoded pools (training.encode_cache), shared with stage 2
    # pools as "source:split:limit[:offset]" (limit 0 = all): train on these ...
    train: list[str] = field(default_factory=lambda: ["evinf:train:200", "scisumm:train:200"])
    # ... and choose the epoch on these (never a reported dev/test split)
    select: list[str] = field(default_factory=lambda: ["evinf:validation:0"])
    hidden: int = 64  # passage.hidden of the saved model
    proj_dim: int = 16  # passage.proj_dim
    dropout: float = 0.1  # passage.dropout
    epochs: int = 20  # passes over the training pools
    lr: float = 3e-3  # AdamW learning rate (linear warmup 10 %, then decay)
    weight_decay: float = 1e-2  # AdamW weight decay
    batch_pools: int = 8  # pools per optimizer step
    seed: int = 13  # head initialisation and pool order
    threads: int = 1  # torch threads
    # ScoreConfig fields set on init's config before the head is trained (saved with it), e.g.
    # {"lexical_weight": 1.0}
    score: dict[str, float] = field(default_factory=dict)
    out: str = "runs/log-passage"  # the checkpoint written (init + the chosen head)

    def check(self) -> PassageTrainConfig:
        """Specs parse; sizes positive."""
        for spec in [*self.train, *self.select]:
            parse_spec(spec)
        if not self.train or not self.select:
            raise ConfigError("train and select need at least one pool spec each")
        if min(self.hidden, self.proj_dim, self.epochs, self.batch_pools, self.threads) < 1:
            raise ConfigError("hidden, proj_dim, epochs, batch_pools and threads must be >= 1")
        return self


def parse_spec(spec: str) -> tuple[str, str, int, int]:
    """``"evinf:train:200:0"`` -> ``("evinf", "train", 200, 0)`` (offset optional)."""
    parts = spec.split(":")
    try:
        if len(parts) not in (3, 4):
            raise ValueError
        src, split, limit = parts[0], parts[1], int(parts[2])
        offset = int(parts[3]) if len(parts) == 4 else 0
    except ValueError:
        raise ConfigError(f"pool spec {spec!r} is not source:split:limit[:offset]") from None
    return src, split, limit, offset


def sentence_logits(model, enc, use_global: bool) -> torch.Tensor:
    """``[N]`` final sentence logits of an encoded pool, as :meth:`~logrerank.pipeline.
    LoGReranker.rank_encoded` computes them before the passage head."""
    cfg = model.config
    l_global = stage_logits(model, enc) if use_global else None
    return final_logits(enc, l_global, cfg.score, cfg.score.lexical_weight).float()


def stage_logits(model, enc) -> torch.Tensor:
    """``[N]`` global logits of an encoded pool from the model's global stage, without
    gradients."""
    data, lex = graph_inputs(model.config, enc)
    with torch.no_grad():
        _, l_global, _, _ = global_scores(model.global_model, enc, data, lex, model.device_)
    return l_global


def pool_items(model, ex, enc) -> list[dict[str, Any]]:
    """The head's inputs of one pool, with and without the graph stage (``[]`` without gold)."""
    gold = set(ex.gold_doc_ids)
    ids = [c.doc_id for c in ex.candidates]
    positive = torch.tensor([i in gold for i in ids], dtype=torch.bool)
    if len(enc.passages) != len(ex.candidates) or not positive.any():
        return []
    items = []
    for use_global in (True, False):
        f = sentence_logits(model, enc, use_global)
        feats = passage_features(
            f, enc.local_logits.float(), enc.prior_logits, pool_lexical(enc), enc.passage_of,
            len(enc.passages),
        )  # fmt: skip
        items.append(
            {"f": f, "h": enc.h.float(), "x": feats, "of": enc.passage_of, "pos": positive,
             "ids": ids, "gold": gold, "global": use_global}
        )  # fmt: skip
    return items


def load_pools(model, specs: list[str], cache_dir: str, log) -> dict[str, list[dict[str, Any]]]:
    """Head inputs per spec (encoding what the cache lacks; resumable)."""
    out = {}
    for spec in specs:
        src, split, limit, offset = parse_spec(spec)
        exs, encs = encode_cached(model, src, split, limit or None, cache_dir, log, offset=offset)
        out[spec] = [it for ex, enc in zip(exs, encs) for it in pool_items(model, ex, enc)]
        print(f"{spec}: {len(exs)} pools, {len(out[spec]) // 2} with gold", file=log, flush=True)
    return out


def evaluate_head(head: PassageHead | None, items: list[dict[str, Any]], k: int = 10) -> float:
    """Mean passage nDCG@k (percent) over the graph-stage items (None = best sentence)."""
    vals = []
    for it in items:
        if not it["global"]:
            continue
        if head is None:
            s = torch.full((len(it["ids"]),), float("-inf")).scatter_reduce(
                0, it["of"], it["f"], reduce="amax", include_self=True
            )
        else:
            with torch.no_grad():
                s, _ = head(it["f"], it["h"], it["x"], it["of"])
        order = sorted(range(len(s)), key=lambda i: (-float(s[i]), i))
        vals.append(ndcg_at_k([it["ids"][i] for i in order], it["gold"], k))
    return 100 * statistics.fmean(vals) if vals else float("nan")


def train_passage_head(cfg: PassageTrainConfig, command: str = "", log=sys.stdout) -> dict:
    """Train, choose the epoch, save ``cfg.out``; returns the run summary."""
    from ...pipeline import LoGReranker

    torch.set_num_threads(cfg.threads)
    t0 = time.perf_counter()
    model = LoGReranker.from_pretrained(cfg.init, device="cpu")
    model.eval()
    for name, value in cfg.score.items():  # score settings the head is trained under
        if not hasattr(model.config.score, name):
            raise ConfigError(f"score.{name} is not a ScoreConfig field")
        setattr(model.config.score, name, value)
    model.config.check()
    train = [
        it for items in load_pools(model, cfg.train, cfg.cache_dir, log).values() for it in items
    ]
    select = load_pools(model, cfg.select, cfg.cache_dir, log)
    prep_min = (time.perf_counter() - t0) / 60

    def score(head) -> dict[str, float]:
        per = {spec: evaluate_head(head, items) for spec, items in select.items()}
        return {**per, "macro": statistics.fmean(per.values())}

    set_seed(cfg.seed)
    head = PassageHead(model.local.hidden_size, cfg.hidden, cfg.proj_dim, cfg.dropout)
    steps_per_epoch = max(1, len(train) // cfg.batch_pools)
    opt, sched = make_optimizer(
        list(head.parameters()), cfg.lr, cfg.weight_decay, steps_per_epoch * cfg.epochs, 0.1
    )
    history = [{"epoch": 0, **score(None)}]
    best = (history[0]["macro"], 0, None)
    rng = random.Random(cfg.seed)
    t1 = time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        head.train()
        order = rng.sample(range(len(train)), len(train))
        losses = []
        for s in range(steps_per_epoch):
            opt.zero_grad(set_to_none=True)
            batch = [train[i] for i in order[s * cfg.batch_pools : (s + 1) * cfg.batch_pools]]
            loss = sum(pool_loss(head, it) for it in batch) / max(1, len(batch))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(head.parameters(), 1.0)
            opt.step()
            sched.step()
            losses.append(float(loss))
        head.eval()
        row = {"epoch": epoch, "loss": statistics.fmean(losses), **score(head)}
        history.append(row)
        print(json.dumps({k: round(v, 3) for k, v in row.items()}), file=log, flush=True)
        if row["macro"] > best[0]:
            best = (row["macro"], epoch, copy.deepcopy(head.state_dict()))
    train_min = (time.perf_counter() - t1) / 60
    summary = {
        "stage": "passage",
        "command": command,
        "config": cfg.to_dict(),
        "train_pools": len(train) // 2,
        "chosen_epoch": best[1],
        "select_ndcg10": {k: round(v, 2) for k, v in history[best[1]].items() if k != "epoch"},
        "select_ndcg10_best_sentence": {
            k: round(v, 2) for k, v in history[0].items() if k != "epoch"
        },
        "history": history,
        "minutes": {"prepare": round(prep_min, 1), "train": round(train_min, 2)},
    }
    if best[2] is None:
        print("no epoch beat the best-sentence rule on the select pools: no head saved", file=log)
        return summary
    model.config.passage = PassageConfig(cfg.hidden, cfg.proj_dim, cfg.dropout)
    model.passage_head = PassageHead(model.local.hidden_size, cfg.hidden, cfg.proj_dim, cfg.dropout)
    model.passage_head.load_state_dict(best[2])
    model.passage_head.eval()
    Path(cfg.out).mkdir(parents=True, exist_ok=True)
    model.save_pretrained(cfg.out, extra=_kept_training(cfg.init) | {"training_passage": summary})
    print(f"wrote {cfg.out} (epoch {best[1]})", file=log, flush=True)
    return summary


def pool_loss(head: PassageHead, it: dict[str, Any]) -> torch.Tensor:
    """Listwise loss of one pool's passages (module docstring)."""
    s, _ = head(it["f"], it["h"], it["x"], it["of"])
    has = torch.isfinite(s)
    return softmax_pool_loss(s[has], it["pos"][has])


def _kept_training(init: str) -> dict[str, Any]:
    """The training summaries of ``init``'s config.json, kept in the new checkpoint."""
    try:
        raw = read_meta(Path(init))
    except (OSError, ValueError, CheckpointError):
        return {}
    return {k: v for k, v in raw.items() if k.startswith("training")}
