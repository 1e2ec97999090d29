"""The shipped cross-encoder checkpoint (``logrerank/checkpoints/cross-encoder``, a delta over the
packaged backbone): small on disk, and it loads and ranks (skipped when it is absent). The
cross-encoder training tests on tiny models are in ``tests/unit/test_train_ce.py``."""

from __future__ import annotations

import json

import pytest

from logrerank.models.delta_checkpoint import DELTA_META, load_delta_checkpoint
from logrerank.models.pair_scoring import score_pairs
from logrerank.resources import package_path

SHIPPED = package_path("checkpoints", "cross-encoder")


@pytest.mark.skipif(not (SHIPPED / DELTA_META).is_file(), reason="no shipped cross-encoder")
def test_shipped_checkpoint_is_small_delta():
    size = sum(f.stat().st_size for f in SHIPPED.iterdir() if f.is_file())
    assert size < 20 * 1024 * 1024, size
    meta = json.loads((SHIPPED / DELTA_META).read_text())
    assert meta["base"] == "packaged:all-MiniLM-L6-v2"
    assert "classifier.weight" in meta["tensors"]
    assert not any("embeddings" in t for t in meta["tensors"])
    assert (SHIPPED / "MODEL_CARD.md").is_file()


@pytest.mark.skipif(not (SHIPPED / DELTA_META).is_file(), reason="no shipped cross-encoder")
def test_shipped_checkpoint_loads_and_ranks(tokenizer):
    """The shipped model is prior-anchored with a lexical prior: its logit is the trained
    correction + 20 x the bi-encoder cosine (+ the rankers' lexical term), and it ranks."""
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
    from logrerank.models.cross_encoder import CrossEncoder

    q = "Insulin lowers blood glucose."
    texts = [
        "Insulin. Insulin reduces blood glucose levels by promoting uptake into cells.",
        "Volcanoes. Volcanic eruptions emit ash into the stratosphere.",
    ]
    ce = CrossEncoder(SHIPPED, device="cpu", precision="fp32")
    assert ce.trained and ce.prior is not None and ce.prior.config.scale > 0
    assert ce.lexical_weight > 0
    correction = score_pairs(load_delta_checkpoint(SHIPPED), tokenizer, q, texts, 256, bf16=False)
    prior = ce.prior.logits([(q, t) for t in texts])
    full = ce.predict([(q, t) for t in texts])
    assert full == pytest.approx([c + p for c, p in zip(correction, prior)], abs=1e-3)
    assert full[0] > full[1]
    ranking = CrossEncoderRanker(ce).rank(q, [{"text": t} for t in texts])
    assert ranking.passage_order()[0] == 0


@pytest.mark.skipif(not (SHIPPED / DELTA_META).is_file(), reason="no shipped cross-encoder")
def test_shipped_scores_are_calibrated_not_saturated():
    """The shipped model's logits sit around 10-20 (20 x cosine + correction + lexical), where a
    plain sigmoid reads 1.000 for every candidate; its recorded Platt calibration (fit on
    held-out TRAIN candidates) spreads the reported scores, in the same order."""
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
    from logrerank.models.cross_encoder import CrossEncoder, sigmoid

    ce = CrossEncoder(SHIPPED, device="cpu", precision="fp32")
    a, b = ce.calibration
    assert a > 0 and (a, b) != (1.0, 0.0)
    q = "Insulin lowers blood glucose."
    passages = [
        {"title": "Insulin", "text": "Insulin reduces blood glucose levels by promoting uptake."},
        {"title": "Glucose", "text": "Blood glucose is measured in diabetes clinics."},
        {"title": "Volcanoes", "text": "Volcanic eruptions emit ash into the stratosphere."},
    ]
    r = CrossEncoderRanker(ce).rank(q, passages)
    scores = [p.score for p in r.passages_ranked]
    logits = [p.extra["cross_encoder_logit"] for p in r.passages_ranked]
    assert min(sigmoid(x) for x in logits[:2]) > 0.99  # what the plain sigmoid would show
    assert max(scores) - min(scores) > 0.1 and min(scores) < 0.9
    assert scores == sorted(scores, reverse=True) and r.passage_order()[0] == 0
