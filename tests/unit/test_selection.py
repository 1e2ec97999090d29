"""Sentence selection (logrerank/ranking/selection.py): complementary sentences across passages at the
head of the ranking, the score order kept, and the structured context taking the selection."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from logrerank.config import ConfigError, ContextConfig, LoGConfig, ScoreConfig
from logrerank.ranking.context import build_context
from logrerank.ranking.results import Encoded, build_ranking
from logrerank.ranking.selection import (
    apply_selection,
    order_note,
    select_order,
    selected_sentences,
    selection_active,
)
from logrerank.types import Passage, Ranking, ScoredSentence

# A metformin-like pool: one cohort whose four sentences all score high (the joint encoding lifts
# its background line too), a pooled-trials null result and a bias correction a little lower.
POOL = [
    (0, "Metformin is the first-line drug for type 2 diabetes.", 0.93),
    (0, "We followed 12,000 metformin users in a registry cohort.", 0.95),
    (0, "Cancer incidence was 20% lower among metformin users.", 0.97),
    (0, "The cohort is named the Diabetes Cancer Registry Study.", 0.94),
    (1, "Pooled randomised trials found no effect of metformin on cancer.", 0.90),
    (2, "Correcting immortal time bias removed the association.", 0.88),
    (3, "Metformin tablets are taken twice a day.", 0.40),
]
PASSAGES = [Passage(text=f"passage {i}", title=f"P{i}") for i in range(4)]
SELECT = ScoreConfig(select_decay=0.7, select_margin=0.0, select_keep=0, select_depth=30)


def _sentences() -> list[ScoredSentence]:
    out, seen = [], {}
    for node, (p, text, score) in enumerate(POOL):
        j = seen.get(p, 0)
        seen[p] = j + 1
        out.append(ScoredSentence(node, p, j, text, 0, len(text), score, role="result"))
    return out


def _ranking() -> Ranking:
    return Ranking.from_sentence_scores("metformin and cancer", PASSAGES, _sentences(), "log")


def test_plain_order_fills_top5_with_one_passage():
    top5 = [s.passage_idx for s in _ranking().sentences[:5]]
    assert top5 == [0, 0, 0, 0, 1]  # the null result is 5th, the bias correction 6th


def test_selection_brings_other_passages_into_top5():
    r = apply_selection(_ranking(), None, SELECT)
    top5 = r.sentences[:5]
    assert r.sentence_order == "selected"
    assert sum(s.passage_idx == 0 for s in top5) < 4  # the cohort no longer fills the top 5
    assert {1, 2} <= {s.passage_idx for s in top5}  # the null result and the correction are in
    assert top5[0].text.startswith("Cancer incidence")  # the strongest sentence stays first
    # scores untouched; ranks are the selected ranks; the score order is still there
    assert [s.rank for s in r.sentences] == list(range(1, len(POOL) + 1))
    assert sorted(s.score for s in r.sentences) == sorted(p[2] for p in POOL)
    assert [s.node for s in r.by_score()] == [s.node for s in _ranking().sentences]
    assert [s.extra["score_rank"] for s in r.by_score()] == list(range(1, len(POOL) + 1))
    # the passage order (best sentence) does not change
    assert r.passage_order() == _ranking().passage_order()


def test_knobs_off_keep_score_order():
    plain = _ranking()
    off = ScoreConfig(select_decay=1.0, select_margin=0.0, select_redundancy=0.0)
    r = apply_selection(_ranking(), None, off)
    assert r.sentence_order == "score"
    assert [s.node for s in r.sentences] == [s.node for s in plain.sentences]
    assert (
        not selection_active(off) and selection_active(SELECT) and selection_active(ScoreConfig())
    )
    assert not selection_active(dataclasses.replace(SELECT, select_depth=0))
    assert not selection_active(ScoreConfig(select_keep=7, select_depth=7))  # nothing to pick


def test_select_order_hand_computed():
    z = torch.tensor([0.9, 0.8, 0.7, 0.5])
    p = torch.tensor([0, 0, 0, 1])
    assert select_order(z, p, None, 1.0, 0.0, 10) == [0, 1, 2, 3]
    # decay 0.5: after node 0, node 1 gains 0.4 < node 3's 0.5; then node 1 (0.4) > node 2 (0.35)
    assert select_order(z, p, None, 0.5, 0.0, 10) == [0, 3, 1, 2]
    assert select_order(z, p, None, 0.5, 0.0, 1) == [0, 1, 2, 3]  # depth 1: the rest by score
    # free 1: a passage's second sentence keeps its score (0.8 > 0.5), the third decays (0.35)
    assert select_order(z, p, None, 0.5, 0.0, 10, free=1) == [0, 1, 3, 2]
    assert select_order(torch.tensor([]), torch.tensor([], dtype=torch.long), None, 0.5, 0, 5) == []


def test_margin_demotes_only_close_sentences_and_keep_holds_the_head():
    z = torch.tensor([0.9, 0.8, 0.7, 0.5, 0.45])
    p = torch.tensor([0, 0, 0, 1, 2])
    # margin 0.3, no decay: node 1 (0.8 - 0.3 = 0.5) ties node 3 (0.5), the earlier one wins;
    # then node 2 (0.7 - 0.6 = 0.1) goes below both other passages
    assert select_order(z, p, None, 1.0, 0.0, 10, margin=0.3) == [0, 1, 3, 4, 2]
    # margin 0.05: no other passage is within 0.05 of nodes 1 and 2 (0.75, 0.6 > 0.5): score order
    assert select_order(z, p, None, 1.0, 0.0, 10, margin=0.05) == [0, 1, 2, 3, 4]
    # keep 2: the first two positions by score, then node 2 pays 0.3 (free 0: one further) < 0.5
    assert select_order(z, p, None, 1.0, 0.0, 10, margin=0.3, keep=2) == [0, 1, 3, 4, 2]
    # free 1 + keep 2: node 2 pays 0.3 once (0.4 < 0.5, 0.45); depth 3 leaves the rest by score
    assert select_order(z, p, None, 1.0, 0.0, 3, free=1, margin=0.3, keep=2) == [0, 1, 3, 2, 4]
    assert select_order(z, p, None, 1.0, 0.0, 2, margin=0.3, keep=2) == [0, 1, 2, 3, 4]


def test_redundancy_pushes_down_a_near_duplicate():
    z = torch.tensor([0.9, 0.85, 0.8])
    p = torch.tensor([0, 1, 2])
    v = torch.tensor([[1.0, 0.0], [1.0, 0.01], [0.0, 1.0]])  # node 1 repeats node 0
    assert select_order(z, p, v, 1.0, 0.0, 3) == [0, 1, 2]
    assert select_order(z, p, v, 1.0, 0.2, 3) == [0, 2, 1]


def test_build_ranking_selects_and_context_takes_the_selection():
    sents = _sentences()
    n = len(sents)
    enc = Encoded(
        query="metformin and cancer",
        passages=PASSAGES,
        sentences=sents,
        passage_of=torch.tensor([s.passage_idx for s in sents]),
        h=torch.eye(n),
        role_probs=torch.full((n, 3), 1 / 3),
        local_logits=torch.zeros(n),
        intent_by_passage=torch.full((len(PASSAGES), 3), 1 / 3),
    )
    final = torch.tensor([s.score for s in sents])
    plain = build_ranking(enc, final, final, None, "log")
    chosen = build_ranking(enc, final, final, None, "log", None, SELECT)
    assert plain.sentence_order == "score" and chosen.sentence_order == "selected"
    empty = torch.zeros((2, 0), dtype=torch.long)
    ctx = build_context(
        chosen.sentences, PASSAGES, empty, torch.zeros(0), torch.zeros(0), ContextConfig(top_k=5)
    )
    ctx_plain = build_context(
        plain.sentences, PASSAGES, empty, torch.zeros(0), torch.zeros(0), ContextConfig(top_k=5)
    )
    assert [u["node"] for u in ctx["units"]] == [s.node for s in chosen.sentences[:5]]
    assert {u["passage"] for u in ctx["units"]} >= {1, 2}
    assert {u["passage"] for u in ctx_plain["units"]} == {0, 1}
    assert "Pooled randomised trials" in ctx["prompt"]


@pytest.mark.parametrize(
    "field,value", [("select_decay", 0.0), ("select_decay", 1.5), ("select_redundancy", -0.1),
                    ("select_depth", -1), ("select_margin", -0.1), ("select_keep", -1)],
)  # fmt: skip
def test_config_rejects_out_of_range(field, value):
    cfg = LoGConfig()
    setattr(cfg.score, field, value)
    with pytest.raises(ConfigError, match=field):
        cfg.check()


def test_order_note_names_the_order():
    assert "order = score" in order_note(_ranking())
    assert "selected" in order_note(apply_selection(_ranking(), None, SELECT))


def test_default_settings_break_the_passage_block():
    cfg = ScoreConfig()
    assert not cfg.select_ranking  # by default only the structured context takes the selection
    r = apply_selection(_ranking(), None, cfg)
    top5 = [s.passage_idx for s in r.sentences[:5]]
    assert top5 == [0, 0, 0, 1, 2]  # the null result 4th, the correction 5th (5th and 6th before)
    assert [s.node for s in selected_sentences(_ranking().sentences, None, cfg)] == [
        s.node for s in r.sentences
    ]
    plain = _ranking()
    kept = [s.node for s in plain.sentences]
    selected_sentences(plain.sentences, None, cfg)
    assert [s.node for s in plain.sentences] == kept and plain.sentence_order == "score"


def test_order_note_names_a_selected_context():
    r = _ranking()
    r.context = {"units": [], "order": "selected"}
    assert order_note(r).startswith("order = score") and "structured context" in order_note(r)
