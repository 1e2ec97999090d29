"""Stage 2 trained on pools the stage-1 model has or has not seen (a stacking check).

The bundled stage 2 trains on SciFact / Citation-Integrity train pools whose queries stage 1 was
itself trained on, so the frozen local scores it corrects are better there than on new queries.
This script encodes, with one frozen stage-1 model:

* ``heldout``: the train queries both stages hold out (the same hash split as
  ``logrerank train``), SciFact and Citation-Integrity -- the selection set;
* ``seen``: the bundled stage-2 pools (SciFact first 200, Citation-Integrity first 100 claims);
* ``unseen``: Citation-Integrity train claims ``--unseen-from``..``--unseen-to``, past the first
  300 that stage 1 used and the 100 after them that chose the score adjustments;

caches the encodings (``safetensors`` + JSON, no pickle) under ``--cache``, then trains the graph
encoder + global scorer from the same initialisation on each training set and reports held-out
passage / sentence nDCG@10 of LoG against the local-only ranking (final score adjustments on).

    python research/stage2_study.py --init runs/log-local-s13 --cache runs/stage2-cache-s13
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import time
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from logrerank.config import ScoreConfig
from logrerank.data.pools import load_benchmark
from logrerank.pipeline import LoGReranker
from logrerank.results import Encoded
from logrerank.training.config import TrainConfig
from logrerank.training.data import held_out
from logrerank.training.global_stage import encode_pools, evaluate_encoded, fit_global
from logrerank.types import Passage, ScoredSentence

TENSORS = ("h", "role_probs", "local_logits", "passage_of", "prior_logits", "intent_by_passage")


def query_sets(unseen_from: int, unseen_to: int, heldout_per_source: int) -> dict[str, list]:
    """The three query sets (train split), each a list of Examples."""
    sci, _ = load_benchmark("scifact", split="train")
    cit, _ = load_benchmark("citint", split="train", limit=unseen_to)
    sets: dict[str, list] = {"heldout": [], "seen": [], "unseen": []}
    for src, exs in (("scifact", sci), ("citint", cit)):
        for ex in exs:
            ex.meta["source"] = src
        ho = [ex for ex in exs if held_out(f"{src}:{ex.qid}", 0.1)]
        sets["heldout"] += ho[:heldout_per_source]
        first = {"scifact": 200, "citint": 100}[src]  # configs/global.json max_queries
        sets["seen"] += [ex for ex in exs[:first] if not held_out(f"{src}:{ex.qid}", 0.1)]
    sets["unseen"] = [ex for ex in cit[unseen_from:] if not held_out(f"citint:{ex.qid}", 0.1)]
    return sets


def save_encs(path: Path, exs: list, encs: list[Encoded]) -> None:
    """Encodings of one set as ``<path>.safetensors`` + ``<path>.json`` (sentence positions)."""
    tensors, meta = {}, []
    for i, (ex, enc) in enumerate(zip(exs, encs, strict=True)):
        for name in TENSORS:
            t = getattr(enc, name)
            if t is not None:
                tensors[f"{i}.{name}"] = t.contiguous()
        sents = [[s.node, s.passage_idx, s.sent_idx, s.start, s.end] for s in enc.sentences]
        meta.append({"qid": ex.qid, "sentences": sents})
    save_file(tensors, str(path) + ".safetensors")
    Path(str(path) + ".json").write_text(json.dumps(meta))


def load_encs(path: Path, exs: list) -> list[Encoded]:
    """Inverse of :func:`save_encs` (texts come from the examples' own passages)."""
    tensors = load_file(str(path) + ".safetensors")
    meta = json.loads(Path(str(path) + ".json").read_text())
    encs = []
    for i, (ex, m) in enumerate(zip(exs, meta, strict=True)):
        assert ex.qid == m["qid"], (ex.qid, m["qid"])
        sents = []
        for node, p, j, start, end in m["sentences"]:
            text = ex.candidates[p].sentences[j]
            sents.append(ScoredSentence(node, p, j, text, start, end, 0.0))
        t = {n: tensors.get(f"{i}.{n}") for n in TENSORS}
        encs.append(
            Encoded(
                ex.query, [Passage(d.text, d.title, d.doc_id, list(d.sentences)) for d in ex.candidates], sents, t["passage_of"],
                t["h"], t["role_probs"], t["local_logits"], t["intent_by_passage"],
                prior_logits=t["prior_logits"],
            )
        )  # fmt: skip
    return encs


@torch.no_grad()
def heldout_losses(model, exs, encs) -> dict[str, float]:
    """Mean eq. 23 pair loss and softmax-pool loss of the current global model on held-out
    pools: does the training objective go down where nDCG goes down?"""
    from logrerank.graph import build_graph
    from logrerank.losses import pairwise_global_loss, preference_pairs, softmax_pool_loss
    from logrerank.training.global_stage import node_grades, pool_targets

    model.global_model.eval()
    pair, lw = [], []
    for ex, enc in zip(exs, encs, strict=True):
        data = build_graph(
            enc.h, enc.role_probs, torch.sigmoid(enc.local_logits), enc.passage_of,
            model.config.graph,
        )  # fmt: skip
        out, _ = model.global_model(
            enc.h, enc.role_probs, enc.local_logits, data.edge_index, data.edge_type
        )
        prank, srank = pool_targets(ex, enc)
        pairs = preference_pairs(prank, srank, enc.passage_of, 4096)
        if pairs.numel():
            pair.append(float(pairwise_global_loss(out.logits, pairs)))
        grade = node_grades(ex, enc)
        if grade.max() > 0:
            lw.append(float(softmax_pool_loss(out.logits, grade == grade.max())))
    return {"pair_loss": sum(pair) / len(pair), "softmax_loss": sum(lw) / len(lw)}


def local_train_fit(model, exs, encs) -> dict[str, float]:
    """Local-only nDCG on a training set: how well stage 1 already ranks it."""
    return evaluate_encoded(model, exs, encs, use_global=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--init", default="runs/log-local-s13")
    ap.add_argument(
        "--score-from", default="logrerank/checkpoints/log-reranker", help="score section"
    )
    ap.add_argument("--cache", default="runs/stage2-cache-s13")
    ap.add_argument("--config", default="configs/global.json")
    ap.add_argument("--unseen-from", type=int, default=400)
    ap.add_argument("--unseen-to", type=int, default=750)
    ap.add_argument("--heldout-per-source", type=int, default=60)
    ap.add_argument("--variants", default="seen,unseen,seen+unseen")
    ap.add_argument("--lrs", default="1e-4")
    ap.add_argument("--epochs", default="2")
    ap.add_argument(
        "--global-set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="GlobalConfig override for every variant, e.g. use_h=false, dropout=0.3 (JSON values)",
    )
    ap.add_argument(
        "--train-set", action="append", default=[], metavar="FIELD=VALUE",
        help="TrainConfig override, e.g. dedupe_pairs=true",
    )  # fmt: skip
    ap.add_argument(
        "--raw-too",
        action="store_true",
        help="also report held-out nDCG with the score adjustments off (raw logits)",
    )
    ap.add_argument("--max-per-set", type=int, default=0, help="smoke test: cap every set")
    ap.add_argument("--save-best", default=None, help="save the best variant here")
    args = ap.parse_args()
    cfg = TrainConfig.load(args.config).override(args.train_set)
    torch.set_num_threads(2)
    t0 = time.perf_counter()
    model = LoGReranker.from_pretrained(args.init)
    score = json.loads((Path(args.score_from) / "config.json").read_text())["model"]["score"]
    model.config.score = ScoreConfig(**score)
    model.config.graph.tau_sim = 0.65  # calibrated on train pools (bundled stage 2)
    if args.global_set:
        from logrerank.global_model import GlobalReranker

        over = {k: json.loads(v) for k, v in (a.split("=", 1) for a in args.global_set)}
        model.config.global_ = dataclasses.replace(model.config.global_, **over)
        torch.manual_seed(cfg.seed)
        model.global_model = GlobalReranker(model.local.hidden_size, model.config.global_)
        print(f"global config: {model.config.global_}", flush=True)
    for p in model.local.parameters():
        p.requires_grad = False
    sets = query_sets(args.unseen_from, args.unseen_to, args.heldout_per_source)
    if args.max_per_set:
        sets = {
            k: v[: args.max_per_set // 2] + v[-(args.max_per_set // 2) :] for k, v in sets.items()
        }
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    encs = {}
    for name, exs in sets.items():
        f = cache / name
        if Path(str(f) + ".safetensors").exists():
            encs[name] = load_encs(f, exs)
            print(f"{name}: {len(exs)} pools loaded from cache", flush=True)
        else:
            print(f"{name}: encoding {len(exs)} pools", flush=True)
            encs[name] = encode_pools(model, exs, t_start=time.perf_counter())
            save_encs(f, exs, encs[name])
    print(f"pools ready ({(time.perf_counter() - t0) / 60:.1f} min)", flush=True)
    for name in ("seen", "unseen"):
        fit = local_train_fit(model, sets[name], encs[name])
        print(f"local-only on {name} train pools: {json.dumps(fit)}", flush=True)
    for src in ("scifact", "citint"):
        idx = [i for i, ex in enumerate(sets["heldout"]) if ex.meta.get("source") == src]
        sub = [sets["heldout"][i] for i in idx], [encs["heldout"][i] for i in idx]
        print(
            f"held-out local only [{src}]: {json.dumps(evaluate_encoded(model, *sub, use_global=False))}"
        )
    base = evaluate_encoded(model, sets["heldout"], encs["heldout"], use_global=False)
    print(f"held-out local only: {json.dumps(base)}", flush=True)
    at_init = heldout_losses(model, sets["heldout"], encs["heldout"])
    print(f"held-out losses at init (= local): {json.dumps(at_init)}", flush=True)
    init = copy.deepcopy(model.global_model.state_dict())
    best, best_key = None, -1.0
    for variant in args.variants.split(","):
        # "seen+unseen" = both sets; "seen:scifact" = the set's queries from one source only
        tr, te = [], []
        for part in variant.split("+"):
            name, _, src = part.partition(":")
            for ex, e in zip(sets[name], encs[name], strict=True):
                if not src or ex.meta.get("source") == src:
                    tr.append(ex)
                    te.append(e)
        for lr in args.lrs.split(","):
            for ep in args.epochs.split(","):
                run = dataclasses.replace(cfg, lr=float(lr), epochs=int(ep), max_minutes=0)
                model.global_model.load_state_dict(init)
                fit_global(model, run, tr, te)
                res = evaluate_encoded(model, sets["heldout"], encs["heldout"])
                key = res["passage_ndcg@10"] + res.get("sentence_ndcg@10", 0.0)
                tag = f"{variant} lr={lr} ep={ep}"
                print(
                    f"held-out LoG [{tag}] ({len(tr)} train pools): {json.dumps(res)}", flush=True
                )
                if args.raw_too:
                    kept_score, model.config.score = model.config.score, ScoreConfig()
                    for sw, name in (({}, "LoG"), ({"use_global": False}, "local")):
                        raw = evaluate_encoded(model, sets["heldout"], encs["heldout"], **sw)
                        print(f"   raw scores, {name}: {json.dumps(raw)}", flush=True)
                    model.config.score = kept_score
                losses = heldout_losses(model, sets["heldout"], encs["heldout"])
                print(f"   held-out losses: {json.dumps(losses)}", flush=True)
                for src in ("scifact", "citint"):
                    idx = [
                        i for i, ex in enumerate(sets["heldout"]) if ex.meta.get("source") == src
                    ]
                    r = evaluate_encoded(
                        model, [sets["heldout"][i] for i in idx], [encs["heldout"][i] for i in idx]
                    )
                    print(f"   [{src}] {json.dumps(r)}", flush=True)
                if key > best_key:
                    best, best_key = (tag, copy.deepcopy(model.global_model.state_dict())), key
    print(f"best: {best[0]} ({(time.perf_counter() - t0) / 60:.1f} min)", flush=True)
    if args.save_best:
        model.global_model.load_state_dict(best[1])
        model.save_pretrained(args.save_best, extra={"training": {"stage2_study": best[0]}})


if __name__ == "__main__":
    main()
