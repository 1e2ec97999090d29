"""Train the sentence role tagger (:class:`~logrerank.models.role_tagger.RoleTagger`).

The substitute for the paper's UniFAR facet model (Appendix B), trained on public sentence-role
corpora (train splits only): CSAbstruct, NICTA-PIBOSO and the section labels of the PubMedQA
PQA-L *non-test* abstracts (:mod:`logrerank.training.roles.tagger_data`).

Training: cross-entropy on labelled sentences (unmapped labels are ignored), with and without
inverse-frequency class weights; the epoch and the weighting with the best mean macro-F1 on the
CSAbstruct and NICTA dev splits are kept, and accuracy / macro-F1 are reported on the test
splits (:mod:`logrerank.training.roles.tagger_eval`). Because the lower layers are frozen, their outputs
are computed once and cached (``cache_frozen``), so each epoch only runs the trainable top layers
(timings in the role tagger's MODEL_CARD.md).

Public API::

    summary = train_roles("configs/roles.json")          # = logrerank train roles --config ...
"""

from __future__ import annotations

import copy
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ...checkpoint import WEIGHTS_NAME
from ...config import ROLE_NAMES, ConfigError
from ...local import backbone as bb
from ...local.tokenize import Window, collate
from ...models.role_checkpoint import default_checkpoint_dir
from ...models.role_tagger import RoleTagger
from ...models.role_tagger_config import RoleTaggerConfig
from ..loop import TimeLimit, TrainLoop, make_optimizer, set_seed
from .tagger_data import IGNORE, RoleDocs, label_ids, load_role_split
from .tagger_eval import evaluate_roles, role_metrics


@dataclass
class _Prepared:
    """Tokenised windows + labels (flat node order) of a set of abstracts."""

    windows: list[Window]
    num_nodes: int
    labels: Tensor  # [num_nodes] long, IGNORE where unlabelled
    lower: list[Tensor] | None = None  # cached frozen-part outputs per window


def _prepare(tagger: RoleTagger, docs: RoleDocs) -> _Prepared:
    sents, labels = docs
    tk = tagger.tokenize_docs(sents)
    if tk.truncated_nodes:
        print(f"  note: {len(tk.truncated_nodes)} over-long sentence(s) cut to fit a window")
    return _Prepared(tk.windows, tk.num_nodes, torch.tensor(label_ids(labels), dtype=torch.long))


def _epoch_plan(n: int, lengths: list[int], batch_windows: int, seed: int, epoch: int):
    """Shuffled, length-bucketed batches of window indices (same for every variant)."""
    rng = random.Random(seed * 100_003 + epoch)
    order = list(range(n))
    rng.shuffle(order)
    chunk = batch_windows * 50
    plan: list[list[int]] = []
    for c in range(0, n, chunk):
        part = sorted(order[c : c + chunk], key=lambda i: lengths[i])
        plan += [part[j : j + batch_windows] for j in range(0, len(part), batch_windows)]
    rng.shuffle(plan)
    return plan


def _class_weights(labels: Tensor) -> Tensor:
    """Inverse-frequency weights, normalised so the labelled-sentence mean weight is 1."""
    y = labels[labels != IGNORE]
    counts = torch.bincount(y, minlength=len(ROLE_NAMES)).float().clamp_min(1.0)
    w = counts.sum() / (len(ROLE_NAMES) * counts)
    return w


def _dev_eval(tagger: RoleTagger, dev: dict[str, _Prepared]) -> dict[str, Any]:
    res: dict[str, Any] = {}
    for key, prep in dev.items():
        probs = tagger._probs(prep.windows, prep.num_nodes, prep.lower)
        res[key] = role_metrics(probs.argmax(-1).tolist(), prep.labels.tolist())
    res["score"] = sum(v["macro_f1"] for v in res.values()) / max(1, len(dev))
    return res


