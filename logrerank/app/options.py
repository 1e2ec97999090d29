"""The options of ``python app.py`` and ``logrerank app``, without importing Gradio or torch:
``--help`` and a bad option answer at once (:mod:`logrerank.cli.app` parses them before the
app module is imported; :func:`parse_args` uses the same parser)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from ..types import InputError

DEFAULT_PORT = 7860


def default_port() -> int:
    """``$GRADIO_SERVER_PORT``, else ``$PORT``, else 7860 (as :func:`logrerank.app.main.main`).

    Raises:
        InputError: the variable is not a port number.
    """
    raw = os.environ.get("GRADIO_SERVER_PORT") or os.environ.get("PORT") or DEFAULT_PORT
    try:
        return int(raw)
    except ValueError:
        raise InputError(f"GRADIO_SERVER_PORT / PORT must be a port number, got {raw!r}") from None


def add_app_options(parser: argparse.ArgumentParser) -> None:
    """The options of ``python app.py`` and ``logrerank app``: ``--port``, ``--cross-encoder``,
    ``--runtime`` (no Gradio or torch import: ``--help`` answers at once)."""
    parser.add_argument(
        "--port",
        type=int,
        default=None,
        help="port (default $GRADIO_SERVER_PORT, else $PORT, else 7860); a busy port is an error",
    )
    parser.add_argument(
        "--cross-encoder",
        metavar="DIR",
        default=None,
        help="cross-encoder folder to compare against (sentence-transformers or Hugging Face "
        "sequence-classification; default $LOGRERANK_CROSS_ENCODER, else the bundled one)",
    )
    parser.add_argument(
        "--runtime",
        choices=["torch", "onnx", "onnx-int8"],
        default=None,
        help="transformer runtime of LoG and the cross-encoder (default $LOGRERANK_RUNTIME, "
        "else torch); onnx / onnx-int8 need logrerank[onnx], else torch with a warning",
    )


def script_parser() -> argparse.ArgumentParser:
    """The parser of ``python app.py`` (:func:`parse_args` uses it too)."""
    parser = argparse.ArgumentParser(prog="app.py", description="Serve the logrerank app.")
    add_app_options(parser)
    return parser


__all__ = ["DEFAULT_PORT", "add_app_options", "default_port", "script_parser"]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The app's options (:func:`script_parser`); ``port`` filled in from
    ``$GRADIO_SERVER_PORT``, else ``$PORT``, else 7860 (:func:`default_port`)."""
    args = script_parser().parse_args(argv)
    if args.port is None:
        args.port = default_port()
    return args
