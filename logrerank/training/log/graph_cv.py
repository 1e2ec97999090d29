"""Cross-validated stage-2 (graph) training on multi-passage pools.

The local scorer is frozen: every pool is encoded once by it and cached on disk
(:mod:`logrerank.training.log.encode_cache`), so the K folds and the final fits only re-run the
graph stage, on the same graph inputs as inference (:func:`logrerank.graph.inputs.graph_inputs`).

* :func:`run_cv`: K-fold cross-validation over the multi-hop questions (HotpotQA + MuSiQue train
  samples; :func:`logrerank.training.cv.fold_of`); the single-passage train pools (SciFact,
  Citation-Integrity; ``aux``) are in the training part of every fold. Every multi-hop question
  is scored by the model of the one fold that held it out (out-of-fold figures), written with
  local-only, the initial checkpoint, BM25 and the evidence-graph selector on the same questions.
  With ``aux_folds`` the single-passage train pools are folded as well (each fold then trains
  on the other folds' pools of every source), so they get out-of-fold figures too: the
  selection signal for SciFact and Citation-Integrity, whose dev sets are never used to choose.
* :func:`run_final`: one model per seed on every training question, saved as checkpoints
  (a seed whose checkpoint exists is skipped: resumable).
* :func:`run_dev_eval`: SciFact dev / Citation-Integrity dev (the cached pools) for every seed's
  checkpoint and its ablations.

``logrerank train global --config configs/global-multihop.json [--cv] [--final] [--eval]``.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

from ...config import LoGConfig
from ...data.schema import Example
from ...data.titles import cut_title
from ...graph.inputs import graph_inputs, stage_pool
from ...ranking.losses import softmax_pool_loss
from ...ranking.results import retitled
from ...ranking.scoring import apply_adjustments
from ..cv import (
    baseline_rows,
    by_source,
    fold_of,
    grouped_folds,
    print_table,
    score_encoded,
    write_results,
)
from ..loop import TrainLoop, make_optimizer
from .encode_cache import cached_prefix, encode_cached
from .global_stage import aligned_targets, node_grades
from .graph_cv_config import MULTI_HOP_SOURCES, GraphCVConfig
from .score_calibration import calibrate

ABLATIONS = {
    "log": {},
    "log-local": {"use_global": False},
    "log-nolinks": {"links": False},
    "log-nolex": {"lexical": False},
    "log-nocross": {"cross_passage": False},
}


def load_sets(
    model, cfg: GraphCVConfig, which: dict[str, int], split: str, log=sys.stdout, offset=None
):
    """``(example, encoding)`` pools of each source: the cached prefix of each split
    (``cfg.encode`` = True encodes what is missing first); ``offset``: queries skipped."""
    out = []
    for src, limit in which.items():
        skip = (offset or {}).get(src, 0)
        if cfg.encode:
            exs, encs = encode_cached(
                model, src, split, limit or None, cfg.cache_dir, log, offset=skip
            )
        else:
            exs, encs = cached_prefix(src, split, limit or None, cfg.cache_dir, skip)
        print(f"{src}-{split}: {len(encs)} cached pools used", file=log, flush=True)
        out.extend(zip(exs, encs))
    return out


def load_extra(model, cfg: GraphCVConfig, log=sys.stdout):
    """``(example, encoding)`` pools of ``cfg.aux_extra`` (source:split:limit:offset slices)."""
    out = []
    for spec in cfg.aux_extra:
        src, split, limit, offset = spec.split(":")
        out += load_sets(model, cfg, {src: int(limit)}, split, log, {src: int(offset)})
    return out


def base_model(cfg: GraphCVConfig):
    """The frozen model of ``cfg.init`` (its local part is never trained here)."""
    from ...pipeline import LoGReranker

    model = LoGReranker.from_pretrained(cfg.init, device="cpu")
    for p in model.parameters():
        p.requires_grad = False
    return model


def with_new_graph(model, cfg: GraphCVConfig, seed: int):
    """``model`` (shared local part) with a fresh, seeded global model under ``cfg.model``."""
    from ...graph.global_model import GlobalReranker

    base = model.config.to_dict()
    for section, values in cfg.model.items():  # per-field overrides of each section
        base[section] = {**base[section], **values}
    merged = LoGConfig.from_dict(base)
    model.config.graph, model.config.global_ = merged.graph, merged.global_
    model.config.score = merged.score
    model.config.validate()
    torch.manual_seed(seed)
    model.global_model = GlobalReranker(model.local.hidden_size, model.config.global_)
    model.global_model.eval()
    return model


def with_title_condition(enc, condition: str, cache: dict | None = None):
    """``enc`` with its passages' titles under ``condition`` (:func:`logrerank.data.titles.cut_title`:
    ``full``, ``first3``, ``none``). The local encoding does not read titles (sentence units), so
    only the graph inputs change: the same cached tensors serve every condition (title
    dropout). ``cache`` keeps one variant per (pool, condition) alive for the run."""
    if condition == "full":
        return enc
    key = ("titles", id(enc), condition)
    if cache is not None and key in cache:
        return cache[key]
    variant = retitled(enc, [cut_title(p.title, condition) for p in enc.passages])
    if cache is not None:
        cache[key] = variant
    return variant


def pool_logits(model, enc, cache: dict) -> torch.Tensor:
    """Global logits of one encoded pool (graph inputs and pool features cached per pool for
    the run)."""
    if id(enc) not in cache:
        data, lexical = graph_inputs(model.config, enc)
        cache[id(enc)] = data, lexical, stage_pool(model.global_model, enc, data)
    data, lexical, pool = cache[id(enc)]
    out, _ = model.global_model(
        enc.h,
        enc.role_probs,
        enc.local_logits,
        data.edge_index,
        data.edge_type,
        lexical=lexical,
        passage_of=enc.passage_of,
        pool=pool,
    )
    return out.logits


def pool_loss(model, cfg: GraphCVConfig, ex: Example, enc, logits: torch.Tensor):
    """Stage-2 loss of one pool on its global logits (None when the pool gives no signal)."""
    if cfg.loss == "listwise":
        grade = node_grades(ex, enc)
        return None if grade.max() <= 0 else softmax_pool_loss(logits, grade == grade.max())
    t = aligned_targets(ex, enc, model.config.score)
    if t is None:
        return None
    s = model.config.score
    x = apply_adjustments(logits, enc.passage_of, t.groups, s.passage_weight, t.head, s.head_weight)
    best = torch.full((t.passage_positive.numel(),), float("-inf"), dtype=x.dtype)
    best = best.scatter_reduce(0, enc.passage_of, x, reduce="amax", include_self=True)
    has = torch.isfinite(best)  # passages with a node
    loss = softmax_pool_loss(best[has], t.passage_positive[has])
    if cfg.sentence_weight and t.sentence_positive is not None and bool(t.sentence_positive.any()):
        loss = loss + cfg.sentence_weight * softmax_pool_loss(x, t.sentence_positive)
    return loss


def fit(model, cfg: GraphCVConfig, pools: list[tuple[Example, Any]], seed: int, log=sys.stdout):
    """Train the global model on ``(example, encoding)`` pools; returns minutes."""
    t0 = time.perf_counter()
    params = list(model.global_model.parameters())
    for p in params:
        p.requires_grad = True
    total = max(1, len(pools) // cfg.grad_accum) * cfg.epochs
    opt, sched = make_optimizer(params, cfg.lr, cfg.weight_decay, total, cfg.warmup)
    rng = random.Random(seed)
    order = [i for _ in range(cfg.epochs) for i in rng.sample(range(len(pools)), len(pools))]
    loop = TrainLoop(total, every=max(1, total // 5), out=log)
    cache: dict = {}
    model.global_model.train()
    for s in range(total):
        opt.zero_grad(set_to_none=True)
        acc = 0.0
        for k in range(cfg.grad_accum):
            ex, enc = pools[order[(s * cfg.grad_accum + k) % len(order)]]
            enc = with_title_condition(enc, rng.choice(cfg.titles), cache)  # title dropout
            logits = pool_logits(model, enc, cache)
            loss = pool_loss(model, cfg, ex, enc, logits)
            if loss is None:
                continue
            if ex.meta.get("source") not in MULTI_HOP_SOURCES:
                loss = loss * cfg.aux_weight
            (loss / cfg.grad_accum).backward()
            acc += float(loss.detach()) / cfg.grad_accum
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        loop.update(s + 1, acc)
    model.global_model.eval()
    for p in params:
        p.requires_grad = False
    return (time.perf_counter() - t0) / 60


def oof_rows(model, cfg: GraphCVConfig, pools) -> list[dict[str, Any]]:
    """Rows of ``model`` on held-out ``pools`` under every title condition of ``cfg.titles``
    (sources of a cut condition are tagged ``<source>~<condition>``)."""
    rows = []
    for cond in dict.fromkeys(["full", *cfg.titles]):
        scored = score_encoded(model, [(ex, with_title_condition(enc, cond)) for ex, enc in pools])
        if cond != "full":
            for r in scored:
                r["source"] = f"{r['source']}~{cond}"
        rows += scored
    return rows


def run_cv(cfg: GraphCVConfig, log=sys.stdout) -> dict[str, Any]:
    """K-fold CV over the multi-hop questions; returns (and writes) the OOF summary."""
    torch.set_num_threads(cfg.threads)
    model = base_model(cfg)
    mh = load_sets(model, cfg, cfg.multihop, "train", log)
    aux = load_sets(model, cfg, cfg.aux, "train", log, cfg.aux_offset)
    aux += load_extra(model, cfg, log)
    counts = "_".join(f"{s}{sum(e.meta['source'] == s for e, _ in mh + aux)}" for s in _srcs(cfg))
    work = Path(cfg.work_dir) / f"{cfg.digest()}-{counts}"  # the cached prefixes may grow
    work.mkdir(parents=True, exist_ok=True)
    (work / "config.json").write_text(json.dumps(cfg.to_dict(), indent=1))
    if cfg.aux_folds:  # the aux pools are folded too: out-of-fold figures for them as well
        mh, aux = mh + aux, []
    if cfg.fold_groups == "gold":  # questions sharing a gold passage share a fold
        folds = grouped_folds([ex for ex, _ in mh], cfg.folds)
    else:
        folds = [fold_of(ex.meta["source"], ex.qid, cfg.folds) for ex, _ in mh]
    oof: list[dict[str, Any]] = []
    minutes = 0.0
    for k in range(cfg.folds):
        path = work / f"fold{k}.json"
        if path.is_file():
            saved = json.loads(path.read_text())
            oof, minutes = oof + saved["rows"], minutes + saved["minutes"]
            print(f"fold {k}: cached", file=log, flush=True)
            continue
        train = [p for p, f in zip(mh, folds) if f != k] + aux
        test = [p for p, f in zip(mh, folds) if f == k]
        m = 0.0
        for seed in [cfg.cv_seed]:
            with_new_graph(model, cfg, seed)
            m += fit(model, cfg, train, seed, log)
        rows = oof_rows(model, cfg, test)
        path.write_text(json.dumps({"rows": rows, "minutes": m}))
        oof, minutes = oof + rows, minutes + m
        brief = {s: v["P-ndcg@10"] for s, v in by_source(rows).items() if "/" not in s}
        print(f"fold {k}: P-nDCG@10 {brief} ({m:.1f} min)", file=log, flush=True)
    refs = _references(cfg, model, mh + aux, work / "references.json")
    per_query = {"log": oof} | refs
    write_results(work / "results.json", per_query)
    for src in _srcs(cfg):  # one file per benchmark, for `logrerank paired-test`
        sub = {n: [r for r in rows if r["source"] == src] for n, rows in per_query.items()}
        write_results(work / f"results-{src}.json", sub)
    table = {name: by_source(rows) for name, rows in per_query.items()}
    summary = {"digest": cfg.digest(), "train_minutes": round(minutes, 1), "table": table}
    (work / "summary.json").write_text(json.dumps(summary, indent=1))
    print_table(table, log)
    return summary


def _srcs(cfg: GraphCVConfig) -> list[str]:
    return [*cfg.multihop, *cfg.aux]


def _references(cfg, model, mh, path: Path) -> dict[str, list]:
    """Local only, the initial checkpoint, BM25 and the selector on the multi-hop questions."""
    if path.is_file():
        return json.loads(path.read_text())
    from ...pipeline import LoGReranker

    init = LoGReranker.from_pretrained(cfg.init, device="cpu")
    refs = {"log-local": score_encoded(model, mh, use_global=False)}
    refs["log-init"] = score_encoded(init, mh)
    refs |= baseline_rows(mh)
    path.write_text(json.dumps(refs))
    return refs


def seed_dir(cfg: GraphCVConfig, seed: int) -> Path:
    """Checkpoint folder of one seed's final model."""
    return Path(cfg.out) / f"seed{seed}" if len(cfg.seeds) > 1 else Path(cfg.out)


