"""``logrerank app``: serve the Gradio app on 127.0.0.1."""

from __future__ import annotations

import argparse


def cmd_app(args: argparse.Namespace) -> int:
    """Serve the Gradio app (:func:`logrerank.app.main.main`) on 127.0.0.1:``--port``."""
    import os

    from ..app.state import CROSS_ENCODER_ENV, RUNTIME_ENV

    if args.cross_encoder:  # set before the app module loads its models
        os.environ[CROSS_ENCODER_ENV] = str(args.cross_encoder)
    if args.runtime:
        os.environ[RUNTIME_ENV] = args.runtime
    from ..app.main import main as app_main

    app_main(["--port", str(args.port)])
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``app`` and its options."""
    a = sub.add_parser("app", help="start the Gradio app on 127.0.0.1")
    a.add_argument("--port", type=int, default=7860)
    a.add_argument(
        "--cross-encoder",
        metavar="DIR",
        help="cross-encoder folder to compare against (sentence-transformers or Hugging Face "
        "sequence-classification; default $LOGRERANK_CROSS_ENCODER, else the bundled one)",
    )
    a.add_argument(
        "--runtime",
        choices=["torch", "onnx", "onnx-int8"],
        default=None,
        help="transformer runtime of LoG and the cross-encoder (default $LOGRERANK_RUNTIME, "
        "else torch); onnx / onnx-int8 need logrerank[onnx], else torch with a warning",
    )
    a.set_defaults(func=cmd_app)
