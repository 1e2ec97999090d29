"""The launched app in headless Chromium (Playwright), at desktop (1440x1000) and phone (390x844).

Marked ``browser`` and ``slow`` (``app.py`` loads the real backbone and the bundled
cross-encoder). Skips cleanly when Playwright or a Chromium binary is absent. Every view is
saved under ``$LOGRERANK_SHOTS`` (default: a ``logrerank-shots`` folder in the temp dir); the
tests never write a tracked file. ``python tests/browser/refresh_readme_screenshots.py`` runs
them and copies the desktop views the README shows into ``assets/``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from tests.browser import harness

pytestmark = [pytest.mark.browser, pytest.mark.slow]

sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("LOGRERANK_SHOTS") or Path(tempfile.gettempdir()) / "logrerank-shots")
CHROMIUM = os.environ.get("LOGRERANK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium binary at {CHROMIUM}", allow_module_level=True)

TIMEOUT_MS = 180_000
SIZES = {"desktop": (1440, 1000), "phone": (390, 844)}
SMALL, LARGE = "Statins and dementia", "Exercise and memory (50-passage pool)"
TABS = ("Ranking", "Graph", "Compare", "Context", "Explain")
XSS = "\n\n".join(
    [
        "Title: </textarea><script>window.__xss=1</script>\n"
        "<script>window.__xss=1</script> Statins lowered dementia risk in a cohort of older adults.",
        '<img src=x onerror="window.__xss=1"> Cholesterol is synthesised locally in the brain.',
        '<a href="javascript:window.__xss=1">click me</a> javascript:window.__xss=1 Trials showed '
        "no effect of statins on cognition.",
        '" onload="window.__xss=1" x=" \' onmouseover=\'window.__xss=1\' '
        '"></iframe><script>window.__xss=1</script> Healthy-user bias can explain the association.',
    ]
)
FOUR = "\n\n".join(
    [
        "Title: Cohort\nStatin users had a lower risk of dementia in a cohort of 5,000 older "
        "adults. The hazard ratio was 0.8.",
        "Title: Trial\nA randomised trial found no difference in cognition between statin and "
        "placebo after five years.",
        "Title: Mechanism\nCholesterol in the brain is made locally. Statins that cross the "
        "blood-brain barrier may affect it.",
        "Title: Unrelated\nThe museum opened a new wing for modern art. Visitors praised the "
        "lighting.",
    ]
)


@pytest.fixture(scope="module")
def app_url():
    yield from harness.serve_app()


@pytest.fixture(scope="module")
def browser():
    yield from harness.open_chromium(sync_api, CHROMIUM)


@pytest.fixture(params=list(SIZES))
def page(request, browser, app_url):
    yield from harness.open_page(browser, app_url, request.param, SIZES[request.param], TIMEOUT_MS)


def shot(page, name: str, readme: bool = False, full_page: bool = False) -> None:
    """Screenshot ``name`` to ``SHOTS/<name>_<size>.png`` (never into the repository; ``readme``
    marks the views tests/browser/refresh_readme_screenshots.py copies into assets/)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}_{page.size}.png"
    page.screenshot(path=str(path), full_page=full_page)


def wait_status(page, text: str) -> str:
    """Wait until the status panel holds ``text`` (details included); return its text."""
    return harness.wait_status(page, text, TIMEOUT_MS)


def run_example(page, name: str, sentences: int) -> str:
    page.get_by_role("button", name=name).click()
    return wait_status(page, f"{sentences} sentences in")


def graph_frame(page):
    page.wait_for_selector("iframe.logrerank-graph", timeout=TIMEOUT_MS)
    frame = page.query_selector("iframe.logrerank-graph").content_frame()
    frame.wait_for_function("typeof nodes !== 'undefined' && nodes.length > 0", timeout=TIMEOUT_MS)
    return frame


def expected_sentences(name: str) -> int:
    from logrerank.app import handlers as ui
    from logrerank.text.segment import passage_spans

    _, text = ui.load_example(name)
    return sum(len(passage_spans(p)) for p in ui.parse_input(text, None)[1])


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    time.sleep(0.8)


