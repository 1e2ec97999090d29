"""``logrerank app`` / ``python app.py`` print their own address line, and no Gradio hint to
``set share=True`` (the app never makes a share link)."""

from __future__ import annotations

import socket


def test_main_prints_no_share_hint(make_tiny_model, monkeypatch, capfd) -> None:
    from logrerank.app import main, state

    backend = state.Backend.load(make_tiny_model(), None)
    monkeypatch.setattr(main.BACKEND, "_backend", backend)
    monkeypatch.setattr(main.demo, "block_thread", main.demo.close)  # serve, then stop at once
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.delenv("GRADIO_SERVER_NAME", raising=False)
    main.main(["--port", str(port)])
    out = capfd.readouterr()
    text = out.out + out.err
    assert "share=True" not in text and "public link" not in text, text
    assert f"Running on local URL:  http://127.0.0.1:{port}/ (no share link" in text, text
