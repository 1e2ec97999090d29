"""Train the project's cross-encoder baseline and store it as a delta checkpoint.

The like-for-like cross-encoder: the same packaged all-MiniLM-L6-v2 backbone the LoG reranker
uses, fine-tuned as a ``BertForSequenceClassification`` with one output (a relevance logit) on
the same public training data (SciFact train + Citation-Integrity train, passage level), and
reading the same text the cross-encoder stage shows it
(:func:`~logrerank.models.cross_encoder.pair_text`: title + first 1,000 body characters, 256
tokens).

Data (:mod:`logrerank.training.cross_encoder.ce_data`): per TRAIN query its gold passages and
sampled BM25 hard negatives. A fraction ``dev_fraction`` of the TRAIN queries, chosen by the
same hash rule as LoG training (:func:`logrerank.training.queries.held_out`), is held out for model
selection and the reported held-out numbers (:mod:`logrerank.training.cross_encoder.ce_eval`).
SciFact dev and Citation-Integrity dev are never read here: they are the benchmarks.

Only the top ``trainable_layers`` transformer layers, the pooler and the classifier train, so
the checkpoint stores only what differs from the packaged backbone
(:mod:`logrerank.models.delta_checkpoint`).

Run: ``logrerank train crossencoder --config configs/crossencoder.json`` (or ``python -m
logrerank.training.cross_encoder.ce_train --config ... [--fresh] [--summary FILE]``). Training is
resumable (state under ``state_dir``: trainable tensors, AdamW moments and the step,
safetensors + JSON), seeded, prints progress with an ETA, and stops at ``max_minutes`` if given.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import torch

from ...data.schema import Example
from ...local.backbone import (
    autocast,
    autocast_dtype,
    freeze_encoder_layers,
    load_tokenizer,
    resolve,
)
from ...models.ce_prior import PRIOR_KEY, PriorConfig
from ...models.delta_checkpoint import load_base_classifier, save_delta_checkpoint
from ...models.pair_scoring import encode_pairs
from ..loop import TimeLimit, TrainLoop, make_optimizer, set_seed
from ..queries import load_train_queries
from .ce_config import CrossEncoderTrainConfig
from .ce_data import (
    group_loss,
    group_rng,
    held_out_sample,
    query_group,
    schedule,
    split_cv,
)
from .ce_eval import evaluate_held_out, print_held_out
from .teacher import BiEncoderTeacher, distill_loss, teacher_negatives


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
    which also makes a training step faster on CPU (the cross-encoder's MODEL_CARD.md).
    """
    model.train()
    for m in model.modules():
        params = list(m.parameters())
        if params and not any(p.requires_grad for p in params):
            m.eval()


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
    train_ex, dev_ex = data if data is not None else load_train_queries(cfg, require_gold=True)
    train_ex, dev_ex, oof_ex = split_cv(train_ex, dev_ex, cfg)
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
    prior = None
    if cfg.prior_scale > 0:
        zero_head(model)
        prior = BiEncoderTeacher(cfg.prior_scale, str(device), resolve(cfg.base))
        print(
            f"prior-anchored: logit = classifier (zero-initialised) + {cfg.prior_scale} * "
            "bi-encoder cosine",
            file=log,
            flush=True,
        )
    model.to(device)
    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"trainable tensors: {len(names)} ({n_train:,} parameters)", file=log, flush=True)
    head = [p for n, p in model.named_parameters() if p.requires_grad and n in _head_names(model)]
    body = [
        p for n, p in model.named_parameters() if p.requires_grad and n not in _head_names(model)
    ]
    groups = [{"params": body, "lr": cfg.lr}, {"params": head, "lr": cfg.lr_head}]
    opt, sched = make_optimizer(groups, cfg.lr, cfg.weight_decay, total, cfg.warmup)

    teacher = None
    if prior is not None and cfg.distill_weight == 0:
        teacher = prior  # hard negatives rank by cosine: the prior's embeddings serve both
    elif cfg.distill_weight > 0 or cfg.teacher_negatives > 0:
        teacher = BiEncoderTeacher(cfg.teacher_scale, str(device), resolve(cfg.base))
        print(
            f"teacher: the base read as a bi-encoder (scale {cfg.teacher_scale}), distill weight "
            f"{cfg.distill_weight}, {cfg.teacher_negatives} teacher negatives per group",
            file=log,
            flush=True,
        )
    curve_sample = held_out_sample(dev_ex, cfg) if cfg.eval_every and dev_ex else []
    curve: list[dict[str, Any]] = []

    limit = TimeLimit(cfg.max_minutes, start=wall0)
    loop = TrainLoop(total, model, opt, sched, Path(cfg.state_dir), limit, cfg.log_every, log)
    fp = cfg.fingerprint()
    pairs_seen, groups_seen, train_seconds = 0, 0, 0.0
    old = loop.state_info()
    if old and old.get("fingerprint") != fp:
        raise RuntimeError(
            f"{loop.state_dir} holds the state of a different run (config changed); "
            "remove it or pass --fresh"
        )
    step = loop.resume()  # also restores the optimizer's current lr
    if step:
        pairs_seen = int(old.get("pairs_seen", 0))
        groups_seen = int(old.get("groups_seen", 0))
        train_seconds = float(old.get("train_seconds", 0.0))
        curve = list(old.get("curve", []))
        print(f"resumed at step {step}/{total} ({pairs_seen} pairs seen)", file=log, flush=True)

    def meta() -> dict[str, Any]:
        return {
            "fingerprint": fp,
            "pairs_seen": pairs_seen,
            "groups_seen": groups_seen,
            "train_seconds": round(train_seconds + (time.perf_counter() - t_start), 1),
            "total_steps": total,
            "curve": curve,
        }

    loop.start()
    train_mode(model)
    t_start = time.perf_counter()
    stopped_early = False
    last = min(total, max_steps) if max_steps is not None else total
    while step < last:
        if loop.out_of_time():
            stopped_early = True
            print(f"max_minutes {cfg.max_minutes} reached at step {step}", file=log, flush=True)
            break
        torch.manual_seed(cfg.seed * 100_003 + step)  # dropout, reproducible on resume
        chunk = order[step * cfg.grad_accum : (step + 1) * cfg.grad_accum]
        loss_sum = 0.0
        for epoch, ex in chunk:
            rng = group_rng(cfg.seed, epoch, f"{ex.meta.get('source', '')}:{ex.qid}")
            pick = None
            if teacher is not None and cfg.teacher_negatives:
                pick = lambda ts, k, q=ex.query: teacher_negatives(teacher, q, ts, k)  # noqa: E731
            texts, labels = query_group(
                ex,
                cfg.negatives,
                cfg.negative_depth,
                cfg.max_chars,
                rng,
                pick_hard=pick,
                hard=cfg.teacher_negatives,
            )
            if not texts:
                continue
            enc = encode_pairs(tokenizer, [ex.query] * len(texts), texts, cfg.max_length, device)
            with autocast(device, autocast_dtype(device, "auto" if cfg.bf16 else "fp32")):
                logits = model(**enc).logits.float().reshape(-1)
            if prior is not None:
                logits = logits + prior.logits(ex.query, texts).to(device)
            loss = group_loss(logits, torch.tensor(labels, device=device), cfg.bce_weight)
            if cfg.distill_weight > 0:
                t_logits = teacher.logits(ex.query, texts).to(device)
                loss = loss + cfg.distill_weight * distill_loss(
                    logits, t_logits, cfg.distill_temperature
                )
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
        loop.update(step, loss_sum / max(1, len(chunk)), pairs=pairs_seen)
        if curve_sample and (step % cfg.eval_every == 0 or step == total):
            res = evaluate_held_out(
                model, tokenizer, curve_sample, cfg, log=io.StringIO(), prior=prior
            )
            point = {"step": step, "pairs_seen": pairs_seen, **_curve_point(res)}
            curve.append(point)
            print(f"held-out curve: {json.dumps(point)}", file=log, flush=True)
            train_mode(model)
        if step % cfg.save_every == 0 or step == last:
            loop.save(step, meta())
    if stopped_early:
        loop.save(step, meta())
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
        "curve": curve,
        "out_of_fold_queries": len(oof_ex),
    }
    if evaluate and dev_ex:
        sample = held_out_sample(dev_ex, cfg)
        print(f"scoring {len(sample)} held-out TRAIN queries", file=log, flush=True)
        summary["held_out"] = evaluate_held_out(
            model,
            tokenizer,
            sample,
            cfg,
            log=log,
            teacher=teacher or BiEncoderTeacher(cfg.teacher_scale, str(device), resolve(cfg.base)),
            prior=prior,
        )
        print_held_out(summary["held_out"], log)
    summary["wall_minutes"] = round((time.perf_counter() - wall0) / 60, 2)
    extra: dict[str, Any] = {"training": summary}
    if prior is not None:
        extra[PRIOR_KEY] = PriorConfig(cfg.prior_scale).to_dict()
    out = save_delta_checkpoint(model.cpu(), tokenizer, cfg.out, cfg.base, names, extra=extra)
    size = sum(f.stat().st_size for f in out.iterdir() if f.is_file())
    summary["checkpoint"] = str(out)
    summary["checkpoint_bytes"] = size
    print(f"wrote {out} ({size / 1e6:.1f} MB)", file=log, flush=True)
    return summary