def in_view(page, selector: str) -> bool:
    """The element's top edge lies inside the viewport."""
    return page.evaluate(
        "s => { const r = document.querySelector(s).getBoundingClientRect();"
        " return r.top >= -2 && r.top < window.innerHeight; }",
        selector,
    )


# ---------------------------------------------------------------------------------- first screen
def test_first_screen_hint_examples_and_tabs(page):
    """Empty-state hint and the example buttons (readable names) above the fold; every tab is
    a visible tab button (none hidden behind an overflow menu)."""
    assert "Start here" in page.inner_text("#status")
    names = [page.inner_text(f"#example-{i}") for i in range(4)]
    assert SMALL in names and LARGE in names and not any("_" in n for n in names)
    for i in range(4):
        box = page.locator(f"#example-{i}").bounding_box()
        assert box["y"] + box["height"] <= SIZES[page.size][1], (page.size, i)
    for tab in TABS:
        assert page.get_by_role("tab", name=tab).is_visible(), (page.size, tab)
    shot(page, "first_screen")
    assert not page.dialogs


# ---------------------------------------------------------------------------------- ranking
def test_ranking_view_score_text_and_explain(page):
    """Ranking first: rank, readable wrapping text, the sort score, Δ vs CE, a header naming the
    order shown; results scrolled into view; the same score in Explain, with the intent head
    explained."""
    n = expected_sentences(SMALL)
    run_example(page, SMALL, n)
    time.sleep(0.8)
    assert in_view(page, "#results"), page.size
    assert (
        page.get_attribute("#results-tabs button[role=tab][aria-selected=true]", "data-tab-id")
        == "ranking"
    )
    headers = page.locator("#table th .header").all_inner_texts()
    assert headers[:4] == ["rank", "text", "score", "Δ vs CE"], headers
    for h in page.locator("#table th").all():  # headers on one line, never broken mid-word
        assert h.bounding_box()["height"] < 60, h.inner_text()
    assert int(page.get_attribute("#table [role=grid]", "aria-rowcount")) == n + 1
    table = page.locator("#table").bounding_box()
    cell = page.locator("#table [data-testid=cell-0-1]").bounding_box()
    assert cell["x"] >= table["x"] - 1 and cell["x"] + 40 < table["x"] + table["width"]
    assert cell["x"] + 40 < SIZES[page.size][0]  # the text column starts on screen
    scores = [float(page.inner_text(f"#table [data-testid=cell-{i}-2]")) for i in range(3)]
    assert scores == sorted(scores, reverse=True)
    label = page.inner_text("#table")  # the header names the order shown (selection.order_note)
    assert "order = score" in label and "structured context picks" in label, label
    shot(page, "ranking", readme=True)  # also the README's top picture (screenshot_app.png)
    open_tab(page, "Explain")
    page.wait_for_selector("#explain .lr-score", timeout=30_000)
    assert f"{scores[0]:.4f}" in page.inner_text("#explain .lr-score")
    assert "intent head" in page.inner_text("#explain .lr-intent-note")
    shot(page, "explain", readme=True)
    assert not page.dialogs


