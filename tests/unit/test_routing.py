"""Routed models: pools without titles go to the single-passage global stage, titled pools to
the multi-passage one; the routing survives save/load and the training helpers build it."""

from __future__ import annotations

import dataclasses
import io

import pytest
import torch

from logrerank.config import GlobalConfig, GraphConfig, LoGConfig, ScoreConfig, SingleStageConfig
from logrerank.graph.inputs import MULTI, SINGLE, route
from logrerank.graph.links import titled_fraction
from logrerank.jsonconfig import ConfigError
from logrerank.log_checkpoint import read_meta
from logrerank.pipeline import LoGReranker
from logrerank.training.log.graph_cv import _route_saved, attach_single_stage, single_stage_of
from logrerank.types import Passage
from tests.helpers import FakeEmbedder

QUERY = "Which film did Harold Becker direct?"
TITLED = [
    {"title": "Mercury Rising", "text": "Mercury Rising is a 1998 film. It was directed by "
     "Harold Becker."},
    {"title": "Harold Becker", "text": "Harold Becker is a director. He directed Mercury Rising."},
    {"title": "Bruce Willis", "text": "Bruce Willis is an actor. He starred in Mercury Rising."},
]  # fmt: skip
UNTITLED = [{"title": "", "text": p["text"]} for p in TITLED]

MULTI_STAGE = dict(
    graph=GraphConfig(mentions=True, shared_terms=True, term_idf=0.5),
    global_=GlobalConfig(hidden=32, heads=4, rel_emb_dim=8, relations=11, lexical_inputs=True),
)


def _perturb(module: torch.nn.Module, seed: int) -> None:
    """Non-zero weights, so that each stage changes the scores in its own way."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g))


@pytest.fixture(scope="module")
def single_source(make_tiny_model):
    """An unrouted model whose global stage (paper graph, 8 relations) becomes the single stage."""
    model = make_tiny_model(graph=GraphConfig(tau_sim=0.6))
    _perturb(model.global_model, 1)
    return model


@pytest.fixture(scope="module")
def routed(make_tiny_model, single_source):
    model = make_tiny_model(**MULTI_STAGE)
    _perturb(model.global_model, 2)
    attach_single_stage(model, single_stage_of(single_source, 0.5))
    return model


def _scores(ranking):
    return [s.score for s in ranking.sentences]


def test_titled_fraction_and_route(routed):
    passages = [Passage(title=t, text="x") for t in ("Aspirin", "", "the", "Mercury Rising")]
    # "the" is a stopword title: not usable
    assert titled_fraction(passages) == pytest.approx(0.5)
    assert titled_fraction([]) == 0.0
    enc = routed.encode(QUERY, TITLED)
    assert route(routed.config, enc) == MULTI
    enc = routed.encode(QUERY, UNTITLED)
    assert route(routed.config, enc) == SINGLE
    unrouted = dataclasses.replace(routed.config, single=SingleStageConfig())
    assert route(unrouted, enc) == MULTI  # min_titled 0: one stage for every pool


def test_unroute_gives_the_single_stage_to_train(make_tiny_model, single_source):
    """train global on a routed init trains its single-passage stage: unroute makes that stage
    the model's one global stage, which then ranks every pool as the single stage did."""
    from logrerank.training.log.global_stage import unroute

    model = make_tiny_model(**MULTI_STAGE)
    attach_single_stage(model, single_stage_of(single_source, 0.5))
    unroute(model)
    assert model.global_single is None and model.config.single.min_titled == 0.0
    assert model.config.global_.relations == single_source.config.global_.relations
    assert not model.config.global_.lexical_inputs and model.config.graph.tau_sim == 0.6
    for passages in (UNTITLED, TITLED):  # every pool now goes to that stage
        ref = single_source.rerank(QUERY, passages)
        assert _scores(model.rerank(QUERY, passages)) == pytest.approx(_scores(ref), abs=1e-6)
    unroute(model)  # an unrouted model is left as it is
    assert model.config.global_.relations == single_source.config.global_.relations


def test_untitled_pool_is_ranked_by_the_single_stage(routed, single_source):
    r = routed.rerank(QUERY, UNTITLED)
    ref = single_source.rerank(QUERY, UNTITLED)
    assert r.info["global_stage"] == SINGLE and r.info["titled_fraction"] == 0.0
    assert _scores(r) == pytest.approx(_scores(ref), abs=1e-6)
    assert r.info["graph"]["tau_sim"] == 0.6  # the single stage's own graph settings
    assert not r.info["graph"]["mentions"] and not r.info["edge_counts"].get("mention")


