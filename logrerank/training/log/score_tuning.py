"""Score-adjustment tuning: choose ``LoGConfig.score`` (logrerank/ranking/scoring.py) on train queries.

For every query the LoG model encodes the pool once; :func:`collect` keeps each sentence's local
logit, global logit (GAT output), bi-encoder prior logit and a duplicate-text id, then
:func:`score` ranks them under a grid of the three adjustments with the library's own
``adjust_logits``:

    head weight w      l' = l - (1 - w) * (l_local - prior)     (WiSE-FT-style shrinkage)
    merge_duplicates   one score per distinct sentence text in the pool (mean of its copies)
    passage weight b   l'_ij = l_ij + b * mean_k l_ik

at passage level (rank of the best sentence, docs/method.md) and sentence level. The setting is
chosen (:func:`choose`) on TRAIN queries the model never trained on (:func:`selection_sets`: the
SciFact train held-out slice, and Citation-Integrity train claims past the first 300, which
stage 1 did not use) by a fixed objective: the mean of SciFact-select passage nDCG@10,
SciFact-select sentence nDCG@10 and CitInt-select passage nDCG@10 of LoG's global scores.
:func:`write_choice` stores it in a checkpoint's ``config.json``.

    logrerank tune-score --checkpoint runs/log-seed17                 # choose and write
    logrerank tune-score --checkpoint runs/log-seed17 --dry-run       # choose and print only

The per-set tables of every setting (and the dev figures) were a study (docs/studies.md,
``research/aggregation_study.py``).
"""

from __future__ import annotations

import json
import math
import sys
import zlib
from pathlib import Path

import torch

from ...log_checkpoint import read_meta, write_meta

BETAS = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0]
"""Passage weights ``b`` of the grid."""
WEIGHTS = [1.0, 0.75, 0.5, 0.25, 0.0]
"""Head weights ``w`` of the grid."""
SELECT = ("select-scifact", "select-citint")
"""The selection sets (train queries neither stage trained on)."""
OBJECTIVE = "mean of SciFact-select P-nDCG@10, S-nDCG@10 and CitInt-select P-nDCG@10"
OBJECTIVE_LOCAL = (
    "mean of SciFact-select P-nDCG@10 and CitInt-select P-nDCG@10 of the local scores "
    "(a local-only model, e.g. the cross-encoder twin, whose nodes are not sentences)"
)


def _logit(p: float) -> float:
    """The logit of ``p``, clipped to [1e-6, 1 - 1e-6]."""
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def collect(name: str, examples, model, bi=None, path: Path | None = None) -> list[dict]:
    """One row per query: gold passages / sentences and, per sentence, ``[passage, sentence,
    local logit, global logit, bi-encoder cosine (-1 without ``bi``), duplicate id, prior logit,
    passage_bm25]``.

    Args:
        name: the set's name (progress lines).
        examples: the set's examples (built pools).
        model: the :class:`~logrerank.pipeline.LoGReranker` whose scores are tuned.
        bi: a sentence-level bi-encoder ranker, or None.
        path: JSON cache of the rows: read when it exists, else written (None: no cache).
    """
    from ...data.schema import example_passages
    from ...text.lexical import pool_lexical

    if path is not None and path.exists():
        return json.loads(path.read_text())
    rows = []
    for i, ex in enumerate(examples):
        ps = example_passages(ex)
        enc = model.encode(ex.query, ps)
        r = model.rank_encoded(enc)
        lex = pool_lexical(enc)[:, 1]
        prior = enc.prior_logits if enc.prior_logits is not None else enc.local_logits
        b = {}
        if bi is not None:
            ranked = bi.rank(ex.query, ps).sentences
            b = {(s.passage_idx, s.sent_idx): s.extra["cosine"] for s in ranked}
        rows.append(
            {
                "qid": ex.qid,
                "gold": [
                    j for j, d in enumerate(ex.candidates) if d.doc_id in set(ex.gold_doc_ids)
                ],
                "gold_sent": [
                    [j, k]
                    for j, d in enumerate(ex.candidates)
                    for k in ex.gold_sentences.get(d.doc_id, [])
                ],
                "sent": [
                    [
                        s.passage_idx,
                        s.sent_idx,
                        float(enc.local_logits[s.node]),
                        # no graph stage (local-only, the twin): the local logit stands in
                        _logit(s.global_score)
                        if s.global_score is not None
                        else float(enc.local_logits[s.node]),
                        b.get((s.passage_idx, s.sent_idx), -1.0),
                        zlib.crc32(" ".join(s.text.split()).encode()),  # duplicate id
                        # bi-encoder prior logit (a model without one: the local logit, so
                        # the learned part is 0 and head shrinkage does nothing)
                        float(prior[s.node]),
                        float(lex[s.node]),  # passage_bm25 (logrerank/text/lexical.py)
                    ]
                    for s in sorted(r.sentences, key=lambda s: s.node)
                ],
            }
        )
        if (i + 1) % 25 == 0:
            print(f"{name}: {i + 1}/{len(examples)}", file=sys.stderr, flush=True)  # stdout: JSON
    if path is not None:
        path.write_text(json.dumps(rows))
    return rows


