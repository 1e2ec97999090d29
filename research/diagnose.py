"""Where does one ranker lose to another? Per-query gold passage ranks, and which sentence of the
gold passage each ranker puts first (position and tagged role).

    python research/diagnose.py --benchmark citint --limit 60 --a log-local --b bi-encoder

Prints: gold-rank distribution for both rankers, wins/losses, the mean rank of each sentence
position inside gold passages, and the 8 queries with the largest loss for ``--a``.
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter

from logrerank.data import pools
from logrerank.data.schema import example_passages
from logrerank.rankers import Models, build_rankers


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--benchmark", default="citint")
    ap.add_argument("--split", default=None)
    ap.add_argument("--limit", type=int, default=60)
    ap.add_argument("--a", default="log-local")
    ap.add_argument("--b", default="bi-encoder")
    ap.add_argument("--checkpoint", default=None)
    args = ap.parse_args()
    examples, _ = pools.load_benchmark(args.benchmark, split=args.split, limit=args.limit)
    rankers = build_rankers([args.a, args.b], Models(args.checkpoint, memo_cross_encoder=True))
    rows = []
    first_pos: dict[str, Counter] = {args.a: Counter(), args.b: Counter()}
    for ex in examples:
        ps = example_passages(ex)
        gold = {i for i, d in enumerate(ex.candidates) if d.doc_id in set(ex.gold_doc_ids)}
        row = {"qid": ex.qid, "query": ex.query}
        for name in (args.a, args.b):
            r = rankers[name].rank(ex.query, ps)
            order = r.passage_order()
            row[name] = min(order.index(g) for g in gold) + 1
            sents = [s for s in r.sentences if s.passage_idx in gold]
            if sents:
                best = min(sents, key=lambda s: s.rank)
                first_pos[name][best.sent_idx] += 1
                row[name + "_top"] = r.passages_ranked[0].passage_idx in gold
                row[name + "_best_sent"] = best.sent_idx
        rows.append(row)
    for name in (args.a, args.b):
        ranks = [r[name] for r in rows]
        print(
            f"{name:>14}: gold rank mean {statistics.mean(ranks):.1f} median "
            f"{statistics.median(ranks)}; @1 {sum(x == 1 for x in ranks)}, "
            f"@10 {sum(x <= 10 for x in ranks)} of {len(ranks)}; best gold sentence position "
            f"{dict(sorted(first_pos[name].items()))}"
        )
    wins = sum(r[args.a] < r[args.b] for r in rows)
    losses = sum(r[args.a] > r[args.b] for r in rows)
    print(
        f"{args.a} vs {args.b}: better on {wins}, worse on {losses}, tied {len(rows) - wins - losses}"
    )
    rows.sort(key=lambda r: r[args.b] - r[args.a])
    for r in rows[:8]:
        print(f"  q{r['qid']}: {args.a} {r[args.a]} vs {args.b} {r[args.b]}: {r['query'][:110]}")


if __name__ == "__main__":
    main()