def test_titled_pool_is_ranked_by_the_multi_stage(routed, single_source):
    r = routed.rerank(QUERY, TITLED)
    assert r.info["global_stage"] == MULTI and r.info["titled_fraction"] == 1.0
    assert r.info["graph"]["mentions"] and r.info["graph"]["tau_sim"] == 0.75
    assert _scores(r) != pytest.approx(_scores(single_source.rerank(QUERY, TITLED)), abs=1e-6)
    local = routed.rerank(QUERY, TITLED, use_global=False)
    assert local.info["global_stage"] is None


def test_knob_changes_reach_the_single_stage(routed):
    """The app passes the main graph settings with the user's knobs; the single stage keeps its
    own settings except the fields the user changed, and never gets link edges."""
    knobs = dataclasses.replace(routed.config.graph, top_k=3)
    r = routed.rerank(QUERY, UNTITLED, graph=knobs)
    assert r.info["graph"]["top_k"] == 3 and r.info["graph"]["tau_sim"] == 0.6
    assert not r.info["graph"]["mentions"] and not r.info["graph"]["shared_terms"]
    r = routed.rerank(QUERY, TITLED, graph=knobs)
    assert r.info["graph"]["top_k"] == 3 and r.info["graph"]["mentions"]


def test_routed_checkpoint_round_trip(routed, tmp_path):
    routed.save_pretrained(tmp_path / "ckpt")
    back = LoGReranker.from_pretrained(tmp_path / "ckpt")
    assert back.config.single.min_titled == 0.5 and back.global_single is not None
    for passages in (TITLED, UNTITLED):
        assert _scores(back.rerank(QUERY, passages)) == pytest.approx(
            _scores(routed.rerank(QUERY, passages)), abs=1e-6
        )


def test_route_saved_adds_the_stage_without_retraining(make_tiny_model, single_source, tmp_path):
    plain = make_tiny_model(**MULTI_STAGE)
    _perturb(plain.global_model, 3)
    plain.save_pretrained(tmp_path / "seed13", extra={"training": {"seed": 13}})
    log = io.StringIO()
    _route_saved(tmp_path / "seed13", single_stage_of(single_source, 0.5), log)
    assert "single-passage stage" in log.getvalue()
    back = LoGReranker.from_pretrained(tmp_path / "seed13")
    assert back.config.single.min_titled == 0.5
    titled = back.rerank(QUERY, TITLED)
    assert _scores(titled) == pytest.approx(_scores(plain.rerank(QUERY, TITLED)), abs=1e-6)
    # a routed checkpoint re-run: nothing to do
    log = io.StringIO()
    _route_saved(tmp_path / "seed13", single_stage_of(single_source, 0.5), log)
    assert log.getvalue() == ""


def test_single_stage_config_is_checked():
    with pytest.raises(ConfigError, match="min_titled"):
        SingleStageConfig(min_titled=1.5).check()
    with pytest.raises(ConfigError, match="relations = 11"):
        SingleStageConfig(graph=GraphConfig(mentions=True)).check()
    old = LoGConfig().to_dict()
    old.pop("single")  # checkpoints from before routing load unrouted
    assert LoGConfig.from_dict(old).single.min_titled == 0.0


def test_app_says_which_stage_ranked(routed):
    from logrerank.app.result_view import stage_note as _stage_note

    single = routed.rerank(QUERY, UNTITLED).info
    note = _stage_note(single, routed.config.single.min_titled)
    assert note.startswith("Global stage: single-passage (0 % of the passages have a title")
    multi = _stage_note(routed.rerank(QUERY, TITLED).info, 0.5)
    assert multi.startswith("Global stage: multi-passage (100 %") and "link relations" in multi


