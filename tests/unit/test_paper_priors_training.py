"""Training the graph stage on top of the paper-pool priors (``paper_priors`` of the multi-hop
stage-2 config): the offsets are exactly what inference adds at a = 1, and the fit reads them."""

from __future__ import annotations

import torch

from logrerank.config import ScoreConfig
from logrerank.data.schema import Doc, Example
from logrerank.ranking.dense_prior import KEPT_FILE, route_prior
from logrerank.ranking.results import final_logits, routed_logits
from logrerank.ranking.routing import pool_route
from logrerank.training.log import graph_cv
from logrerank.training.log.encode_cache import trainable
from logrerank.training.log.graph_cv_config import GraphCVConfig
from logrerank.types import Passage

PAPERS = [
    ("Effects of aspirin on the risk of colorectal cancer in a randomised trial",
     "Aspirin lowered the risk of colorectal cancer. The trial ran for ten years."),
    ("Long-term follow-up of low-dose aspirin use and cancer incidence in adults",
     "Low-dose aspirin was not linked to cancer incidence. Adherence was high."),
    ("A cohort study of statin use and the incidence of heart failure in older women",
     "Statins were taken by a third of the women. Heart failure was rarer among them."),
]  # fmt: skip
ENTITIES = [("Aspirin", "Aspirin is a drug. It lowers fever."), ("Bayer", "Bayer sells it.")]
QUESTION = "Does aspirin lower cancer risk?"
SCORE = ScoreConfig(
    paper_title_words=7.0, paper_global_weight=1.0, paper_lexical_weight=0.5,
    paper_dense_weight=0.2, paper_sentence_weight=0.3,
)  # fmt: skip


def _passages(rows):
    return [Passage(text, title) for title, text in rows]


def test_pool_priors_are_what_the_route_adds_to_the_graph_logits(make_tiny_model):
    """On a paper pool the offsets equal routed_logits(l) - final_logits(l) for any graph logits
    l (the lexical, dense passage and titled-sentence terms); an entity pool gets none."""
    model = make_tiny_model(score=SCORE)
    enc = model.encode(QUESTION, _passages(PAPERS))
    route = pool_route(model.config, enc.passages, enc.query)
    assert route.paper and route.global_weight == 1.0 and route.sentence_weight == 0.3
    got = graph_cv.pool_priors(model, enc, {})
    n = enc.local_logits.numel()
    for seed in (0, 1):
        l_graph = torch.randn(n, generator=torch.Generator().manual_seed(seed))
        full = routed_logits(
            enc, l_graph, model.config.score, route, *route_prior(model, enc, route)
        )
        plain = final_logits(enc, l_graph, model.config.score, 0.0, route.head_weight)
        torch.testing.assert_close(got, full - plain, atol=1e-5, rtol=0)
    assert float(got.abs().sum()) > 0
    entity = model.encode(QUESTION, _passages(ENTITIES))
    assert not pool_route(model.config, entity.passages, entity.query).paper
    assert graph_cv.pool_priors(model, entity, {}).abs().sum() == 0


def _pools(model):
    docs = [Doc(f"d{i}", title, [text]) for i, (title, text) in enumerate(PAPERS)]
    queries = [QUESTION, "Do statins prevent heart failure?"]
    exs = [Example(f"q{i}", q, docs, [f"d{i * 2}"]) for i, q in enumerate(queries)]
    return [(ex, trainable(model.encode(ex.query, _passages(PAPERS)))) for ex in exs]


def test_fit_with_paper_priors_learns_other_weights_and_keeps_the_cosines(
    make_tiny_model, tmp_path
):
    """The same seed and pools give other graph weights with the priors in the loss, and the
    cosines the fit used are kept beside the encodings (none without the priors)."""
    trained = {}
    for flag in (True, False):
        model = make_tiny_model(score=SCORE)
        folder = tmp_path / str(flag)
        cfg = GraphCVConfig(cache_dir=str(folder), epochs=2, grad_accum=1, paper_priors=flag)
        graph_cv.with_new_graph(model, cfg, 13)
        graph_cv.fit(model, cfg, _pools(model), 13)
        trained[flag] = torch.cat([p.detach().flatten() for p in model.global_model.parameters()])
        assert (folder / KEPT_FILE).exists() == flag
    assert not torch.allclose(trained[True], trained[False])


def test_citing_pools_can_be_left_out_of_the_prior_aware_loss(make_tiny_model):
    """With citances=False (paper_priors_citances = false) a citing sentence's paper pool gets no
    offsets, a question's still does."""
    from dataclasses import replace

    model = make_tiny_model(score=replace(SCORE, citance_route=True, citance_sentence_weight=2.0))
    citing = model.encode("Aspirin was given as in [12].", _passages(PAPERS))
    question = model.encode(QUESTION, _passages(PAPERS))
    assert pool_route(model.config, citing.passages, citing.query).citance
    assert graph_cv.pool_priors(model, citing, {}).abs().sum() > 0
    assert graph_cv.pool_priors(model, citing, {}, citances=False).abs().sum() == 0
    torch.testing.assert_close(
        graph_cv.pool_priors(model, question, {}, citances=False),
        graph_cv.pool_priors(model, question, {}),
    )
