"""The learned graph gate (``GlobalConfig.pool_gate``): what it reads about a pool, that an
untrained gate leaves the local ranking alone, that it scales the graph's correction, and that
title dropout only changes titles (the cached local encoding serves every condition)."""

from __future__ import annotations

import math

import pytest
import torch

from logrerank.config import GlobalConfig
from logrerank.graph.inputs import global_scores, graph_inputs
from logrerank.graph.pool_features import NUM_POOL, POOL_FEATURES, mean_title_words, pool_features
from logrerank.graph.sentence_graph import Relation
from logrerank.training.log.graph_cv import with_title_condition
from logrerank.types import Passage

PASSAGES = [
    Passage("Metformin lowered colorectal cancer risk. The cohort had 4,000 patients.",
            "Metformin and colorectal cancer risk in a diabetic cohort"),
    Passage("Sleep duration was not related to adenoma.", "Sleep"),
    Passage("Microplastics were found in every sample. They came from packaging."),
]  # fmt: skip


def _gated(make_tiny_model):
    cfg = GlobalConfig(hidden=32, heads=4, rel_emb_dim=8, relations=11, lexical_inputs=True,
                       lexical_residual=True, passage_pool=True, pool_gate=True)  # fmt: skip
    return make_tiny_model(global_=cfg)


def test_pool_features_by_hand():
    rel = torch.tensor([int(Relation.SIMILAR)] * 4 + [int(Relation.MENTIONS)] * 2 + [0] * 3)
    logits = torch.tensor([2.0, 0.0, -2.0, 0.0])
    f = pool_features("Does metformin help (Smith et al., 2020)?", PASSAGES, rel, logits)
    assert f.shape == (NUM_POOL,) == (len(POOL_FEATURES),)
    want = [
        2 / 3,  # two of three passages titled
        (9 + 1) / 2 / 10,  # mean title words 5
        1.0,  # citation marker
        math.log(4) / math.log(51),
        2 / 4 / 4,  # 2 link edges over 4 nodes
        4 / 4 / 8,  # 4 similarity edges over 4 nodes
        1 / (1 + math.exp(-2.0)),
        float(logits.std()) / 5,
    ]
    assert f.tolist() == pytest.approx(want, abs=1e-6)
    assert mean_title_words([Passage("x")]) == 0.0


def test_untrained_gate_keeps_the_local_ranking_and_scales_the_correction(make_tiny_model):
    model = _gated(make_tiny_model)
    enc = model.encode("Does metformin lower colorectal cancer risk?", PASSAGES)
    data, lex = graph_inputs(model.config, enc)
    cpu = torch.device("cpu")
    with torch.inference_mode():
        _, logits, _, gate = global_scores(model.global_model, enc, data, lex, cpu)
    assert gate == pytest.approx(0.5)  # zero-initialised gate
    assert torch.allclose(logits, enc.local_logits)  # zero-initialised correction
    gm = model.global_model
    with torch.no_grad():
        gm.scorer[-1].bias.fill_(1.0)  # a constant correction of +1
        gm.gate.bias.fill_(20.0)  # g -> 1
        _, open_, _, g1 = global_scores(gm, enc, data, lex, cpu)
        gm.gate.bias.fill_(-20.0)  # g -> 0: the graph counts for nothing
        _, shut, _, g0 = global_scores(gm, enc, data, lex, cpu)
    assert g1 == pytest.approx(1.0) and g0 == pytest.approx(0.0, abs=1e-6)
    assert torch.allclose(open_ - enc.local_logits, torch.ones_like(open_), atol=1e-5)
    assert torch.allclose(shut, enc.local_logits, atol=1e-5)
    ranking = model.rank_encoded(enc)
    assert ranking.info["graph_gate"] == pytest.approx(0.0, abs=1e-6)


def test_gate_needs_pool_features(make_tiny_model):
    model = _gated(make_tiny_model)
    enc = model.encode("metformin", PASSAGES)
    data, lex = graph_inputs(model.config, enc)
    with torch.inference_mode(), pytest.raises(ValueError, match="pool features"):
        model.global_model(enc.h, enc.role_probs, enc.local_logits, data.edge_index,
                           data.edge_type, lexical=lex, passage_of=enc.passage_of)  # fmt: skip


def test_title_dropout_changes_titles_only(make_tiny_model):
    model = _gated(make_tiny_model)
    enc = model.encode("metformin", PASSAGES)
    cache: dict = {}
    assert with_title_condition(enc, "full", cache) is enc
    none = with_title_condition(enc, "none", cache)
    short = with_title_condition(enc, "first3", cache)
    assert with_title_condition(enc, "none", cache) is none  # one variant per pool and condition
    assert [p.title for p in none.passages] == ["", "", ""]
    assert [p.title for p in short.passages] == ["Metformin and colorectal", "Sleep", ""]
    assert [p.text for p in short.passages] == [p.text for p in enc.passages]
    assert short.h is enc.h and short.local_logits is enc.local_logits
    assert [p.title for p in enc.passages][0].endswith("diabetic cohort")  # input unchanged
