"""What the app's views show must be true, in headless Chromium at desktop (1440x900) and phone
(390x844): headers naming the active cross-encoder and ablation, raw scores where calibrated ones
saturate, the slope chart's log axis and labels, graph edges that avoid nodes with a legend that
hides a relation and tooltips that say what links two sentences, the phone layouts of the first
screen and Explain, and the JSON ``/rerank`` API with errors raised.

Marked ``browser`` and ``slow`` (the real models). Skips when Playwright or Chromium is absent.
Screenshots go to ``$LOGRERANK_VIEW_SHOTS`` (default ``runs/browser-views``, git-ignored); the
suite never writes tracked files.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from logrerank.app.state import TABLE_COLUMNS
from tests.browser import harness

pytestmark = [pytest.mark.browser, pytest.mark.slow]

sync_api = pytest.importorskip("playwright.sync_api")

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("LOGRERANK_VIEW_SHOTS") or ROOT / "runs" / "browser-views")
CHROMIUM = os.environ.get("LOGRERANK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium binary at {CHROMIUM}", allow_module_level=True)

TIMEOUT_MS = 240_000
SIZES = {"desktop": (1440, 900), "phone": (390, 844)}
SMALL, LARGE = "Statins and dementia", "Exercise and memory (50-passage pool)"


@pytest.fixture(scope="module")
def app_url():
    yield from harness.serve_app()


@pytest.fixture(scope="module")
def browser():
    yield from harness.open_chromium(sync_api, CHROMIUM)


@pytest.fixture(params=list(SIZES))
def page(request, browser, app_url):
    yield from harness.open_page(browser, app_url, request.param, SIZES[request.param], TIMEOUT_MS)


def shot(page, name: str, full_page: bool = False) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}_{page.size}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def wait_status(page, text: str) -> str:
    return harness.wait_status(page, text, TIMEOUT_MS)


def run_example(page, name: str) -> str:
    page.get_by_role("button", name=name).click()
    return wait_status(page, "graph recomputations: 1")


def open_tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()
    time.sleep(0.8)


def no_sideways_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


# ---------------------------------------------------------------------------------- first screen
def test_first_screen_points_at_the_examples(page):
    """The hint says where the examples are: on the left on a desktop, above on a phone, and
    they are there."""
    hint = page.inner_text("#status")
    ex = page.locator("#example-0").bounding_box()
    status = page.locator("#status").bounding_box()
    if page.size == "phone":
        assert "click an example above" in hint, hint
        assert ex["y"] + ex["height"] <= status["y"]
    else:
        assert "click an example on the left" in hint, hint
        assert ex["x"] + ex["width"] <= status["x"]
    assert no_sideways_scroll(page)
    shot(page, "first_screen")
    assert not page.dialogs


# ---------------------------------------------------------------------------------- headers
def test_headers_name_the_twin_and_the_ablation(page):
    """With the twin and an ablation active every header says so: status headline, ranking
    table, comparison columns, slope chart, agreement table, Explain; the twin's saturated
    calibrated scores come with raw logits."""
    run_example(page, SMALL)
    page.get_by_text("Knobs (recomputed from cached encodings)").click()
    page.click("#ce-pick input")
    page.wait_for_selector("#ce-pick [role=option]", timeout=TIMEOUT_MS)
    page.locator("#ce-pick [role=option]", has_text="cross-encoder twin").click()
    page.wait_for_function(
        "document.querySelector('#ce-pick input').value.startsWith('cross-encoder twin')"
    )
    wait_status(page, "compared with: the cross-encoder twin and BM25")  # after the headline
    page.get_by_label("typed relations").uncheck()
    log, ce = "LoG without typed relations", "cross-encoder twin"
    status = wait_status(page, log)  # the headline names the ablation whatever the graph share
    assert "Ranking: " in status and f"compared with: the {ce} and BM25" in status
    assert "transformer passes this session: 1" in status
    page.evaluate("document.getElementById('results').scrollIntoView({block: 'start'})")
    label = page.inner_text("#table")
    assert f"Sentences ranked by {log}" in label and f"than the {ce}" in label
    shot(page, "headers_ranking")
    open_tab(page, "Compare")
    page.wait_for_selector("#slope .js-plotly-plot", timeout=60_000)
    compare = page.inner_text("#compare")
    assert f"{log} compared with the {ce}" in compare
    assert f"{ce} (sentences)" in compare and f"{ce} stage" in compare
    assert "LoG (global)" not in compare and "cross-encoder (sentences)" not in compare
    title = page.evaluate("document.querySelector('#slope .js-plotly-plot').layout.title.text")
    title = title.replace("<br>", " ")  # wrapped for a phone
    assert ce in title and log in title
    assert f"Agreement with {log}" in page.inner_text("#metrics")
    ce_scores = page.evaluate(  # the second column of the sentence lists: the cross-encoder
        "[...document.querySelectorAll('#compare .lr-compare')[0].children[1].children[1]"
        ".querySelectorAll('.lr-score')].map(e => e.textContent)"
    )
    from logrerank.app.labels import saturated

    values = [float(t.split()[0]) for t in ce_scores]
    if saturated(values):  # crowded at 0 or 1: the raw logits are shown beside them
        assert all("logit" in t for t in ce_scores), ce_scores
        assert "raw logits shown" in compare
    page.evaluate("document.getElementById('compare').scrollIntoView({block: 'start'})")
    shot(page, "headers_compare")
    open_tab(page, "Explain")
    assert f"{ce} (sentence)" in page.inner_text("#explain")
    assert not page.dialogs


# ---------------------------------------------------------------------------------- slope chart
def test_slope_chart_log_axis_and_labels_on_both_sides(page):
    """50 passages: the rank axis is logarithmic (rank 1-10 keep their room), every line is
    labelled on both sides with its rank, and no two labels on one side overlap."""
    run_example(page, LARGE)
    open_tab(page, "Compare")
    page.wait_for_selector("#slope .js-plotly-plot", timeout=60_000)
    plot = "document.querySelector('#slope .js-plotly-plot')"
    assert page.evaluate(f"{plot}._fullLayout.yaxis.type") == "log"
    lines = page.evaluate(f"{plot}.data.filter(t => t.mode === 'lines+markers').length")
    anns = page.evaluate(f"{plot}.layout.annotations.map(a => [a.x, a.text])")
    assert len(anns) == 2 * lines and lines >= 10
    assert {x for x, _ in anns} == {0, 1} and all("#" in t for _, t in anns)
    boxes = page.eval_on_selector_all(
        "#slope .annotation",
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return [r.left, r.top, r.right, r.bottom]; })",
    )
    assert len(boxes) == len(anns)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            overlap_x = min(a[2], b[2]) - max(a[0], b[0])
            overlap_y = min(a[3], b[3]) - max(a[1], b[1])
            assert overlap_x <= 1 or overlap_y <= 1, (a, b)
    page.evaluate("document.getElementById('slope').scrollIntoView({block: 'start'})")
    time.sleep(0.5)
    shot(page, "slope")
    assert not page.dialogs


# ---------------------------------------------------------------------------------- graph
def _graph_frame(page):
    page.wait_for_selector("iframe.logrerank-graph", timeout=TIMEOUT_MS)
    frame = page.query_selector("iframe.logrerank-graph").content_frame()
    frame.wait_for_function("typeof nodes !== 'undefined' && nodes.length > 0", timeout=60_000)
    frame.wait_for_selector("body[data-stabilized='1']", timeout=60_000)
    return frame


def test_graph_edges_avoid_nodes_legend_hides_a_relation(page):
    """Edges bend around the nodes they would cross; directed pairs never share a path; a click
    on a legend entry hides that relation's edges (and a second shows them); link tooltips say
    what links two sentences."""
    run_example(page, LARGE)
    open_tab(page, "Graph")
    frame = _graph_frame(page)
    n_edges = frame.evaluate("edges.length")
    crossings = int(frame.get_attribute("body", "data-crossings"))
    assert crossings <= max(2, n_edges // 50), (crossings, n_edges)
    # a directed edge always bends, so its reverse (bent to the other side) never overlaps it
    straight = frame.evaluate(
        "edges.get({filter: e => e.arrows === 'to' && !(e.smooth && e.smooth.enabled)}).length"
    )
    assert straight == 0
    rels = frame.eval_on_selector_all(
        "#legend [data-relation]", "els => els.map(e => e.dataset.relation)"
    )
    rel = next(
        r
        for r in rels
        if frame.evaluate(f"edges.get({{filter: e => e.relation === '{r}'}}).length")
    )
    if page.size == "phone":
        frame.click("#legend summary")  # collapsed on a phone
    item = frame.locator(f"#legend [data-relation='{rel}']")
    item.click()
    hidden = frame.evaluate(
        f"edges.get({{filter: e => e.relation === '{rel}' && e.hidden}}).length"
    )
    total = frame.evaluate(f"edges.get({{filter: e => e.relation === '{rel}'}}).length")
    assert hidden == total > 0 and item.get_attribute("aria-pressed") == "false"
    others = frame.evaluate(
        f"edges.get({{filter: e => e.relation !== '{rel}' && e.hidden}}).length"
    )
    assert others == 0
    shot(page, f"graph_hidden_{rel.replace('>', '')}")
    item.click()
    assert frame.evaluate("edges.get({filter: e => e.hidden}).length") == 0
    tips = frame.evaluate(
        "edges.get().filter(e => e.relation === 'shared-term' || e.relation === 'mentions')"
        ".map(e => [e.relation, e.title.textContent])"
    )
    for r, tip in tips:
        if r == "shared-term":
            assert "shared rare terms: " in tip and "not recorded" not in tip, tip
        else:
            assert "names " in tip and " in: " in tip, tip
    if page.size == "desktop":
        page.evaluate("document.getElementById('results-tabs').scrollIntoView({block: 'start'})")
    time.sleep(0.5)
    shot(page, "graph")
    assert not page.dialogs


# ---------------------------------------------------------------------------------- explain
def test_explain_fits_the_phone(page):
    """Explain's role and intent panels wrap inside the screen; nothing scrolls sideways."""
    run_example(page, SMALL)
    open_tab(page, "Explain")
    page.wait_for_selector("#explain .lr-intent", timeout=60_000)
    width = SIZES[page.size][0]
    for sel in ("#explain .lr-intent", "#explain .lr-role", "#explain .lr-intent-note"):
        box = page.locator(sel).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (sel, box)
    assert no_sideways_scroll(page)
    page.evaluate("document.getElementById('explain').scrollIntoView({block: 'start'})")
    time.sleep(0.3)
    shot(page, "explain")
    assert not page.dialogs


