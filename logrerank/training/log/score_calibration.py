"""Platt calibration of LoG's shown scores, fitted on held-out training pools.

A passage ranks by its best sentence, so the shown score of a sentence is read as "how likely
its passage is relevant when this sentence is its best":

.. math::

    \\hat p = \\sigma(a \\, l + b), \\qquad
    (a, b) = \\arg\\min_{a, b} \\; -\\frac{1}{M} \\sum_{m=1}^{M}
        y_m \\log \\sigma(a l_m + b) + (1 - y_m) \\log (1 - \\sigma(a l_m + b)),

over the ``M`` passages of the calibration pools, ``l_m`` the final logit of passage ``m``'s
best sentence and ``y_m`` whether it is a gold passage. ``a > 0``, so no order changes: the
fit only makes the numbers readable (a top of a ranking that is not a column of 1.0, a relevant
sentence that is not shown at 0.03). The pools are read in every title condition the model was
trained on, so one ``(a, b)`` serves titled and untitled input alike.
"""

from __future__ import annotations

import math
from typing import Any

import torch


def passage_logits(model, pools) -> tuple[list[float], list[float]]:
    """``(logits, labels)``: each passage's best final sentence logit (the uncalibrated score
    ``model.rank_encoded`` shows, read back as a logit) and whether it is gold, over ``(example,
    encoding)`` ``pools``. The model's calibration is (1, 0) while it is read."""
    score = model.config.score
    kept = score.calibration_a, score.calibration_b
    score.calibration_a, score.calibration_b = 1.0, 0.0
    logits, labels = [], []
    try:
        for ex, enc in pools:
            gold = set(ex.gold_doc_ids)
            ranking = model.rank_encoded(enc)
            for p in ranking.passages_ranked:
                q = min(max(float(p.score), 1e-15), 1 - 1e-15)
                logits.append(math.log(q / (1 - q)))
                labels.append(float(ex.candidates[p.passage_idx].doc_id in gold))
    finally:
        score.calibration_a, score.calibration_b = kept
    return logits, labels


def fit_platt(logits: list[float], labels: list[float], steps: int = 100) -> tuple[float, float]:
    """``(a, b)`` minimising the mean binary cross-entropy of ``sigmoid(a l + b)`` (module
    docstring), ``a`` kept positive (``a = exp(alpha)``).

    Raises:
        ValueError: no logits, or labels all equal (nothing to calibrate against).
    """
    if not logits or len(logits) != len(labels):
        raise ValueError("calibration needs one label per logit, and at least one")
    if len(set(labels)) < 2:
        raise ValueError("calibration needs relevant and irrelevant passages")
    x = torch.tensor(logits, dtype=torch.float64)
    y = torch.tensor(labels, dtype=torch.float64)
    alpha = torch.zeros((), dtype=torch.float64, requires_grad=True)
    b = torch.zeros((), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([alpha, b], lr=0.5, max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(alpha.exp() * x + b, y)
        loss.backward()
        return loss

    opt.step(closure)
    return float(alpha.exp()), float(b)


def calibration_record(logits: list[float], labels: list[float], a: float, b: float) -> dict:
    """Facts of one fit for the training record: passages, share relevant, mean cross-entropy
    before (a, b) = (1, 0) and after, and the mean shown score of gold and other passages."""
    x = torch.tensor(logits, dtype=torch.float64)
    y = torch.tensor(labels, dtype=torch.float64)
    bce = torch.nn.functional.binary_cross_entropy_with_logits

    def mean(t: torch.Tensor) -> float:
        return round(float(t.mean()), 4) if t.numel() else 0.0

    shown = torch.sigmoid(a * x + b)
    return {
        "a": round(a, 6),
        "b": round(b, 6),
        "passages": len(logits),
        "relevant_share": mean(y),
        "bce_before": round(float(bce(x, y)), 4),
        "bce_after": round(float(bce(a * x + b, y)), 4),
        "mean_shown_gold": mean(shown[y > 0]),
        "mean_shown_other": mean(shown[y == 0]),
        "mean_raw_gold": mean(torch.sigmoid(x)[y > 0]),
    }


def calibrate(model, pools) -> dict[str, Any]:
    """Fit and set ``model.config.score.calibration_a/b`` on ``pools``; returns the record."""
    logits, labels = passage_logits(model, pools)
    a, b = fit_platt(logits, labels)
    model.config.score.calibration_a, model.config.score.calibration_b = a, b
    return calibration_record(logits, labels, a, b)
