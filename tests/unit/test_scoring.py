"""Final score adjustments (logrerank.ranking.scoring): hand-computed cases and the pipeline wiring."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from logrerank.config import ConfigError, LoGConfig, ScoreConfig
from logrerank.ranking.scoring import adjust_logits, duplicate_groups, group_mean


def test_duplicate_groups_normalise_whitespace_only() -> None:
    assert duplicate_groups(["a b", "c", " a  b", "A b"]).tolist() == [0, 1, 0, 2]
    assert duplicate_groups([]).tolist() == []


def test_group_mean_by_hand() -> None:
    v = torch.tensor([1.0, 2.0, 4.0, 7.0])
    assert group_mean(v, torch.tensor([0, 1, 0, 1])).tolist() == [2.5, 4.5, 2.5, 4.5]


def test_defaults_leave_logits_unchanged() -> None:
    logits = torch.tensor([0.3, -1.0, 2.0])
    out = adjust_logits(logits, torch.tensor([0, 0, 1]), ["x", "y", "x"])
    assert torch.equal(out, logits)
    assert out is not logits


def test_merge_duplicates_by_hand() -> None:
    # "x" occurs in passages 0 and 1 with logits 1 and 3 -> both get 2; "y" keeps its own.
    logits = torch.tensor([1.0, 5.0, 3.0])
    out = adjust_logits(logits, torch.tensor([0, 0, 1]), ["x", "y", "x"], merge_duplicates=True)
    assert out.tolist() == [2.0, 5.0, 2.0]


def test_passage_weight_by_hand() -> None:
    # passage 0 = [1, 5] (mean 3), passage 1 = [3] (mean 3); beta = 0.5 adds 1.5 to each.
    logits = torch.tensor([1.0, 5.0, 3.0])
    out = adjust_logits(logits, torch.tensor([0, 0, 1]), ["x", "y", "z"], passage_weight=0.5)
    assert out.tolist() == [2.5, 6.5, 4.5]
    # both: merge first (x -> 2), then passage means: p0 = (2 + 5) / 2 = 3.5, p1 = 2
    out = adjust_logits(logits, torch.tensor([0, 0, 1]), ["x", "y", "x"], True, 1.0)
    assert out.tolist() == [5.5, 8.5, 4.0]


def test_passage_weight_separates_passages_sharing_their_best_sentence() -> None:
    # Both passages' best sentence is the same text; the passage whose other sentence is
    # better must now rank first (ties alone would go to input order, i.e. passage 0).
    logits = torch.tensor([4.0, -3.0, 4.0, 1.0])
    pas = torch.tensor([0, 0, 1, 1])
    texts = ["shared", "weak", "shared", "strong"]
    out = adjust_logits(logits, pas, texts, merge_duplicates=True, passage_weight=0.25)
    assert out[2] > out[0]


def test_config_round_trip_and_range() -> None:
    cfg = LoGConfig(score=ScoreConfig(merge_duplicates=True, passage_weight=0.25))
    again = LoGConfig.from_dict(cfg.to_dict())
    assert again.score == cfg.score
    assert LoGConfig.from_dict({}).score == ScoreConfig()  # old checkpoints: paper behaviour
    with pytest.raises(ConfigError, match="passage_weight"):
        LoGConfig(score=ScoreConfig(passage_weight=-1.0)).validate()
    with pytest.raises(ConfigError, match="unknown field"):
        LoGConfig.from_dict({"score": {"beta": 1.0}})


def test_pipeline_applies_the_score_config(make_tiny_model) -> None:
    model = make_tiny_model()
    passages = [
        "Aspirin lowers the risk of heart attack. It thins blood.",
        "Aspirin lowers the risk of heart attack. Statins lower cholesterol.",
        "Paris is mild in spring.",
    ]
    query = "does aspirin prevent heart attacks"
    enc = model.encode(query, passages)
    plain = model.rank_encoded(enc)
    assert plain.info["score"] == dataclasses.asdict(ScoreConfig())  # every setting, recorded
    assert {k: plain.info["score"][k] for k in ("merge_duplicates", "passage_weight")} == {
        "merge_duplicates": False,
        "passage_weight": 0.0,
    }
    assert plain.info["calibration"] == [1.0, 0.0]  # no calibration by default
    model.config.score = ScoreConfig(merge_duplicates=True, passage_weight=0.5)
    try:
        adj = model.rank_encoded(enc)
    finally:
        model.config.score = ScoreConfig()
    by_node = adj.sentence_by_node()
    # nodes 0 and 2 are the same text: one consensus logit, then their passage terms
    logit = {n: math.log(s.score / (1 - s.score)) for n, s in by_node.items()}
    g = {s.node: s.global_score for s in plain.sentences}
    lg = {n: math.log(z / (1 - z)) for n, z in g.items()}
    m = (lg[0] + lg[2]) / 2
    p0 = (m + lg[1]) / 2
    p1 = (m + lg[3]) / 2
    assert logit[0] == pytest.approx(m + 0.5 * p0, abs=1e-4)
    assert logit[2] == pytest.approx(m + 0.5 * p1, abs=1e-4)
    assert logit[4] == pytest.approx(lg[4] + 0.5 * lg[4], abs=1e-4)
    # raw local / global scores are kept; only the sort score changes
    assert [s.global_score for s in sorted(adj.sentences, key=lambda s: s.node)] == [
        s.global_score for s in sorted(plain.sentences, key=lambda s: s.node)
    ]
    assert adj.info["score"] == dataclasses.asdict(
        ScoreConfig(merge_duplicates=True, passage_weight=0.5)
    )


def test_head_weight_by_hand() -> None:
    # l = [3, 1], learned part [2, -1] -> w = 0.5 keeps half of it: [3 - 1, 1 + 0.5]
    logits = torch.tensor([3.0, 1.0])
    head = torch.tensor([2.0, -1.0])
    out = adjust_logits(logits, torch.tensor([0, 1]), ["a", "b"], head=head, head_weight=0.5)
    assert out.tolist() == [2.0, 1.5]
    # no head known (non-isolated model): w has no effect
    assert adjust_logits(logits, torch.tensor([0, 1]), ["a", "b"], head_weight=0.0).tolist() == [
        3.0,
        1.0,
    ]
    with pytest.raises(ConfigError, match="head_weight"):
        LoGConfig(score=ScoreConfig(head_weight=1.5)).validate()


def _isolated_model(tokenizer, make_tiny_encoder, tiny_config):
    """A tiny isolated-mode LoG (it has the bi-encoder prior) whose local head adds something."""
    from logrerank.config import LocalConfig
    from logrerank.pipeline import LoGReranker

    cfg = tiny_config(None, local=LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        model = LoGReranker(
            cfg, encoder=make_tiny_encoder(len(tokenizer), layers=2), tokenizer=tokenizer
        )
        torch.nn.init.normal_(model.local.local_head[-1].weight, std=1.0)  # a non-zero head
    return model


def test_head_weight_zero_gives_the_prior_ranking(
    tokenizer, make_tiny_encoder, tiny_config
) -> None:
    """Isolated mode: with w = 0 the local-only ranking is the bi-encoder prior's ranking."""
    model = _isolated_model(tokenizer, make_tiny_encoder, tiny_config)
    passages = ["Aspirin thins blood. It lowers heart attack risk.", "Paris is mild. Rain falls."]
    enc = model.encode("aspirin and heart attacks", passages)
    assert enc.prior_logits is not None
    assert not torch.allclose(enc.local_logits, enc.prior_logits)  # the head adds something
    model.config.score = ScoreConfig(head_weight=0.0)
    r = model.rank_encoded(enc, use_global=False)
    logits = {s.node: math.log(s.score / (1 - s.score)) for s in r.sentences}
    for n, v in logits.items():
        assert v == pytest.approx(float(enc.prior_logits[n]), abs=1e-4)


