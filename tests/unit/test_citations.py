"""Citation markers (logrerank/text/citations.py) and the citing-query route of paper pools."""

from __future__ import annotations

import pytest

from logrerank.config import LoGConfig
from logrerank.ranking.routing import pool_route
from logrerank.text.citations import has_citation_marker
from logrerank.types import Passage

CITING = [
    "The sentences were tagged using TnT (Brants, 2000) trained on the Brown Corpus.",
    "POS-tagged using TnT (Brants,2000).",
    "There exist stack decoders (Berger et al., 1996; Wang and Waibel, 1997).",
    "Berger et al. (1996) proposed a stack decoder.",
    "Pantel et al, (2004) proposed a pattern-based approach.",
    "as presented in Tillmann and Ney (2000)",
    "a reordering method proposed by Kogure [1990].",
    "redundant copying as it is called by [Kogure 90].",
    "Long noncoding RNAs are targets of p53 [7].",
    "as shown before [3, 7] and [4-6]",
]
NOT_CITING = [
    "Did metformin lower cancer incidence (HR 0.85, 95% CI 0.78-0.93)?",
    "Patients enrolled in 2010 (n = 2010) were followed up.",
    "What happened to incidence after 2019?",
    "The cohort (Sweden, 2001-2010) was large.",
    "What is the role of IL-6 [in mice]?",
    "With respect to mortality, what is the effect of aspirin versus placebo?",
    "",
]


@pytest.mark.parametrize("text", CITING)
def test_citing_sentences_have_a_marker(text):
    assert has_citation_marker(text)


@pytest.mark.parametrize("text", NOT_CITING)
def test_questions_and_figures_are_not_markers(text):
    assert not has_citation_marker(text)


def _paper_pool() -> list[Passage]:
    title = "A Statistical Part-of-Speech Tagger Based on Second Order Markov Models"
    return [Passage("TnT uses second order Markov models.", title=title) for _ in range(3)]


def test_citing_query_in_a_paper_pool_takes_its_own_weight():
    cfg = LoGConfig()
    cfg.score.paper_title_words = 7.0
    cfg.score.paper_global_weight = 1.0
    cfg.score.citance_route = True
    cfg.score.citance_global_weight = 0.25
    cite = pool_route(cfg, _paper_pool(), "We tag with TnT (Brants, 2000).")
    ask = pool_route(cfg, _paper_pool(), "Which tagger uses second order Markov models?")
    assert cite.citance and cite.paper and cite.global_weight == 0.25
    assert "citing query" in cite.describe() and "0.25" in cite.describe()
    assert not ask.citance and ask.global_weight == 1.0
    short = [Passage("TnT uses Markov models.", title="TnT")]  # not a paper pool
    assert pool_route(cfg, short, "We tag with TnT (Brants, 2000).").global_weight == 1.0


def test_citance_route_off_keeps_the_paper_weight():
    cfg = LoGConfig()
    cfg.score.paper_title_words = 7.0
    cfg.score.paper_global_weight = 0.5
    cfg.score.citance_global_weight = 0.0  # ignored while citance_route is off
    route = pool_route(cfg, _paper_pool(), "We tag with TnT (Brants, 2000).")
    assert not route.citance and route.global_weight == 0.5