# ---------------------------------------------------------------------------------- roles
METHOD_SENTENCE = "We pooled two placebo-controlled trials"  # P2·S2 of the statins example


def test_roles_are_the_role_taggers(page):
    """The sentence table's role column shows the role tagger's roles: a plain methods sentence
    of the statins example (P2·S2, "We pooled two placebo-controlled trials ...", 0.94 method by
    the bundled tagger) reads "method"; Explain's role panel names the role tagger with its test
    accuracy and gives the LoG role head's reading on a second line."""
    if page.size == "phone":
        pytest.skip("the roles do not depend on the screen size (the phone layout of Explain is "
                    "test_explain_fits_the_phone)")  # fmt: skip
    run_example(page, SMALL)
    rows: list[str] = []
    for _ in range(12):  # the table renders the rows in view: scroll until the sentence shows
        cells = page.evaluate(
            "Object.fromEntries([...document.querySelectorAll('#table [data-testid^=\"cell-\"]')]"
            ".map(c => [c.dataset.testid, c.textContent.trim()]))"
        )
        rows = [k.split("-")[1] for k, v in cells.items() if k.endswith(f"-{TABLE_COLUMNS.index('text')}") and
                v.startswith(METHOD_SENTENCE)]  # fmt: skip
        if rows:
            break
        page.evaluate(
            "for (const el of document.querySelectorAll('#table *')) "
            "{ if (el.scrollHeight > el.clientHeight + 4) el.scrollTop += 250; }"
        )
        time.sleep(0.3)
    assert len(rows) == 1, sorted(cells.items())[:12]
    assert cells[f"cell-{rows[0]}-{TABLE_COLUMNS.index('role')}"] == "method"
    page.evaluate("document.getElementById('results').scrollIntoView({block: 'start'})")
    shot(page, "roles_table")
    open_tab(page, "Explain")
    page.click("#explain-pick input")
    page.wait_for_selector("#explain-pick [role=option]", timeout=TIMEOUT_MS)
    page.locator("#explain-pick [role=option]", has_text="P2·S2").first.click()
    page.wait_for_function(
        "t => (document.querySelector('#explain blockquote') || {}).textContent?.startsWith(t)",
        arg=METHOD_SENTENCE,
        timeout=60_000,
    )
    role = page.inner_text("#explain .lr-role")
    assert "role (role tagger; test accuracy CSAbstruct " in role and "): method" in role, role
    assert "LoG role head (eq. 3, used inside the local score): " in role, role
    assert page.inner_text("#explain .lr-role-note").startswith("Role = argmax of the role tagger")
    page.evaluate("document.getElementById('explain').scrollIntoView({block: 'start'})")
    time.sleep(0.3)
    shot(page, "roles_explain")
    assert not page.dialogs