def test_app_details_show_the_pools_route_and_head_weight(routed):
    """The status details name a paper pool's blend and lexical prior, and the head weight the
    pool was ranked with (an untitled pool's own), not only the config's."""
    from types import SimpleNamespace

    from logrerank.app.result_view import notes

    old = dataclasses.replace(routed.config.score)
    sc = routed.config.score
    sc.paper_title_words, sc.paper_global_weight, sc.paper_lexical_weight = 7.0, 0.25, 0.5
    sc.head_weight, sc.untitled_head_weight, sc.lexical_weight = 0.5, 0.25, 1.0
    try:
        paper = routed.rerank("Does aspirin lower cancer risk?", PAPERS)
        untitled = routed.rerank(QUERY, UNTITLED)
    finally:
        routed.config.score = old
    session = SimpleNamespace(encodes=1, recomputes=0)

    def details(ranking):
        out = SimpleNamespace(ranking=ranking, from_cache=False, min_titled=0.5, model=routed)
        return "\n".join(notes(out, session))

    text = details(paper)
    assert "Route of this pool" in text and "lexical prior w = 0.5" in text
    assert "graph stage weighted 0.25, local only 0.75" in text and "head weight w 0.5" in text
    text = details(untitled)
    assert "lexical prior w = 1, head weight 0.25" in text and "head weight w 0.25" in text


def test_lexical_weight_adds_passage_bm25_to_untitled_pools_only(routed):
    from logrerank.text.bm25 import bm25_scores, minmax

    def logits(r):  # by (passage, sentence): the rank order changes with the weight
        ss = sorted(r.sentences, key=lambda s: (s.passage_idx, s.sent_idx))
        return torch.logit(torch.tensor([s.score for s in ss], dtype=torch.float64)), ss

    base_u, base_t = routed.rerank(QUERY, UNTITLED), routed.rerank(QUERY, TITLED)
    base_local = routed.rerank(QUERY, UNTITLED, use_global=False)
    routed.config.score.lexical_weight = 2.0
    try:
        lex_u, lex_t = routed.rerank(QUERY, UNTITLED), routed.rerank(QUERY, TITLED)
        local = routed.rerank(QUERY, UNTITLED, use_global=False)
    finally:
        routed.config.score.lexical_weight = 0.0
    assert lex_u.info["lexical_weight"] == 2.0 and lex_t.info["lexical_weight"] == 0.0
    # untitled passages: BM25 of the text, min-max over the pool, 2x added to each sentence
    bm = minmax(bm25_scores(QUERY, [p["text"] for p in UNTITLED]))
    for with_lex, without in ((lex_u, base_u), (local, base_local)):  # graph, local only
        (lu, ss), (lb, _) = logits(with_lex), logits(without)
        assert (lu - lb).tolist() == pytest.approx([2.0 * bm[s.passage_idx] for s in ss], abs=1e-4)
    assert local.info["lexical_weight"] == 2.0
    assert _scores(lex_t) == pytest.approx(_scores(base_t), abs=1e-9)  # titled: no prior
    with pytest.raises(ConfigError, match="lexical_weight"):
        dataclasses.replace(routed.config, score=ScoreConfig(lexical_weight=-1.0)).check()


def test_tune_lexical_writes_the_weight_and_keeps_the_other_score_settings(
    routed, tmp_path, monkeypatch
):
    import json

    from logrerank.data.schema import Doc, Example
    from logrerank.training.log import score_tuning

    docs = [Doc(f"d{i}", "", [p["text"]]) for i, p in enumerate(UNTITLED)]
    exs = [Example(f"q{i}", QUERY, docs, [f"d{i}"], {}) for i in range(3)]
    monkeypatch.setattr(score_tuning, "selection_sets", lambda n: {"select-citint": exs})
    routed.save_pretrained(tmp_path / "ckpt")
    before = json.loads((tmp_path / "ckpt" / "config.json").read_text())["model"]["score"]
    out = score_tuning.tune_lexical(tmp_path / "ckpt", command="logrerank tune-score")
    assert out["chosen"] in score_tuning.LEXICAL_WEIGHTS and out["selection_queries"] == 3
    assert out["grid"][str(out["chosen"])] == max(out["grid"].values())
    meta = read_meta(tmp_path / "ckpt")
    assert meta["model"]["score"] == before | {"lexical_weight": out["chosen"]}
    assert meta["training"]["lexical_selection"]["command"] == "logrerank tune-score"
    back = LoGReranker.from_pretrained(tmp_path / "ckpt")
    assert back.config.score.lexical_weight == out["chosen"]