def ndcg10(ranked: list, gold: set) -> float:
    """Binary nDCG@10 of ``ranked`` against the ``gold`` set."""
    dcg = sum(1 / math.log2(r + 2) for r, x in enumerate(ranked[:10]) if x in gold)
    ideal = sum(1 / math.log2(r + 2) for r in range(min(10, len(gold))))
    return dcg / ideal if ideal else 0.0


def passage_order(q: dict, scores: torch.Tensor) -> tuple[list[int], list[int]]:
    """(passage order by best sentence, sentence order); ties go to input order."""
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))
    seen, porder = set(), []
    for i in order:
        if q["sent"][i][0] not in seen:
            seen.add(q["sent"][i][0])
            porder.append(q["sent"][i][0])
    return porder, order


def score(
    rows: list[dict],
    col: int,
    beta: float = 0.0,
    dedup: bool = False,
    w: float = 1.0,
    lex: float = 0.0,
) -> tuple[float, float | None]:
    """Mean passage and sentence nDCG@10 (percent) of column ``col`` (2 local, 3 global, 6 prior)
    after :func:`logrerank.ranking.scoring.adjust_logits` with ``dedup``, ``beta`` and head weight ``w``,
    plus ``lex`` times the passage_bm25 column (col -1 = the first-pass order)."""
    from ...ranking.scoring import adjust_logits

    pn, sn = [], []
    for q in rows:
        if col == -1:
            porder = sorted({x[0] for x in q["sent"]})
            pn.append(ndcg10(porder, set(q["gold"])))
            continue
        sent = q["sent"]
        logits = torch.tensor([x[col] for x in sent], dtype=torch.float64)
        head = torch.tensor([x[2] - x[6] for x in sent], dtype=torch.float64)
        s = adjust_logits(
            logits,
            torch.tensor([x[0] for x in sent]),
            [str(x[5]) for x in sent],
            merge_duplicates=dedup,
            passage_weight=beta,
            head=head if col in (2, 3) else None,
            head_weight=w,
        )
        if lex:
            s = s + lex * torch.tensor([x[7] if len(x) > 7 else 0.0 for x in sent]).double()
        porder, order = passage_order(q, s)
        pn.append(ndcg10(porder, set(q["gold"])))
        if q["gold_sent"]:
            gs = {tuple(x) for x in q["gold_sent"]}
            sn.append(ndcg10([tuple(sent[i][:2]) for i in order], gs))
    return 100 * sum(pn) / len(pn), (100 * sum(sn) / len(sn) if sn else None)


