"""Where one ranker loses to another: the per-query difference of a metric, broken down by the
question type a benchmark records (CL-SciSumm discourse facet, HotpotQA / MuSiQue question type,
...), with wins / losses per type.

    python research/loss_breakdown.py runs/eval/scisumm-test-x/results.json:log \
        runs/eval/scisumm-test-x/results.json:log-local --benchmark scisumm --split test

Reads two ``logrerank eval --out`` results (``RESULTS:RANKER``, as ``logrerank paired-test``)
and the benchmark's examples for their ``meta`` (``facet`` or ``type``); prints a Markdown table.
"""

from __future__ import annotations

import argparse
import collections
import statistics


def per_query(spec: str, level: str, metric: str) -> dict[str, float]:
    """``{qid: metric}`` in percent of one ranker (``RESULTS:RANKER``), read as ``logrerank
    paired-test`` reads it (:mod:`logrerank.evaluation.paired`)."""
    from logrerank.evaluation.paired import parse_spec
    from logrerank.evaluation.paired import per_query as rows

    path, ranker = parse_spec(spec)
    return {q: 100 * v for q, v in rows(path, ranker, level, metric).items()}


def query_type(meta: dict) -> list[str]:
    """The types a query counts under (a facet list counts under each of its facets)."""
    t = meta.get("facet") or meta.get("type") or "all"
    return list(t) if isinstance(t, (list, tuple)) else [str(t)]


def breakdown(a: dict[str, float], b: dict[str, float], types: dict[str, list[str]]) -> list:
    """Rows ``(type, n, mean a - b, wins, losses)``, the whole set first."""
    groups: dict[str, list[float]] = collections.defaultdict(list)
    for q in sorted(set(a) & set(b)):
        d = a[q] - b[q]
        groups["(all)"].append(d)
        for t in types.get(q, ["?"]):
            groups[t].append(d)
    return [
        (t, len(v), statistics.fmean(v), sum(x > 0 for x in v), sum(x < 0 for x in v))
        for t, v in sorted(groups.items(), key=lambda kv: (kv[0] != "(all)", -len(kv[1])))
    ]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="RESULTS:RANKER")
    ap.add_argument("b", help="RESULTS:RANKER")
    ap.add_argument("--benchmark", required=True)
    ap.add_argument("--split", default=None)
    ap.add_argument("--level", default="passage", choices=("passage", "sentence"))
    ap.add_argument("--metric", default="ndcg@10")
    args = ap.parse_args(argv)
    from logrerank.data.pools import load_benchmark

    kw = {"split": args.split} if args.split else {}
    exs, _ = load_benchmark(args.benchmark, **kw)
    types = {ex.qid: query_type(ex.meta) for ex in exs}
    a = per_query(args.a, args.level, args.metric)
    b = per_query(args.b, args.level, args.metric)
    print(f"| type | queries | {args.level} {args.metric}: A - B | A better | B better |")
    print("|---|---|---|---|---|")
    for t, n, mean, wins, losses in breakdown(a, b, types):
        print(f"| {t} | {n} | {mean:+.1f} | {wins} | {losses} |")


if __name__ == "__main__":
    main()
