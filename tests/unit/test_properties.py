"""Property-based tests: segmentation, limits, graph construction and the pipeline
under random unicode and markup.

For any input the only exception allowed is the documented :class:`InputError`, and then only
for the documented reasons (empty question, no passages, every passage empty). Otherwise: ranks
are a permutation, scores lie in [0, 1], every sentence is scored exactly once, and character
spans map back to the text (the ranking's passages *and* the caller's original strings, since
cleaning replaces one character by one).

Example counts are modest so the suite stays fast (``LOGRERANK_FUZZ_SCALE=10`` multiplies them
for a longer fuzzing run); the pipeline runs the tiny model of ``conftest.py`` (real tokenizer and
segmenter, 1-layer random BERT).
"""

from __future__ import annotations

import json
import math
import os

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from logrerank.config import ROLE_NAMES, GraphConfig
from logrerank.graph.sentence_graph import NUM_RELATIONS, Relation, build_graph
from logrerank.inputs.limits import Limits, apply_limits, clean_text
from logrerank.inputs.passages import prepare_input
from logrerank.text.segment import passage_spans, split_sentences
from logrerank.types import InputError, Passage

SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
SCALE = max(1, int(os.environ.get("LOGRERANK_FUZZ_SCALE", "1")))


def examples(n: int) -> int:
    """``n`` examples, times ``$LOGRERANK_FUZZ_SCALE``."""
    return n * SCALE


MARKUP = [
    "<p>",
    "</p>",
    "<div class='x'>",
    "<script>alert('x')</script>",
    "<img src=x onerror=alert(1)>",
    "&amp;",
    "&#0;",
    "**bold**",
    "# Heading\n",
    "- item\n",
    "| a | b |\n",
    "```\ncode\n```",
    "[link](http://example.org)",
    "$\\alpha + \\beta$",
    "\\begin{equation}x\\end{equation}",
    "{{template}}",
    "\x00",
    "\x07",
    "\x1b[31m",
    "\x7f",
    "\x85",
    "\udcff",
    "\ud800",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\ufffd",
    "\r\n",
    "\n",
    "\n\n",
    "\t",
    " ",
    ". ",
    "? ",
    "e.g. ",
    "Fig. 2. ",
    "p < 0.05. ",
    "et al. ",
    "BACKGROUND: ",
    "METHODS\n",
    "The cells grew. ",
    "Aspirin reduced risk by 18%. ",
    "日本語の文です。",
    "Привет, мир. ",
    "مرحبا بالعالم. ",
    "हिन्दी वाक्य। ",
    "🙂🧬 ",
    "Δz ≤ 0.3 ± 0.1. ",
]

TEXT = st.lists(
    st.one_of(st.text(max_size=10), st.sampled_from(MARKUP)),
    max_size=25,
).map("".join)

PASSAGE = st.one_of(
    TEXT,
    st.fixed_dictionaries({"text": TEXT}, optional={"title": st.text(max_size=15)}),
)


def _cleaned(text: str) -> str:
    return clean_text(text)[0]


def _body(p) -> str:
    return p["text"] if isinstance(p, dict) else p


# --------------------------------------------------------------------------------------
# Segmentation (the module has its own property tests; these add markup and raw bytes)


@settings(max_examples=examples(80), **SETTINGS)
@given(TEXT)
def test_segmentation_covers_every_char_once(text: str) -> None:
    spans = split_sentences(text)
    pos = 0
    for s in spans:
        assert pos <= s.start < s.end <= len(text)
        assert text[s.start : s.end] == s.text
        assert s.text == s.text.strip()
        assert text[pos : s.start].strip() == ""  # nothing but whitespace between spans
        pos = s.end
    assert text[pos:].strip() == ""


# --------------------------------------------------------------------------------------
# Limits and cleaning


@settings(max_examples=examples(80), **SETTINGS)
@given(
    st.lists(
        st.builds(Passage, text=TEXT, title=st.text(max_size=8)),
        min_size=1,
        max_size=12,
    ),
    st.integers(1, 8),
    st.integers(1, 60),
    st.integers(1, 200),
)
def test_limits_keep_prefixes_and_report_every_cut(passages, max_p, max_c, max_t) -> None:
    limits = Limits(max_passages=max_p, max_chars_per_passage=max_c, max_total_chars=max_t)
    out, notices = apply_limits(passages, limits)
    assert len(out) <= min(max_p, len(passages))
    assert sum(len(p.text) for p in out) <= max_t
    for p, q in zip(passages, out):
        assert len(q.text) <= max_c
        assert _cleaned(p.text).startswith(q.text)  # a cleaned prefix: offsets are the caller's
        assert "\x00" not in q.text and not any("\ud800" <= c <= "\udfff" for c in q.text)
        q.text.encode("utf-8")
    changed = len(out) < len(passages) or any(
        q.text != p.text or q.title != p.title for p, q in zip(passages, out)
    )
    if changed:
        assert notices, "a cut or replacement was not reported"
    with_strict = Limits(**{**limits.to_dict(), "strict": True})
    cut = len(out) < len(passages) or any(
        len(q.text) < len(p.text) or len(q.title) < len(p.title) for p, q in zip(passages, out)
    )
    if cut:
        with pytest.raises(InputError):
            apply_limits(passages, with_strict)
    else:
        assert apply_limits(passages, with_strict) == (out, notices)


