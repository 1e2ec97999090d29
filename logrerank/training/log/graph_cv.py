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

With ``paper_priors`` the loss of a paper pool reads the graph stage's logits plus the priors
its route adds at inference (:func:`pool_priors`: the lexical, dense passage and titled-sentence
terms of :mod:`logrerank.ranking.dense_prior` at the init's weights), so the stage learns what
those priors miss instead of what they already add (``configs/global-evinf-priors.json``).

``logrerank train global --config configs/global-multihop.json [--cv] [--final] [--eval]``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

from ...config import LoGConfig, SingleStageConfig
from ...data.schema import Example
from ...graph.ensemble import GlobalEnsemble
from ...graph.inputs import graph_inputs
from ...ranking.dense_prior import load_kept, route_prior, save_kept
from ...ranking.losses import softmax_pool_loss
from ...ranking.results import prior_terms
from ...ranking.routing import pool_route
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
    # one fresh stage, stored in float32, whatever the init was (a seed ensemble is built later)
    merged.global_ = dataclasses.replace(
        merged.global_, members=1, citing_members=1, store_half=False
    )
    model.config.graph, model.config.global_ = merged.graph, merged.global_
    model.config.score = merged.score
    # one fresh multi-passage stage serves every pool: an init's citing stage is not carried
    model.config.score.citance_stage, model.global_citing = False, None
    model.config.validate()
    torch.manual_seed(seed)
    model.global_model = GlobalReranker(model.local.hidden_size, model.config.global_)
    model.global_model.eval()
    return model


def single_stage_of(model, min_titled: float):
    """``(SingleStageConfig, module)``: the global stage of ``model`` kept as the single-passage
    stage of a routed model (its own single-passage stage when it is routed already)."""
    c = model.config
    if model.global_single is not None:
        graph, glob, module = c.single.graph, c.single.global_, model.global_single
    else:
        graph, glob, module = c.graph, c.global_, model.global_model
    stage = SingleStageConfig(min_titled, copy.deepcopy(graph), copy.deepcopy(glob)).check()
    return stage, copy.deepcopy(module).eval()


def attach_single_stage(model, single) -> None:
    """Make ``model`` routed: ``single`` from :func:`single_stage_of` (None = unrouted)."""
    if single is None:
        model.config.single, model.global_single = SingleStageConfig(), None
    else:
        model.config.single, model.global_single = single[0], copy.deepcopy(single[1])
    model.config.validate()


def pool_logits(model, enc, cache: dict) -> torch.Tensor:
    """Global logits of one encoded pool (graph inputs cached per pool for the run)."""
    if id(enc) not in cache:
        cache[id(enc)] = graph_inputs(model.config, enc)
    data, lexical = cache[id(enc)]
    out, _ = model.global_model(
        enc.h,
        enc.role_probs,
        enc.local_logits,
        data.edge_index,
        data.edge_type,
        lexical=lexical,
        passage_of=enc.passage_of,
    )
    return out.logits


def pool_priors(model, enc, cache: dict, citances: bool = True) -> torch.Tensor:
    """``[N]`` the priors the pool's route adds to the graph stage's logits on a paper pool
    (:func:`~logrerank.ranking.results.prior_terms`; zeros elsewhere, and on the pools of citing
    sentences unless ``citances``), cached per pool for the run (the cosines come from the
    model's :class:`~logrerank.ranking.dense_prior.DensePrior`)."""
    key = ("priors", id(enc), citances)
    if key not in cache:
        route = pool_route(model.config, enc.passages, enc.query)
        used = route.paper and (citances or not route.citance)
        zeros = torch.zeros(enc.local_logits.numel())
        cache[key] = prior_terms(enc, route, *route_prior(model, enc, route)) if used else zeros
    return cache[key]


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
    if cfg.paper_priors:  # the paper pools' cosines, kept beside the encodings
        load_kept(model, cfg.cache_dir, log)
    model.global_model.train()
    for s in range(total):
        opt.zero_grad(set_to_none=True)
        acc = 0.0
        for k in range(cfg.grad_accum):
            ex, enc = pools[order[(s * cfg.grad_accum + k) % len(order)]]
            logits = pool_logits(model, enc, cache)
            if cfg.paper_priors:
                logits = logits + pool_priors(model, enc, cache, cfg.paper_priors_citances)
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
    if cfg.paper_priors:
        save_kept(model, cfg.cache_dir)
    return (time.perf_counter() - t0) / 60


def run_cv(cfg: GraphCVConfig, log=sys.stdout) -> dict[str, Any]:
    """K-fold CV over the multi-hop questions; returns (and writes) the OOF summary."""
    torch.set_num_threads(cfg.threads)
    model = base_model(cfg)
    load_kept(model, cfg.cache_dir, log)  # the paper pools' cosines: fold scoring reads them too
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
        m, members = 0.0, []
        for seed in cfg.cv_members or [cfg.cv_seed]:
            with_new_graph(model, cfg, seed)
            m += fit(model, cfg, train, seed, log)
            members.append(model.global_model)
        if len(members) > 1:  # score the fold with the seed ensemble of its models
            model.global_model = GlobalEnsemble.of(members)
        rows = score_encoded(model, test)
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
    load_kept(init, cfg.cache_dir)  # the same texts: embedded once, by whichever run came first
    refs = {"log-local": score_encoded(model, mh, use_global=False)}
    refs["log-init"] = score_encoded(init, mh)
    save_kept(model, cfg.cache_dir), save_kept(init, cfg.cache_dir)
    refs |= baseline_rows(mh)
    path.write_text(json.dumps(refs))
    return refs


def seed_dir(cfg: GraphCVConfig, seed: int) -> Path:
    """Checkpoint folder of one seed's final model."""
    return Path(cfg.out) / f"seed{seed}" if len(cfg.seeds) > 1 else Path(cfg.out)


def run_final(cfg: GraphCVConfig, command: str = "", log=sys.stdout) -> dict[str, Any]:
    """Train on all training questions, one model per seed, each saved as a checkpoint."""
    torch.set_num_threads(cfg.threads)
    model = base_model(cfg)
    m_t = cfg.single_min_titled
    single = single_stage_of(model, m_t) if m_t > 0 else None
    pools = load_sets(model, cfg, cfg.multihop, "train", log)
    pools += load_sets(model, cfg, cfg.aux, "train", log, cfg.aux_offset)
    pools += load_extra(model, cfg, log)
    local_weights = {k: v.clone() for k, v in model.local.state_dict().items()}
    done = {}
    for seed in cfg.seeds:
        out = seed_dir(cfg, seed)
        if (out / "model.safetensors").is_file():
            _route_saved(out, single, log)
            print(f"seed {seed}: {out} exists, skipped", file=log, flush=True)
            continue
        with_new_graph(model, cfg, seed)
        m = fit(model, cfg, pools, seed, log)
        assert all(torch.equal(v, model.local.state_dict()[k]) for k, v in local_weights.items())
        model.config.trained = True
        attach_single_stage(model, single)
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
        model.save_pretrained(out, extra={"training": training, **_provenance(cfg, single)})
        done[seed] = round(m, 2)
        print(f"seed {seed}: trained in {m:.1f} min -> {out}", file=log, flush=True)
    return {"trained": done, "out": cfg.out}


def _provenance(cfg: GraphCVConfig, single) -> dict[str, Any]:
    """The init checkpoint's training records a final checkpoint keeps: its stage 1
    (``training_local``) and, when routed, the single-passage stage's (``training_single``).

    An init fresh from ``logrerank train local`` keeps its stage-1 record under ``training``
    (``stage: local``); one from ``train global`` keeps its global stage's there (``stage:
    global``), which is the single-passage stage of a routed final checkpoint."""
    from ...log_checkpoint import read_meta

    init = read_meta(Path(cfg.init))
    own = init.get("training") or {}
    out = {}
    local = init.get("training_local", own if own.get("stage") == "local" else None)
    if local is not None:
        out["training_local"] = local
    if single is not None:
        kept = init.get("training_single", own if own.get("stage") == "global" else None)
        if kept is not None:
            out["training_single"] = kept
    return out


def _route_saved(out: Path, single, log) -> None:
    """A saved final checkpoint gets the run's routing (``single``) when it lacks it, so a run
    that adds ``single_min_titled`` needs no retraining (the main global stage is unchanged)."""
    from ...log_checkpoint import read_meta
    from ...pipeline import LoGReranker

    want = 0.0 if single is None else single[0].min_titled
    saved = LoGReranker.from_pretrained(out, device="cpu")
    if saved.config.single.min_titled == want:
        return
    keep = ("training", "training_local", "training_single")
    extra = {k: v for k, v in read_meta(out).items() if k in keep}
    attach_single_stage(saved, single)
    saved.save_pretrained(out, extra=extra)
    print(f"{out}: single-passage stage for pools < {want} titled", file=log, flush=True)


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
