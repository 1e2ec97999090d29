"""``logrerank bench``: the speed benchmark (:mod:`logrerank.evaluation.speed`)."""

from __future__ import annotations

import argparse


def cmd_bench(args: argparse.Namespace) -> int:
    """Run the speed benchmark with these options."""
    from ..evaluation.speed import run

    return run(args)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``bench`` with the benchmark's own options (one definition, shared with
    ``bench/speed.py``)."""
    from ..evaluation.speed import add_speed_arguments

    b = sub.add_parser(
        "bench",
        help="speed benchmark: LoG (per stage) vs cross-encoder vs BM25",
        description="Interleaved timings on SciFact dev 50-candidate pools (or synthetic ones): "
        "p50/p95 per ranker and stage, LoG/cross-encoder ratio, peak memory, model load times "
        "(bench/README.md).",
    )
    add_speed_arguments(b)
    b.set_defaults(func=cmd_bench)
