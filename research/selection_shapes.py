"""Compare shapes of the sentence selection (logrerank/ranking/selection.py) on stored plain rankings.

``dump`` ranks each pool of a split once with the bundled LoG in plain score order (from the
encoding caches, as research/selection_sweep.py) and writes, per query, the sentences in score
order (passage doc id, sentence index, passage index, score) with the gold sentences and the
evidence passages. ``grid`` re-applies every setting of a grid of ``select_*`` knobs (decay,
margin, free, keep, depth; no redundancy: it needs the vectors) to those dumps with
:func:`logrerank.ranking.selection.select_order` and prints, per set, the change of sentence nDCG@10,
S-cov@5 and S-dist@10 against the score order; ``--choose`` prints only the settings whose
nDCG@10 is not lower on any of the given sets.

Example::

    nice -n 15 env OMP_NUM_THREADS=1 python research/selection_shapes.py dump --benchmark evinf \\
        --split train --limit 80 --encodings runs/enc runs/selection/enc \\
        --out runs/selection/plain/evinf-train.json
    python research/selection_shapes.py grid runs/selection/plain/{evinf-train,...}.json --choose
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from pathlib import Path

import torch

from logrerank.evaluation.metrics import distinct_at_k, evidence_coverage_at_k, ndcg_at_k
from logrerank.ranking.selection import select_order


def dump(args: argparse.Namespace) -> dict:
    """Rank every pool once in score order; the rows ``grid`` reads."""
    sys.path.insert(0, str(Path(__file__).parent))
    from selection_sweep import evidence, pick_examples

    from logrerank.data.schema import example_passages
    from logrerank.rankers import Models
    from logrerank.training.log.encode_cache import encodings_for

    model = Models(args.checkpoint).log
    model.config.score = dataclasses.replace(
        model.config.score, select_decay=1.0, select_redundancy=0.0, select_margin=0.0
    )
    cache: dict = {}
    for folder in args.encodings:
        cache.update(encodings_for(model, folder, args.benchmark)[0])
    rows = []
    exs = pick_examples(args)
    for n, ex in enumerate(exs, 1):
        passages = example_passages(ex)
        key = (ex.query, tuple((p["title"], p["text"]) for p in passages))
        enc = cache.get(key) or model.encode(ex.query, passages)
        plain = model.rank_encoded(enc)
        sents = [
            [ex.candidates[s.passage_idx].doc_id, s.sent_idx, s.passage_idx, s.score]
            for s in plain.sentences
        ]
        gold_s = sorted([d, j] for d, js in ex.gold_sentences.items() for j in js)
        rows.append(
            {"qid": ex.qid, "sentences": sents, "gold": gold_s, "evidence": sorted(evidence(ex))}
        )
        print(f"{n}/{len(exs)} pools", file=sys.stderr, flush=True)
    return {
        "benchmark": args.benchmark,
        "split": args.split,
        "part": args.part,
        "command": "python research/selection_shapes.py dump " + " ".join(sys.argv[2:]),
        "rows": rows,
    }


def measure(row: dict, order: list[int]) -> dict[str, float]:
    """nDCG@10 (when the query has gold sentences), S-cov@5 and S-dist@10 of one order."""
    sents = [row["sentences"][i] for i in order]
    groups = [s[0] for s in sents]
    out = {
        "evcov@5": evidence_coverage_at_k(groups, row["evidence"], 5),
        "distinct@10": float(distinct_at_k(groups, 10)),
    }
    if row["gold"]:
        out["ndcg@10"] = ndcg_at_k(
            [(s[0], s[1]) for s in sents], {tuple(g) for g in row["gold"]}, 10
        )
    return out


def summarize(rows: list[dict], knobs: dict | None, multi_only: bool) -> dict[str, float]:
    """Mean metrics of a set under one setting (None: the score order)."""
    vals: dict[str, list[float]] = {}
    for row in rows:
        if multi_only and len(row["evidence"]) < 2:
            continue
        n = len(row["sentences"])
        if knobs is None:
            order = list(range(n))
        else:
            z = torch.tensor([s[3] for s in row["sentences"]], dtype=torch.double)
            pas = torch.tensor([s[2] for s in row["sentences"]], dtype=torch.long)
            order = select_order(z, pas, None, redundancy=0.0, **knobs)
        for k, v in measure(row, order).items():
            vals.setdefault(k, []).append(v)
    return {
        k: (1.0 if k.startswith("distinct") else 100.0) * sum(v) / len(v) for k, v in vals.items()
    }


def grid(args: argparse.Namespace) -> list[dict]:
    """Every setting's change against the score order on every set."""
    sets = {
        Path(f).stem: json.loads(Path(f).read_text(encoding="utf-8"))["rows"] for f in args.files
    }
    base = {name: summarize(rows, None, args.multi) for name, rows in sets.items()}
    out = []
    for decay, margin, free, keep, depth in itertools.product(
        args.decays, args.margins, args.frees, args.keeps, args.depths
    ):
        if (decay >= 1.0 and margin <= 0.0) or depth <= keep:
            continue
        knobs = {"decay": decay, "margin": margin, "free": free, "keep": keep, "depth": depth}
        delta = {}
        for name, rows in sets.items():
            m = summarize(rows, knobs, args.multi)
            delta[name] = {k: round(m[k] - base[name][k], 2) for k in m}
        out.append({"knobs": knobs, "delta": delta})
    return [{"base": base}] + out


def main(argv: list[str] | None = None) -> int:
    """``dump`` or ``grid`` (module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("--benchmark", required=True)
    d.add_argument("--split", required=True)
    d.add_argument("--limit", type=int)
    d.add_argument("--part", choices=("all", "first", "second"), default="all")
    d.add_argument("--multi", action="store_true")
    d.add_argument("--sample", type=int)
    d.add_argument("--encodings", nargs="*", default=[])
    d.add_argument("--checkpoint")
    d.add_argument("--out", required=True)
    g = sub.add_parser("grid")
    g.add_argument("files", nargs="+")
    g.add_argument("--multi", action="store_true", help="multi-evidence queries only")
    g.add_argument("--decays", type=float, nargs="+", default=[1.0, 0.9, 0.8, 0.7, 0.5])
    g.add_argument("--margins", type=float, nargs="+", default=[0.0, 0.02, 0.05, 0.1, 0.2])
    g.add_argument("--frees", type=int, nargs="+", default=[0, 1, 2])
    g.add_argument("--keeps", type=int, nargs="+", default=[0, 1, 2, 3])
    g.add_argument("--depths", type=int, nargs="+", default=[5, 10, 30])
    g.add_argument("--choose", action="store_true", help="print the settings that lose no nDCG")
    g.add_argument("--out", help="JSON file for the grid")
    args = p.parse_args(argv)
    if args.cmd == "dump":
        result = dump(args)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result), encoding="utf-8")
        return 0
    rows = grid(args)
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    print(json.dumps(rows[0]))
    for r in rows[1:]:
        ok = all(d.get("ndcg@10", 0.0) >= 0.0 for d in r["delta"].values())
        if ok or not args.choose:
            print(json.dumps(r))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
