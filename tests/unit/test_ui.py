"""App handlers, state, tables and renderers (logrerank.app), called directly on the tiny model."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from logrerank.app import handlers as ui
from logrerank.app import result_view, state, tables, viz
from logrerank.inputs.passages import read_passages_file
from logrerank.text.segment import passage_spans
from logrerank.types import InputError

XSS_PASSAGES = "\n\n".join(
    [
        "Title: </textarea><script>window.__xss=1</script>\n<script>window.__xss=1</script> "
        "Statins lowered dementia risk in a cohort.",
        '<img src=x onerror="window.__xss=1"> Cholesterol is made in the brain.',
        '<a href="javascript:window.__xss=1">click</a> javascript:window.__xss=1 trials '
        "showed no cognitive effect.",
        '" onload="window.__xss=1" x=" \' onmouseover=\'window.__xss=1\' srcdoc breakout '
        '"></iframe><script>window.__xss=1</script> healthy-user bias.',
    ]
)


@pytest.fixture(scope="module")
def backend(make_tiny_model, tiny_dir):
    """Tiny LoG model + a tiny cross-encoder (fresh head) on the tiny BERT."""
    from logrerank.models.cross_encoder import CrossEncoder

    model = make_tiny_model()
    calls = {"n": 0}
    encode = model.encode

    def counting_encode(*args, **kwargs):
        calls["n"] += 1
        return encode(*args, **kwargs)

    model.encode = counting_encode
    model.encode_calls = calls
    return state.Backend.load(model, CrossEncoder(str(tiny_dir), device="cpu"))


@pytest.fixture(scope="module")
def example():
    question, text = ui.load_example("Statins and dementia")
    return question, text


@pytest.fixture(scope="module")
def result(backend, example):
    return ui.run_rerank(backend, None, example[0], example[1])


def n_sentences(text: str) -> int:
    return sum(len(passage_spans(p)) for p in ui.parse_input(text, None)[1])


def srcdoc_of(fragment: str) -> str:
    m = re.fullmatch(r'<iframe [^>]*srcdoc="([^"]*)"></iframe>', fragment, flags=re.S)
    assert m, "the graph must be a single iframe with a double-quoted srcdoc"
    return html.unescape(m.group(1))


# ---------------------------------------------------------------------------------- examples
def test_examples_are_scientific_questions_with_5_to_15_passages():
    """The small examples hold 5-15 passages; the large pools (examples/large) 50."""
    examples = ui.list_examples()
    assert len(examples) >= 4
    assert all(" " in name and "_" not in name for name in examples)  # readable names
    for name, path in examples.items():
        question, passages = read_passages_file(path)
        assert question and question.endswith("?"), name
        if path.parent.name == "large":
            assert len(passages) == 50, name
        else:
            assert 5 <= len(passages) <= 15, name
        assert all(p.title for p in passages), name
        q, text = ui.load_example(name)
        assert q == question and len(ui.parse_input(text, None)[1]) == len(passages)


def test_unknown_example_is_an_input_error():
    with pytest.raises(InputError):
        ui.load_example("no such example")


# ---------------------------------------------------------------------------------- main handler
def test_run_fills_every_view(result, example):
    n = n_sentences(example[1])
    assert "Input error" not in result.status
    assert "UNTRAINED" in result.status  # the untrained LoG init is labelled in the page
    assert "transformer passes this session: 1" in result.status
    assert len(result.table) == n
    assert list(result.table.columns) == state.TABLE_COLUMNS
    assert sorted(result.table["rank"]) == list(range(1, n + 1))
    doc = srcdoc_of(result.graph)
    assert f"data-nodes='{n}'" in doc
    assert "vis.Network" in doc
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", doc)  # no CDN: offline
    assert doc.count("lr-sent") == 0 and result.heat.count("class='lr-sent'") == n
    assert f"Sentences: top-10 of {n}" in result.compare
    assert "Passages: top-7 of 7" in result.compare
    assert tables.PASS_GRAPH in result.compare and tables.SENT_CE in result.compare
    assert set(result.metrics["level"]) == {"sentence", "passage"}
    assert result.slope is not None
    units = json.loads(result.context_json)
    assert 1 <= len(units) <= 10 and result.context_prompt.startswith("[1]")
    saved = json.loads(Path(result.context_file).read_text(encoding="utf-8"))
    assert saved["units"] == units and saved["trained"] is False
    assert "tokens" in result.tokens and "flat top-7 passages** (all 7" in result.tokens
    assert len(result.details) == n and list(result.details.columns) == state.DETAIL_COLUMNS
    assert len(result.explain_choices) == n and result.explain_value is not None
    assert "local score" in result.explain and "Messages into this sentence" in result.explain


def test_table_rank_change_is_ce_rank_minus_log_rank(result):
    t, d = result.table, result.details
    assert (t["rank"] == d["rank"]).all() and (t["P·S"] == d["P·S"]).all()
    assert ((d["CE rank"] - t["rank"]) == t["Δ vs CE"]).all()
    assert d["BM25"].notna().all() and d["cross-encoder"].notna().all()


def test_knob_change_recomputes_without_reencoding(backend, example):
    first = ui.run_rerank(backend, None, *example)
    calls = backend.log.encode_calls["n"]
    knobs = state.Knobs.make(top_k=3, tau_sim=-1.0, delta=1.0, k=2, blend=0.9)
    second = ui.recompute(backend, first.session, knobs)
    assert backend.log.encode_calls["n"] == calls
    assert "cached, transformer not re-run" in second.status
    assert "transformer passes this session: 1" in second.status
    assert 1 <= len(json.loads(second.context_json)) <= 3
    assert second.session.ranking.info["graph"]["tau_sim"] == -1.0
    assert "blend 0.90" in second.compare
    ablated = ui.recompute(backend, second.session, state.Knobs.make(switches=["typed relations"]))
    assert backend.log.encode_calls["n"] == calls
    assert ablated.session.ranking.info["use_global"] is False
    assert ablated.session.ranking.info["edge_counts"].get("similar", 0) == 0
    assert "LoG (local only)" in ablated.compare
    # the same input again reuses the cached encodings too
    again = ui.run_rerank(backend, ablated.session, *example)
    assert backend.log.encode_calls["n"] == calls and "cached" in again.status


def test_cross_encoder_pairs_are_memoised(backend, example):
    first = ui.run_rerank(backend, None, *example)
    calls = backend.cross_encoder.calls
    ui.recompute(backend, first.session, state.Knobs.make(blend=0.1))
    assert backend.cross_encoder.calls == calls


def test_recompute_before_any_run_is_a_hint(backend):
    res = ui.recompute(backend, None, state.Knobs())
    assert "Run an example" in res.status and res.table.empty


def test_graph_filter_top_n(result):
    doc = srcdoc_of(ui.redraw_graph(result.session, 2))
    shown = int(re.search(r"data-nodes='(\d+)'", doc).group(1))
    assert 2 <= shown < len(result.table)
    assert "showing" in doc
    full = srcdoc_of(ui.redraw_graph(result.session, 0))
    assert f"data-nodes='{len(result.table)}'" in full


def test_explain_every_sentence(result):
    for _, node in result.explain_choices:
        out = ui.explain(result.session, node)
        assert "global score" in out
    assert "Pick a sentence" in ui.explain(result.session, "nonsense")
    assert "Run a query first" in ui.explain(None, 0)


# ---------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("question", "text", "message"),
    [
        ("q?", "", "no passages"),
        ("q?", "   \n\n  ", "no passages"),
        ("", "Some passage text.", "question is empty"),
    ],
)
def test_bad_text_input_gives_an_error_box(backend, question, text, message):
    res = ui.run_rerank(backend, None, question, text)
    assert "Input error" in res.status and message in res.status
    assert res.table.empty and res.graph == "" and res.ok is False


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.json", "{not json", "invalid JSON"),
        ("bad.jsonl", '{"title": "a", "text": "b"}\n[1, 2', "invalid JSON on line 2"),
        ("obj.json", '{"question": "q", "passages": []}', "no passages"),
        ("obj2.json", '{"question": "q", "text": "x"}', "ctxs"),
        ("wrong.json", '[{"title": 3, "text": "x"}]', "title"),
        ("empty.json", "[]", "no passages"),
    ],
)
def test_malformed_upload_gives_an_error_box(backend, tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    res = ui.run_rerank(backend, None, "q?", "", str(path))
    assert "Input error" in res.status and message in res.status


def test_binary_upload_gives_an_error_box(backend, tmp_path):
    path = tmp_path / "x.txt"
    path.write_bytes(b"\xff\xfe\x00\x81 not utf-8")
    res = ui.run_rerank(backend, None, "q?", "", str(path))
    assert "Input error" in res.status


def test_upload_with_question_is_used(backend, tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(
        json.dumps(
            {"question": "Do statins help?", "ctxs": [{"title": "A", "text": "Statins help."}]}
        ),
        encoding="utf-8",
    )
    res = ui.run_rerank(backend, None, "", "ignored", str(path))
    assert "Input error" not in res.status and len(res.table) == 1


# ---------------------------------------------------------------------------------- escaping
def test_hostile_passages_are_escaped_everywhere(backend):
    res = ui.run_rerank(backend, None, "Do statins <b>help</b>?", XSS_PASSAGES)
    assert "Input error" not in res.status
    texts = " ".join(res.table["text"])
    assert "<script>window.__xss=1</script>" in texts  # shown as text in the table
    for fragment in (res.heat, res.compare, res.explain, res.status):
        assert "<script" not in fragment and "<img" not in fragment and "<a href" not in fragment
        assert 'onerror="' not in fragment and 'onload="window' not in fragment
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in res.heat
    # graph: exactly one attribute, nothing breaks out of srcdoc
    assert res.graph.count("srcdoc=") == 1 and res.graph.count("<iframe") == 1
    assert 'sandbox="allow-scripts"' in res.graph
    doc = srcdoc_of(res.graph)
    assert "window.__xss" in doc  # the text is there ...
    assert "<script>window.__xss" not in doc and "<img" not in doc  # ... never as markup
    assert "\\u003cscript\\u003ewindow.__xss=1" in doc
    # plotly hover text is escaped (plotly renders a subset of HTML)
    hover = json.dumps(res.slope.to_plotly_json()["data"])
    assert "<script" not in hover and "<img" not in hover


def test_status_and_error_escape(backend):
    assert "<script>" not in viz.error_html("<script>x</script>")
    out = viz.status_html([("m", "<img src=x onerror=y>", False)], "cpu", "fp32", ["<b>w</b>"], {})
    assert "<img" not in out and "<b>w</b>" not in out


# ---------------------------------------------------------------------------------- helpers
def test_knobs_are_clamped():
    k = state.Knobs.make(
        top_k="abc", tau_sim=5, delta=-1, k=1e9, blend=float("nan"), switches=["x"]
    )
    assert (k.top_k, k.tau_sim, k.delta, k.k, k.blend, k.switches) == (10, 1.0, 0.0, 64, 0.5, ())
    assert state.Knobs.make(switches=None).switches == tuple(state.ABLATIONS)


def test_backend_without_cross_encoder_degrades_visibly(make_tiny_model, example):
    b = state.Backend(log=make_tiny_model(), cross_encoder=None, cross_encoder_error="missing")
    res = ui.run_rerank(b, None, *example)
    assert "UNAVAILABLE" in res.status and "cross-encoder unavailable" in res.status
    assert "degraded" in res.compare and res.slope is None
    assert res.details["cross-encoder"].isna().all()


def test_limits_apply_once_to_log_and_every_baseline(make_tiny_model, tiny_dir):
    """Input over the limits is cut once: LoG and the baselines rank the same passages, and
    each notice appears once in the status."""
    from logrerank.inputs.limits import Limits
    from logrerank.models.cross_encoder import CrossEncoder

    model = make_tiny_model()
    model.limits = Limits(max_passages=3)
    backend = state.Backend.load(model, CrossEncoder(str(tiny_dir), device="cpu"))
    text = "\n\n".join(
        [
            "Statins lower cholesterol in adults.",
            "Statins lower cholesterol in adults.",
            "Dementia risk fell in one cohort.",
            "A fourth passage over the limit.",
            "A fifth passage over the limit.",
        ]
    )
    res = ui.run_rerank(backend, None, "do statins prevent dementia?", text)
    session = res.session
    assert len(session.encoded.passages) == 3
    for name, ranking in session.baselines.items():
        assert len(ranking.passages) == 3, name
    status = html.unescape(res.status)
    assert status.count("duplicate passage") == 1, status
    assert status.count("ranked the first 3 (limit 3)") == 1, status


def test_cache_note_says_how_much_was_reused() -> None:
    assert result_view.cache_note([0, 0], from_cache=False) == ""  # cache off
    assert result_view.cache_note([3, 5], from_cache=True) == ""  # knob change: no transformer pass
    assert result_view.cache_note([0, 5], from_cache=False) == " · passage cache: new passages"
    assert "3 of 5 windows reused" in result_view.cache_note([3, 5], from_cache=False)


# ---------------------------------------------------------------------------------- issue views
def _hand_ranking(relations: list[tuple[int, int, str]]):
    """A 3-passage Ranking built by hand whose edges carry the given relation names."""
    from logrerank.types import GraphEdge, Passage, Ranking, ScoredSentence

    passages = [Passage("A one. A two.", "Alpha"), Passage("B one.", "Beta"), Passage("C.", "")]
    spec = [(0, 0, "A one."), (0, 1, "A two."), (1, 0, "B one."), (2, 0, "C.")]
    sents = [
        ScoredSentence(
            node=i,
            passage_idx=p,
            sent_idx=j,
            text=t,
            start=0,
            end=len(t),
            score=0.9 - 0.2 * i,
            role="result",
            role_probs=[0.1, 0.2, 0.7],
            local_score=0.8 - 0.2 * i if i else 0.5,
            global_score=0.9 - 0.2 * i,
        )
        for i, (p, j, t) in enumerate(spec)
    ]
    r = Ranking.from_sentence_scores("q?", passages, sents, "log")
    r.edges = [
        GraphEdge(
            u,
            v,
            rel,
            99,
            similarity=0.8 if rel in ("similar", "shared-term") else None,
            attention=[0.5, 0.4],
        )
        for u, v, rel in relations
    ]
    return r


def test_score_column_is_the_sort_score_and_explain_shows_it(result):
    t = result.table
    assert list(t.columns[:4]) == ["rank", "text", "score", "Δ vs CE"]
    assert list(t["score"]) == sorted(t["score"], reverse=True)
    ranking = result.session.ranking
    assert [round(s.score, 4) for s in ranking.sentences] == list(t["score"])
    top = ranking.sentences[0]
    out = ui.explain(result.session, top.node)
    assert f"{top.score:.4f}</b> (rank 1" in out and "score (sorts the ranking)" in out
    assert "intent head" in out


def test_link_counts_pairs_count_once_and_agree_with_the_legend():
    r = _hand_ranking(
        [(0, 1, "same-role"), (1, 2, "similar"), (2, 1, "similar"), (0, 2, "mentions")]
    )
    assert viz.link_counts(r.edges) == {"same-role": 1, "similar": 1, "mentions": 1}
    from logrerank.app import graph_view

    doc = graph_view.graph_document(r, top_k=2)
    assert "data-relation='similar' data-count='1'" in doc
    assert "data-relation='mentions' data-count='1'" in doc
    assert "data-edges='3'" in doc  # one drawn link per pair
    assert '"enabled": false' in doc.replace("False", "false") or "physics" in doc


def test_legend_and_styles_are_generic_over_relations():
    """The legend iterates Relation (names via relation_name) and styles every name: the three
    cross-passage link relations have their own colour and dash; unknown names fall back."""
    from logrerank.app import graph_view
    from logrerank.graph.sentence_graph import Relation, relation_name

    for r in Relation:
        assert relation_name(int(r)) in viz.relation_order([])
    for name in ("mentions", "mentioned-by", "shared-term"):
        st = viz.relation_style(name)
        assert st is not viz.FALLBACK_STYLE and st["dash"]
    colours = {viz.relation_style(n)["color"] for n in ("mentions", "mentioned-by", "shared-term")}
    assert len(colours) == 3 and viz.relation_style("shared-term")["symmetric"]
    assert viz.relation_style("no-such-relation") is viz.FALLBACK_STYLE
    r = _hand_ranking(
        [
            (0, 2, "mentions"),
            (2, 0, "mentioned-by"),
            (1, 3, "shared-term"),
            (3, 1, "shared-term"),
            (0, 3, "brand-new"),
        ]
    )
    doc = graph_view.graph_document(r, top_k=2)
    for name in ("mentions", "mentioned-by", "shared-term", "brand-new"):
        assert f"data-relation='{name}'" in doc, name
    assert viz.relation_order(["brand-new"])[-1] == "brand-new"
    assert viz.FALLBACK_STYLE["color"] in doc


def test_explain_says_what_a_mentions_edge_means():
    from logrerank.app import explain_view

    r = _hand_ranking([(2, 0, "mentions"), (1, 0, "same-role"), (3, 0, "shared-term")])
    by = r.sentence_by_node()
    target = by[0]
    incoming = [(e, by[e.source]) for e in r.edges if e.target == 0]
    lines = explain_view.why_lines(target, incoming, local_rank=3)
    said = by[2].text  # no recorded mention: the source sentence is the mentioning one
    assert lines[0] == f"moved up: sentence P2·S1 names this passage: “{said}” (α 0.45)"
    assert "previous sentence P1·S2" in lines[1] and "shares the rare term" in lines[2]
    html_out = explain_view.explain_html(target, r, incoming, [], None, {"local_rank": 3})
    assert "Why it moved" in html_out and "names this passage" in html_out
    back = r.edges[0].__class__(0, 2, "mentioned-by", 9, terms=["cohort"])
    assert "this sentence names passage P1 (“cohort”)" in explain_view.edge_phrase(
        back, by[0], by[2]
    )
    # a shared-term edge names its terms, a mention edge its mentioning sentence
    shared = r.edges[0].__class__(3, 0, "shared-term", 10, terms=["metformin", "insulin"])
    phrase = explain_view.edge_phrase(shared, by[3], by[0])
    assert "shares the rare terms “metformin”, “insulin” with it" in phrase
    m = r.edges[0].__class__(2, 0, "mentions", 8, terms=["cohort"], mention="See the Cohort.")
    assert explain_view.edge_phrase(m, by[2], by[0]) == (
        "sentence P2·S1 names this passage (“cohort”): “See the Cohort.”"
    )


def test_explain_shows_the_graph_share_of_the_pool():
    """The explain table names the pool's learned graph share where the stage has a gate, and
    has no row for it otherwise (and no dense-prior rows: the priors are gone)."""
    from logrerank.app import explain_view

    r = _hand_ranking([(2, 0, "mentions")])
    target = r.sentence_by_node()[0]
    r.info = {**(r.info or {}), "graph_gate": None}
    assert "graph share" not in explain_view._share_row(r)
    r.info["graph_gate"] = 0.25
    row = explain_view._share_row(r)
    assert "graph share (learned gate of this pool)" in row and "0.25" in row and "25 %" in row
    assert not hasattr(explain_view, "prior_rows")
    assert target.node == 0


def test_large_pool_graph_shows_top_sentences_grouped_by_passage(backend):
    q, text = ui.load_example("Exercise and memory (50-passage pool)")
    res = ui.run_rerank(backend, None, q, text)
    n = len(res.table)
    doc = srcdoc_of(res.graph)
    shown = int(re.search(r"data-nodes='(\d+)'", doc).group(1))
    assert n > 150 and 12 <= shown < n
    assert "var passageGroups = [" in doc and '"physics": {"enabled": false}' in doc
    assert "<details id='legend' open>" in doc
    status = html.unescape(res.status)
    links = dict(
        re.findall(r"([a-z>-]+) (\d+)", status.split("counts once):")[1].split("Encod")[0])
    )
    for rel, count in links.items():
        assert f"data-relation='{html.escape(rel)}' data-count='{count}'" in doc, rel


def test_context_budget_keeps_the_context_shorter_than_the_flat_passages(backend):
    four = "\n\n".join(
        [
            "Title: A\nStatins lowered dementia risk. The ratio was 0.8.",
            "Title: B\nA trial found no effect on cognition.",
            "Title: C\nCholesterol is made in the brain. Statins may cross into it.",
            "Title: D\nThe museum opened a new wing. Visitors liked it.",
        ]
    )
    cases = [ui.load_example(n) for n in ui.list_examples()][:3] + [("Do statins help?", four)]
    for q, text in cases:
        res = ui.run_rerank(backend, None, q, text)
        ratio = int(re.search(r"\*\*(\d+)%\*\* of the flat context", res.tokens).group(1))
        assert ratio < 100, res.tokens
        k = min(10, len(res.session.ranking.passages))
        assert f"flat top-{k} passages" in res.tokens
    budget = json.loads(Path(res.context_file).read_text(encoding="utf-8"))["budget"]
    assert budget["dedupe"] is True and budget["max_tokens"] >= 1


def test_apply_budget_threshold_dedupe_and_default_off(result):
    from logrerank.config import ContextConfig
    from logrerank.ranking.context import apply_budget, estimate_tokens

    ctx = result.session.ranking.context
    full = {"k": 10, "units": ctx["units"], "prompt": ctx["prompt"]}
    cut = apply_budget(full, ContextConfig(max_tokens=60, dedupe=True))
    assert cut["units"] and estimate_tokens(cut["prompt"]) <= max(
        60, estimate_tokens(cut["prompt"].split("\n\n")[0])
    )
    seen = []
    for u in cut["units"]:
        seen += (
            [u["node"]]
            + [r["node"] for r in (u["before"], u["after"]) if r]
            + [r["node"] for r in u["similar"]]
        )
    assert len(seen) == len(set(seen))  # each sentence once
    high = apply_budget(full, ContextConfig(min_score=1.0))
    assert len(high["units"]) == 1  # the first unit is always kept
    assert ContextConfig().max_tokens == 0 and ContextConfig().dedupe is False  # API unchanged


def test_context_json_is_one_based(result):
    units = json.loads(result.context_json)
    ranking = result.session.ranking
    top = ranking.sentences[0]
    assert units[0]["passage"] == top.passage_idx + 1 and units[0]["sentence"] == top.sent_idx + 1
    assert units[0]["ref"] == viz.sentence_ref(top).replace("·", "·") and "node" not in units[0]
    saved = json.loads(Path(result.context_file).read_text(encoding="utf-8"))
    assert "1-based" in saved["index_base"]


def test_comparison_says_na_and_arrows_are_against_log(result):
    m = result.metrics
    passage = m[m["level"] == "passage"]
    assert (passage["overlap@10"] == "n/a").all() and (passage["items"] == 7).all()
    assert (passage["overlap@5"] != "n/a").all()
    assert tables.agreement([1], [1]) == [1, "n/a", "n/a", "n/a"]
    assert "than LoG'" in result.compare or "as LoG'" in result.compare
    note = result.compare.split("Sentences")[0].split("lr-compare-note")[1]
    assert "the cross-encoder" not in note  # the arrows compare with LoG
    assert result.compare.count("class='lr-score'") >= 30
    # the slope chart labels every line on both sides, with its rank there
    anns = result.slope.layout.annotations
    assert {a.x for a in anns} == {0.0, 1.0}
    assert all(re.search(r"#\d+", a.text) for a in anns)


def test_input_source_and_errors_keep_the_session(backend, example, tmp_path):
    path = tmp_path / "pool.json"
    path.write_text(json.dumps([{"title": "A", "text": "Statins help."}]), encoding="utf-8")
    res = ui.run_rerank(backend, None, "q?", example[1], str(path))
    assert "uploaded file pool.json; the pasted passages are ignored" in html.unescape(res.status)
    assert "the pasted passages" in ui.input_source("x", None)
    good = ui.run_rerank(backend, None, *example)
    bad = ui.run_rerank(backend, good.session, "", "text")
    assert bad.ok is False and bad.session is good.session
    assert "last successful run" in bad.status
