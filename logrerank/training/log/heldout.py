"""Held-out metrics during LoG training: passage and sentence nDCG / MAP / R@10 (percent).

Scored on the held-out TRAIN queries (:func:`logrerank.training.queries.held_out`) with the
per-query metrics of :mod:`logrerank.evaluation.metrics`.
"""

from __future__ import annotations

from ...data.schema import Example, example_passages
from ...evaluation.metrics import evaluate_query, macro_average


def score_rankings(examples: list[Example], rankings, sentences: bool = True) -> dict[str, float]:
    """Passage and sentence nDCG/MAP/R@10 (percent) of one ranking per example.

    ``sentences`` False: passage metrics only (rankings whose nodes are not the dataset's
    sentences, e.g. the cross-encoder twin's passage units).
    """
    prow, srow = [], []
    for ex, r in zip(examples, rankings):
        ids = [ex.candidates[i].doc_id for i in r.passage_order()]
        prow.append(evaluate_query(ids, set(ex.gold_doc_ids)))
        gold_s = {(d, j) for d, js in ex.gold_sentences.items() for j in js}
        if gold_s and sentences:
            sids = [(ex.candidates[s.passage_idx].doc_id, s.sent_idx) for s in r.sentences]
            srow.append(evaluate_query(sids, gold_s))
    out = {f"passage_{k}": v for k, v in macro_average(prow).items()}
    if srow:
        out |= {f"sentence_{k}": v for k, v in macro_average(srow).items()}
    return out


def evaluate_examples(model, examples: list[Example], **switches) -> dict[str, float]:
    """Passage and sentence nDCG/MAP/R@10 of ``model`` on ``examples`` (percent); passage
    metrics only for a model whose nodes are passage units (``local.unit = "passage"``)."""
    model.eval()
    rankings = (model.rerank(ex.query, example_passages(ex), **switches) for ex in examples)
    return score_rankings(examples, rankings, model.config.local.unit == "sentence")
