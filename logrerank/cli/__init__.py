"""The ``logrerank`` command (LoG-Reranker): rerank, evaluate, train, tune, benchmark, serve the app.

``logrerank --help`` lists every command with one line (the subparsers' ``help``);
``logrerank COMMAND --help`` gives a command's options; ``logrerank --version`` prints the
package version. Errors in the user's input print a one-line message and exit with status 2;
nothing crashes with a traceback on bad input.
"""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..jsonconfig import ConfigError
from ..types import InputError
from . import app, batch, bench, build_df, eval, report, rerank, train

COMMANDS = (rerank, batch, eval, train, bench, report, app, build_df)
"""The command modules, in ``--help`` order; each has ``add_parser(subparsers)``."""


class _HelpFormatter(argparse.HelpFormatter):
    """Help with every command's one-line description beside its name, even the longest name."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=24)

    def add_argument(self, action: argparse.Action) -> None:
        super().add_argument(action)
        if isinstance(action, argparse._SubParsersAction):  # names are indented 4 more
            longest = max(len(name) for name in action.choices) + self._current_indent + 4
            self._action_max_length = max(self._action_max_length, longest)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(
        prog="logrerank",
        description="LoG-Reranker: sentence-level graph reranking of scientific evidence "
        "(rank passages for a question, evaluate rankers, train and tune the models, serve the "
        "app).",
        epilog="Run 'logrerank COMMAND --help' for a command's options.",
        formatter_class=_HelpFormatter,
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"logrerank {__version__}",
        help="print the version and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
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
