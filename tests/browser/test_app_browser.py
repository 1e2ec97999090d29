"""The launched app in headless Chromium (Playwright): examples, views, knobs, escaping, uploads, API.

Marked ``browser`` and ``slow`` (``app.py`` loads the real backbone and the bundled
cross-encoder). Skips cleanly when Playwright or a Chromium binary is absent. Screenshots of each
tab go to ``assets/`` (``assets/screenshot_app.png`` is the one the README shows).
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
ASSETS = ROOT / "assets"
CHROMIUM = os.environ.get("LOGRERANK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium binary at {CHROMIUM}", allow_module_level=True)

TIMEOUT_MS = 180_000
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url():
    import app  # builds the Blocks and loads the models once

    port = _free_port()
    app.demo.launch(
        server_name="127.0.0.1", server_port=port, share=False, prevent_thread_lock=True, quiet=True
    )
    yield f"http://127.0.0.1:{port}/"
    app.demo.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless"])
        yield b
        b.close()


@pytest.fixture
def page(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1500, "height": 1000})
    pg = ctx.new_page()
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.goto(app_url)
    pg.wait_for_selector("#run", timeout=TIMEOUT_MS)
    yield pg
    ctx.close()


def wait_status(page, text: str) -> str:
    page.wait_for_function(
        "t => (document.querySelector('#status') || {}).innerText?.includes(t)",
        arg=text,
        timeout=TIMEOUT_MS,
    )
    return page.inner_text("#status")


def graph_frame(page):
    page.wait_for_selector("iframe.logrerank-graph", timeout=TIMEOUT_MS)
    handle = page.query_selector("iframe.logrerank-graph")
    frame = handle.content_frame()
    frame.wait_for_function("typeof nodes !== 'undefined' && nodes.length > 0", timeout=TIMEOUT_MS)
    return frame


def expected_sentences(name: str) -> int:
    from logrerank.app import handlers as ui
    from logrerank.segment import passage_spans

    _, text = ui.load_example(name)
    return sum(len(passage_spans(p)) for p in ui.parse_input(text, None)[1])


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    time.sleep(0.8)


def test_example_run_fills_every_tab(page):
    name = "statins dementia"
    n = expected_sentences(name)
    page.get_by_role("button", name=name).click()
    status = wait_status(page, "Encodings")
    assert "UNTRAINED" in status or "trained" in status
    assert "Device" in status and "Stage timings" in status
    frame = graph_frame(page)
    assert frame.evaluate("nodes.length") == n
    assert frame.evaluate("edges.length") > 0
    assert frame.evaluate("typeof network") == "object"
    frame.wait_for_selector("body[data-stabilized='1']", timeout=30_000)
    page.set_viewport_size({"width": 1500, "height": 1300})
    time.sleep(1.0)
    page.screenshot(path=str(ASSETS / "screenshot_graph.png"))
    shutil.copyfile(ASSETS / "screenshot_graph.png", ASSETS / "screenshot_app.png")  # README
    page.set_viewport_size({"width": 1500, "height": 1000})

    open_tab(page, "Ranking")
    rows = page.get_attribute("#table [role=grid]", "aria-rowcount")
    assert int(rows) == n + 1  # header + one row per sentence
    assert page.locator("#heat .lr-sent").count() == n
    page.screenshot(path=str(ASSETS / "screenshot_ranking.png"))

    open_tab(page, "Comparison")
    compare = page.inner_text("#compare")
    assert "Sentences: top-10" in compare and "evidence-graph selector" in compare
    assert "cross-encoder stage" in compare
    page.wait_for_selector("#slope .js-plotly-plot", timeout=30_000)
    assert "Kendall" in page.inner_text("#metrics")
    page.screenshot(path=str(ASSETS / "screenshot_comparison.png"), full_page=True)

    open_tab(page, "Structured context")
    assert page.input_value("#context textarea").startswith("[1]")
    assert "tokens" in page.inner_text("#tokens")
    assert "role" in page.inner_text("#context-json")
    page.screenshot(path=str(ASSETS / "screenshot_context.png"))

    open_tab(page, "Explain a sentence")
    page.wait_for_function(
        "document.querySelector('#explain').innerText.includes('local score')", timeout=30_000
    )
    page.screenshot(path=str(ASSETS / "screenshot_explain.png"))
    assert not page.dialogs


def test_knob_change_updates_without_reencoding(page):
    page.click("#example-0")
    wait_status(page, "graph recomputations: 1")
    page.get_by_label("typed relations").uncheck()
    status = wait_status(page, "graph recomputations: 2")
    assert "cached, transformer not re-run" in status
    assert "transformer passes this session: 1" in status
    page.get_by_label("graph stage (GAT)").uncheck()
    status = wait_status(page, "graph recomputations: 3")
    assert "transformer passes this session: 1" in status
    open_tab(page, "Comparison")
    assert "LoG (local only)" in page.inner_text("#compare")
    box = page.get_by_label("τ_sim similarity threshold").and_(page.locator("input[type=number]"))
    box.fill("0.3")
    box.press("Enter")
    status = wait_status(page, "graph recomputations: 4")
    assert "transformer passes this session: 1" in status


def test_enter_in_question_runs(page):
    from logrerank.app import handlers as ui

    q, text = ui.load_example(next(iter(ui.list_examples())))
    page.fill("#passages textarea", text)
    page.fill("#question textarea", q)
    page.press("#question textarea", "Enter")
    wait_status(page, "Encodings")


def test_hostile_passages_show_as_text_and_execute_nothing(page):
    page.fill("#question textarea", 'Do statins "help" <b>?</b>')
    page.fill("#passages textarea", XSS)
    page.click("#run")
    wait_status(page, "Encodings")
    frame = graph_frame(page)
    assert frame.evaluate("nodes.length") >= 4
    # hover every node so tooltips are built; they hold text nodes only
    assert frame.evaluate(
        "nodes.get().every(n => n.title instanceof HTMLElement && n.title.children.length === 0)"
    )
    open_tab(page, "Ranking")
    time.sleep(1.0)
    heat = page.inner_text("#heat")
    assert "<script>window.__xss=1</script>" in heat
    assert '<img src=x onerror="window.__xss=1">' in heat
    open_tab(page, "Comparison")
    open_tab(page, "Explain a sentence")
    time.sleep(1.0)
    for fr in page.frames:
        assert fr.evaluate("typeof window.__xss") == "undefined", fr.url
    assert page.locator("#heat script, #heat img, #compare img, #explain img").count() == 0
    assert page.locator("iframe").count() == 1  # nothing broke out of the srcdoc
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
    status = wait_status(page, "Input error")
    assert "invalid JSON" in status
    assert not page.dialogs


def test_gradio_client_api(app_url):
    from gradio_client import Client

    from logrerank.app import handlers as ui

    q, text = ui.load_example(next(iter(ui.list_examples())))
    client = Client(app_url, verbose=False)
    out = client.predict(q, text, None, api_name="/rerank")
    status = out[0]
    assert "Encodings" in status and "Input error" not in status
    table = out[2]
    assert len(table["data"]) == expected_sentences(next(iter(ui.list_examples())))
