"""The cross-encoder on the real packaged backbone with a fresh head (``slow``); the tiny-model
tests of the cross-encoder are in ``tests/unit/test_cross_encoder.py``."""

from __future__ import annotations

import math

import pytest

from logrerank.models.cross_encoder import CrossEncoder


@pytest.mark.slow
def test_packaged_backbone_with_fresh_head(tmp_path, monkeypatch):
    monkeypatch.setenv("LOGRERANK_CHECKPOINTS", str(tmp_path))  # no shipped checkpoint
    model = CrossEncoder(None, device="cpu", precision="fp32")
    assert model.trained is False
    assert model.source == "UNTRAINED head on packaged all-MiniLM-L6-v2"
    pairs = [
        ("what lowers cholesterol", "Statins lower cholesterol."),
        ("what lowers cholesterol", "Cats sleep most of the day."),
        ("capital of France", "Paris is the capital of France."),
    ]
    scores = model.predict(pairs)
    assert len(scores) == 3 and all(math.isfinite(x) for x in scores)
    model.batch_size = 1
    assert model.predict(pairs) == pytest.approx(scores, abs=1e-5)
    # The fresh head is seeded: a second load scores identically.
    again = CrossEncoder("packaged:all-MiniLM-L6-v2", device="cpu", precision="fp32")
    assert again.predict(pairs) == pytest.approx(scores, abs=1e-6)
