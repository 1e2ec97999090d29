"""Would a lexical prior help on paper pools? Passage nDCG@10 of ``a`` x ``w`` on cached pools.

Paper pools rank by ``a * final(graph) + (1 - a) * final(local)`` (docs/method.md, "Paper
pools"); untitled pools also get ``w * minmax(BM25(q, passage))`` (the lexical prior). This
scores ``a * final(graph) + (1 - a) * final(local) + w * passage_bm25`` for every ``a`` in
{0.25, 0.5, 0.75} and ``w`` in {0, 0.25, 0.5, 1, 2, 4} on route-tuning specs
(``source:split:limit[:offset]``, as ``logrerank tune-score --paper-route --route-specs``),
from the cached encodings (encoded when missing) of one checkpoint:

    python research/paper_lexical.py --checkpoint logrerank/checkpoints/log-reranker \\
        --encodings runs/enc-evinf evinf:validation:60 scifact:train:30:440

No transformer runs for cached pools.
"""

from __future__ import annotations

import argparse
import os
import statistics

import torch

from logrerank.evaluation.metrics import ndcg_at_k
from logrerank.text.lexical import pool_lexical
from logrerank.training.log.encode_cache import encode_cached
from logrerank.training.log.passage_stage import parse_spec
from logrerank.training.log.route_tuning import paper_pool_logits, passage_order

A = (0.25, 0.5, 0.75)
W = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0)


def spec_table(model, exs, encs) -> dict[tuple[float, float], float]:
    """Mean passage nDCG@10 (percent) of every ``(a, w)`` over the paper pools with gold."""
    rows = []
    with torch.inference_mode():
        for ex, enc, graph, local in paper_pool_logits(model, exs, encs):
            lex = pool_lexical(enc)[:, 1].float()
            ids, gold = [c.doc_id for c in ex.candidates], set(ex.gold_doc_ids)
            row = {}
            for a in A:
                for w in W:
                    order = passage_order(model, enc, a * graph + (1 - a) * local + w * lex)
                    row[(a, w)] = 100 * ndcg_at_k([ids[i] for i in order], gold, 10)
            rows.append(row)
    return {k: statistics.fmean(r[k] for r in rows) for k in rows[0]} if rows else {}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="+", help="source:split:limit[:offset]")
    ap.add_argument("--checkpoint", default="logrerank/checkpoints/log-reranker")
    ap.add_argument(
        "--encodings",
        required=True,
        help="the encoding cache folder of this checkpoint's local stage (one per local stage)",
    )
    args = ap.parse_args(argv)
    from logrerank.pipeline import LoGReranker

    torch.set_num_threads(1)
    model = LoGReranker.from_pretrained(args.checkpoint, device="cpu").eval()
    print("| spec | a | " + " | ".join(f"w = {w:g}" for w in W) + " |")
    print("|---|---|" + "---|" * len(W))
    with open(os.devnull, "w") as quiet:
        for spec in args.specs:
            src, split, limit, offset = parse_spec(spec)
            exs, encs = encode_cached(
                model, src, split, limit or None, args.encodings, quiet, offset=offset
            )
            table = spec_table(model, exs, encs)
            for a in A:
                cells = " | ".join(f"{table[(a, w)]:.1f}" for w in W) if table else "no pools"
                print(f"| {spec} | {a:g} | {cells} |")


if __name__ == "__main__":
    main()