# ---------------------------------------------------------------------------------- graph
def test_graph_50_passages_readable(page):
    """50 passages: a top-sentences view, passage boxes, legend above the canvas (collapsed on a
    phone), link counts that agree between status, legend and drawing, no layout jitter."""
    n = expected_sentences(LARGE)
    status = run_example(page, LARGE, n)
    open_tab(page, "Graph")
    frame = graph_frame(page)
    frame.wait_for_selector("body[data-stabilized='1']", timeout=30_000)
    shown = frame.evaluate("nodes.length")
    assert 12 <= shown < n
    assert frame.evaluate("passageGroups.length") > 3
    assert frame.evaluate("network.physics.options.enabled") is False
    legend = frame.locator("#legend").bounding_box()
    canvas = frame.locator("#mynetwork").bounding_box()
    assert legend["y"] + legend["height"] <= canvas["y"] + 1  # outside the canvas
    assert frame.evaluate("document.getElementById('legend').open") == (page.size == "desktop")
    sim = int(re.search(r"similar (\d+)", status).group(1))
    assert frame.get_attribute("#legend [data-relation=similar]", "data-count") == str(sim)
    drawn = sum(
        int(x)
        for x in frame.eval_on_selector_all(
            "#legend [data-relation]", "els => els.map(e => e.dataset.shown)"
        )
    )
    assert drawn == frame.evaluate("edges.length")
    before = frame.evaluate("JSON.stringify(network.getPositions())")
    time.sleep(1.5)
    assert frame.evaluate("JSON.stringify(network.getPositions())") == before
    if page.size == "desktop":  # README: the whole canvas in view
        page.set_viewport_size({"width": 1440, "height": 1250})
        page.evaluate("document.getElementById('results-tabs').scrollIntoView({block: 'start'})")
    time.sleep(1.0)
    shot(page, "graph", readme=True)
    assert not page.dialogs


# ---------------------------------------------------------------------------------- context
def test_context_is_shorter_than_the_flat_passages(page):
    """The structured context has a budget: shorter than the flat top-k (real k), 1-based JSON;
    a hand-written 4-passage input too."""
    n = expected_sentences(SMALL)
    run_example(page, SMALL, n)
    open_tab(page, "Context")
    tokens = page.inner_text("#tokens")
    ratio = int(re.search(r"(\d+)% of the flat context", tokens).group(1))
    assert ratio < 100 and "flat top-7 passages" in tokens and "all 7" in tokens
    shown_json = page.locator("#context-json .cm-content").inner_text()  # the visible lines
    passages = [int(x) for x in re.findall(r'"passage": (\d+)', shown_json)]
    assert passages and min(passages) >= 1 and '"node"' not in shown_json
    assert re.search(r'"ref": "P\d+·S\d+"', shown_json)
    shot(page, "context", readme=True)
    page.fill("#passages textarea", FOUR)
    page.fill("#question textarea", "Do statins reduce the risk of dementia?")
    page.click("#run")
    wait_status(page, "in 4 passages")
    open_tab(page, "Context")
    page.wait_for_function(
        "document.querySelector('#tokens').innerText.includes('flat top-4')", timeout=30_000
    )
    tokens = page.inner_text("#tokens")
    assert int(re.search(r"(\d+)% of the flat context", tokens).group(1)) < 100
    assert "museum" not in page.input_value("#context textarea")  # off-topic left out
    assert not page.dialogs


# ---------------------------------------------------------------------------------- comparison
def test_comparison_na_labels_and_arrows_against_log(page):
    """n/a where overlap is 1 by construction; the slope chart labelled on both sides; every
    arrow against LoG, with each ranker's score beside its items."""
    n = expected_sentences(SMALL)
    run_example(page, SMALL, n)
    open_tab(page, "Compare")
    page.wait_for_selector("#slope .js-plotly-plot", timeout=30_000)
    metrics = page.inner_text("#metrics")
    assert "n/a" in metrics and "Kendall" in metrics
    titles = page.eval_on_selector_all("#compare .lr-shift", "els => els.map(e => e.title)")
    assert titles and all(re.search(r"(than|as|by) LoG( \(best sentence\))?$", t) for t in titles)
    assert page.locator("#compare .lr-score").count() >= 30
    sides = page.evaluate(  # every line labelled on both sides (tests/browser/test_app_views.py)
        "document.querySelector('#slope .js-plotly-plot').layout.annotations.map(a => a.x)"
    )
    assert set(sides) == {0, 1}
    shot(page, "comparison", readme=True, full_page=page.size == "desktop")
    assert not page.dialogs


