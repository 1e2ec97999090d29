"""``logrerank bench``: runs the speed benchmark of a repository checkout (``bench/speed.py``).

The benchmark is measurement tooling, not part of the installed package: it lives in the
repository's ``bench/`` folder (bench/README.md). This command is a repo-only shortcut: run from
the root of a checkout (or with ``LOGRERANK_BENCH`` naming its ``bench/`` folder), it passes
every argument after ``bench`` to ``bench/speed.py`` unchanged, so ``logrerank bench --help``
prints the benchmark's own options. From a plain ``pip install`` without the checkout it says
so in one line and exits 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

BENCH_ENV = "LOGRERANK_BENCH"


def bench_dir() -> Path | None:
    """The checkout's ``bench/`` folder: ``$LOGRERANK_BENCH`` or ``./bench``, if it holds
    ``speed.py``; None otherwise."""
    folder = Path(os.environ.get(BENCH_ENV) or Path.cwd() / "bench")
    return folder if (folder / "speed.py").is_file() else None


def cmd_bench(args: argparse.Namespace) -> int:
    """Run ``bench/speed.py``'s ``main`` with the arguments after ``bench``."""
    folder = bench_dir()
    if folder is None:
        print(
            "logrerank bench: error: bench/speed.py not found; the benchmark ships with the "
            "repository, not the package: run this from the root of a checkout (or set "
            f"{BENCH_ENV} to its bench/ folder), or run python bench/speed.py there",
            file=sys.stderr,
        )
        return 2
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))  # bench/ scripts import their siblings by name
    speed = importlib.import_module("speed")
    return speed.main(args.bench_args, prog="logrerank bench")


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``bench``: every argument after it goes to ``bench/speed.py`` (no ``-`` options
    are parsed here, ``prefix_chars`` is one nobody types)."""
    b = sub.add_parser(
        "bench",
        help="speed benchmark: LoG (per stage) vs cross-encoder vs BM25 (repository checkout "
        "only: runs bench/speed.py)",
        description="Runs bench/speed.py of the repository checkout in the current folder with "
        "these arguments (bench/README.md); logrerank bench --help lists them.",
        prefix_chars="\x00",
        add_help=False,
    )
    b.add_argument("bench_args", nargs="*", metavar="ARG", help="arguments of bench/speed.py")
    b.set_defaults(func=cmd_bench)
