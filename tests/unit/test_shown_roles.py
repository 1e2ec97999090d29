"""The roles a ranking shows: the role tagger's, with the LoG role head's reading kept
(:mod:`logrerank.ranking.shown_roles`), and the app views that show them. A fake tagger with a
``predict`` method stands in for the role tagger (the real one is tested in
tests/integration/test_shown_roles.py; the app test still runs the bundled question-intent
classifier, as every app handler test does)."""

from __future__ import annotations

import copy
import html
import json

import pytest
import torch

from logrerank.app import explain_view, graph_view, heat_view, labels, state
from logrerank.app import handlers as ui
from logrerank.ranking.context import context_prompt
from logrerank.ranking.shown_roles import (
    LOG_HEAD_KEY,
    ROLE_SOURCE_KEY,
    TAGGER_SOURCE,
    log_head_reading,
    role_source,
    with_tagger_roles,
)
from logrerank.types import Passage, Ranking, ScoredSentence

HEAD_PROBS = [0.2, 0.19, 0.61]  # what the LoG role head says of every sentence here: result


class FakeTagger:
    """``predict`` like RoleTagger's: "We ..." is method, a sentence with a digit result, the
    rest background. Records the documents it was given."""

    source = "fake-tagger"

    def __init__(self) -> None:
        self.calls: list[list[list[str]]] = []

    @staticmethod
    def row(text: str) -> list[float]:
        if text.startswith("We "):
            return [0.1, 0.8, 0.1]
        if any(c.isdigit() for c in text):
            return [0.05, 0.15, 0.8]
        return [0.7, 0.2, 0.1]

    def predict(self, docs: list[list[str]]) -> list[torch.Tensor]:
        self.calls.append([list(d) for d in docs])
        return [torch.tensor([self.row(t) for t in d]).reshape(len(d), 3) for d in docs]


TEXTS = [
    [
        "Diabetes is common.",
        "We linked a national diabetes registry to cancer records.",
        "Cancer risk fell by 20 %.",
    ],
    ["Metformin is cheap <b>and</b> old.", "We used Cox models."],
]


def _ranking() -> Ranking:
    """Two passages; every sentence read as result by the "LoG role head"; rank order differs
    from document order; a structured context naming the head's roles."""
    passages = [Passage(" ".join(t), title=f"P{i}") for i, t in enumerate(TEXTS)]
    sents, node = [], 0
    for p, texts in enumerate(TEXTS):
        start = 0
        for j, t in enumerate(texts):
            sents.append(
                ScoredSentence(
                    node,
                    p,
                    j,
                    t,
                    start,
                    start + len(t),
                    score=0.1 * (node + 1),
                    role="result",
                    role_probs=list(HEAD_PROBS),
                    local_score=0.1,
                    global_score=0.2,
                )  # fmt: skip
            )
            start += len(t) + 1
            node += 1
    r = Ranking.from_sentence_scores("does metformin prevent cancer?", passages, sents, "log")
    ref = {"node": 1, "passage": 0, "passage_id": None, "title": "P0", "sentence": 1,
           "role": "result", "text": TEXTS[0][1], "score": 0.2}  # fmt: skip
    unit = {**ref, "node": 4, "passage": 1, "sentence": 1, "text": TEXTS[1][1], "score": 0.5,
            "before": None, "after": None, "similar": [{**ref, "similarity": 0.7}]}  # fmt: skip
    r.context = {"k": 1, "units": [unit], "prompt": context_prompt([unit])}
    r.info = {"model": "tiny"}
    return r


def test_roles_and_probs_come_from_the_tagger_one_call_per_ranking():
    r = _ranking()
    tagger = FakeTagger()
    shown = with_tagger_roles(r, tagger)
    assert tagger.calls == [TEXTS]  # one call; each passage one document, sentences in order
    for s in shown.sentences:
        want = FakeTagger.row(s.text)
        assert s.role_probs == pytest.approx(want)
        assert s.role == ("background", "method", "result")[want.index(max(want))]
    by_text = {s.text: s.role for s in shown.sentences}
    assert by_text[TEXTS[0][1]] == "method" and by_text[TEXTS[0][0]] == "background"
    # scores, order, passages and edges are untouched
    assert [(s.node, s.score, s.rank) for s in shown.sentences] == [
        (s.node, s.score, s.rank) for s in r.sentences
    ]
    assert shown.passage_order() == r.passage_order()
    assert shown.info[ROLE_SOURCE_KEY] == TAGGER_SOURCE == role_source(shown)
    assert shown.info["role_tagger"] == "fake-tagger"
    assert shown.timings["role tagger"] >= 0


def test_input_is_not_mutated():
    r = _ranking()
    before = copy.deepcopy(r.to_dict())
    shown = with_tagger_roles(r, FakeTagger())
    assert r.to_dict() == before
    assert all(s.role == "result" for s in r.sentences)
    assert shown is not r and shown.info is not r.info and shown.warnings is not r.warnings
    assert role_source(r) == "LoG role head"


def test_the_log_role_heads_reading_is_kept_and_json_safe():
    r = _ranking()
    shown = with_tagger_roles(r, FakeTagger())
    readings = shown.info[LOG_HEAD_KEY]
    assert set(readings) == {str(s.node) for s in r.sentences}
    assert log_head_reading(shown, 1) == {"role": "result", "probs": HEAD_PROBS}
    assert log_head_reading(r, 1) is None
    back = json.loads(json.dumps(shown.to_dict(), allow_nan=False))
    assert back["info"][LOG_HEAD_KEY]["1"]["role"] == "result"
    again = with_tagger_roles(shown, FakeTagger())  # retagging keeps the head's reading
    assert log_head_reading(again, 1) == {"role": "result", "probs": HEAD_PROBS}


