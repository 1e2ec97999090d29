"""Link relations (mentions, mentioned-by, shared-term) and lexical node inputs."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from logrerank.config import ConfigError, GlobalConfig, GraphConfig, LoGConfig
from logrerank.graph.global_model import GlobalReranker
from logrerank.graph.links import (
    content_terms,
    link_edges,
    mention_edges,
    passage_names,
    shared_term_edges,
)
from logrerank.graph.sentence_graph import (
    NUM_RELATIONS,
    Relation,
    build_graph,
    edge_counts,
    relation_name,
)
from logrerank.text.background_df import background_df
from logrerank.text.lexical import lexical_features
from logrerank.text.match import normalize_tokens


def toks(texts):
    return [normalize_tokens(t) for t in texts]


def pairs(src, dst):
    return set(zip(src, dst))


# ----------------------------------------------------------------------------- names
def test_relation_names_and_ids():
    assert NUM_RELATIONS == 11
    assert relation_name(Relation.MENTIONS) == "mentions"
    assert relation_name(Relation.MENTIONED_BY) == "mentioned-by"
    assert relation_name(Relation.SHARED_TERM) == "shared-term"


def test_passage_names_rules():
    assert passage_names("Mercury (planet)") == [("mercury",)]
    assert passage_names("The Beatles") == [("the", "beatles"), ("beatles",)]
    assert passage_names("AI") == []  # fewer than 3 letters/digits
    assert passage_names("The") == []  # only stopwords
    assert passage_names("") == []
    assert passage_names("The It") == []  # every token a stopword


# ----------------------------------------------------------------------------- mentions
def test_mention_direction_and_targets():
    # passage 0 "Paris" (2 sentences), passage 1 "Berlin" (1 sentence) mentions Paris.
    texts = ["Paris is a city.", "It has a tower.", "Berlin is bigger than Paris."]
    pof = [0, 0, 1]
    titles = ["Paris", "Berlin"]
    src, dst = mention_edges(toks(texts), pof, titles, "all")
    # sentence 2 (in Berlin) mentions Paris: edges to both Paris sentences; the Paris passage
    # never names "Berlin", and a sentence does not mention its own passage
    assert pairs(src, dst) == {(2, 0), (2, 1)}
    src, dst = mention_edges(toks(texts), pof, titles, "first")
    assert pairs(src, dst) == {(2, 0)}


def test_mention_whole_token_and_normalisation():
    texts = ["Parisian food.", "Café Noir is in PARIS, France.", "x"]
    pof = [0, 1, 2]
    titles = ["Dish", "Cafe", "Paris (France)"]
    src, dst = mention_edges(toks(texts), pof, titles)
    # "Parisian" is not the token "paris"; accents are dropped ("Café" names "Cafe") but a
    # passage does not mention itself; "PARIS" names "Paris (France)"
    assert pairs(src, dst) == {(1, 2)}


def test_mention_stopword_and_short_titles_never_link():
    texts = ["The it AI Go thing.", "x y", "z"]
    pof = [0, 1, 2]
    titles = ["Alpha", "The", "AI"]
    assert mention_edges(toks(texts), pof, titles) == ([], [])


def test_same_title_passages_do_not_link():
    texts = ["Mercury is hot.", "Mercury is small."]
    pof = [0, 1]
    titles = ["Mercury", "Mercury (planet)"]  # the same normalised title
    assert mention_edges(toks(texts), pof, titles) == ([], [])


def test_mention_cap_keeps_longest_names():
    texts = ["New York and York and Paris.", "a", "b", "c"]
    pof = [0, 1, 2, 3]
    titles = ["Zed", "New York", "York", "Paris"]
    src, dst = mention_edges(toks(texts), pof, titles, max_per_sentence=1)
    assert pairs(src, dst) == {(0, 1)}  # "new york" (2 tokens) beats the 1-token names


def test_link_edges_reverse_type():
    texts = ["Paris is a city.", "Berlin is bigger than Paris."]
    cfg = GraphConfig(mentions=True, shared_terms=False)
    le = link_edges(texts, [0, 1], ["Paris", "Berlin"], cfg).select(True, False)
    got = {(u, v, r) for (u, v), r in zip(le.edge_index.T.tolist(), le.relation.tolist())}
    assert got == {(1, 0, Relation.MENTIONS), (0, 1, Relation.MENTIONED_BY)}


# ----------------------------------------------------------------------------- shared terms
def test_content_terms():
    assert content_terms(["the", "p53", "of", "2010", "ab", "kinase"]) == {"p53", "kinase"}


def test_shared_term_threshold_and_passages():
    # 4 passages; "brca1" in 2 passages (idf ln 2 = 0.69); "cells" in all 4 (idf 0)
    texts = ["brca1 cells", "cells only", "brca1 cells here", "cells"]
    pof = [0, 1, 2, 3]
    index, w = shared_term_edges(toks(texts), pof, idf_threshold=0.5, top_k=4)
    assert pairs(*index.tolist()) == {(0, 2), (2, 0)}
    # the weight is the term's background idf (logrerank.text.background_df)
    assert torch.allclose(w, torch.full((2,), background_df().idf("brca1")))
    index, _ = shared_term_edges(toks(texts), pof, idf_threshold=5.0, top_k=4)
    assert pairs(*index.tolist()) == {(0, 2), (2, 0)}  # two passages always count as few
    # "brca1" in 3 of 5 passages: ln(5 / 3) = 0.51, rare below that threshold only
    texts3, pof3 = ["brca1 a", "brca1 b", "brca1 c", "d", "e"], [0, 1, 2, 3, 4]
    index, _ = shared_term_edges(toks(texts3), pof3, idf_threshold=0.8, top_k=4)
    assert index.shape == (2, 0)  # below the rarity threshold: no edge
    index, _ = shared_term_edges(toks(texts3), pof3, idf_threshold=0.5, top_k=4)
    assert index.shape[1] == 6


def test_shared_term_not_within_a_passage_and_top_k():
    texts = ["zeta gamma", "zeta gamma", "zeta", "gamma", "other", "else"]
    pof = [0, 0, 1, 2, 3, 4]  # P = 5: zeta/gamma each in 2 passages (idf ln 2.5)
    # bg_idf=0: pool rarity only (zeta and gamma are not rare in science; equal weights)
    index, _ = shared_term_edges(toks(texts), pof, idf_threshold=0.5, top_k=1, bg_idf=0.0)
    got = pairs(*index.tolist())
    assert all(pof[u] != pof[v] for u, v in got)  # never inside one passage
    # each node keeps its best partner (ties -> lower id); kept pairs go both ways
    assert got == {(0, 2), (2, 0), (1, 2), (2, 1), (0, 3), (3, 0)}


# ----------------------------------------------------------------------------- graph
def _pool():
    texts = [
        "Paris is a city with brca1.",
        "It has a tower.",
        "Berlin is bigger than Paris brca1.",
        "Nothing here.",
    ]
    h = torch.eye(4, 4)
    roles = torch.tensor([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0, 0, 1.0]])
    z = torch.tensor([0.5, 0.5, 0.5, 0.5])
    pof = torch.tensor([0, 0, 1, 2])
    return texts, h, roles, z, pof, ["Paris", "Berlin", "Rome"]


def test_old_config_builds_exactly_the_old_graph():
    texts, h, roles, z, pof, titles = _pool()
    old = build_graph(h, roles, z, pof, GraphConfig())
    le = link_edges(texts, pof.tolist(), titles, GraphConfig(mentions=True, shared_terms=True))
    assert le.relation.numel() > 0
    same = build_graph(h, roles, z, pof, GraphConfig(), le)  # switches off: links ignored
    for key in ("edge_index", "edge_type", "relation_type"):
        assert torch.equal(old[key], same[key])
    assert torch.equal(old.edge_sim.isnan(), same.edge_sim.isnan())


def test_switches_add_and_remove_link_edges():
    texts, h, roles, z, pof, titles = _pool()
    on = GraphConfig(mentions=True, shared_terms=True, term_idf=0.3)  # ln(3 / 2) = 0.41
    le = link_edges(texts, pof.tolist(), titles, on)
    data = build_graph(h, roles, z, pof, on, le)
    c = edge_counts(data)
    assert c["mentions"] == 2 and c["mentioned-by"] == 2 and c["shared-term"] == 2
    only_m = build_graph(h, roles, z, pof, dataclasses.replace(on, shared_terms=False), le)
    assert edge_counts(only_m)["shared-term"] == 0 and edge_counts(only_m)["mentions"] == 2
    off = build_graph(
        h, roles, z, pof, dataclasses.replace(on, mentions=False, shared_terms=False), le
    )
    assert all(edge_counts(off)[n] == 0 for n in ("mentions", "mentioned-by", "shared-term"))
    untyped = build_graph(h, roles, z, pof, dataclasses.replace(on, typed=False), le)
    assert set(untyped.edge_type.tolist()) == {0}
    assert torch.equal(untyped.relation_type, data.relation_type)


def test_config_needs_11_relations_for_links():
    with pytest.raises(ConfigError):
        LoGConfig(graph=GraphConfig(mentions=True)).validate()
    LoGConfig(graph=GraphConfig(mentions=True), global_=GlobalConfig(relations=11)).validate()


# ----------------------------------------------------------------------------- lexical
def test_lexical_features_shape_and_range():
    lex = lexical_features(
        "Where is Paris?",
        ["Paris is a city.", "It has a tower.", "Berlin is big."],
        torch.tensor([0, 0, 1]),
        ["Paris", "Berlin"],
        ["Paris is a city. It has a tower.", "Berlin is big."],
    )
    assert lex.shape == (3, 3)
    assert float(lex.min()) >= 0 and float(lex.max()) <= 1
    assert lex[0, 2] == 1.0 and lex[2, 2] == 0.0  # query-title match by passage
    assert lex[0, 1] == lex[1, 1] == 1.0 and lex[2, 1] == 0.0  # passage BM25, min-max


def test_global_model_default_ignores_lexical_and_new_one_starts_as_local():
    n = 5
    h, r, ll = torch.randn(n, 8), torch.softmax(torch.randn(n, 3), -1), torch.randn(n)
    ei = torch.tensor([[0, 1, 2], [1, 2, 3]])
    et = torch.tensor([0, 8, 10])
    cfg = GlobalConfig(
        hidden=16, heads=2, relations=11, lexical_inputs=True, lexical_residual=True,
        passage_pool=True,
    )  # fmt: skip
    m = GlobalReranker(8, cfg).eval()
    lex = torch.rand(n, 3)
    out, _ = m(h, r, ll, ei, et, lexical=lex, passage_of=torch.tensor([0, 0, 1, 1, 2]))
    assert torch.allclose(out.logits, ll)  # zero-initialised residual heads: starts as local
    with pytest.raises(ValueError):
        m(h, r, ll, ei, et)  # lexical inputs are required
    old = GlobalReranker(8, GlobalConfig(hidden=16, heads=2))
    assert not any(k.startswith(("phi_lex", "w_lex")) for k in old.state_dict())
    assert old.layers[0].conv.num_relations == 8