def run_final(cfg: GraphCVConfig, command: str = "", log=sys.stdout) -> dict[str, Any]:
    """Train on all training questions, one model per seed, each calibrated on the
    ``cfg.calibration`` pools (:mod:`~logrerank.training.log.score_calibration`) and saved as a
    checkpoint. A seed whose checkpoint exists is not retrained; it is calibrated when it is
    not yet (resumable)."""
    torch.set_num_threads(cfg.threads)
    model = base_model(cfg)
    pools = load_sets(model, cfg, cfg.multihop, "train", log)
    pools += load_sets(model, cfg, cfg.aux, "train", log, cfg.aux_offset)
    pools += load_extra(model, cfg, log)
    held = calibration_pools(model, cfg, log)
    local_weights = {k: v.clone() for k, v in model.local.state_dict().items()}
    done = {}
    for seed in cfg.seeds:
        out = seed_dir(cfg, seed)
        if (out / "model.safetensors").is_file():
            _calibrate_saved(out, held, log)
            print(f"seed {seed}: {out} exists, skipped", file=log, flush=True)
            continue
        with_new_graph(model, cfg, seed)
        m = fit(model, cfg, pools, seed, log)
        assert all(torch.equal(v, model.local.state_dict()[k]) for k, v in local_weights.items())
        model.config.trained = True
        counts: dict[str, int] = {}
        for ex, _ in pools:
            counts[ex.meta["source"]] = counts.get(ex.meta["source"], 0) + 1
        training = {
            "stage": "global-multihop",
            "command": command or "logrerank train global --config CONFIG --final",
            "config": cfg.to_dict(),
            "seed": seed,
            "train_pools": counts,
            "train_minutes": round(m, 2),
        }
        if held:
            training["calibration"] = calibrate(model, held)
        model.save_pretrained(out, extra={"training": training, **_provenance(cfg)})
        done[seed] = round(m, 2)
        print(f"seed {seed}: trained in {m:.1f} min -> {out}", file=log, flush=True)
    return {"trained": done, "out": cfg.out}