# --------------------------------------------------------------------------------------
# Graph construction


@st.composite
def graph_inputs(draw):
    n = draw(st.integers(1, 24))
    d = draw(st.integers(1, 6))
    n_pass = draw(st.integers(1, n))
    sizes = sorted(draw(st.lists(st.integers(0, n - 1), min_size=n_pass - 1, max_size=n_pass - 1)))
    passage_of = torch.zeros(n, dtype=torch.long)
    for cut in sizes:
        passage_of[cut:] += 1  # non-decreasing passage ids (document order), maybe gaps
    floats = st.floats(-3, 3, allow_nan=False, width=32)
    h = torch.tensor(draw(st.lists(floats, min_size=n * d, max_size=n * d))).view(n, d)
    if draw(st.booleans()):
        h[: max(1, n // 3)] = 0.0  # zero vectors
    if draw(st.booleans()) and n > 1:
        h[-1] = h[0]  # an exact duplicate
    roles = torch.tensor(draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    role_probs = torch.nn.functional.one_hot(roles, 3).float() * 0.6 + 0.1
    z = torch.tensor(draw(st.lists(st.floats(0, 1, width=32), min_size=n, max_size=n)))
    config = GraphConfig(
        tau_sim=draw(st.floats(-1, 1)),
        delta=draw(st.floats(0, 1)),
        top_k=draw(st.integers(0, 5)),
        cross_passage=draw(st.booleans()),
        typed=draw(st.booleans()),
        block_size=draw(st.integers(1, 8)),
    )
    return h, role_probs, z, passage_of, config


@settings(max_examples=examples(100), **SETTINGS)
@given(graph_inputs())
def test_graph_edges_are_well_formed(args) -> None:
    h, role_probs, z, passage_of, config = args
    data = build_graph(h, role_probs, z, passage_of, config)
    n = h.size(0)
    src, dst = data.edge_index.tolist()
    rel = data.relation_type.tolist()
    sim = data.edge_sim.tolist()
    roles = role_probs.argmax(-1).tolist()
    pof = passage_of.tolist()
    assert data.num_nodes == n
    assert len(src) == len(dst) == len(rel) == len(sim) == data.edge_type.numel()
    assert all(0 <= r < NUM_RELATIONS for r in rel)
    if not config.typed:
        assert set(data.edge_type.tolist()) <= {0}
    else:
        assert data.edge_type.tolist() == rel
    pairs = list(zip(src, dst))
    assert len(set(pairs)) == len(pairs)  # no duplicate edges
    adjacency = {(u, v) for u, v, r in zip(src, dst, rel) if r != Relation.SIMILAR}
    expected = {(i, i + 1) for i in range(n - 1) if pof[i] == pof[i + 1]}
    assert adjacency == expected  # exactly the in-passage successor links
    similar = [(u, v, c) for u, v, r, c in zip(src, dst, rel, sim) if r == Relation.SIMILAR]
    if not config.cross_passage or config.top_k == 0:
        assert similar == []
    keys = {(u, v) for u, v, _ in similar}
    for u, v, c in similar:
        assert u != v and pof[u] != pof[v] and roles[u] == roles[v]
        assert (v, u) in keys  # both directions
        assert math.isfinite(c) and -1.0001 <= c <= 1.0001 and c >= config.tau_sim - 1e-5
        assert abs(float(z[u]) - float(z[v])) <= config.delta + 1e-6
    assert len(keys) <= 2 * n * max(config.top_k, 0)
    for r, c in zip(rel, sim):
        if r != Relation.SIMILAR:
            assert math.isnan(c)


# --------------------------------------------------------------------------------------
# The pipeline


def _expected_error(question, passages) -> bool:
    """Whether the documented InputError is the right answer for this input."""
    if not isinstance(question, str) or not _cleaned(question).strip():
        return True
    if not passages:
        return True
    return all(not _cleaned(_body(p)).strip() for p in passages)


@settings(max_examples=examples(60), **SETTINGS)
@given(st.one_of(TEXT, st.sampled_from(["", "  ", "\x00", "Why?"])), st.lists(PASSAGE, max_size=6))
def test_pipeline_invariants(tiny_model, question, passages) -> None:
    try:
        r = tiny_model.rerank(question, passages)
    except InputError as exc:
        assert _expected_error(question, passages), f"unexpected InputError: {exc}"
        assert str(exc)
        return
    assert not _expected_error(question, passages)
    n = len(r.sentences)
    assert len(r.passages) == len(passages)  # small inputs: nothing cut
    # every sentence of every passage scored exactly once, in the segmenter's units
    want = [(i, j) for i, p in enumerate(r.passages) for j, _ in enumerate(passage_spans(p))]
    assert sorted((s.passage_idx, s.sent_idx) for s in r.sentences) == want
    # ranks and node ids are permutations; scores in [0, 1] and sorted
    assert [s.rank for s in r.sentences] == list(range(1, n + 1))
    assert sorted(s.node for s in r.sentences) == list(range(n))
    sc = [s.score for s in r.by_score()]  # the shown order may be selected (selection.py)
    assert all(math.isfinite(x) and 0.0 <= x <= 1.0 for x in sc)
    assert sc == sorted(sc, reverse=True)
    for s in r.sentences:
        assert 0.0 <= s.local_score <= 1.0
        assert s.global_score is None or 0.0 <= s.global_score <= 1.0
        assert s.role in ROLE_NAMES
        # spans map back to the ranked text and to the caller's own string
        assert r.passages[s.passage_idx].text[s.start : s.end] == s.text
        original = _body(passages[s.passage_idx])
        assert _cleaned(original)[s.start : s.end] == s.text
        assert len(original[s.start : s.end]) == len(s.text)
    assert sorted(r.passage_order()) == list(range(len(passages)))
    assert [p.rank for p in r.passages_ranked] == list(range(1, len(passages) + 1))
    assert all(0.0 <= p.score <= 1.0 for p in r.passages_ranked)
    for e in r.edges:
        assert 0 <= e.source < n and 0 <= e.target < n
    json.dumps(r.to_dict(), allow_nan=False)  # JSON-safe, no NaN
    # deterministic for the same input
    again = tiny_model.rerank(question, passages)
    assert [(s.node, s.score) for s in again.sentences] == [(s.node, s.score) for s in r.sentences]
    # anything changed in the input was reported
    cleaned = [_cleaned(_body(p)) for p in passages]
    if cleaned != [_body(p) for p in passages] or _cleaned(question) != question:
        assert any("character(s)" in w for w in r.warnings)


@settings(max_examples=examples(25), **SETTINGS)
@given(
    TEXT.filter(lambda t: _cleaned(t).strip() != ""),
    st.lists(TEXT, min_size=1, max_size=8),
    st.integers(1, 5),
    st.integers(1, 80),
)
def test_pipeline_under_tight_limits(make_limited, question, passages, max_p, max_c) -> None:
    assume(any(_cleaned(p).strip() for p in passages[:max_p]))
    model = make_limited(Limits(max_passages=max_p, max_chars_per_passage=max_c))
    try:
        r = model.rerank(question, passages)
    except InputError as exc:  # only when what survives the cuts is all whitespace
        assert "every passage is empty" in str(exc)
        return
    assert len(r.passages) == min(max_p, len(passages))
    for i, p in enumerate(r.passages):
        assert len(p.text) <= max_c and _cleaned(passages[i]).startswith(p.text)
    if len(passages) > max_p or any(len(p) > max_c for p in passages[:max_p]):
        assert any("kept the first" in w or "dropped" in w for w in r.warnings)
    for s in r.sentences:
        assert r.passages[s.passage_idx].text[s.start : s.end] == s.text


@pytest.fixture(scope="module")
def make_limited(make_tiny_model):
    model = make_tiny_model()

    def make(limits: Limits):
        model.limits = limits
        return model

    return make


def test_prepare_input_never_raises_other_errors() -> None:
    # Non-hypothesis corner cases of types the strategies above do not produce.
    for q, ps in [
        (b"bytes?", ["x"]),
        ("q", [None]),
        ("q", [{"text": "x", "sentences": "x"}]),
        ("q", [{"text": "a b", "sentences": ["a", "c"]}]),
        ("q", [Passage(text=3)]),  # type: ignore[arg-type]
        ("q", {1, 2}),
    ]:
        with pytest.raises(InputError):
            prepare_input(q, ps)
