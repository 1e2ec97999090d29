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
    model = load_delta_checkpoint(SHIPPED)
    q = "Insulin lowers blood glucose."
    texts = [
        "Insulin. Insulin reduces blood glucose levels by promoting uptake into cells.",
        "Volcanoes. Volcanic eruptions emit ash into the stratosphere.",
    ]
    logits = score_pairs(model, tokenizer, q, texts, 256, bf16=False)
    assert logits[0] > logits[1]
