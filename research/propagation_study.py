"""Does the typed sentence graph carry anything the local scores lack? A low-capacity probe.

The trained GAT (stage 2) lowers held-out nDCG however it is trained
(research/stage2_study.py). This probe asks the question with almost no parameters, so it cannot overfit 270 training pools: on
each pool's LoG graph (same edges as stage 2, ``tau_sim`` 0.65), every node gets, per relation
``r`` (8 in all), the mean difference between its in-neighbours' local logits and its own,

    f_r(i) = mean_{(j -> i) of type r} (l_j - l_i)      (0 without such neighbours)

and the final logit is ``l_i + sum_r w_r f_r(i)``: label propagation with one weight per
relation. ``w`` (8 numbers, initialised at 0 = local only) is fitted with ``aligned_pool_loss``
(the adjusted scores that are ranked at inference) on the training pools, and held-out
nDCG@10 (final score adjustments on) is compared with local only. The fitted weights say which
relations pull a sentence toward its neighbours' scores.

Uses the encodings cached by ``research/stage2_study.py`` (same query sets)::

    python research/propagation_study.py --cache runs/stage2-cache-s13 --train seen
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
from pathlib import Path

import torch

from logrerank.config import ScoreConfig
from logrerank.evaluation.metrics import ndcg_at_k
from logrerank.graph import NUM_RELATIONS, build_graph, relation_name
from logrerank.losses import aligned_pool_loss
from logrerank.pipeline import LoGReranker
from logrerank.scoring import apply_adjustments, duplicate_groups
from logrerank.training.global_stage import aligned_targets, evaluate_encoded, node_grades


def relation_features(enc, graph_cfg) -> torch.Tensor:
    """``[N, R]`` mean in-neighbour logit difference per relation (module docstring)."""
    data = build_graph(
        enc.h, enc.role_probs, torch.sigmoid(enc.local_logits), enc.passage_of, graph_cfg
    )
    src, dst = data.edge_index
    rel = data.relation_type
    n, lg = enc.local_logits.numel(), enc.local_logits.float()
    diff = lg[src] - lg[dst]
    idx = dst * NUM_RELATIONS + rel
    sums = torch.zeros(n * NUM_RELATIONS).index_add(0, idx, diff)
    cnt = torch.zeros(n * NUM_RELATIONS).index_add(0, idx, torch.ones_like(diff))
    return (sums / cnt.clamp_min(1)).view(n, NUM_RELATIONS)


def pool_loss(ex, enc, feats, w, score: ScoreConfig, terms: str = "both") -> torch.Tensor | None:
    """``aligned_pool_loss`` of ``l + F w`` (``terms="passage"``: without the sentence term)."""
    t = aligned_targets(ex, enc, score)
    if t is None:
        return None
    sent = None if terms == "passage" else t.sentence_positive
    logits = enc.local_logits.float() + feats @ w
    return aligned_pool_loss(
        logits, enc.passage_of, t.passage_positive, sent, t.groups, t.head,
        score.passage_weight, score.head_weight,
    )  # fmt: skip


class FastNDCG:
    """nDCG@10 (passage by best sentence, + sentence level where labelled) of ``l + F w`` over
    many pools: a direct objective for searching the 8 weights (the reported figures always
    come from ``evaluate_encoded``)."""

    def __init__(self, items, score: ScoreConfig):
        self.pools, self.score = [], score
        for ex, enc, f in items:
            gold = set(ex.gold_doc_ids)
            pgold = [p for p, d in enumerate(ex.candidates) if d.doc_id in gold]
            labelled = any(d in ex.gold_sentences for d in gold)
            sgold = (node_grades(ex, enc) == 2).nonzero().squeeze(1).tolist() if labelled else []
            groups = duplicate_groups([s.text for s in enc.sentences])
            head = enc.local_logits - enc.prior_logits
            self.pools.append(
                (
                    enc.local_logits.float(),
                    head,
                    f,
                    enc.passage_of,
                    groups,
                    len(ex.candidates),
                    pgold,
                    sgold,
                )
            )

    def __call__(self, w: torch.Tensor) -> float:
        sc, total = self.score, 0.0
        for local, head, f, passage_of, groups, P, pgold, sgold in self.pools:
            x = apply_adjustments(
                local + f @ w, passage_of, groups if sc.merge_duplicates else None,
                sc.passage_weight, head, sc.head_weight,
            )  # fmt: skip
            best = torch.full((P,), float("-inf")).scatter_reduce(
                0, passage_of, x, reduce="amax", include_self=True
            )
            if pgold:
                total += ndcg_at_k(
                    torch.argsort(best, descending=True, stable=True).tolist(), pgold, 10
                )
            if sgold:
                total += ndcg_at_k(
                    torch.argsort(x, descending=True, stable=True).tolist(), sgold, 10
                )
        return 100.0 * total / len(self.pools)


def random_search(objective, n: int, steps: int, scale: float, seed: int = 13) -> torch.Tensor:
    """(1+1) evolution strategy from w = 0 with a shrinking step on failures."""
    g = torch.Generator().manual_seed(seed)
    w, best = torch.zeros(n), objective(torch.zeros(n))
    print(f"search start: objective {best:.3f}", flush=True)
    for t in range(steps):
        cand = w + scale * torch.randn(n, generator=g)
        val = objective(cand)
        if val > best:
            w, best = cand, val
        else:
            scale *= 0.98
        if (t + 1) % 50 == 0:
            print(f"search step {t + 1}: objective {best:.3f} (step {scale:.3f})", flush=True)
    return w


def shifted(encs, feats, w) -> list:
    """Copies of the encodings with ``l + F w`` as local logits (the learned head unchanged)."""
    out = []
    for enc, f in zip(encs, feats, strict=True):
        e = copy.copy(enc)
        delta = (f @ w).detach()
        e.local_logits = enc.local_logits + delta
        e.prior_logits = enc.prior_logits + delta
        out.append(e)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--init", default="runs/log-local-s13")
    ap.add_argument("--score-from", default="logrerank/checkpoints/log-reranker")
    ap.add_argument("--cache", default="runs/stage2-cache-s13")
    ap.add_argument("--train", default="seen", help="seen, unseen or seen+unseen")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--l2", type=float, default=0.0, help="weight decay on w")
    ap.add_argument(
        "--search", type=int, default=0,
        help="N > 0: no loss; N steps of a (1+1) random search maximising training nDCG@10",
    )  # fmt: skip
    ap.add_argument(
        "--terms", default="both", choices=["both", "passage"],
        help="which softmax terms of aligned_pool_loss to fit",
    )  # fmt: skip
    args = ap.parse_args()
    here = Path(__file__).resolve().parent
    spec = importlib.util.spec_from_file_location("stage2_study", here / "stage2_study.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    torch.manual_seed(13)
    model = LoGReranker.from_pretrained(args.init)
    score = json.loads((Path(args.score_from) / "config.json").read_text())["model"]["score"]
    model.config.score = ScoreConfig(**score)
    model.config.graph.tau_sim = 0.65
    sets = study.query_sets(400, 750, 60)
    encs = {k: study.load_encs(Path(args.cache) / k, v) for k, v in sets.items()}
    feats = {k: [relation_features(e, model.config.graph) for e in v] for k, v in encs.items()}
    train = [
        (ex, e, f)
        for part in args.train.split("+")
        for ex, e, f in zip(sets[part], encs[part], feats[part], strict=True)
    ]
    w = torch.zeros(NUM_RELATIONS, requires_grad=True)
    opt = torch.optim.Adam([w], lr=args.lr, weight_decay=args.l2)
    if args.search:  # maximise training nDCG@10 directly instead of a loss
        w = random_search(FastNDCG(train, model.config.score), NUM_RELATIONS, args.search, 0.2)
    for ep in range(0 if args.search else args.epochs):
        opt.zero_grad()
        losses = [pool_loss(ex, e, f, w, model.config.score, args.terms) for ex, e, f in train]
        loss = torch.stack([x for x in losses if x is not None]).mean()
        loss.backward()
        opt.step()
        if ep % 10 == 0 or ep == args.epochs - 1:
            print(f"epoch {ep + 1}: train loss {loss.item():.4f}", flush=True)
    print(
        "weights:", {relation_name(r): round(float(w[r].detach()), 3) for r in range(NUM_RELATIONS)}
    )
    tr_ex, tr_enc, tr_f = (list(x) for x in zip(*train, strict=True))
    base = evaluate_encoded(model, tr_ex, tr_enc, use_global=False)
    prop = evaluate_encoded(model, tr_ex, shifted(tr_enc, tr_f, w), use_global=False)
    row = {k: (round(base[k], 2), round(prop[k], 2)) for k in base if "ndcg" in k}
    print(f"training pools local -> propagated: {json.dumps(row)}", flush=True)
    ho, ho_enc, ho_f = sets["heldout"], encs["heldout"], feats["heldout"]
    for src in ("scifact", "citint", None):
        idx = [i for i, ex in enumerate(ho) if src is None or ex.meta.get("source") == src]
        exs = [ho[i] for i in idx]
        base = evaluate_encoded(model, exs, [ho_enc[i] for i in idx], use_global=False)
        prop = evaluate_encoded(
            model, exs, shifted([ho_enc[i] for i in idx], [ho_f[i] for i in idx], w),
            use_global=False,
        )  # fmt: skip
        row = {
            k: (round(base[k], 2), round(prop[k], 2))
            for k in ("passage_ndcg@10", "sentence_ndcg@10")
            if k in base
        }
        print(f"held-out [{src or 'all'}] local -> propagated: {json.dumps(row)}", flush=True)


if __name__ == "__main__":
    main()