def _short(m: dict[str, Any]) -> str:
    return " ".join(
        f"{k}: acc {v['accuracy']:.3f} mF1 {v['macro_f1']:.3f}"
        for k, v in m.items()
        if isinstance(v, dict)
    )


def _train_variant(
    cfg: RoleTaggerConfig,
    variant: str,
    train: _Prepared,
    dev: dict[str, _Prepared],
    run_dir: Path,
    deadline: float,
    base: tuple[nn.Module, Any],
) -> dict[str, Any]:
    """Train one class-weighting variant; keeps its best dev epoch in ``run_dir/variant/best``."""
    vdir = run_dir / variant
    done = vdir / "done.json"
    if done.is_file():
        info = json.loads(done.read_text(encoding="utf-8"))
        print(f"[{variant}] already done (best epoch {info['best_epoch']}), skipping", flush=True)
        return info
    set_seed(cfg.seed)
    encoder, tokenizer = base
    tagger = RoleTagger(cfg, encoder=_fresh_copy(encoder), tokenizer=tokenizer)
    device = bb.pick_device(cfg.device)
    tagger.to(device)
    enc_params = [p for p in tagger.encoder.parameters() if p.requires_grad]
    groups = [{"params": enc_params, "lr": cfg.lr}] if enc_params else []
    groups.append({"params": list(tagger.head.parameters()), "lr": cfg.head_lr})
    lengths = [len(w.input_ids) for w in train.windows]
    spe = len(_epoch_plan(len(train.windows), lengths, cfg.batch_windows, cfg.seed, 0))
    total = spe * cfg.epochs
    opt, sched = make_optimizer(groups, cfg.lr, cfg.weight_decay, total, cfg.warmup)
    weight = _class_weights(train.labels).to(device) if variant == "balanced" else None
    if weight is not None:
        print(f"[{variant}] class weights {dict(zip(ROLE_NAMES, weight.tolist()))}", flush=True)
    loop = TrainLoop(total, tagger, opt, sched, vdir / "state", TimeLimit(deadline=deadline))
    step = loop.resume()
    history: list[dict[str, Any]] = []
    best = {"score": -1.0, "epoch": None}
    if step:
        info = loop.state_info()
        history, best = info["history"], info["best"]
        if history and history[-1].get("partial"):
            history.pop()  # a time-capped partial epoch: continue it
        print(f"[{variant}] resumed at step {step}/{total}", flush=True)
        random.seed(cfg.seed + step)
        torch.manual_seed(cfg.seed + step)
    meta = lambda: {"variant": variant, "history": history, "best": best}  # noqa: E731
    loop.start()
    stopped = False
    for epoch in range(len(history), cfg.epochs):
        plan = _epoch_plan(len(train.windows), lengths, cfg.batch_windows, cfg.seed, epoch)
        tagger.train()
        for b in range(step - epoch * spe, spe):
            idx = plan[b]
            windows = [train.windows[i] for i in idx]
            batch = collate(windows, device)
            y = train.labels[batch["nodes"].cpu()].to(device)
            lower = tagger._pad_lower([train.lower[i] for i in idx]) if train.lower else None
            if (y != IGNORE).any():
                with bb.autocast(tagger.device_, tagger.autocast_dtype):
                    logits = tagger(batch, lower)
                loss = F.cross_entropy(logits.float(), y, weight=weight, ignore_index=IGNORE)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_([p for g in groups for p in g["params"]], 1.0)
                opt.step()
                loss_value = float(loss.detach())
            else:
                loss_value = 0.0
            sched.step()
            step += 1
            loop.update(step, loss_value, lr=sched.get_last_lr()[0], epoch=epoch + 1)
            if step % cfg.save_every == 0:
                loop.save(step, meta())
            if loop.out_of_time() and step < (epoch + 1) * spe:
                print(f"[{variant}] time cap reached at step {step}/{total}", flush=True)
                stopped = True
                break
        tagger.eval()
        res = _dev_eval(tagger, dev)
        res["epoch"] = epoch + 1
        res["steps"] = step
        if stopped:
            res["partial"] = True
        history.append(res)
        print(
            f"[{variant}] epoch {epoch + 1} dev {_short(res)} score {res['score']:.4f}", flush=True
        )
        if res["score"] > best["score"]:
            best = {"score": res["score"], "epoch": epoch + 1, "steps": step}
            tagger.save_pretrained(
                vdir / "best", extra={"variant": variant, "epoch": epoch + 1, "dev": res}
            )
        loop.save(step, meta())
        if stopped or loop.out_of_time():
            stopped = stopped or epoch + 1 < cfg.epochs
            break
    info = {
        "variant": variant,
        "history": history,
        "best_epoch": best["epoch"],
        "best_score": best["score"],
        "steps_per_epoch": spe,
        "steps_done": step,
        "stopped_by_time_cap": stopped,
    }
    if not stopped:
        done.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def _fresh_copy(encoder: nn.Module) -> nn.Module:
    """A fresh copy of the base encoder (each variant starts from the packaged weights)."""
    return copy.deepcopy(encoder)