def test_lexical_prior_applies_to_every_pool(make_tiny_model) -> None:
    """score.lexical_weight adds w x passage BM25 to the final logits of titled and untitled
    pools alike (no titled-share threshold)."""
    from logrerank.text.lexical import pool_lexical

    model = make_tiny_model()
    texts = ["Aspirin thins blood. It lowers heart attack risk.", "Paris is mild. Rain falls."]
    try:
        for titled in (False, True):
            passages = [{"title": "Aspirin" if titled else "", "text": t} for t in texts]
            enc = model.encode("aspirin and heart attacks", passages)
            model.config.score = ScoreConfig()
            plain = {s.node: s.score for s in model.rank_encoded(enc).sentences}
            model.config.score = ScoreConfig(lexical_weight=2.0)
            lexed = model.rank_encoded(enc)
            bm25 = pool_lexical(enc)[:, 1]
            assert float(bm25.max()) > 0  # the prior adds something here
            for s in lexed.sentences:
                want = math.log(plain[s.node] / (1 - plain[s.node])) + 2.0 * float(bm25[s.node])
                assert math.log(s.score / (1 - s.score)) == pytest.approx(want, abs=1e-4)
            assert "route" not in lexed.info and "lexical_weight" not in lexed.info
    finally:
        model.config.score = ScoreConfig()


def test_calibration_changes_the_shown_scores_not_the_order(make_tiny_model) -> None:
    """score.calibration_a/b: shown = sigmoid(a x final logit + b); the sentence, passage and
    context orders and the raw local / global columns are unchanged; a <= 0 is refused."""
    model = make_tiny_model()
    passages = [
        "Aspirin lowers the risk of heart attack. It thins blood.",
        "Statins lower cholesterol. Aspirin was not tested.",
        "Paris is mild in spring. Rain falls in autumn.",
    ]
    enc = model.encode("does aspirin prevent heart attacks", passages)
    for select_ranking in (False, True):
        model.config.score = ScoreConfig(select_ranking=select_ranking)
        plain = model.rank_encoded(enc)
        model.config.score = ScoreConfig(
            calibration_a=0.25, calibration_b=-2.0, select_ranking=select_ranking
        )
        try:
            cal = model.rank_encoded(enc)
        finally:
            model.config.score = ScoreConfig()
        assert [s.node for s in cal.sentences] == [s.node for s in plain.sentences]
        assert cal.passage_order() == plain.passage_order()
        units = [[u["node"] for u in r.context["units"]] for r in (plain, cal)]
        assert units[0] == units[1]
        raw = plain.sentence_by_node()
        for s in cal.sentences:
            f = math.log(raw[s.node].score / (1 - raw[s.node].score))
            assert s.score == pytest.approx(1 / (1 + math.exp(-(0.25 * f - 2.0))), abs=1e-9)
            assert (s.local_score, s.global_score) == (
                raw[s.node].local_score,
                raw[s.node].global_score,
            )
        assert cal.info["calibration"] == [0.25, -2.0]
    for a in (0.0, -1.0, float("nan")):
        with pytest.raises(ConfigError, match="calibration_a"):
            LoGConfig(score=ScoreConfig(calibration_a=a)).validate()
    with pytest.raises(ConfigError, match="calibration_b"):
        LoGConfig(score=ScoreConfig(calibration_b=float("inf"))).validate()