def test_pool_route_is_every_decision_of_a_pool(routed):
    """One PoolRoute per pool: stage and lexical prior from the titled share, recorded in info."""
    from logrerank.ranking.routing import PoolRoute, pool_route

    cfg = LoGConfig(single=SingleStageConfig(min_titled=0.5), score=ScoreConfig(lexical_weight=2.0))
    two_of_three = [TITLED[0], TITLED[1], UNTITLED[2]]
    cases = [(TITLED, MULTI, 0.0), (UNTITLED, SINGLE, 2.0), (two_of_three, MULTI, 0.0)]
    for passages, stage, lex in cases:
        r = pool_route(cfg, [Passage(p["text"], p["title"]) for p in passages])
        assert isinstance(r, PoolRoute) and (r.stage, r.lexical_weight) == (stage, lex)
    one_stage = pool_route(LoGConfig(), [Passage(p["text"]) for p in UNTITLED])
    assert one_stage.stage == MULTI and "one global stage" in one_stage.describe()
    info = routed.rerank(QUERY, UNTITLED).info
    assert info["route"]["stage"] == SINGLE == info["global_stage"]
    assert info["route"]["titled_fraction"] == 0.0
    assert "single-passage stage" in info["route"]["describe"]


PAPERS = [
    {"title": "Effects of aspirin on the risk of colorectal cancer in a randomised trial",
     "text": "Aspirin lowered the risk of colorectal cancer. The trial ran for ten years."},
    {"title": "Long-term follow-up of low-dose aspirin use and cancer incidence in adults",
     "text": "Low-dose aspirin was not linked to cancer incidence. Adherence was high."},
]  # fmt: skip

PAPER_QUESTION, PAPER_CITING = "Does aspirin lower cancer risk?", "Aspirin was given as in [12]."


def logits(r):
    """A ranking's final logits in (passage, sentence) order (float64)."""
    ss = sorted(r.sentences, key=lambda s: (s.passage_idx, s.sent_idx))
    return torch.logit(torch.tensor([s.score for s in ss], dtype=torch.float64))


def with_and_without(routed, question: str, field: str, value: float):
    """``(base, with_prior, entity, entity_off)``: a paper pool (a = 0.25) ranked without and
    with ``score.<field> = value`` (logits, Ranking), and an entity-titled pool's logits with it
    and without; the model's score config is restored after."""
    old = dataclasses.replace(routed.config.score)
    routed.config.score.paper_title_words, routed.config.score.paper_global_weight = 7.0, 0.25
    try:
        base = logits(routed.rerank(question, PAPERS))
        setattr(routed.config.score, field, value)
        with_prior = routed.rerank(question, PAPERS)
        entity = logits(routed.rerank(QUERY, TITLED))
        setattr(routed.config.score, field, 0.0)
        entity_off = logits(routed.rerank(QUERY, TITLED))
    finally:
        routed.config.score = old
    return base, with_prior, entity, entity_off


def test_paper_pools_blend_the_graph_stage_with_local_only(routed):
    """Long (paper) titles route a pool to a * graph + (1 - a) * local final logits; entity titles
    keep the graph alone."""
    from logrerank.ranking.routing import global_weight_for, mean_title_words, pool_route

    papers = [Passage(p["text"], p["title"]) for p in PAPERS]
    entities = [Passage(p["text"], p["title"]) for p in TITLED]
    assert mean_title_words(papers) == pytest.approx((12 + 12) / 2)
    assert mean_title_words(entities) == pytest.approx((2 + 2 + 2) / 3)
    assert mean_title_words([Passage("x")]) == 0.0
    score = ScoreConfig(paper_title_words=7.0, paper_global_weight=0.25)
    assert global_weight_for(score, 12.0) == 0.25 and global_weight_for(score, 2.0) == 1.0
    assert global_weight_for(ScoreConfig(), 12.0) == 1.0  # off by default
    cfg = LoGConfig(score=score)
    assert pool_route(cfg, papers).global_weight == 0.25
    assert pool_route(cfg, entities).global_weight == 1.0
    assert "graph stage weighted 0.25" in pool_route(cfg, papers).describe()

    query = PAPER_QUESTION

    graph = logits(routed.rerank(query, PAPERS))
    local = logits(routed.rerank(query, PAPERS, use_global=False))
    old = dataclasses.replace(routed.config.score)
    routed.config.score.paper_title_words, routed.config.score.paper_global_weight = 7.0, 0.25
    try:
        mixed = routed.rerank(query, PAPERS)
        entity = logits(routed.rerank(QUERY, TITLED))
    finally:
        routed.config.score = old
    assert logits(mixed).tolist() == pytest.approx((0.25 * graph + 0.75 * local).tolist(), abs=1e-4)
    assert entity.tolist() == pytest.approx(logits(routed.rerank(QUERY, TITLED)).tolist(), abs=1e-9)
    assert mixed.info["route"]["global_weight"] == 0.25
    with pytest.raises(ConfigError, match="paper_global_weight"):
        dataclasses.replace(routed.config, score=ScoreConfig(paper_global_weight=1.5)).check()


