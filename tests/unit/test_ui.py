"""App handlers, state, tables and renderers (logrerank.app), called directly on the tiny model."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from logrerank.app import handlers as ui
from logrerank.app import state, tables, viz
from logrerank.io import read_passages_file
from logrerank.segment import passage_spans
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
    question, text = ui.load_example("statins dementia")
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
    examples = ui.list_examples()
    assert len(examples) >= 3
    for name, path in examples.items():
        question, passages = read_passages_file(path)
        assert question and question.endswith("?"), name
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
    assert "Sentences: top-10" in result.compare and "Passages: top-10 order" in result.compare
    assert tables.PASS_GRAPH in result.compare and tables.SENT_CE in result.compare
    assert set(result.metrics["level"]) == {"sentence", "passage"}
    assert result.slope is not None
    units = json.loads(result.context_json)
    assert len(units) == 10 and result.context_prompt.startswith("[1]")
    saved = json.loads(Path(result.context_file).read_text(encoding="utf-8"))
    assert saved["units"] == units and saved["trained"] is False
    assert "tokens" in result.tokens and "flat top-7" in result.tokens
    assert len(result.explain_choices) == n and result.explain_value is not None
    assert "local score" in result.explain and "Messages into this sentence" in result.explain


def test_table_rank_change_is_ce_rank_minus_log_rank(result):
    t = result.table
    assert ((t["CE rank"] - t["rank"]) == t["Δ vs CE"]).all()
    assert t["BM25"].notna().all() and t["cross-encoder"].notna().all()


def test_knob_change_recomputes_without_reencoding(backend, example):
    first = ui.run_rerank(backend, None, *example)
    calls = backend.log.encode_calls["n"]
    knobs = state.Knobs.make(top_k=3, tau_sim=-1.0, delta=1.0, k=2, blend=0.9)
    second = ui.recompute(backend, first.session, knobs)
    assert backend.log.encode_calls["n"] == calls
    assert "cached, transformer not re-run" in second.status
    assert "transformer passes this session: 1" in second.status
    assert len(json.loads(second.context_json)) == 3
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
    assert res.table.empty and res.graph == ""


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.json", "{not json", "invalid JSON"),
        ("bad.jsonl", '{"title": "a", "text": "b"}\n[1, 2', "invalid JSON on line 2"),
        ("obj.json", '{"question": "q", "passages": []}', "ctxs"),
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
    assert res.table["cross-encoder"].isna().all()


def test_limits_apply_once_to_log_and_every_baseline(make_tiny_model, tiny_dir):
    """Input over the limits is cut once: LoG and the baselines rank the same passages, and
    each notice appears once in the status."""
    from logrerank.limits import Limits
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
    assert ui._cache_note([0, 0], from_cache=False) == ""  # cache off
    assert ui._cache_note([3, 5], from_cache=True) == ""  # knob change: no transformer pass
    assert ui._cache_note([0, 5], from_cache=False) == " · passage cache: new passages"
    assert "3 of 5 windows reused" in ui._cache_note([3, 5], from_cache=False)
