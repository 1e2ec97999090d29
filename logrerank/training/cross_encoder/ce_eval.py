"""Held-out evaluation of cross-encoder training: passage metrics @10 on held-out TRAIN pools.

Three rankers per pool: the BM25 first pass, the cross-encoder alone, and the cross-encoder
stage (the first pass's top ``top_n`` reranked with the stage's blend).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import torch

from ...data.schema import Example
from ...evaluation.metrics import evaluate_query, macro_average
from ...models.cross_encoder import pair_text
from ...models.pair_scoring import score_pairs
from .ce_config import CrossEncoderTrainConfig
from .ce_data import as_passage


def evaluate_held_out(
    model: torch.nn.Module,
    tokenizer: Any,
    examples: list[Example],
    cfg: CrossEncoderTrainConfig,
    top_n: int = 25,
    blend_weight: float = 0.5,
    log=sys.stdout,
    teacher: Any = None,
    prior: Any = None,
) -> dict[str, Any]:
    """Passage ranking metrics (@10, percent) on held-out TRAIN queries, per source and all.

    Rankers over each query's 50-candidate pool: ``first-pass`` (the BM25 pool order),
    ``cross-encoder`` (the model alone on every candidate) and ``ce-stage`` (the model over the
    pool order's top ``top_n``, min-max blended ``w * ce + (1 - w) * first_pass`` by the
    stage's own :func:`~logrerank.baselines.cross_encoder_stage.blend` with first-pass score
    ``1 - i / n``; the rest keep their order). With ``teacher`` (a
    :class:`~logrerank.training.cross_encoder.teacher.BiEncoderTeacher`) also
    ``bi-encoder-passage``: the zero-shot bi-encoder on the same texts. With ``prior`` (the
    same teacher type, at the model's ``prior_scale``) the model's logits include it, as a
    prior-anchored checkpoint's do at inference.
    """
    from ...baselines.cross_encoder_stage import blend

    model.eval()
    rows: dict[str, dict[str, list[dict[str, float]]]] = {}
    t0 = time.perf_counter()
    for qi, ex in enumerate(examples, 1):
        ids = [d.doc_id for d in ex.candidates]
        texts = [pair_text(as_passage(d), cfg.max_chars) for d in ex.candidates]
        logits = score_pairs(model, tokenizer, ex.query, texts, cfg.max_length, cfg.bf16)
        if prior is not None:
            logits = [x + p for x, p in zip(logits, prior.logits(ex.query, texts).tolist())]
        n = len(ids)
        ce_order = sorted(range(n), key=lambda i: (-logits[i], i))
        top = list(range(min(top_n, n)))
        _, _, order = blend([logits[i] for i in top], [1 - i / n for i in top], blend_weight)
        stage = order + list(range(len(top), n))
        src = ex.meta.get("source", "?")
        names = ["first-pass", "cross-encoder", "ce-stage"] + (
            ["bi-encoder-passage"] * bool(teacher)
        )
        per = rows.setdefault(src, {n: [] for n in names})
        if teacher is not None:
            cos = teacher.cosines(ex.query, texts).tolist()
            bi = sorted(range(n), key=lambda i: (-cos[i], i))
            per["bi-encoder-passage"].append(evaluate_query([ids[i] for i in bi], ex.gold_doc_ids))
        per["first-pass"].append(evaluate_query(ids, ex.gold_doc_ids))
        per["cross-encoder"].append(evaluate_query([ids[i] for i in ce_order], ex.gold_doc_ids))
        per["ce-stage"].append(evaluate_query([ids[i] for i in stage], ex.gold_doc_ids))
        if qi % 10 == 0 or qi == len(examples):
            el = time.perf_counter() - t0
            print(
                f"held-out eval {qi}/{len(examples)} elapsed {el / 60:.1f} min "
                f"ETA {el / qi * (len(examples) - qi) / 60:.1f} min",
                file=log,
                flush=True,
            )
    result: dict[str, Any] = {"queries": {s: len(r["first-pass"]) for s, r in rows.items()}}
    for src, per in rows.items():
        result[src] = {name: macro_average(v) for name, v in per.items()}
    if rows:
        result["all"] = {
            name: macro_average([q for per in rows.values() for q in per[name]])
            for name in next(iter(rows.values()))
        }
    result["seconds"] = round(time.perf_counter() - t0, 1)
    return result


def print_held_out(res: dict[str, Any], log) -> None:
    for src in [k for k in res if isinstance(res[k], dict) and "first-pass" in res[k]]:
        n = res["queries"].get(src, sum(res["queries"].values()))
        for name, m in res[src].items():
            vals = " ".join(f"{k} {v:.1f}" for k, v in m.items())
            print(f"held-out {src} ({n} q) {name}: {vals}", file=log, flush=True)
