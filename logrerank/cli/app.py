"""``logrerank app`` and ``python app.py``: serve the Gradio app on 127.0.0.1.

Both check that the port is free before the app serves or loads its models, so a busy port ends
in one line (``logrerank: error: port 7860 on 127.0.0.1 is in use ...``) and exit status 2 in
a second, not in a Gradio traceback after the models have loaded.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
from collections.abc import Sequence

from ..app.options import add_app_options, default_port, script_parser
from ..types import InputError


def server_host() -> str:
    """``$GRADIO_SERVER_NAME``, else 127.0.0.1 (the address the app serves on)."""
    return os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"


def check_port_free(host: str, port: int) -> None:
    """Bind ``host:port`` once and let it go: the app can serve there.

    Raises:
        InputError: not a port number, or the port is taken (the message says what to do).
    """
    if not 0 < port < 65536:
        raise InputError(f"--port must be between 1 and 65535, got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                why = "is in use" if exc.errno == errno.EADDRINUSE else "is not allowed"
                raise InputError(
                    f"port {port} on {host} {why} (another app running?); choose another with "
                    "--port N or GRADIO_SERVER_PORT=N"
                ) from None
            raise InputError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None


def serve(argv: list[str], host: str, port: int) -> None:
    """Check the port, then import the app (models load here) and serve until interrupted.

    Raises:
        InputError: the port is busy (checked before, and caught again from Gradio's launch).
    """
    check_port_free(host, port)
    from ..app.main import main as app_main

    try:
        app_main(argv)
    except OSError as exc:  # taken between the check and the launch
        raise InputError(f"cannot serve on {host}:{port}: {exc}") from None


def run_app_script(argv: Sequence[str] | None = None) -> int:
    """``python app.py [--port N] [...]``: serve; a busy port is one line and status 2.

    The options are parsed before anything heavy is imported: ``--help`` and a bad option
    answer at once, and no model loads before the port is known to be free.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    known = script_parser().parse_args(argv)
    try:
        port = known.port if known.port is not None else default_port()
        serve(argv, server_host(), port)
    except InputError as exc:
        print(f"logrerank: error: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_app(args: argparse.Namespace) -> int:
    """Serve the Gradio app (:func:`logrerank.app.main.main`) on 127.0.0.1:``--port``."""
    port = args.port if args.port is not None else default_port()
    check_port_free(server_host(), port)  # before app.state (torch, gradio) is imported
    from ..app.state import CROSS_ENCODER_ENV, RUNTIME_ENV

    if args.cross_encoder:  # set before the app module loads its models
        os.environ[CROSS_ENCODER_ENV] = str(args.cross_encoder)
    if args.runtime:
        os.environ[RUNTIME_ENV] = args.runtime
    serve(["--port", str(port)], server_host(), port)  # port checked before the models load
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``app`` and its options."""
    a = sub.add_parser("app", help="start the Gradio app on 127.0.0.1")
    add_app_options(a)
    a.set_defaults(func=cmd_app)