def zero_head(model: torch.nn.Module) -> None:
    """Zero the classifier, so a prior-anchored model starts as its prior (the head is 0)."""
    with torch.no_grad():
        for n, p in model.named_parameters():
            if not n.startswith(model.base_model_prefix + "."):
                p.zero_()


def _curve_point(res: dict[str, Any]) -> dict[str, float]:
    """nDCG@10 of the cross-encoder alone and of the stage, per source and all."""
    return {
        f"{src}/{name}": round(res[src][name]["ndcg@10"], 2)
        for src in res
        if isinstance(res[src], dict) and "cross-encoder" in res[src]
        for name in ("cross-encoder", "ce-stage")
    }


def _head_names(model: torch.nn.Module) -> set[str]:
    """Parameters outside the base model (the classifier), trained with ``lr_head``."""
    prefix = model.base_model_prefix + "."
    return {n for n, _ in model.named_parameters() if not n.startswith(prefix)}


def train_crossencoder(config: str | Path | CrossEncoderTrainConfig) -> dict[str, Any]:
    """Train the cross-encoder from a JSON config file (or a loaded config); returns the run
    summary."""
    if not isinstance(config, CrossEncoderTrainConfig):
        config = CrossEncoderTrainConfig.load(config)
    return train(config)


def main(argv: list[str] | None = None) -> int:
    """``python -m logrerank.training.cross_encoder.ce_train --config configs/crossencoder.json [--fresh]``."""
    ap = argparse.ArgumentParser(
        prog="python -m logrerank.training.cross_encoder.ce_train", description=__doc__
    )
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
