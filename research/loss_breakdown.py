"""Where one ranker loses to another: the per-query difference of a metric, broken down by the
question type a benchmark records (CL-SciSumm discourse facet, HotpotQA / MuSiQue question type,
ScholarQA-Multi subject, ...), with wins / losses per type.

    python research/loss_breakdown.py runs/eval/scisumm-test-x/results.json:log \
        runs/eval/scisumm-test-x/results.json:log-local --benchmark scisumm --split test

``--by`` picks the grouping: ``type`` (the recorded type, default), ``label`` (SciFact /
Citation-Integrity claim label of the gold passages), ``gold`` (number of gold passages) or
``first-pass`` (where the first gold passage sits in the pool's base order: 1, 2-3, 4-10,
11-50; hard queries are those the first pass ranked low).

Reads two ``logrerank eval --out`` results (``RESULTS:RANKER``, as ``logrerank paired-test``)
and the benchmark's examples for their ``meta`` (``facet``, ``type`` or ``subject``); prints a Markdown table.
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
    t = meta.get("facet") or meta.get("type") or meta.get("subject") or "all"
    return list(t) if isinstance(t, (list, tuple)) else [str(t)]


def first_pass_bucket(ex) -> str:
    """The rank bucket of the best-placed gold passage in the pool's base (first-pass) order."""
    ids = [d.doc_id for d in ex.candidates]
    ranks = [ids.index(g) + 1 for g in ex.gold_doc_ids if g in ids]
    if not ranks:
        return "not in pool"
    r = min(ranks)
    return "1" if r == 1 else "2-3" if r <= 3 else "4-10" if r <= 10 else "11-50"


def group_of(ex, by: str) -> list[str]:
    """The groups one example counts under for ``--by``."""
    if by == "label":
        return sorted(set(map(str, (ex.meta.get("labels") or {}).values()))) or ["?"]
    if by == "gold":
        return [str(len(ex.gold_doc_ids))]
    if by == "first-pass":
        return [first_pass_bucket(ex)]
    return query_type(ex.meta)


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
    ap.add_argument("--by", default="type", choices=("type", "label", "gold", "first-pass"))
    args = ap.parse_args(argv)
    from logrerank.data.pools import load_benchmark

    kw = {"split": args.split} if args.split else {}
    exs, _ = load_benchmark(args.benchmark, **kw)
    types = {ex.qid: group_of(ex, args.by) for ex in exs}
    a = per_query(args.a, args.level, args.metric)
    b = per_query(args.b, args.level, args.metric)
    print(f"| {args.by} | queries | {args.level} {args.metric}: A - B | A better | B better |")
    print("|---|---|---|---|---|")
    for t, n, mean, wins, losses in breakdown(a, b, types):
        print(f"| {t} | {n} | {mean:+.1f} | {wins} | {losses} |")


if __name__ == "__main__":
    main()
