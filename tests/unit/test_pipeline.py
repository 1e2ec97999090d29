"""End-to-end tests of logrerank.pipeline.LoGReranker.

The tests run the tiny random BERT of conftest.py (real tokenizer, real segmenter, real graph
and GAT); the run on the real packaged all-MiniLM-L6-v2 backbone is in
``tests/integration/test_pipeline.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from logrerank.checkpoint import CONFIG_NAME, WEIGHTS_NAME, CheckpointError
from logrerank.config import ContextConfig, GraphConfig
from logrerank.graph.sentence_graph import relation_name
from logrerank.pipeline import LoGReranker
from logrerank.ranking.results import Encoded
from logrerank.text.segment import split_sentences
from logrerank.types import InputError, Passage, Ranking
from tests.helpers import check_ranking, scores

QUERY = "Does low-dose aspirin reduce the risk of myocardial infarction in adults?"

PASSAGES = [
    {
        "title": "Aspirin and platelets",
        "text": "Aspirin irreversibly inhibits cyclooxygenase-1 in platelets. This reduces "
        "thromboxane A2 synthesis. Platelet aggregation is therefore impaired for the "
        "lifetime of the platelet.",
    },
    {
        "title": "A randomised trial",
        "text": "We randomly assigned 19,114 older adults to 100 mg aspirin or placebo. The "
        "primary end point was a composite of death, dementia or disability. Aspirin did "
        "not prolong disability-free survival (HR 1.01; 95% CI 0.92-1.11).",
    },
    {
        "title": "Meta-analysis",
        "text": "Eleven trials with 157,248 participants were pooled. Aspirin reduced "
        "non-fatal myocardial infarction by 18% (RR 0.82). Major bleeding increased by 47%.",
    },
    {
        "title": "Unrelated",
        "text": "The mitochondrial genome encodes 13 proteins. They are subunits of the "
        "respiratory chain.",
    },
]

# Knobs that make the tiny model's graph dense, so every edge kind is exercised.
DENSE = GraphConfig(tau_sim=-1.0, delta=1.0, top_k=3)


def without_timings(r: Ranking) -> dict:
    d = r.to_dict()
    d.pop("timings")
    return d


# ---------------------------------------------------------------------------------------
# Invariants and inputs


def test_invariants(tiny_model) -> None:
    r = tiny_model.rerank(QUERY, PASSAGES)
    check_ranking(r, PASSAGES)
    assert r.ranker == "log"
    assert len(r.passages) == 4 and r.passages[1].title == "A randomised trial"
    assert [p.title for p in r.passages_ranked] == [PASSAGES[i]["title"] for i in r.passage_order()]
    assert set(r.timings) >= {"segment", "tokenize", "local", "graph", "global", "context"}
    assert r.timings["total"] == pytest.approx(sum(v for k, v in r.timings.items() if k != "total"))
    assert r.info["num_nodes"] == len(r.sentences)
    assert r.info["use_global"] is True
    assert any("untrained" in w for w in r.warnings)  # an untrained model says so
    assert all(s.global_score is not None for s in r.sentences)
    assert all(s.score == s.global_score for s in r.sentences)
    assert r.context is not None and r.context["units"]
    # Edge list agrees with the per-relation counts.
    for name, count in r.info["edge_counts"].items():
        assert sum(e.relation == name for e in r.edges) == count
    # The attention weights of each edge are reported per layer.
    assert all(e.attention is not None and len(e.attention) == 2 for e in r.edges)


def test_untrained_residual_global_equals_local(tiny_model) -> None:
    # residual_local_logit=True (default) with a zero-initialised last layer: the untrained
    # graph starts as the local ranking exactly.
    r = tiny_model.rerank(QUERY, PASSAGES, graph=DENSE)
    assert all(s.global_score == s.local_score for s in r.sentences)


def test_accepts_strings_dicts_and_passages(tiny_model) -> None:
    as_dicts = [{"title": p["title"], "text": p["text"], "id": i} for i, p in enumerate(PASSAGES)]
    as_strings = [p["text"] for p in PASSAGES]
    as_objects = [
        Passage(text=p["text"], title=p["title"], pid=f"d{i}") for i, p in enumerate(PASSAGES)
    ]
    mixed = [as_strings[0], as_dicts[1], as_objects[2], as_dicts[3]]
    results = [tiny_model.rerank(QUERY, x) for x in (as_dicts, as_strings, as_objects, mixed)]
    for r, x in zip(results, (as_dicts, as_strings, as_objects, mixed)):
        check_ranking(r, x)
        assert scores(r) == scores(results[0])  # titles are not encoded; text decides
    assert [p.title for p in results[1].passages] == [""] * 4
    assert results[0].passages[2].pid == "2" and results[2].passages[2].pid == "d2"
    assert results[0].passages[0].title == "Aspirin and platelets"
    # A tuple of passages and the "contents" key are accepted too.
    r = tiny_model.rerank(QUERY, tuple({"contents": t} for t in as_strings))
    assert scores(r) == scores(results[0])


@pytest.mark.parametrize(
    ("query", "passages", "match"),
    [
        ("", ["Some text."], "question"),
        ("   \n ", ["Some text."], "question"),
        (None, ["Some text."], "question"),
        (42, ["Some text."], "question"),
        (QUERY, [], "no passages"),
        (QUERY, "a single string, not a list", "list"),
        (QUERY, None, "list"),
        (QUERY, {"text": "a dict, not a list"}, "list"),
        (QUERY, ["", "   ", "\n\n"], "empty"),
        (QUERY, [{"title": "only a title"}], "text"),
        (QUERY, [{"text": 3}], "text"),
        (QUERY, [{"text": "ok", "title": 5}], "title"),
        (QUERY, ["fine.", 7], "passage 2"),
        (QUERY, [["nested"]], "passage 1"),
    ],
)
def test_input_errors(tiny_model, query, passages, match) -> None:
    with pytest.raises(InputError, match=match):
        tiny_model.rerank(query, passages)


def test_empty_passage_warns_and_ranks_last(tiny_model) -> None:
    passages = [PASSAGES[0]["text"], "   ", PASSAGES[2]["text"], ""]
    r = tiny_model.rerank(QUERY, passages)
    check_ranking(r, passages)
    assert r.passage_order()[-2:] == [1, 3]
    assert r.passages_ranked[-1].score == 0.0 and r.passages_ranked[-1].best_node is None
    assert any("[2, 4]" in w and "no text" in w for w in r.warnings)
    assert all(s.passage_idx in (0, 2) for s in r.sentences)
    assert r.intent_by_passage is not None and len(r.intent_by_passage) == 4


def test_single_passage_single_sentence(tiny_model) -> None:
    r = tiny_model.rerank("q?", ["Just one sentence here."])
    check_ranking(r, ["Just one sentence here."])
    assert len(r.sentences) == 1 and r.edges == []
    assert len(r.context["units"]) == 1
    unit = r.context["units"][0]
    assert unit["before"] is None and unit["after"] is None and unit["similar"] == []


def test_long_sentence_is_cut_flagged_and_warned(tiny_model) -> None:
    long = "The " + " ".join(f"measurement{i}" for i in range(150)) + " was recorded."
    passages = ["A short start.", f"Before it. {long} After it."]
    r = tiny_model.rerank(QUERY, passages)
    check_ranking(r, passages)
    flagged = [s for s in r.sentences if s.truncated]
    assert len(flagged) == 1 and flagged[0].text == long  # full text kept in the result
    assert any("longer than one window" in w for w in r.warnings)


def test_long_query_is_cut_and_warned(tiny_model) -> None:
    query = "Why " + " ".join(["does aspirin work"] * 30) + "?"
    r = tiny_model.rerank(query, PASSAGES)
    check_ranking(r, PASSAGES)
    assert r.query == query
    assert any("question is longer" in w for w in r.warnings)


def test_deterministic(tiny_model, make_tiny_model) -> None:
    a = tiny_model.rerank(QUERY, PASSAGES)
    b = tiny_model.rerank(QUERY, PASSAGES)
    assert without_timings(a) == without_timings(b)
    # Two models built from the same seed agree too.
    c = make_tiny_model().rerank(QUERY, PASSAGES)
    d = make_tiny_model().rerank(QUERY, PASSAGES)
    assert scores(c) == scores(d)


# ---------------------------------------------------------------------------------------
# Ablation switches and cached encodings


def test_use_global_false(tiny_model) -> None:
    r = tiny_model.rerank(QUERY, PASSAGES, use_global=False)
    check_ranking(r, PASSAGES)
    assert all(s.global_score is None for s in r.sentences)
    assert all(s.score == s.local_score for s in r.sentences)
    assert r.info["use_global"] is False
    assert all(e.attention is None for e in r.edges)
    # The local-only score order sorts by the local score (the shown order may be selected).
    local = sorted(r.sentences, key=lambda s: (-s.local_score, s.node))
    assert [s.node for s in local] == [s.node for s in r.by_score()]


def test_use_global_false_differs_from_graph_with_trained_scorer(make_tiny_model) -> None:
    # Without the zero-initialised residual, the graph changes the scores.
    from logrerank.config import GlobalConfig

    model = make_tiny_model(global_=GlobalConfig(hidden=32, heads=4, residual_local_logit=False))
    g = model.rerank(QUERY, PASSAGES, graph=DENSE)
    loc = model.rerank(QUERY, PASSAGES, graph=DENSE, use_global=False)
    assert [s.local_score for s in sorted(g.sentences, key=lambda s: s.node)] == [
        s.local_score for s in sorted(loc.sentences, key=lambda s: s.node)
    ]
    assert any(s.global_score != s.local_score for s in g.sentences)


def test_cross_passage_false(tiny_model) -> None:
    full = tiny_model.rerank(QUERY, PASSAGES, graph=DENSE)
    assert any(e.relation == "similar" for e in full.edges)
    r = tiny_model.rerank(QUERY, PASSAGES, graph=DENSE, cross_passage=False)
    check_ranking(r, PASSAGES)
    assert not any(e.relation == "similar" for e in r.edges)
    assert r.info["edge_counts"]["similar"] == 0
    assert r.info["graph"]["cross_passage"] is False
    assert all(u["similar"] == [] for u in r.context["units"])
    # Adjacency edges are untouched.
    adj = {(e.source, e.target) for e in full.edges if e.relation != "similar"}
    assert {(e.source, e.target) for e in r.edges} == adj
    # Each adjacent pair of sentences of a passage has its edge.
    n_adj = sum(len(split_sentences(p["text"])) - 1 for p in PASSAGES)
    assert len(adj) == n_adj


def test_typed_false(tiny_model) -> None:
    full = tiny_model.rerank(QUERY, PASSAGES, graph=DENSE)
    r = tiny_model.rerank(QUERY, PASSAGES, graph=DENSE, typed=False)
    check_ranking(r, PASSAGES)
    assert r.edges and all(e.relation_id == 0 for e in r.edges)
    # Relation names are preserved for display.
    assert [e.relation for e in r.edges] == [e.relation for e in full.edges]
    assert "similar" in {e.relation for e in r.edges}
    for e in full.edges:
        assert e.relation == relation_name(e.relation_id)
    assert r.info["graph"]["typed"] is False


def test_rank_encoded_matches_rerank_and_needs_no_reencoding(tiny_model, monkeypatch) -> None:
    enc = tiny_model.encode(QUERY, PASSAGES)
    assert isinstance(enc, Encoded)
    assert enc.h.shape == (len(enc.sentences), 32)
    direct = tiny_model.rerank(QUERY, PASSAGES)

    def no_encoder(*args, **kwargs):
        raise AssertionError("the transformer must not run again")

    monkeypatch.setattr(tiny_model.local, "forward", no_encoder)
    cached = tiny_model.rank_encoded(enc)
    assert without_timings(cached) == without_timings(direct)
    # Different graph settings change the edges, from the same encodings.
    dense = tiny_model.rank_encoded(enc, graph=DENSE)
    none = tiny_model.rank_encoded(enc, graph=GraphConfig(tau_sim=1.5))
    count = lambda r: sum(e.relation == "similar" for e in r.edges)  # noqa: E731
    assert count(dense) > 0 and count(none) == 0
    k1 = tiny_model.rank_encoded(enc, graph=GraphConfig(tau_sim=-1.0, delta=1.0, top_k=1))
    assert 0 < count(k1) < count(dense)
    for r in (dense, none, k1):
        check_ranking(r, PASSAGES)
    # The cached encoding is not modified by ranking it.
    again = tiny_model.rank_encoded(enc)
    assert without_timings(again) == without_timings(direct)
    assert all(s.score == 0.0 and s.rank == 0 for s in enc.sentences)
    # The model's own config is untouched by per-call settings.
    assert tiny_model.config.graph == GraphConfig()


# ---------------------------------------------------------------------------------------
# Structured context (eqs. 17-18)


def test_context_units(tiny_model) -> None:
    r = tiny_model.rerank(QUERY, PASSAGES, graph=DENSE, context=ContextConfig(top_k=4))
    ctx = r.context
    json.dumps(ctx)
    units = ctx["units"]
    assert ctx["k"] == 4 and len(units) == 4
    # Ordered by score: the units are the top-K sentences in rank order.
    assert [u["node"] for u in units] == [s.node for s in r.sentences[:4]]
    assert [u["score"] for u in units] == sorted((u["score"] for u in units), reverse=True)
    by_node = r.sentence_by_node()
    n_sent = {p: len(split_sentences(t["text"])) for p, t in enumerate(PASSAGES)}
    sim_edges = {(e.source, e.target): e.similarity for e in r.edges if e.relation == "similar"}
    for u in units:
        s = by_node[u["node"]]
        assert u["text"] == s.text and u["passage"] == s.passage_idx and u["role"] == s.role
        assert u["title"] == PASSAGES[s.passage_idx]["title"]
        assert u["rank"] == s.rank and u["global_score"] == s.global_score
        # before / after are the true in-passage neighbours.
        if s.sent_idx == 0:
            assert u["before"] is None
        else:
            assert u["before"]["node"] == s.node - 1
            assert u["before"]["passage"] == s.passage_idx
            assert u["before"]["sentence"] == s.sent_idx - 1
        if s.sent_idx == n_sent[s.passage_idx] - 1:
            assert u["after"] is None
        else:
            assert u["after"]["node"] == s.node + 1
            assert u["after"]["text"] == by_node[s.node + 1].text
        # similar: the (at most 2) most similar neighbours over similarity edges into it.
        incoming = sorted(
            ((c, src) for (src, dst), c in sim_edges.items() if dst == s.node),
            key=lambda cu: (-cu[0], cu[1]),
        )
        assert incoming  # the dense graph gives every node similarity edges
        assert [x["node"] for x in u["similar"]] == [src for _, src in incoming[:2]]
        for x in u["similar"]:
            assert x["passage"] != s.passage_idx
            assert x["similarity"] == pytest.approx(sim_edges[(x["node"], s.node)])
            assert x["role"] == s.role  # similarity edges join same-role sentences
    # The prompt text carries every unit.
    for u in units:
        assert u["text"] in ctx["prompt"]


def test_context_sizes(tiny_model) -> None:
    enc = tiny_model.encode(QUERY, PASSAGES)
    n = len(enc.sentences)
    big = tiny_model.rank_encoded(enc, context=ContextConfig(top_k=n + 5))
    assert len(big.context["units"]) == n  # at most K, never more than N
    one = tiny_model.rank_encoded(enc, graph=DENSE, context=ContextConfig(top_k=2, cross_passage=1))
    assert len(one.context["units"]) == 2
    assert all(len(u["similar"]) <= 1 for u in one.context["units"])
    none = tiny_model.rank_encoded(enc, context=ContextConfig(top_k=3, in_passage=0))
    assert all(u["before"] is None and u["after"] is None for u in none.context["units"])


# ---------------------------------------------------------------------------------------
# Checkpoints


@pytest.fixture(scope="module")
def checkpoint(tiny_model, tmp_path_factory) -> Path:
    return tiny_model.save_pretrained(tmp_path_factory.mktemp("ckpt") / "log", extra={"note": "t"})


def test_save_load_round_trip(tiny_model, checkpoint) -> None:
    meta = json.loads((checkpoint / CONFIG_NAME).read_text())
    assert meta["format"] == "logrerank" and meta["note"] == "t"
    assert meta["backbone_tensors_stored"] == 0  # the encoder equals its base
    stored = load_file(str(checkpoint / WEIGHTS_NAME))
    assert stored and not any(k.startswith("local.encoder.") for k in stored)
    loaded = LoGReranker.from_pretrained(checkpoint)
    assert loaded.source == str(checkpoint)
    assert loaded.config == tiny_model.config
    a = tiny_model.rerank(QUERY, PASSAGES, graph=DENSE)
    b = loaded.rerank(QUERY, PASSAGES, graph=DENSE)
    assert scores(a) == scores(b)
    assert [e.attention for e in a.edges] == [e.attention for e in b.edges]
    # Overrides of top-level fields.
    assert LoGReranker.from_pretrained(checkpoint, use_global=False).config.use_global is False


def test_changed_backbone_tensors_are_stored(make_tiny_model, tmp_path) -> None:
    from logrerank.config import GlobalConfig

    model = make_tiny_model(
        seed=5, global_=GlobalConfig(hidden=32, heads=4, residual_local_logit=False)
    )
    with torch.no_grad():
        model.local.encoder.embeddings.LayerNorm.weight.add_(0.5)
    path = model.save_pretrained(tmp_path / "ft")
    meta = json.loads((path / CONFIG_NAME).read_text())
    assert meta["backbone_tensors_stored"] == 1
    loaded = LoGReranker.from_pretrained(path)
    assert scores(loaded.rerank(QUERY, PASSAGES)) == scores(model.rerank(QUERY, PASSAGES))


def broken(checkpoint: Path, tmp_path: Path, how: str) -> Path:
    path = tmp_path / "broken"
    shutil.copytree(checkpoint, path)
    weights, config = path / WEIGHTS_NAME, path / CONFIG_NAME
    meta = json.loads(config.read_text())
    if how == "missing-weights":
        weights.unlink()
    elif how == "missing-config":
        config.unlink()
    elif how == "truncated-weights":
        data = weights.read_bytes()
        weights.write_bytes(data[: len(data) // 2])
    elif how == "garbage-weights":
        weights.write_bytes(b"not a safetensors file")
    elif how == "bad-json":
        config.write_text("{oops")
    elif how == "not-logrerank":
        config.write_text(json.dumps({"model": meta["model"]}))
    elif how == "unknown-field":
        meta["model"]["graph"]["bogus"] = 1
        config.write_text(json.dumps(meta))
    elif how == "wrong-type":
        meta["model"]["global"]["heads"] = "four"
        config.write_text(json.dumps(meta))
    elif how == "shape-mismatch":
        meta["model"]["global"]["hidden"] = 64  # weights were saved with hidden 32
        config.write_text(json.dumps(meta))
    elif how == "unknown-tensor":
        state = load_file(str(weights))
        state["global_model.extra.weight"] = torch.zeros(2)
        save_file(state, str(weights))
    elif how == "missing-tensor":
        state = load_file(str(weights))
        del state["global_model.phi_h.weight"]
        save_file(state, str(weights))
    else:  # pragma: no cover
        raise ValueError(how)
    return path


@pytest.mark.parametrize(
    ("how", "match"),
    [
        ("missing-weights", "missing model.safetensors"),
        ("missing-config", "missing config.json"),
        ("truncated-weights", "cannot read"),
        ("garbage-weights", "cannot read"),
        ("bad-json", "not valid JSON"),
        ("not-logrerank", "not a logrerank"),
        ("unknown-field", "unknown"),
        ("wrong-type", "heads"),
        ("shape-mismatch", "shape"),
        ("unknown-tensor", "unknown tensors"),
        ("missing-tensor", "missing tensors"),
    ],
)
def test_from_pretrained_errors(checkpoint, tmp_path, how, match) -> None:
    with pytest.raises(CheckpointError, match=match):
        LoGReranker.from_pretrained(broken(checkpoint, tmp_path, how))


def test_from_pretrained_missing_folder(tmp_path) -> None:
    with pytest.raises(CheckpointError, match="does not exist"):
        LoGReranker.from_pretrained(tmp_path / "nowhere")
    with pytest.raises(CheckpointError, match="does not exist"):
        LoGReranker.from_pretrained(str(tmp_path / "nowhere"))


def test_from_pretrained_unknown_override(checkpoint) -> None:
    with pytest.raises(CheckpointError):
        LoGReranker.from_pretrained(checkpoint, not_a_field=1)


def test_large_final_logits_keep_their_order_in_the_scores(tiny_model, monkeypatch) -> None:
    """Final scores are float64 sigmoids: logits of 17-30 (where a float32 sigmoid reads 1.0 for
    all of them) still give distinct scores in the logits' order."""
    import logrerank.pipeline as pipeline

    def large(enc, *args, **kwargs):
        n = enc.local_logits.numel()
        return 17.0 + torch.arange(n, dtype=torch.float32).flip(0) * (13.0 / max(1, n - 1))

    monkeypatch.setattr(pipeline, "final_logits", large)
    r = tiny_model.rerank(QUERY, PASSAGES)
    got = [s.score for s in sorted(r.sentences, key=lambda s: s.node)]
    assert torch.sigmoid(torch.tensor(17.0)).item() == 1.0  # what float32 would have shown
    assert all(a > b for a, b in zip(got, got[1:]))  # strictly falling with the node's logit
    assert all(x < 1.0 for x in got)
