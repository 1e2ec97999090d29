"""Platt calibration of the shown scores (logrerank/training/log/score_calibration.py): the fit
recovers a known logistic law, keeps the order, and refuses what it cannot fit."""

from __future__ import annotations

import math

import pytest

from logrerank.training.log.score_calibration import calibration_record, fit_platt


def _law(a: float, b: float, n: int = 1000):
    """Logits on a grid with, at each, round(n * sigmoid(a x + b)) relevant of n."""
    xs, ys = [], []
    for x in (-2.0, -1.0, 0.0, 1.0, 2.0):
        k = round(n / (1 + math.exp(-(a * x + b))))
        xs += [x] * n
        ys += [1.0] * k + [0.0] * (n - k)
    return xs, ys


def test_fit_recovers_a_known_law():
    xs, ys = _law(2.0, -1.0)
    a, b = fit_platt(xs, ys)
    assert a == pytest.approx(2.0, abs=0.02) and b == pytest.approx(-1.0, abs=0.02)


def test_already_calibrated_scores_stay_put():
    xs, ys = _law(1.0, 0.0)
    a, b = fit_platt(xs, ys)
    assert a == pytest.approx(1.0, abs=0.02) and b == pytest.approx(0.0, abs=0.02)


def test_record_says_what_the_fit_did():
    xs, ys = _law(0.5, -2.0)  # raw sigmoid(x) overstates relevance
    a, b = fit_platt(xs, ys)
    rec = calibration_record(xs, ys, a, b)
    assert rec["passages"] == 5000 and rec["bce_after"] < rec["bce_before"]
    assert rec["mean_shown_gold"] < rec["mean_raw_gold"]
    assert a > 0  # monotone: the order never changes


@pytest.mark.parametrize(
    ("logits", "labels", "match"),
    [
        ([], [], "at least one"),
        ([1.0, 2.0], [1.0], "one label"),
        ([1.0, 2.0], [0.0, 0.0], "relevant"),
    ],
)
def test_refuses_what_it_cannot_fit(logits, labels, match):
    with pytest.raises(ValueError, match=match):
        fit_platt(logits, labels)