def test_the_structured_context_names_the_taggers_roles():
    r = _ranking()
    shown = with_tagger_roles(r, FakeTagger())
    unit = shown.context["units"][0]
    assert unit["role"] == "method" and unit["similar"][0]["role"] == "method"
    assert "sentence 2, method" in shown.context["prompt"]
    assert r.context["units"][0]["role"] == "result"  # the input's context is untouched
    assert "sentence 2, result" in r.context["prompt"]


def test_a_cache_kept_by_the_caller_tags_each_passage_once():
    r, tagger, cache = _ranking(), FakeTagger(), {}
    first = with_tagger_roles(r, tagger, cache=cache)
    second = with_tagger_roles(r, tagger, cache=cache)
    assert len(tagger.calls) == 1 and len(cache) == 2
    assert [s.role for s in first.sentences] == [s.role for s in second.sentences]


def test_an_empty_ranking_is_returned_unchanged():
    empty = Ranking("q?", [Passage("x")], "bm25")
    tagger = FakeTagger()
    assert with_tagger_roles(empty, tagger) is empty
    assert not tagger.calls


def test_a_missing_checkpoint_keeps_the_roles_and_warns(monkeypatch, tmp_path):
    monkeypatch.setenv("LOGRERANK_CHECKPOINTS", str(tmp_path))  # no role-tagger folder there
    r = _ranking()
    shown = with_tagger_roles(r)
    assert [s.role for s in shown.sentences] == [s.role for s in r.sentences]
    assert any(w.startswith("role tagger unavailable") for w in shown.warnings)
    assert shown.info["role_tagger_error"] and role_source(shown) == "LoG role head"
    assert not r.warnings and "role_tagger_error" not in r.info
    out = explain_view.explain_html(shown.sentences[0], shown, [], [], None)
    assert html.escape(labels.role_title(tagger=False)) in out and "lr-role-log" not in out


def test_a_tagger_with_the_wrong_shape_is_refused():
    class Short(FakeTagger):
        def predict(self, docs):
            return [torch.zeros(1, 3) for _ in docs]

    with pytest.raises(ValueError, match="rows"):
        with_tagger_roles(_ranking(), Short())


# ---------------------------------------------------------------------------------- views
def test_explain_names_the_tagger_and_gives_the_log_heads_reading():
    shown = with_tagger_roles(_ranking(), FakeTagger())
    s = next(x for x in shown.sentences if x.text == TEXTS[0][1])
    out = explain_view.explain_html(s, shown, [], [], None)
    title = labels.role_title()
    assert title.startswith("role (role tagger; test accuracy CSAbstruct ")
    assert f"{html.escape(title)}: method</div>" in out
    assert "LoG role head (eq. 3, used inside the local score): result 0.61" in out
    assert html.escape(labels.role_note()) in out
    m = next(x for x in shown.sentences if x.passage_idx == 1 and x.sent_idx == 0)
    out = explain_view.explain_html(m, shown, [], [], None)
    assert "<b>and</b>" not in out and "&lt;b&gt;and&lt;/b&gt;" in out  # user text escaped


def test_role_note_and_title_name_the_tagger_with_their_figures():
    note = labels.role_note()
    assert note.startswith("Role = argmax of the role tagger")
    for name, a in labels.role_tagger_test_accuracy().items():
        assert (
            f"{name} {100 * a:.1f} %" in note and f"{name} {100 * a:.1f} %" in labels.role_title()
        )
    assert "CSAbstruct 57.0 %, NICTA-PIBOSO 66.0 %, PubMedQA 72.7 %" in note  # the head's
    assert "LoG role head" in labels.role_title(tagger=False)


def test_graph_tooltip_and_heat_view_say_whose_role():
    shown = with_tagger_roles(_ranking(), FakeTagger())
    s = next(x for x in shown.sentences if x.text == TEXTS[0][1])
    tip = graph_view._node_tooltip(s, shown, {})
    assert "role (role tagger): method" in tip and "LoG role head (eq. 3): result" in tip
    assert "underline colour = role (role tagger)" in heat_view.heat_html(shown)


def test_the_app_shows_the_taggers_roles(make_tiny_model):
    tagger = FakeTagger()
    backend = state.Backend(log=make_tiny_model(), cross_encoder=None, role_tagger=tagger)
    text = "\n\n".join(" ".join(t) for t in TEXTS)
    res = ui.run_rerank(backend, None, "does metformin prevent cancer?", text)
    assert res.ok, res.status
    roles = dict(zip(res.table["text"], res.table["role"]))
    assert roles[TEXTS[0][1]] == "method" and roles[TEXTS[0][2]] == "result"
    assert res.session.ranking.info[ROLE_SOURCE_KEY] == TAGGER_SOURCE
    node = next(s.node for s in res.session.ranking.sentences if s.text == TEXTS[0][1])
    out = ui.explain(res.session, node)
    assert (
        "role (role tagger" in out and "LoG role head (eq. 3, used inside the local score)" in out
    )
    assert "role tagger" in html.unescape(res.status)  # its time and the roles note
    calls = len(tagger.calls)
    knobs = state.Knobs.make(top_k=3)
    again = ui.recompute(backend, res.session, knobs)  # a knob change re-tags nothing
    assert again.ok and len(tagger.calls) == calls
    assert dict(zip(again.table["text"], again.table["role"])) == roles
