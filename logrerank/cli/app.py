"""``logrerank app``: serve the Gradio app on 127.0.0.1."""

from __future__ import annotations

import argparse


def cmd_app(args: argparse.Namespace) -> int:
    """Serve the Gradio app (:func:`logrerank.app.main.main`) on 127.0.0.1:``--port``."""
    from ..app.main import main as app_main

    app_main(["--port", str(args.port)])
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``app`` and its options."""
    a = sub.add_parser("app", help="start the Gradio app on 127.0.0.1")
    a.add_argument("--port", type=int, default=7860)
    a.set_defaults(func=cmd_app)
