"""Two paper PDFs uploaded at once in headless Chromium: both papers' passages reach the graph,
whose node tooltips, the ranking table's ``from`` column and Explain name paper, section and page.

Marked ``browser``, ``slow`` (the app loads the real backbone) and ``data`` (the two CC BY
papers of ../shared/data/pdfs); skips cleanly without Playwright, Chromium or the papers.
Screenshots go to ``$LOGRERANK_SHOTS`` (default: ``logrerank-shots`` in the temp dir).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from logrerank.resources import data_root
from tests.browser import harness

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.data]

sync_api = pytest.importorskip("playwright.sync_api")
pytest.importorskip("pdfminer")

PDFS = data_root() / "pdfs"
NAMES = ("2020.acl-main.447.pdf", "N18-3011.pdf")
TITLES = (
    "S2ORC: The Semantic Scholar Open Research Corpus",
    "Construction of the Literature Graph in Semantic Scholar",
)
if not all((PDFS / n).is_file() for n in NAMES):
    pytest.skip("../shared/data/pdfs not found", allow_module_level=True)
CHROMIUM = os.environ.get("LOGRERANK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip(f"no chromium binary at {CHROMIUM}", allow_module_level=True)
SHOTS = Path(os.environ.get("LOGRERANK_SHOTS") or Path(tempfile.gettempdir()) / "logrerank-shots")
TIMEOUT_MS = 900_000  # 140 passages through LoG and every baseline on a shared CPU
QUESTION = "How is structured full text extracted from paper PDFs?"


@pytest.fixture(scope="module")
def app_url():
    yield from harness.serve_app()


@pytest.fixture(scope="module")
def browser():
    yield from harness.open_chromium(sync_api, CHROMIUM)


@pytest.fixture
def page(browser, app_url):
    yield from harness.open_page(browser, app_url, "desktop", (1440, 1000), TIMEOUT_MS)


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}_desktop.png"))


def test_two_uploaded_pdfs_reach_the_graph_with_their_sources(page):
    page.fill("#question textarea", QUESTION)
    page.set_input_files("#upload input[type=file]", [str(PDFS / n) for n in NAMES])
    page.wait_for_function(
        "document.querySelector('#source-note').innerText.includes('N18-3011.pdf')",
        timeout=60_000,
    )
    page.click("#run")
    status = harness.wait_status(page, "sentences in", TIMEOUT_MS)
    assert "uploaded files 2020.acl-main.447.pdf, N18-3011.pdf" in status
    assert "N18-3011.pdf: " in status and "passages from 8 page(s)" in status
    shot(page, "pdf_ranking")
    sources = page.eval_on_selector_all(
        "#table [role=gridcell], #table td", "cells => cells.map(c => c.innerText)"
    )
    assert any(" · p. " in c or " · pp. " in c for c in sources)
    page.get_by_role("tab", name="Graph").click()
    time.sleep(1.0)
    page.wait_for_selector("iframe.logrerank-graph", timeout=TIMEOUT_MS)
    frame = page.query_selector("iframe.logrerank-graph").content_frame()
    frame.wait_for_function("typeof nodes !== 'undefined' && nodes.length > 0", timeout=60_000)
    tips = frame.evaluate("nodes.get().map(n => n.title ? n.title.textContent : '')")
    for title in TITLES:
        assert any(f"from: {title} · " in t for t in tips), title
    shot(page, "pdf_graph")
    page.get_by_role("tab", name="Explain").click()
    page.wait_for_function(
        "(document.querySelector('.lr-from') || {}).textContent?.includes('from: ')",
        timeout=60_000,
    )
    shot(page, "pdf_explain")
    assert not page.dialogs