# ---------------------------------------------------------------------------------- input
def test_input_source_errors_keep_results(page, tmp_path):
    """An uploaded file is used and says so (pasted text ignored); an input error shows the
    message and the last good results stay on screen."""
    good = tmp_path / "two.json"
    good.write_text(
        json.dumps(
            {
                "ctxs": [
                    {"title": "A", "text": "Statins lowered risk."},
                    {"title": "B", "text": "No effect on memory."},
                ]
            }
        ),
        encoding="utf-8",
    )
    page.fill("#question textarea", "Do statins help?")
    page.fill("#passages textarea", FOUR)
    page.set_input_files("#upload input[type=file]", str(good))
    page.wait_for_function(
        "document.querySelector('#source-note').innerText.includes('ignored')", timeout=60_000
    )
    assert "two.json" in page.inner_text("#source-note")
    page.click("#run")
    assert "uploaded file two.json" in wait_status(page, "2 sentences in 2 passages")
    assert int(page.get_attribute("#table [role=grid]", "aria-rowcount")) == 3
    page.fill("#question textarea", "")
    page.click("#run")
    status = wait_status(page, "Input error")
    assert "question is empty" in status and "last successful run" in status
    time.sleep(0.5)
    assert int(page.get_attribute("#table [role=grid]", "aria-rowcount")) == 3  # kept
    shot(page, "input_error")
    assert not page.dialogs