def choose(
    sets: dict[str, list[dict]], local_only: bool = False
) -> tuple[tuple[float, bool, float], float]:
    """The (head_weight, merge_duplicates, passage_weight) maximising the selection objective,
    and its value. Ties keep the first in grid order.

    Args:
        sets: :func:`collect` rows per selection set.
        local_only: False = :data:`OBJECTIVE` over LoG's global scores (column 3); True =
            :data:`OBJECTIVE_LOCAL` over the local scores (column 2) of a model without a graph
            stage, whose nodes need not be the dataset's sentences (no sentence term).
    """
    col = 2 if local_only else 3
    best, best_val = (1.0, False, 0.0), -1.0
    for w in WEIGHTS:
        for dedup in (False, True):
            for b in BETAS:
                sp, ss = score(sets["select-scifact"], col, b, dedup, w)
                cp, _ = score(sets["select-citint"], col, b, dedup, w)
                val = (sp + cp) / 2 if local_only else (sp + ss + cp) / 3
                if val > best_val + 1e-9:
                    best, best_val = (w, dedup, b), val
    return best, best_val


def write_choice(
    sets: dict[str, list[dict]],
    checkpoint: Path,
    command: str,
    choice: tuple[tuple[float, bool, float], float] | None = None,
    local_only: bool = False,
) -> dict:
    """Store the chosen setting in ``checkpoint/config.json`` (``model.score``) with how it was
    chosen (``training.score_selection``); ``choice`` is :func:`choose` of ``sets`` (with
    ``local_only``) when already computed."""
    (w, dedup, b), val = choice or choose(sets, local_only)
    meta = read_meta(checkpoint)
    chosen = {"merge_duplicates": dedup, "passage_weight": b, "head_weight": w}
    meta["model"]["score"] = chosen
    meta.setdefault("training", {})["score_selection"] = {
        "chosen": chosen,
        "objective": OBJECTIVE_LOCAL if local_only else OBJECTIVE,
        "objective_value": round(val, 3),
        "selection_sets": {n: len(sets[n]) for n in SELECT},
        "grid": {
            "head_weight": WEIGHTS,
            "merge_duplicates": [False, True],
            "passage_weight": BETAS,
        },
        "command": command,
    }
    write_meta(checkpoint, meta)
    return chosen


def selection_sets(citint_train: int = 100) -> dict[str, list]:
    """The selection sets' examples (train split, 50-candidate pools).

    ``select-scifact``: the SciFact train queries of the held-out hash slice (10 %);
    ``select-citint``: the ``citint_train`` Citation-Integrity train claims after the first 300
    (the claims stage 1 trained on).
    """
    from ...data.pools import load_benchmark
    from ..queries import held_out

    exs, _ = load_benchmark("scifact", split="train")
    sets = {"select-scifact": [e for e in exs if held_out(f"scifact:{e.qid}", 0.1)]}
    used, _ = load_benchmark("citint", split="train", limit=300)  # stage 1's claims
    seen = {e.qid for e in used}
    exs, _ = load_benchmark("citint", split="train", limit=300 + citint_train)
    sets["select-citint"] = [e for e in exs if e.qid not in seen]
    return sets


def tune_score(
    checkpoint: str | Path,
    citint_train: int = 100,
    cache: str | Path | None = None,
    write: bool = True,
    command: str = "",
) -> dict:
    """Choose the score adjustments of ``checkpoint`` on the selection sets and (``write``)
    store them in its ``config.json``.

    Args:
        checkpoint: the LoG checkpoint folder (its model is encoded; its config is rewritten).
        citint_train: Citation-Integrity train claims after the first 300 in ``select-citint``.
        cache: folder for the per-set rows (reused when present; None: no cache).
        write: False chooses and reports without touching the checkpoint.
        command: the command line recorded with the choice.

    Returns:
        ``{"chosen", "objective_value", "selection": {set: [P-nDCG@10, S-nDCG@10]}, "written"}``.
    """
    from ...pipeline import LoGReranker

    model = LoGReranker.from_pretrained(str(checkpoint))
    # no graph stage (the twin, or a local-only checkpoint): choose on the local scores
    local_only = model.config.local.unit == "passage" or not model.config.use_global
    folder = Path(cache) if cache is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    rows = {
        name: collect(name, exs, model, None, folder / f"{name}.json" if folder else None)
        for name, exs in selection_sets(citint_train).items()
    }
    choice = choose(rows, local_only)
    (w, dedup, b), val = choice
    chosen = {"merge_duplicates": dedup, "passage_weight": b, "head_weight": w}
    if write:
        write_choice(rows, Path(checkpoint), command, choice, local_only)
    col = 2 if local_only else 3
    return {
        "chosen": chosen,
        "objective_value": round(val, 3),
        "objective": OBJECTIVE_LOCAL if local_only else OBJECTIVE,
        "selection": {n: list(score(r, col, b, dedup, w)) for n, r in rows.items()},
        "written": str(Path(checkpoint) / "config.json") if write else None,
    }