def calibration_pools(model, cfg: GraphCVConfig, log=sys.stdout) -> list:
    """The ``cfg.calibration`` pools (``source:split:limit:offset``, no training pool among
    them), each in every title condition of ``cfg.titles``."""
    out = []
    for spec in cfg.calibration:
        src, split, limit, offset = spec.split(":")
        out += load_sets(model, cfg, {src: int(limit)}, split, log, {src: int(offset)})
    conds = dict.fromkeys(["full", *cfg.titles])
    return [(ex, with_title_condition(enc, c)) for ex, enc in out for c in conds]


def _calibrate_saved(out: Path, held: list, log) -> None:
    """Calibrate a saved final checkpoint that is not yet (its scores shown as they were)."""
    from ...log_checkpoint import read_meta
    from ...pipeline import LoGReranker

    meta = read_meta(out)
    training = dict(meta.get("training") or {})
    if not held or "calibration" in training:
        return
    saved = LoGReranker.from_pretrained(out, device="cpu")
    training["calibration"] = calibrate(saved, held)
    extra = {k: v for k, v in meta.items() if k == "training_local"} | {"training": training}
    saved.save_pretrained(out, extra=extra)
    cal = training["calibration"]
    print(f"{out}: calibrated a = {cal['a']:.4g}, b = {cal['b']:.4g}", file=log, flush=True)