def _command() -> str:
    """The command line of this process, as a user would type it."""
    prog = Path(sys.argv[0]).name if sys.argv else "python"
    if prog in ("cli.py", "__main__.py", "-m"):
        prog = "logrerank"
    return " ".join([prog, *sys.argv[1:]])


def train_roles(config: str | os.PathLike[str] | RoleTaggerConfig) -> dict[str, Any]:
    """Train the role tagger from a JSON config (``logrerank train roles --config FILE``).

    Args:
        config: the config file, or a loaded :class:`RoleTaggerConfig` (with overrides applied).

    Steps: load the train splits of ``sources`` (PubMedQA: non-test ids only) and the
    CSAbstruct/NICTA dev splits; cache the frozen lower layers once; train each class-weighting
    variant (``class_weights``: none / balanced / both) for ``epochs``, evaluating dev macro-F1
    after each epoch; keep the variant + epoch with the best mean dev macro-F1; copy it to
    ``out_dir``; evaluate it on the test splits (never used for any choice). Resumable: rerun
    the same command after an interruption (state in ``run_dir``; delete ``run_dir`` to start
    over). Results go to ``run_dir/metrics.json`` and the checkpoint's ``config.json``.

    Returns:
        The summary written to ``metrics.json``.
    """
    t_start = time.perf_counter()
    if isinstance(config, RoleTaggerConfig):
        cfg, config_path = config, "(given)"
    else:
        cfg, config_path = RoleTaggerConfig.load(config), str(config)
    torch.set_num_threads(cfg.threads)
    deadline = t_start + cfg.max_minutes * 60.0
    run_dir = Path(cfg.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    out_dir = Path(cfg.out_dir) if cfg.out_dir else default_checkpoint_dir()
    print(f"role tagger: config {config_path} -> {out_dir}", flush=True)
    print(json.dumps(cfg.to_dict()), flush=True)
    set_seed(cfg.seed)

    encoder = bb.load_encoder(cfg.backbone)
    tokenizer = bb.load_tokenizer(cfg.backbone)
    probe = RoleTagger(cfg, encoder=encoder, tokenizer=tokenizer)
    probe.to(bb.pick_device(cfg.device))

    t0 = time.perf_counter()
    train_docs: RoleDocs = ([], [])
    counts: dict[str, Any] = {}
    for src in cfg.sources:
        docs = load_role_split(src, "train", cfg.data_root)
        train_docs[0].extend(docs[0])
        train_docs[1].extend(docs[1])
        labelled = [x for d in docs[1] for x in d if x is not None]
        counts[f"{src}/train"] = {
            "docs": len(docs[0]),
            "sentences": sum(len(d) for d in docs[0]),
            "labelled": len(labelled),
            **{r: labelled.count(r) for r in ROLE_NAMES},
        }
    train = _prepare(probe, train_docs)
    dev: dict[str, _Prepared] = {}
    for src in ("csabstruct", "nicta"):
        if src in cfg.sources:
            dev[f"{src}/dev"] = _prepare(probe, load_role_split(src, "dev", cfg.data_root))
    if not dev:
        raise ConfigError("sources must include csabstruct or nicta (their dev splits select)")
    n_tok = sum(len(w.input_ids) for w in train.windows)
    print(
        f"data: {counts}\ntrain windows {len(train.windows)} tokens {n_tok} "
        f"(read + tokenised in {time.perf_counter() - t0:.0f}s)",
        flush=True,
    )
    if cfg.cache_frozen and probe.can_cache:
        t0 = time.perf_counter()
        train.lower = probe.lower_states(train.windows)
        for prep in dev.values():
            prep.lower = probe.lower_states(prep.windows)
        print(
            f"cached frozen layers ({probe._split_point()} of {len(probe._layers())}) in "
            f"{time.perf_counter() - t0:.0f}s",
            flush=True,
        )
    del probe

    variants = ["none", "balanced"] if cfg.class_weights == "both" else [cfg.class_weights]
    results: dict[str, Any] = {}
    for i, variant in enumerate(variants):
        remaining = deadline - time.perf_counter()
        v_deadline = time.perf_counter() + remaining / (len(variants) - i)
        print(
            f"[{variant}] training, time budget {remaining / (len(variants) - i) / 60:.1f} min",
            flush=True,
        )
        results[variant] = _train_variant(
            cfg, variant, train, dev, run_dir, v_deadline, (encoder, tokenizer)
        )
    scored = [(r["best_score"], v) for v, r in results.items() if r["best_epoch"] is not None]
    if not scored:
        raise RuntimeError("no variant finished an evaluation; raise max_minutes")
    best_variant = max(scored)[1]
    best = results[best_variant]
    print(
        f"selected: class_weights={best_variant} epoch {best['best_epoch']} "
        f"dev score {best['best_score']:.4f}",
        flush=True,
    )
    train_minutes = (time.perf_counter() - t_start) / 60.0

    tagger = RoleTagger.from_pretrained(
        run_dir / best_variant / "best", encoder=_fresh_copy(encoder), tokenizer=tokenizer
    )
    t0 = time.perf_counter()
    test = evaluate_roles(tagger, cfg.data_root, splits=("test",))
    print(f"test: {_short(test)} ({time.perf_counter() - t0:.0f}s)", flush=True)
    best_dev = next(h for h in best["history"] if h["epoch"] == best["best_epoch"])
    summary = {
        "selected": {
            "class_weights": best_variant,
            "epoch": best["best_epoch"],
            "dev_score_mean_macro_f1": best["best_score"],
        },
        "dev": {k: v for k, v in best_dev.items() if isinstance(v, dict)},
        "test": test,
        "variants": results,
        "train_data": counts,
        "train_windows": len(train.windows),
        "train_tokens": n_tok,
        "threads": cfg.threads,
        "bf16_autocast": bool(cfg.bf16 and bb.bf16_supported(bb.pick_device(cfg.device))),
        "train_minutes_this_invocation": train_minutes,
        "wall_minutes_this_invocation": (time.perf_counter() - t_start) / 60.0,
        "command": _command(),
        "config": cfg.to_dict(),
    }
    tagger.save_pretrained(out_dir, extra=summary)  # the selected weights + the full summary
    summary["checkpoint"] = str(out_dir)
    summary["checkpoint_mb"] = (out_dir / WEIGHTS_NAME).stat().st_size / 2**20
    (run_dir / "metrics.json").write_text(
        json.dumps(summary, indent=1, default=str) + "\n", encoding="utf-8"
    )
    print(
        f"wrote {out_dir} ({summary['checkpoint_mb']:.1f} MB) and {run_dir / 'metrics.json'}",
        flush=True,
    )
    return summary