def test_malformed_upload_shows_an_error(page, tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"question": "q", "ctxs": [ {"title": 1', encoding="utf-8")
    page.set_input_files("#upload input[type=file]", str(bad))
    page.wait_for_function(
        "document.querySelector('#upload').innerText.includes('broken')", timeout=60_000
    )
    page.fill("#question textarea", "Does it parse?")
    page.click("#run")
    assert "invalid JSON" in wait_status(page, "Input error")
    assert not page.dialogs


def test_oversized_upload_is_refused_before_writing(page, tmp_path):
    """Gradio refuses a file over the limit in the browser (max_file_size): nothing uploaded."""
    from logrerank.app.main import LIMITS

    big = tmp_path / "huge_pool.txt"
    big.write_bytes(b"a" * (LIMITS.max_upload_bytes + 1000))
    upload_dir = Path(os.environ.get("GRADIO_TEMP_DIR") or Path(tempfile.gettempdir()) / "gradio")
    page.set_input_files("#upload input[type=file]", str(big))
    page.wait_for_function("document.body.innerText.includes('exceed')", timeout=30_000)
    assert "huge_pool.txt" in page.inner_text("body")
    assert not list(upload_dir.rglob("huge_pool.txt"))
    shot(page, "upload_refused")


# ---------------------------------------------------------------------------------- knobs
def test_knob_change_updates_without_reencoding(page):
    page.click("#example-1")
    wait_status(page, "graph recomputations: 1")
    page.get_by_text("Knobs (recomputed from cached encodings)").click()
    page.get_by_label("typed relations").uncheck()
    status = wait_status(page, "graph recomputations: 2")
    assert "cached, transformer not re-run" in status
    assert "transformer passes this session: 1" in status
    page.get_by_label("graph stage (GAT)").uncheck()
    status = wait_status(page, "graph recomputations: 3")
    assert "transformer passes this session: 1" in status
    open_tab(page, "Compare")
    assert "LoG (local only)" in page.inner_text("#compare")
    box = page.get_by_label("τ_sim similarity threshold").and_(page.locator("input[type=number]"))
    box.fill("0.3")
    box.press("Enter")
    status = wait_status(page, "graph recomputations: 4")
    assert "transformer passes this session: 1" in status


def test_cross_encoder_choice_switches_without_reencoding(page):
    """The comparison's cross-encoder is a menu (bundled, twin, ...) with badges; picking the
    twin re-ranks the baselines only and the status names the model it now compares with."""
    page.click("#example-1")
    wait_status(page, "graph recomputations: 1")
    page.get_by_text("Knobs (recomputed from cached encodings)").click()
    page.click("#ce-pick input")
    page.wait_for_selector("#ce-pick [role=option]", timeout=TIMEOUT_MS)
    options = [
        o.replace("✓", "").strip() for o in page.locator("#ce-pick [role=option]").all_inner_texts()
    ]
    assert any(o.startswith("cross-encoder (bundled) · ") for o in options), options
    twin = next(o for o in options if o.startswith("cross-encoder twin · "))
    page.locator("#ce-pick [role=option]", has_text=twin).click()
    status = wait_status(page, "graph recomputations: 2")
    assert "cross-encoder twin" in status and "transformer passes this session: 1" in status
    time.sleep(3.0)  # one pick, one recomputation (the dropdown's blur after a pick is no second)
    assert "graph recomputations: 2" in page.text_content("#status"), page.size
    assert ("UNAVAILABLE" in status) == twin.endswith("UNAVAILABLE")
    shot(page, "cross_encoder_choice")
    assert not page.dialogs


def test_enter_in_question_runs(page):
    from logrerank.app import handlers as ui

    q, text = ui.load_example(SMALL)
    page.fill("#passages textarea", text)
    page.fill("#question textarea", q)
    page.press("#question textarea", "Enter")
    wait_status(page, "Encodings")


def test_hostile_passages_show_as_text_and_execute_nothing(page):
    page.fill("#question textarea", 'Do statins "help" <b>?</b>')
    page.fill("#passages textarea", XSS)
    page.click("#run")
    wait_status(page, "Encodings")
    open_tab(page, "Graph")
    frame = graph_frame(page)
    assert frame.evaluate("nodes.length") >= 4
    # tooltips hold text nodes only
    assert frame.evaluate(
        "nodes.get().every(n => n.title instanceof HTMLElement && n.title.children.length === 0)"
    )
    open_tab(page, "Ranking")
    time.sleep(1.0)
    heat = page.inner_text("#heat")
    assert "<script>window.__xss=1</script>" in heat
    assert '<img src=x onerror="window.__xss=1">' in heat
    open_tab(page, "Compare")
    open_tab(page, "Explain")
    time.sleep(1.0)
    for fr in page.frames:
        assert fr.evaluate("typeof window.__xss") == "undefined", fr.url
    assert page.locator("#heat script, #heat img, #compare img, #explain img").count() == 0
    assert page.locator("iframe").count() == 1  # nothing broke out of the srcdoc
    assert not page.dialogs


# ---------------------------------------------------------------------------------- API, launch
def test_gradio_client_api(app_url):
    from gradio_client import Client

    from logrerank.app import handlers as ui

    q, text = ui.load_example(SMALL)
    client = Client(app_url, verbose=False)
    out = client.predict(q, text, None, api_name="/rerank")  # one JSON object
    assert out["ranker"] == "LoG" and out["cross_encoder"]
    assert list(out["sentences"][0])[:3] == ["rank", "text", "score"]
    assert len(out["sentences"]) == expected_sentences(SMALL)


def test_main_honours_gradio_env_and_port(monkeypatch):
    """``python app.py``: GRADIO_SERVER_NAME / GRADIO_SERVER_PORT, ``--port`` wins, and the
    upload limit goes to Gradio as ``max_file_size``."""
    import app
    from logrerank.app import main as app_main

    calls = []
    monkeypatch.setattr(app_main.demo, "launch", lambda **kw: calls.append(kw))
    monkeypatch.setenv("GRADIO_SERVER_NAME", "0.0.0.0")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "7999")
    app.main([])
    app.main(["--port", "8123"])
    monkeypatch.delenv("GRADIO_SERVER_NAME")
    monkeypatch.delenv("GRADIO_SERVER_PORT")
    monkeypatch.delenv("PORT", raising=False)
    app.main([])
    assert [(c["server_name"], c["server_port"]) for c in calls] == [
        ("0.0.0.0", 7999),
        ("0.0.0.0", 8123),
        ("127.0.0.1", 7860),
    ]
    assert all(c["max_file_size"] == app_main.LIMITS.max_upload_bytes for c in calls)
    assert all(c["share"] is False for c in calls)
