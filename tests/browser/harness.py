"""What both browser test modules share: the app launched on a free port, headless Debian
Chromium, one page per viewport size, and waiting on the status panel. Each module keeps its
own thin fixtures (its viewport sizes and time-out) over these."""

from __future__ import annotations

import socket
from collections.abc import Iterator


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_demo(demo) -> Iterator[str]:
    """Launch a Gradio ``demo`` as the app serves it (:func:`logrerank.app.main.launch_kwargs`)
    on a free port and yield its URL (no trailing slash); close it afterwards."""
    from logrerank.app.main import launch_kwargs

    port = free_port()
    demo.launch(
        server_name="127.0.0.1",
        server_port=port,
        prevent_thread_lock=True,
        quiet=True,
        **launch_kwargs(),
    )
    yield f"http://127.0.0.1:{port}"
    demo.close()


def serve_app() -> Iterator[str]:
    """Launch ``app.demo`` (models load once) and yield its URL; close it afterwards."""
    import app

    for url in serve_demo(app.demo):
        yield url + "/"


def open_chromium(sync_api, chromium: str):
    """Yield a headless Chromium (``--no-sandbox --headless``, never a downloaded build)."""
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--headless"])
        yield b
        b.close()


def open_page(browser, url: str, size: str, viewport: tuple[int, int], timeout_ms: int):
    """Yield a page of ``viewport`` on the app, ready: ``#run`` shown and the page-load event
    done (the status panel lists the models), so a first click is wired to the server and no
    late page-load update can overwrite a run's status. ``page.size`` names the size and
    ``page.dialogs`` collects any dialog (dismissed)."""
    ctx = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    pg = ctx.new_page()
    pg.size = size
    pg.dialogs = []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.goto(url)
    pg.wait_for_selector("#run", timeout=timeout_ms)
    pg.wait_for_selector("#status .lr-status", state="attached", timeout=timeout_ms)
    yield pg
    ctx.close()


def wait_status(page, text: str, timeout_ms: int) -> str:
    """Wait until the status panel holds ``text`` (details included); return its text."""
    page.wait_for_function(
        "t => (document.querySelector('#status') || {}).textContent?.includes(t)",
        arg=text,
        timeout=timeout_ms,
    )
    return page.text_content("#status")