def _provenance(cfg: GraphCVConfig) -> dict[str, Any]:
    """The init checkpoint's stage-1 training record (``training_local``), which a final
    checkpoint keeps. An init fresh from ``logrerank train local`` keeps it under ``training``
    (``stage: local``)."""
    from ...log_checkpoint import read_meta

    init = read_meta(Path(cfg.init))
    own = init.get("training") or {}
    local = init.get("training_local", own if own.get("stage") == "local" else None)
    return {} if local is None else {"training_local": local}


def run_dev_eval(cfg: GraphCVConfig, log=sys.stdout) -> dict[str, Any]:
    """Every seed's checkpoint with its ablations, BM25 and the selector on the cached dev
    pools; writes ``<out>/dev-<source>[-seed<k>]/results.json`` and ``final_results.json``."""
    from ...pipeline import LoGReranker

    torch.set_num_threads(cfg.threads)
    saved, cfg.encode = cfg.encode, False
    probe = LoGReranker.from_pretrained(cfg.init, device="cpu")
    dev = {s: load_sets(probe, cfg, {s: n}, "dev", log) for s, n in cfg.dev.items()}
    cfg.encode = saved
    results: dict[str, Any] = {"dev_queries": {s: len(p) for s, p in dev.items()}, "seeds": {}}
    refs = {s: baseline_rows(p, coverage=()) for s, p in dev.items() if p}
    for seed in cfg.seeds:
        out = seed_dir(cfg, seed)
        if not (out / "model.safetensors").is_file():
            continue
        model = LoGReranker.from_pretrained(out, device="cpu")
        res = {}
        for src, pools in dev.items():
            if not pools:
                continue
            rows = {n: score_encoded(model, pools, (), **sw) for n, sw in ABLATIONS.items()}
            rows["log-init"] = score_encoded(probe, pools, ())
            rows |= refs[src]
            write_results(Path(cfg.out) / f"dev-{src}-seed{seed}" / "results.json", rows)
            res[src] = {n: by_source(r)[src] for n, r in rows.items()}
        results["seeds"][seed] = res
        print(f"seed {seed}: {json.dumps(res)}", file=log, flush=True)
    agg: dict[str, Any] = {}
    for src in dev:
        for name in [*ABLATIONS, "log-init", "bm25", "evidence-graph"]:
            vals = [r[src][name]["P-ndcg@10"] for r in results["seeds"].values() if src in r]
            if vals:
                sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
                agg[f"{src}/{name}"] = {"mean": round(statistics.mean(vals), 2), "sd": round(sd, 2)}
    results["aggregate"] = agg
    Path(cfg.out).mkdir(parents=True, exist_ok=True)
    (Path(cfg.out) / "final_results.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(agg, indent=1), file=log, flush=True)
    return results