def test_paper_lexical_prior_applies_to_paper_pools_by_query_kind(routed):
    """score.paper_lexical_weight adds w x passage BM25 to both ends of a paper pool's blend
    (citance_lexical_weight for citing queries on the citing route); other pools are unchanged."""
    from logrerank.ranking.routing import paper_lexical_weight_for, pool_route
    from logrerank.text.lexical import pool_lexical

    score = ScoreConfig(
        paper_title_words=7.0, paper_global_weight=0.25, paper_lexical_weight=0.5,
        citance_route=True, citance_global_weight=0.5, citance_lexical_weight=0.25,
    )  # fmt: skip
    assert paper_lexical_weight_for(score, 12.0) == 0.5
    assert paper_lexical_weight_for(score, 12.0, citance=True) == 0.25
    assert paper_lexical_weight_for(score, 2.0) == 0.0  # entity titles: not a paper pool
    assert paper_lexical_weight_for(ScoreConfig(paper_lexical_weight=0.5), 12.0) == 0.0  # off
    cfg = LoGConfig(score=score)
    papers = [Passage(p["text"], p["title"]) for p in PAPERS]
    question, citing = PAPER_QUESTION, PAPER_CITING
    assert pool_route(cfg, papers, question).lexical_weight == 0.5
    assert pool_route(cfg, papers, citing).lexical_weight == 0.25
    assert pool_route(cfg, [Passage(p["text"], p["title"]) for p in TITLED]).lexical_weight == 0.0
    assert "lexical prior w = 0.5" in pool_route(cfg, papers, question).describe()

    old = dataclasses.replace(routed.config.score)
    routed.config.score.paper_title_words, routed.config.score.paper_global_weight = 7.0, 0.25
    try:
        base = logits(routed.rerank(question, PAPERS))
        routed.config.score.paper_lexical_weight = 0.5
        with_prior = routed.rerank(question, PAPERS)
        enc = routed.encode(question, PAPERS)
    finally:
        routed.config.score = old
    bm25 = pool_lexical(enc)[:, 1].double()
    assert bm25.max() > 0  # the prior moves something
    expected = base + 0.5 * bm25
    assert logits(with_prior).tolist() == pytest.approx(expected.tolist(), abs=1e-4)
    assert with_prior.info["route"]["lexical_weight"] == 0.5
    with pytest.raises(ConfigError, match="paper_lexical_weight"):
        dataclasses.replace(routed.config, score=ScoreConfig(paper_lexical_weight=-1.0)).check()
    with pytest.raises(ConfigError, match="citance_global_weight"):
        dataclasses.replace(routed.config, score=ScoreConfig(citance_global_weight=2.0)).check()


def test_untitled_head_weight_shrinks_untitled_pools_only(routed):
    """score.untitled_head_weight replaces head_weight on the pools of the lexical prior only:
    an untitled pool ranks as with head_weight = that value, a titled pool is unchanged."""
    from logrerank.ranking.routing import head_weight_for, pool_route

    score = ScoreConfig(head_weight=0.5, untitled_head_weight=0.25, lexical_weight=1.0)
    assert head_weight_for(score, 0.0) == 0.25 and head_weight_for(score, 1.0) == 0.5
    assert head_weight_for(ScoreConfig(head_weight=0.5), 0.0) == 0.5  # unset: head_weight
    r = pool_route(LoGConfig(score=score), [Passage(p["text"]) for p in UNTITLED])
    assert r.head_weight == 0.25 and "head weight 0.25" in r.describe()

    with pytest.raises(ConfigError, match="untitled_head_weight"):
        dataclasses.replace(routed.config, score=ScoreConfig(untitled_head_weight=1.5)).check()


