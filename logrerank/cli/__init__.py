"""Command line of logrerank: rerank, rerank-batch, eval, train, tune-score, bench, paired-test, report, app, build-df.

Errors in the user's input print a one-line message and exit with status 2; nothing crashes
with a traceback on bad input.
"""

from __future__ import annotations

import argparse
import sys

from ..jsonconfig import ConfigError
from ..types import InputError
from . import app, batch, bench, build_df, eval, report, rerank, train

COMMANDS = (rerank, batch, eval, train, bench, report, app, build_df)
"""The command modules, in ``--help`` order; each has ``add_parser(subparsers)``."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(prog="logrerank", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``logrerank`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (InputError, ConfigError) as exc:
        print(f"logrerank: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # checkpoint / backbone problems: one clear line, not a traceback
        from ..checkpoint import CheckpointError
        from ..local.backbone import BackboneError

        if isinstance(exc, (CheckpointError, BackboneError)):
            print(f"logrerank: error: {exc}", file=sys.stderr)
            return 2
        raise
