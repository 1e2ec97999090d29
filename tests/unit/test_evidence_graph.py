"""Tests of the evidence-graph selector on small hand-built, titled cases.

Default weights: ``score = 0.4 * rel + 0.5 * link + 0.2 * qtitle``; ``rel`` is min-max of the
raw relevance over all candidates. Expected greedy scores are worked out in the comments.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from logrerank.baselines.base import Ranker
from logrerank.baselines.evidence_graph import EvidenceGraphSelector, bm25_relevance
from logrerank.text.match import query_title_match, title_mentioned, title_tokens
from logrerank.types import InputError, Passage, Ranking

EXTRA_KEYS = {"relevance", "relevance_raw", "title_link", "query_title", "greedy_score", "step"}

# Multi-hop: "Inception" (A) names "Christopher Nolan" (B); B alone shares nothing with the
# query, "Interstellar" (D) is a more relevant distractor.
MULTIHOP = [
    {
        "title": "Interstellar",
        "text": "Interstellar is a 2014 film whose director and nationality of production are "
        "American and British.",
    },
    {"title": "Christopher Nolan", "text": "Nolan is a British and American filmmaker."},
    {
        "title": "Inception",
        "text": "Inception is a 2010 science fiction film written and directed by "
        "Christopher Nolan.",
    },
    {"title": "Memento", "text": "Memento is a thriller."},
]
MULTIHOP_QUERY = "What nationality is the director of Inception?"


def approx(x: float) -> object:
    return pytest.approx(x, abs=1e-9)


def by_idx(r: Ranking) -> dict[int, dict[str, float]]:
    return {p.passage_idx: p.extra for p in r.passages_ranked}


# ---------------------------------------------------------------------------- title features


@pytest.mark.parametrize(
    ("title", "text", "expected"),
    [
        ("Christopher Nolan", "directed by Christopher Nolan's studio", True),  # possessive
        ("Christopher Nolan", "directed by CHRISTOPHER\n  nolan.", True),  # case, whitespace
        ("Nolan", "a Nolanesque plot", False),  # whole words only
        ("New York", "York, New", False),  # phrase order matters
        ("Christopher Nolan", "Christopher Robin and Nolan", False),  # contiguous phrase
        ("Pokémon", "POKEMON games", True),  # accents folded
        ("Jean-Paul Sartre", "jean paul sartre wrote", True),  # hyphen = boundary
        ("Mercury (planet)", "the planet Mercury is small", True),  # disambiguator dropped
        ("AI", "AI is everywhere", False),  # under 3 characters: unusable
        ("The", "the the the", False),  # stopwords only: unusable
        ("", "anything", False),  # untitled
    ],
)
def test_title_mentioned(title: str, text: str, expected: bool) -> None:
    assert title_mentioned(title, text) is expected


def test_title_tokens_rules() -> None:
    assert title_tokens("Mercury (planet)") == ["mercury"]
    assert title_tokens("(film)") == ["film"]  # nothing else left: the parenthesis is kept
    assert title_tokens("U2") == []
    assert title_tokens("It") == []
    assert title_tokens("The Who") == ["the", "who"]


def test_query_title_match_is_graded() -> None:
    assert query_title_match("Where is the Eiffel Tower?", "Eiffel Tower") == 1.0
    assert query_title_match("How tall is the tower?", "Eiffel Tower") == 0.5
    assert query_title_match("tower eiffel height", "Eiffel Tower") == 1.0  # any order
    assert query_title_match("Where is it?", "Eiffel Tower") == 0.0
    assert query_title_match("AI news", "AI") == 0.0  # unusable title
    assert query_title_match("the of and", "") == 0.0  # untitled


# ---------------------------------------------------------------------------- selection


def test_multihop_link_promotes_second_hop_over_distractor() -> None:
    sel = EvidenceGraphSelector()
    # raw [6, 2, 10, 0] -> rel [0.6, 0.2, 1.0, 0.0]; only "Inception" is in the query (qt 1).
    # step 1: D .4*.6 = .24, B .4*.2 = .08, A .4*1 + .2*1 = .60, E 0 -> A (idx 2)
    #         margin over D: rel .16, title .20 -> signal "query_title"
    # step 2: A's body names "Christopher Nolan": B .08 + .5 = .58 > D .24 -> B (idx 1)
    #         margin parts: rel -.16, link .5 -> signal "title_link", link from A
    # step 3: D .24 > E 0 -> D (signal "relevance"); step 4: E (signal "last")
    r = sel.rank_with_scores(MULTIHOP_QUERY, MULTIHOP, relevance=[6, 2, 10, 0])
    assert r.passage_order() == [2, 1, 0, 3]
    ex = by_idx(r)
    assert ex[2]["greedy_score"] == approx(0.6)
    assert ex[1]["greedy_score"] == approx(0.58)
    assert ex[1]["title_link"] == 1.0 and ex[1]["relevance"] == approx(0.2)
    assert ex[0]["greedy_score"] == approx(0.24) and ex[0]["title_link"] == 0.0
    assert ex[3]["greedy_score"] == approx(0.0)
    trace = r.info["trace"]
    assert [t["signal"] for t in trace] == ["query_title", "title_link", "relevance", "last"]
    assert trace[0]["runner_up"] == 0 and trace[0]["margin"] == approx(0.36)
    assert trace[1]["link_from"] == 2 and trace[1]["link_from_title"] == "Inception"
    assert trace[1]["margin_parts"]["relevance"] == approx(-0.16)
    assert trace[1]["margin_parts"]["title_link"] == approx(0.5)
    assert trace[0]["link_from"] is None and trace[0]["link_sources"] == []
    # Without the link term the distractor stays above B: the graph made the difference.
    flat = EvidenceGraphSelector(w_link=0.0).rank_with_scores(
        MULTIHOP_QUERY, MULTIHOP, relevance=[6, 2, 10, 0]
    )
    assert flat.passage_order() == [2, 0, 1, 3]


def test_scores_recomputed_after_each_pick() -> None:
    passages = [
        {"title": "Alpha Station", "text": "Alpha Station was built by the Beta Corporation."},
        {"title": "Beta Corporation", "text": "The Beta Corporation is owned by Gamma Holdings."},
        {"title": "Gamma Holdings", "text": "Gamma Holdings is a family firm."},
        {"title": "Delta Port", "text": "Delta Port is a harbour."},
    ]
    query = "Who owns the builder of it?"  # names no title: every qtitle is 0
    # raw [1, .2, 0, .6] -> rel [1, .2, 0, .6]
    # step 1: A .40, B .08, C 0, D .24 -> A
    # step 2: A names Beta: B .08 + .5 = .58; C still 0 (A does not name Gamma); D .24 -> B
    # step 3: B names Gamma (its own title does not count): C 0 + .5 = .50 > D .24 -> C
    # step 4: D .24
    r = EvidenceGraphSelector().rank_with_scores(query, passages, relevance=[1, 0.2, 0, 0.6])
    assert r.passage_order() == [0, 1, 2, 3]
    trace = r.info["trace"]
    assert [t["total"] for t in trace] == [approx(0.4), approx(0.58), approx(0.5), approx(0.24)]
    assert trace[2]["link_from"] == 1 and trace[2]["link_sources"] == [1]
    assert trace[2]["signal"] == "title_link"
    # The greedy score is not monotone (0.40 then 0.58), the rank score is.
    assert [p.score for p in r.passages_ranked] == [1.0, 0.75, 0.5, 0.25]
    assert [p.extra["step"] for p in r.passages_ranked] == [1, 2, 3, 4]
    # Relevance alone: A, D, B, C.
    assert EvidenceGraphSelector(w_link=0).rank_with_scores(
        query, passages, [1, 0.2, 0, 0.6]
    ).passage_order() == [0, 3, 1, 2]


def test_query_title_match_promotes_titled_passage() -> None:
    passages = [
        Passage(text="Capital city of England.", title="London"),
        Passage(text="The capital of France.", title="Paris"),
        Passage(text="A city in Spain.", title="Madrid"),
    ]
    # rel [1, .8, 0]; qtitle [0, 1, 0]: London .40, Paris .32 + .2 = .52 -> Paris first.
    r = EvidenceGraphSelector().rank_with_scores(
        "What river flows through Paris?", passages, relevance=[1.0, 0.8, 0.0]
    )
    assert r.passage_order() == [1, 0, 2]
    assert by_idx(r)[1]["query_title"] == 1.0
    assert by_idx(r)[1]["greedy_score"] == approx(0.52)
    assert r.info["trace"][0]["signal"] == "query_title"


def test_tied_relevance_minmax_is_one_not_zero() -> None:
    passages = [Passage("x one", "First Item"), Passage("y two", "Second Item"), Passage("z", "")]
    r = EvidenceGraphSelector().rank_with_scores("unrelated words", passages, [3, 3, 3])
    assert r.passage_order() == [0, 1, 2]  # ties -> input order
    for p in r.passages_ranked:
        assert p.extra["relevance"] == 1.0
        assert p.extra["greedy_score"] == approx(0.4)
    assert [t["signal"] for t in r.info["trace"]] == ["input_order", "input_order", "last"]
    single = EvidenceGraphSelector().rank_with_scores("q", ["only one"], [-5.0])
    assert single.passages_ranked[0].extra["relevance"] == 1.0
    assert single.passages_ranked[0].score == 1.0


def test_untitled_passages_follow_relevance_order() -> None:
    passages = ["alpha beta mentions gamma", "gamma", "delta alpha"]
    r = EvidenceGraphSelector().rank_with_scores("gamma alpha", passages, [0.1, 0.9, 0.5])
    assert r.passage_order() == [1, 2, 0]
    for p in r.passages_ranked:
        assert p.extra["title_link"] == 0.0 and p.extra["query_title"] == 0.0
    assert all(t["signal"] in ("relevance", "last") for t in r.info["trace"])
    assert any("no passage has a usable title" in w for w in r.warnings)
    assert r.info["usable_titles"] == 0


def test_same_title_chunks_do_not_link() -> None:
    passages = [
        {"title": "Inception", "text": "Inception is a film. Inception was a hit."},
        {"title": "Inception", "text": "Its budget was large."},
        {"title": "Budget", "text": "A budget is a plan."},
    ]
    r = EvidenceGraphSelector().rank_with_scores("film", passages, [1.0, 0.0, 0.5])
    assert by_idx(r)[1]["title_link"] == 0.0  # a chunk naming its own article is no link
    assert r.passage_order() == [0, 2, 1]


def test_deterministic_and_input_order_ties() -> None:
    sel = EvidenceGraphSelector()
    a = sel.rank_with_scores(MULTIHOP_QUERY, MULTIHOP, [6, 2, 10, 0]).to_dict()
    b = sel.rank_with_scores(MULTIHOP_QUERY, MULTIHOP, [6, 2, 10, 0]).to_dict()
    a.pop("timings"), b.pop("timings")
    assert a == b
    json.dumps(a)  # JSON-serialisable, trace included
    c = sel.rank(MULTIHOP_QUERY, MULTIHOP).to_dict()
    d = sel.rank(MULTIHOP_QUERY, MULTIHOP).to_dict()
    c.pop("timings"), d.pop("timings")
    assert c == d


# ---------------------------------------------------------------------------- relevance sources


def test_bm25_relevance_without_scores() -> None:
    raw = bm25_relevance(MULTIHOP_QUERY, [Passage(**p) for p in MULTIHOP])
    assert raw[2] > 0 and raw[1] == 0.0  # B shares no query term
    r = EvidenceGraphSelector().rank(MULTIHOP_QUERY, MULTIHOP)
    assert r.info["relevance_source"] == "bm25"
    # Whatever BM25 gives D, 0.4 * rel(D) <= 0.4 < 0.5: once A is picked, B comes next.
    assert r.passage_order()[:2] == [2, 1]
    assert by_idx(r)[1]["relevance_raw"] == 0.0
    assert r.info["trace"][1]["signal"] == "title_link"
    assert r.timings["relevance"] >= 0 and r.timings["selection"] >= 0


def test_bm25_flat_query_warns_and_keeps_input_order() -> None:
    r = EvidenceGraphSelector().rank_with_scores("the of and", ["cat sat", "dog ran"])
    assert r.passage_order() == [0, 1]
    assert all(p.extra["relevance"] == 1.0 for p in r.passages_ranked)
    assert any("BM25 is 0 everywhere" in w for w in r.warnings)


class _StubRanker:
    name = "stub-ce"
    level = "passage"

    def __init__(self, scores: list[float], drop: int | None = None) -> None:
        self.scores = scores
        self.drop = drop

    def rank(self, query: str, passages: list[Passage]) -> Ranking:
        out = Ranking.from_passage_scores(
            query, passages, self.scores, self.name, warnings=["stub warning"]
        )
        if self.drop is not None:
            out.passages_ranked = [p for p in out.passages_ranked if p.passage_idx != self.drop]
        return out


def test_relevance_ranker_scores_are_used() -> None:
    sel = EvidenceGraphSelector(relevance_ranker=_StubRanker([6, 2, 10, 0]))
    r = sel.rank(MULTIHOP_QUERY, MULTIHOP)
    assert r.passage_order() == [2, 1, 0, 3]  # same as the hand-computed multi-hop case
    assert r.info["relevance_source"] == "stub-ce"
    assert "stub warning" in r.warnings
    assert by_idx(r)[2]["relevance_raw"] == 10.0
    # rank_with_scores(None) never uses the ranker: BM25.
    assert sel.rank_with_scores(MULTIHOP_QUERY, MULTIHOP).info["relevance_source"] == "bm25"


def test_relevance_ranker_missing_passage_gets_lowest() -> None:
    sel = EvidenceGraphSelector(relevance_ranker=_StubRanker([6, 2, 10, 0], drop=0))
    r = sel.rank(MULTIHOP_QUERY, MULTIHOP)
    assert by_idx(r)[0]["relevance_raw"] == 0.0 and by_idx(r)[0]["relevance"] == 0.0
    assert any("passage 1" in w for w in r.warnings)


def test_numpy_relevance_accepted() -> None:
    r = EvidenceGraphSelector().rank_with_scores(
        MULTIHOP_QUERY, MULTIHOP, np.array([6.0, 2.0, 10.0, 0.0])
    )
    assert r.passage_order() == [2, 1, 0, 3]


# ---------------------------------------------------------------------------- contract


def test_ranks_are_a_permutation_with_full_extras() -> None:
    rng = random.Random(7)
    words = ["Red Fox", "Blue Lake", "Green Hill", "Old Mill", "Stone Bridge", "Iron Gate"]
    passages = []
    for i in range(12):
        named = rng.sample(words, 2)
        title = words[i % len(words)] if i % 4 else ""
        passages.append({"title": title, "text": f"Near the {named[0]} and {named[1]} {i}."})
    scores = [rng.uniform(-3, 3) for _ in passages]
    sel = EvidenceGraphSelector()
    query = "Where is the Old Mill?"
    for r in (sel.rank_with_scores(query, passages, scores), sel.rank(query, passages)):
        assert isinstance(r, Ranking) and r.ranker == "evidence-graph"
        assert sorted(r.passage_order()) == list(range(12))
        assert [p.rank for p in r.passages_ranked] == list(range(1, 13))
        s = [p.score for p in r.passages_ranked]
        assert all(x > y for x, y in zip(s, s[1:])) and s[0] == 1.0
        assert all(set(p.extra) >= EXTRA_KEYS for p in r.passages_ranked)
        assert all(p.extra["step"] == p.rank for p in r.passages_ranked)
        assert [t["passage_idx"] for t in r.info["trace"]] == r.passage_order()
        assert all(0.0 <= p.extra["relevance"] <= 1.0 for p in r.passages_ranked)
        assert all(math.isfinite(p.extra["greedy_score"]) for p in r.passages_ranked)
        assert r.passages_ranked[0].title == passages[r.passage_order()[0]]["title"]


def test_is_a_ranker() -> None:
    sel = EvidenceGraphSelector()
    assert isinstance(sel, Ranker)
    assert sel.name == "evidence-graph" and sel.level == "passage"


@pytest.mark.parametrize("query", ["", "   \n", None])
def test_empty_query_is_input_error(query: object) -> None:
    with pytest.raises(InputError, match="query"):
        EvidenceGraphSelector().rank(query, ["a passage"])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="query"):
        EvidenceGraphSelector().rank_with_scores(query, ["a passage"], [1.0])  # type: ignore[arg-type]


@pytest.mark.parametrize("passages", [[], "not a list", [{"title": "no text"}]])
def test_bad_passages_are_input_error(passages: object) -> None:
    with pytest.raises(InputError):
        EvidenceGraphSelector().rank("query", passages)  # type: ignore[arg-type]
    with pytest.raises(InputError):
        EvidenceGraphSelector().rank_with_scores("query", passages)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("relevance", "match"),
    [([1.0], "2 passages"), ([1.0, math.nan], "not finite"), ([1.0, "x"], "not a number")],
)
def test_bad_relevance_is_input_error(relevance: list, match: str) -> None:
    with pytest.raises(InputError, match=match):
        EvidenceGraphSelector().rank_with_scores("query", ["a", "b"], relevance)


def test_negative_weight_rejected() -> None:
    with pytest.raises(ValueError, match="w_link"):
        EvidenceGraphSelector(w_link=-1.0)
