"""The learned passage score (logrerank/ranking/passage_head.py) and its training pieces."""

from __future__ import annotations

import math

import pytest
import torch

from logrerank.config import PassageConfig
from logrerank.data.schema import Doc, Example, example_passages
from logrerank.ranking.passage_head import (
    FEATURES,
    PassageHead,
    passage_features,
    segment_max,
    segment_mean,
    segment_softmax,
)

PASSAGES = [
    {
        "title": "Metformin and cancer",
        "text": "Metformin users had fewer cancers. The cohort was large.",
    },
    {"title": "Statins", "text": "Statins lower cholesterol. They reduce heart attacks."},
    {"title": "Walking", "text": "Walking improves memory in older adults."},
]


def test_segment_ops_by_hand():
    v = torch.tensor([1.0, 3.0, 2.0, -1.0])
    idx = torch.tensor([0, 0, 1, 1])
    assert segment_max(v, idx, 3).tolist() == [3.0, 2.0, -math.inf]
    assert segment_mean(v, idx, 3).tolist() == [2.0, 0.5, 0.0]
    sm = segment_softmax(v, idx, 2)
    e = math.exp(2.0)  # softmax([1, 3]) = [1, e^2] / (1 + e^2)
    assert sm[0].item() == pytest.approx(1 / (1 + e))
    assert sm[1].item() == pytest.approx(e / (1 + e))
    assert (sm[0] + sm[1]).item() == pytest.approx(1.0)


def test_features_by_hand():
    f = torch.tensor([2.0, 0.0, 1.0])  # passage 0: [2, 0]; passage 1: [1]
    of = torch.tensor([0, 0, 1])
    lex = torch.tensor([[0.0, 1.0, 0.5], [0.0, 1.0, 0.5], [0.0, 0.0, 0.0]])
    x = passage_features(f, f, None, lex, of, 2)
    row = dict(zip(FEATURES, x[0].tolist()))
    assert row["max_final"] == 0.0  # the pool's best
    assert row["mean_final"] == pytest.approx(-1.0)  # mean 1 - pool max 2
    assert row["lse_final"] == pytest.approx(math.log((math.exp(2) + 1) / 2) - 2)
    assert row["second_final"] == pytest.approx(-2.0)
    assert row["passage_bm25"] == 1.0 and row["query_title"] == 0.5
    assert row["log_sentences"] == pytest.approx(math.log(3))
    assert row["top_share"] == pytest.approx(2 / 3)
    one = dict(zip(FEATURES, x[1].tolist()))
    assert one["second_final"] == one["max_final"] == pytest.approx(-1.0)  # a single sentence


def test_untrained_head_is_the_best_sentence_rule():
    torch.manual_seed(0)
    head = PassageHead(8, hidden=16, proj_dim=4).eval()
    f = torch.randn(7)
    of = torch.tensor([0, 0, 1, 1, 1, 2, 2])
    x = passage_features(f, f, None, torch.zeros(7, 3), of, 3)
    s, corr = head(f, torch.randn(7, 8), x, of)
    assert torch.equal(corr, torch.zeros(3))
    assert torch.allclose(s, segment_max(f, of, 3))


def test_model_with_head_saves_loads_and_reranks(make_tiny_model, tmp_path):
    from logrerank.pipeline import LoGReranker

    model = make_tiny_model(passage=PassageConfig(hidden=8, proj_dim=4))
    assert model.passage_head is not None
    torch.nn.init.normal_(model.passage_head.mlp[-1].weight, std=2.0)  # a non-trivial head
    q = "Does metformin lower cancer risk?"
    with_head = model.rerank(q, PASSAGES)
    plain = model.rerank(q, PASSAGES, passage_head=False)
    assert with_head.info["passage_head"] and not plain.info["passage_head"]
    assert [s.score for s in with_head.sentences] == [s.score for s in plain.sentences]
    for p in with_head.passages_ranked:
        assert set(p.extra) == {"best_sentence", "passage_head"}
        want = torch.sigmoid(
            torch.logit(torch.tensor(p.extra["best_sentence"], dtype=torch.float64))
            + p.extra["passage_head"]
        )
        assert p.score == pytest.approx(float(want), abs=1e-5)
    scores = [p.score for p in with_head.passages_ranked]
    assert scores == sorted(scores, reverse=True)
    folder = model.save_pretrained(tmp_path / "ckpt")
    again = LoGReranker.from_pretrained(folder).rerank(q, PASSAGES)
    assert again.passage_order() == with_head.passage_order()
    assert [p.score for p in again.passages_ranked] == pytest.approx(scores, abs=1e-6)
    model.config.score.calibration_a, model.config.score.calibration_b = 0.5, -1.0
    try:  # a calibrated head: sigmoid(a s + b) of its logits s, in the same order
        cal = model.rerank(q, PASSAGES)
    finally:
        model.config.score.calibration_a, model.config.score.calibration_b = 1.0, 0.0
    assert cal.passage_order() == with_head.passage_order()
    for p, raw in zip(cal.passages_ranked, with_head.passages_ranked):
        s = torch.logit(torch.tensor(raw.score, dtype=torch.float64))
        assert p.score == pytest.approx(float(torch.sigmoid(0.5 * s - 1.0)), abs=1e-6)


def test_training_pieces_learn_on_a_toy_pool(make_tiny_model):
    from logrerank.training.log.passage_stage import evaluate_head, pool_items, pool_loss

    model = make_tiny_model()
    docs = [Doc(f"d{i}", p["title"], p["text"].split(". ")) for i, p in enumerate(PASSAGES)]
    ex = Example("q1", "Does walking improve memory?", docs, gold_doc_ids=["d2"])
    enc = model.encode(ex.query, example_passages(ex))
    items = pool_items(model, ex, enc)
    assert [it["global"] for it in items] == [True, False]
    assert items[0]["pos"].tolist() == [False, False, True]
    assert pool_items(model, Example("q2", "x?", docs, gold_doc_ids=[]), enc) == []
    torch.manual_seed(0)
    head = PassageHead(model.local.hidden_size, hidden=8, proj_dim=4, dropout=0.0)
    opt = torch.optim.Adam(head.parameters(), lr=0.05)
    first = float(pool_loss(head, items[0]).detach())
    for _ in range(60):
        opt.zero_grad()
        pool_loss(head, items[0]).backward()
        opt.step()
    assert float(pool_loss(head, items[0]).detach()) < first
    assert evaluate_head(head, items) == pytest.approx(100.0)