# ---------------------------------------------------------------------------------- overflow
OVERFLOW_JS = """() => {
  const w = window.innerWidth, bad = [];
  for (const sel of ['#table', '#details', '#heat', '#graph', '#compare', '#slope', '#metrics',
                     '#tokens', '#context', '#explain']) {
    const root = document.querySelector(sel);
    if (!root || !root.offsetParent) continue;  // not on the open tab
    for (const el of [root, ...root.querySelectorAll('*')]) {
      if (!el.offsetParent && el !== root) continue;
      const r = el.getBoundingClientRect();
      if (r.width > 0 && r.right > w + 1) bad.push(`${sel} ${el.tagName}.${el.className} right ${r.right} > ${w}`);
      const ox = getComputedStyle(el).overflowX;
      if ((ox === 'auto' || ox === 'scroll') && el.scrollWidth > el.clientWidth + 1)
        bad.push(`${sel} ${el.tagName}.${el.className} scrolls sideways (${el.scrollWidth} > ${el.clientWidth})`);
    }
  }
  if (document.documentElement.scrollWidth > w + 1) bad.push('page ' + document.documentElement.scrollWidth);
  return bad.slice(0, 8);
}"""


def test_no_view_is_cut_off_or_scrolls_sideways(page):
    """On the 50-passage example every main view (the ranking table and score details, the
    graph, the comparison with its slope chart and metrics table, the context, Explain) lies
    inside the window at desktop and phone size, and none of them scrolls sideways: no element
    ends right of the window and no scroll container is wider than its box."""
    run_example(page, LARGE)
    page.get_by_text("Score details").first.click()  # open the details accordion
    time.sleep(0.8)
    for tab in ("Ranking", "Graph", "Compare", "Context", "Explain"):
        open_tab(page, tab)
        if tab == "Compare":
            page.wait_for_selector("#slope .js-plotly-plot", timeout=60_000)
            time.sleep(0.5)
        if tab == "Explain":
            page.click("#explain-pick input")
            page.wait_for_selector("#explain-pick [role=option]", timeout=TIMEOUT_MS)
            page.locator("#explain-pick [role=option]").first.click()
            page.wait_for_selector("#explain blockquote", timeout=60_000)
        bad = page.evaluate(OVERFLOW_JS)
        assert not bad, (tab, page.size, bad)
    assert not page.dialogs


# ---------------------------------------------------------------------------------- API
def test_rerank_api_json_and_errors(app_url):
    """``/rerank``: one JSON object with named fields; bad input raises with the message."""
    from gradio_client import Client

    from logrerank.app import handlers as ui

    q, text = ui.load_example(SMALL)
    client = Client(app_url, verbose=False)
    out = client.predict(q, text, api_name="/rerank")
    assert out["ranker"] == "LoG" and "cross-encoder" in out["cross_encoder"]
    first = out["sentences"][0]
    assert first["rank"] == 1 and {"text", "score", "delta_vs_ce", "ref", "role"} <= set(first)
    assert out["passages"][0]["rank"] == 1 and out["context"]
    out = client.predict(q, text, ablations=["graph stage (GAT)"], api_name="/rerank")
    assert out["ranker"].startswith("LoG without ")
    with pytest.raises(Exception, match="question is empty"):
        client.predict("", text, api_name="/rerank")
    with pytest.raises(Exception, match="passages is empty"):
        client.predict(q, "  ", api_name="/rerank")