def test_choose_untitled_picks_the_best_pair_and_prefers_the_shipped_head_weight():
    from logrerank.training.log import score_tuning

    def row(gold, sent):  # sent: (passage, sentence, local, global, -, text id, prior, bm25)
        return {"qid": "q", "gold": gold, "gold_sent": [], "sent": sent}

    # passage 1 is gold; its global logit is lower, its prior and BM25 higher: shrinking the
    # head toward the prior (w < 1) or adding BM25 ranks it first
    sent = [[0, 0, 2.0, 2.0, -1.0, 1, 0.0, 0.0], [1, 0, 1.0, 1.0, -1.0, 2, 1.5, 1.0]]
    rows = [row([1], sent)]
    cfg = ScoreConfig(head_weight=0.5)
    (hw, lw), table = score_tuning.choose_untitled(rows, cfg)
    assert table[(1.0, 0.0)] < 100.0 and table[(hw, lw)] == 100.0
    # ties: the shipped head weight (0.5), then the smallest lexical weight that wins
    assert hw == 0.5 and lw == min(k[1] for k, v in table.items() if k[0] == 0.5 and v == 100.0)


def test_untitled_pools_blend_the_graph_stage_with_local_only(routed):
    """score.untitled_global_weight blends the single-passage stage with local only on untitled
    pools (a = 0: local only), and leaves titled pools to the graph alone."""
    from logrerank.ranking.routing import global_weight_for, pool_route

    score = ScoreConfig(untitled_global_weight=0.25)
    assert global_weight_for(score, 0.0, titled=0.0) == 0.25
    assert global_weight_for(score, 2.0, titled=1.0) == 1.0
    assert global_weight_for(ScoreConfig(), 0.0, titled=0.0) == 1.0  # off by default
    untitled = [Passage(p["text"]) for p in UNTITLED]
    cfg = LoGConfig(score=score)
    assert pool_route(cfg, untitled).global_weight == 0.25
    assert (
        "untitled: graph stage weighted 0.25, local only 0.75"
        in pool_route(cfg, untitled).describe()
    )
    graph = logits(routed.rerank(QUERY, UNTITLED))
    local = logits(routed.rerank(QUERY, UNTITLED, use_global=False))
    titled = logits(routed.rerank(QUERY, TITLED))
    old = dataclasses.replace(routed.config.score)
    try:
        routed.config.score.untitled_global_weight = 0.25
        mixed = routed.rerank(QUERY, UNTITLED)
        same_titled = logits(routed.rerank(QUERY, TITLED))
        routed.config.score.untitled_global_weight = 0.0
        only_local = logits(routed.rerank(QUERY, UNTITLED))
    finally:
        routed.config.score = old
    assert logits(mixed).tolist() == pytest.approx((0.25 * graph + 0.75 * local).tolist(), abs=1e-4)
    assert only_local.tolist() == pytest.approx(local.tolist(), abs=1e-6)
    assert same_titled.tolist() == pytest.approx(titled.tolist(), abs=1e-9)
    assert mixed.info["route"]["global_weight"] == 0.25
    with pytest.raises(ConfigError, match="untitled_global_weight"):
        dataclasses.replace(routed.config, score=ScoreConfig(untitled_global_weight=-0.5)).check()


