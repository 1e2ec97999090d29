"""``logrerank paired-test`` and ``logrerank report compare | seeds``: reports over eval runs.

Each reads what ``logrerank eval --out`` wrote (``results.json``); nothing is re-ranked.
"""

from __future__ import annotations

import argparse

from ..types import InputError


def cmd_paired_test(args: argparse.Namespace) -> int:
    """Paired randomisation test of two rankers' per-query figures (one line)."""
    from ..evaluation.paired import format_paired, paired_test, parse_spec, per_query

    qrels = getattr(args, "qrels", None)
    if qrels:  # two TREC run files (e.g. logrerank eval --save-runs), scored against the qrels
        from ..evaluation.runs import run_per_query

        if args.level != "passage":
            raise InputError("run files rank passages: --qrels takes --level passage only")
        a, b = run_per_query(args.a, qrels, args.metric), run_per_query(args.b, qrels, args.metric)
    else:
        for spec in (args.a, args.b):
            if spec.endswith((".trec", ".run")):
                raise InputError(f"{spec} is a run file: pass --qrels QRELS to score it")
        a = per_query(*parse_spec(args.a), args.level, args.metric)
        b = per_query(*parse_spec(args.b), args.level, args.metric)
    print(format_paired(paired_test(a, b, args.draws), args.level, args.metric))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """nDCG@10 of two runs side by side."""
    from ..evaluation.report import compare_runs

    print(compare_runs(args.run_a, args.run_b))
    return 0


def cmd_seeds(args: argparse.Namespace) -> int:
    """Mean ± sd of one ranker over seed runs (markdown table)."""
    from ..evaluation.report import seed_table

    benchmarks = {}
    for spec in args.bench:
        name, sep, dirs = spec.partition("=")
        if not sep or not name or not dirs:
            raise InputError(f"{spec!r}: expected NAME=DIR,DIR,... (one eval folder per seed)")
        benchmarks[name] = dirs.split(",")
    print(seed_table(args.ranker, args.seeds.split(","), benchmarks))
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``paired-test`` and ``report`` (``compare``, ``seeds``)."""
    p = sub.add_parser(
        "paired-test",
        help="paired randomisation test between two rankers' per-query nDCG (eval results)",
        description="Mean difference, 95 % bootstrap interval and two-sided sign-flip p-value "
        "(seeded) over the queries both rankers have. RESULTS is a results.json of "
        "`logrerank eval --out` or its folder; with --qrels, A and B are TREC run files "
        "(e.g. OUT/runs/log.trec of `logrerank eval --save-runs`) scored over every judged query.",
    )
    p.add_argument("a", metavar="RESULTS:RANKER", help="e.g. runs/final/scifact/results.json:log")
    p.add_argument("b", metavar="RESULTS:RANKER", help="e.g. runs/baselines/scifact:bi-encoder")
    p.add_argument(
        "--qrels",
        help="qrels (TREC or BEIR TSV): A and B are then TREC run files, e.g. runs/log.trec",
    )
    p.add_argument("--level", default="passage", choices=["passage", "sentence"])
    p.add_argument("--metric", default="ndcg@10")
    p.add_argument("--draws", type=int, default=10_000, help="sign-flip draws (default 10000)")
    p.set_defaults(func=cmd_paired_test)

    r = sub.add_parser("report", help="reports over eval runs: compare two, or seeds' mean ± sd")
    rsub = r.add_subparsers(dest="report", required=True)
    c = rsub.add_parser(
        "compare",
        help="nDCG@10 of two eval runs side by side, and the largest change",
    )
    c.add_argument("run_a", metavar="RUN_A", help="logrerank eval --out folder (or results.json)")
    c.add_argument("run_b", metavar="RUN_B", help="logrerank eval --out folder (or results.json)")
    c.set_defaults(func=cmd_compare)
    s = rsub.add_parser(
        "seeds",
        help="mean ± sd of one ranker over seed runs (markdown table)",
        description="One row per seed, then mean ± sd (sample standard deviation), with passage "
        "nDCG@10 and, where the benchmark has sentence labels, sentence nDCG@10.",
    )
    s.add_argument("--ranker", default="log")
    s.add_argument("--seeds", default="13,17,23", help="labels of the rows, in folder order")
    s.add_argument("bench", nargs="+", metavar="NAME=DIR,DIR,...", help="one eval folder per seed")
    s.set_defaults(func=cmd_seeds)