LEXICAL_WEIGHTS = [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0]
"""Grid of the lexical prior's weight (``ScoreConfig.lexical_weight``)."""
LEXICAL_OBJECTIVE = "mean of select-scifact and select-citint passage nDCG@10 of the final scores"


def choose_lexical(rows: list[dict], score_cfg, col: int = 3) -> tuple[float, dict[float, float]]:
    """The lexical weight maximising passage nDCG@10 of column ``col`` (3: LoG's global scores,
    2: a local-only model's) with the checkpoint's ``score_cfg`` adjustments on ``rows``; ties
    keep the smaller weight.

    Returns:
        ``(weight, {weight: passage nDCG@10})`` over :data:`LEXICAL_WEIGHTS`.
    """
    b, dedup, w = score_cfg.passage_weight, score_cfg.merge_duplicates, score_cfg.head_weight
    table = {lw: score(rows, col, b, dedup, w, lw)[0] for lw in LEXICAL_WEIGHTS}
    best = max(LEXICAL_WEIGHTS, key=lambda lw: (round(table[lw], 9), -lw))
    return best, table


def tune_lexical(
    checkpoint: str | Path,
    citint_train: int = 100,
    cache: str | Path | None = None,
    write: bool = True,
    command: str = "",
) -> dict:
    """Choose ``score.lexical_weight`` (the lexical prior added to every pool's final logits) of
    a checkpoint on the selection sets (:func:`selection_sets`) and (``write``) store it in the
    checkpoint's ``config.json``. The objective is the mean passage nDCG@10 of the final scores
    over ``select-scifact`` (titled pools) and ``select-citint`` (untitled ones), since the
    weight applies to both. The other score settings are kept; a model without a graph stage
    (the cross-encoder twin) is chosen on its local scores.
    """
    from ...pipeline import LoGReranker

    model = LoGReranker.from_pretrained(str(checkpoint))
    local_only = model.config.local.unit == "passage" or not model.config.use_global
    folder = Path(cache) if cache is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    rows = {
        name: collect(name, exs, model, None, folder / f"{name}.json" if folder else None)
        for name, exs in selection_sets(citint_train).items()  # the rows tune_score caches
    }
    col = 2 if local_only else 3
    tables = {name: choose_lexical(r, model.config.score, col)[1] for name, r in rows.items()}
    table = {lw: sum(t[lw] for t in tables.values()) / len(tables) for lw in LEXICAL_WEIGHTS}
    best = max(LEXICAL_WEIGHTS, key=lambda lw: (round(table[lw], 9), -lw))
    grid = {str(k): round(v, 3) for k, v in table.items()}
    queries = {name: len(r) for name, r in rows.items()}
    if write:
        meta = read_meta(Path(checkpoint))
        meta["model"]["score"]["lexical_weight"] = best
        meta.setdefault("training", {})["lexical_selection"] = {
            "chosen": best,
            "objective": LEXICAL_OBJECTIVE,
            "selection_queries": queries,
            "grid": grid,
            "command": command,
        }
        write_meta(Path(checkpoint), meta)
    return {
        "chosen": best,
        "objective": LEXICAL_OBJECTIVE,
        "grid": grid,
        "selection_queries": queries,
        "written": str(Path(checkpoint) / "config.json") if write else None,
    }