def test_dense_prior_adds_v_times_scaled_passage_cosine_to_paper_pools(routed):
    """score.paper_dense_weight adds v x 10 x cos(e_q, e_p) (e_p: the packaged embedder's
    "title. text") to every sentence of a paper pool, citance_dense_weight on the citing route;
    entity-titled pools are unchanged; the passages' breakdown carries the cosine and the term."""
    from logrerank.models.bi_encoder import BiEncoder
    from logrerank.ranking.routing import dense_weight_for, pool_route

    score = ScoreConfig(
        paper_title_words=7.0, paper_global_weight=0.25, paper_dense_weight=0.2,
        citance_route=True, citance_dense_weight=0.1,
    )  # fmt: skip
    assert dense_weight_for(score, 12.0) == 0.2
    assert dense_weight_for(score, 12.0, citance=True) == 0.1
    assert dense_weight_for(score, 2.0) == 0.0  # entity titles: not a paper pool
    assert dense_weight_for(ScoreConfig(paper_dense_weight=0.2), 12.0) == 0.0  # no paper route
    cfg = LoGConfig(score=score)
    papers = [Passage(p["text"], p["title"]) for p in PAPERS]
    question, citing = PAPER_QUESTION, PAPER_CITING
    assert pool_route(cfg, papers, question).dense_weight == 0.2
    assert pool_route(cfg, papers, citing).dense_weight == 0.1
    assert pool_route(cfg, [Passage(p["text"], p["title"]) for p in TITLED]).dense_weight == 0.0
    assert "dense passage prior v = 0.2" in pool_route(cfg, papers, question).describe()

    base, with_prior, entity, entity_off = with_and_without(
        routed, question, "paper_dense_weight", 0.2
    )
    # the expected cosine from a separately loaded bi-encoder on the model's backbone (the tiny
    # model is fully joint, so its prior loads the backbone; isolated models share theirs)
    be = BiEncoder(routed.config.backbone.name_or_path, precision="fp32")
    e = be.embed([question] + [f"{p['title']}. {p['text']}" for p in PAPERS]).double()
    cos = e[1:] @ e[0]
    passage_of = torch.tensor(
        [
            s.passage_idx
            for s in sorted(with_prior.sentences, key=lambda s: (s.passage_idx, s.sent_idx))
        ]
    )
    expected = base + 0.2 * 10.0 * cos[passage_of]
    assert logits(with_prior).tolist() == pytest.approx(expected.tolist(), abs=1e-3)
    assert with_prior.info["route"]["dense_weight"] == 0.2
    for p in with_prior.passages_ranked:
        assert p.extra["dense_prior"] == pytest.approx(float(cos[p.passage_idx]), abs=1e-4)
        assert p.extra["dense_term"] == pytest.approx(2.0 * p.extra["dense_prior"])
    assert entity.tolist() == pytest.approx(entity_off.tolist(), abs=1e-9)
    with pytest.raises(ConfigError, match="paper_dense_weight"):
        dataclasses.replace(routed.config, score=ScoreConfig(paper_dense_weight=-0.1)).check()


def test_dense_prior_embeds_each_passage_once_and_forgets_the_oldest():
    """DensePrior: cos(e_q, e_p) per passage; a passage's embedding is computed once and kept
    (least recently used dropped beyond max_passages); the query is embedded again only when it
    changes."""
    from logrerank.ranking.dense_prior import DensePrior, passage_text

    fake = FakeEmbedder()
    prior = DensePrior(fake, max_passages=2)
    a, b, c = Passage("xy", "T"), Passage("abc"), Passage("z", "Title")
    assert passage_text(a) == "T. xy" and passage_text(b) == "abc"
    out = prior("q", [a, b])  # "q" -> (1, 1); "T. xy" -> (5, 1); "abc" -> (3, 1), normalised
    q = torch.tensor([1.0, 1.0]) / 2**0.5
    assert out.tolist() == pytest.approx(
        [
            float(torch.tensor([5.0, 1.0]) @ q) / 26**0.5,
            float(torch.tensor([3.0, 1.0]) @ q) / 10**0.5,
        ]
    )
    prior("q", [b, a])  # both held, and the same query: nothing is embedded
    assert fake.seen == ["T. xy", "abc", "q"]
    prior("q", [c])  # a third passage: the least recently used ("abc") goes
    assert list(prior.store) == ["T. xy", "Title. z"]
    assert prior("q", []).numel() == 0
    prior("r", [c])  # a new query is embedded
    assert fake.seen[-1] == "r"


def test_titled_sentence_prior_reads_each_sentence_with_its_title():
    """DensePrior.sentences: cos(e_q, e_{title. s}) per sentence, the title of the sentence's own
    passage prefixed (none for an untitled passage); texts are embedded once."""
    from types import SimpleNamespace

    from logrerank.ranking.dense_prior import DensePrior, sentence_text

    fake = FakeEmbedder()
    prior = DensePrior(fake)
    passages = [Passage("ab. cd.", "T"), Passage("e.")]
    sents = [SimpleNamespace(passage_idx=p, text=t) for p, t in ((0, "ab."), (0, "cd."), (1, "e."))]
    assert (
        sentence_text(passages[0], "ab.") == "T. ab." and sentence_text(passages[1], "e.") == "e."
    )
    out = prior.sentences("q", passages, sents)  # (6, 1), (6, 1), (2, 1) against (1, 1)
    q = torch.tensor([1.0, 1.0]) / 2**0.5
    six = float(torch.tensor([6.0, 1.0]) @ q) / 37**0.5
    assert out.tolist() == pytest.approx([six, six, float(torch.tensor([2.0, 1.0]) @ q) / 5**0.5])
    assert fake.seen == ["T. ab.", "T. cd.", "e.", "q"]
    assert prior.sentences("q", passages, []).numel() == 0


def test_titled_sentence_prior_adds_u_times_scaled_cosine_to_each_sentence(routed):
    """score.paper_sentence_weight adds u x 10 x cos(e_q, e_{title. s}) to each sentence of a
    paper pool (citance_sentence_weight on the citing route); entity pools are unchanged; each
    sentence's breakdown carries the cosine and the term; the route says so."""
    from logrerank.models.bi_encoder import BiEncoder
    from logrerank.ranking.routing import pool_route, sentence_weight_for

    score = ScoreConfig(
        paper_title_words=7.0, paper_global_weight=0.25, paper_sentence_weight=0.3,
        citance_route=True, citance_sentence_weight=0.1,
    )  # fmt: skip
    assert sentence_weight_for(score, 12.0) == 0.3
    assert sentence_weight_for(score, 12.0, citance=True) == 0.1
    assert sentence_weight_for(score, 2.0) == 0.0  # entity titles: not a paper pool
    assert sentence_weight_for(ScoreConfig(paper_sentence_weight=0.3), 12.0) == 0.0
    cfg = LoGConfig(score=score)
    papers = [Passage(p["text"], p["title"]) for p in PAPERS]
    assert pool_route(cfg, papers, PAPER_QUESTION).sentence_weight == 0.3
    assert pool_route(cfg, papers, PAPER_CITING).sentence_weight == 0.1
    assert "titled-sentence prior u = 0.3" in pool_route(cfg, papers, PAPER_QUESTION).describe()

    base, with_prior, entity, entity_off = with_and_without(
        routed, PAPER_QUESTION, "paper_sentence_weight", 0.3
    )
    ordered = sorted(with_prior.sentences, key=lambda s: (s.passage_idx, s.sent_idx))
    be = BiEncoder(routed.config.backbone.name_or_path, precision="fp32")
    titled = [f"{PAPERS[s.passage_idx]['title']}. {s.text}" for s in ordered]
    e = be.embed([PAPER_QUESTION] + titled).double()
    cos = e[1:] @ e[0]
    assert logits(with_prior).tolist() == pytest.approx((base + 3.0 * cos).tolist(), abs=1e-3)
    assert with_prior.info["route"]["sentence_weight"] == 0.3
    for s, c in zip(ordered, cos.tolist()):
        assert s.extra["title_sentence_prior"] == pytest.approx(c, abs=1e-4)
        assert s.extra["title_sentence_term"] == pytest.approx(3.0 * c, abs=1e-3)
    assert entity.tolist() == pytest.approx(entity_off.tolist(), abs=1e-9)
    with pytest.raises(ConfigError, match="paper_sentence_weight"):
        dataclasses.replace(routed.config, score=ScoreConfig(citance_sentence_weight=-1)).check()


def test_isolated_model_embeds_passages_with_its_frozen_packaged_encoder(
    save_isolated_checkpoint, tmp_path
):
    """In isolated mode the dense prior shares the frozen encoder of the sentence prior (no
    second copy), and its cosines equal a bi-encoder loaded from the same backbone."""
    from logrerank.models.bi_encoder import BiEncoder
    from logrerank.ranking.dense_prior import passage_cosines

    model = LoGReranker.from_pretrained(str(save_isolated_checkpoint(tmp_path)))
    enc = model.encode("Does aspirin lower cancer risk?", PAPERS)
    cos = passage_cosines(model, enc)
    assert model.caches.dense.embedder.model is model.local.encoder
    be = BiEncoder(model.config.backbone.name_or_path, precision="fp32")
    e = be.embed([enc.query] + [f"{p['title']}. {p['text']}" for p in PAPERS])
    assert cos.tolist() == pytest.approx((e[1:] @ e[0]).tolist(), abs=1e-5)
