"""Sweep the sentence selection knobs (``ScoreConfig.select_*``, logrerank/ranking/selection.py) over
pools whose local stage is already encoded, without re-running the transformer.

Each pool is ranked once by the bundled LoG in plain score order (graph and GAT stages only,
from a cached :class:`~logrerank.ranking.results.Encoded`); every setting is then re-applied to that
ranking with :func:`logrerank.ranking.selection.apply_selection`. Pools missing from the caches are
encoded and, with ``--cache-out``, kept there for the next run. Reported per setting: sentence
nDCG@10 (queries with gold sentences), S-cov@5 and S-dist@10
(:func:`logrerank.evaluation.evaluate.sentence_metrics`), over all queries and over the
multi-evidence ones (two or more evidence passages).

Example (knob choice on a training split)::

    nice -n 15 env OMP_NUM_THREADS=1 python research/selection_sweep.py --benchmark evinf \\
        --split train --encodings runs/enc --out runs/selection/evinf-train.json
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import sys
from pathlib import Path

from logrerank.cli.eval import spread_sample
from logrerank.data.pools import load_benchmark
from logrerank.data.schema import example_passages
from logrerank.evaluation.evaluate import sentence_metrics
from logrerank.ranking.selection import apply_selection
from logrerank.training.log.encode_cache import encodings_for, local_digest, save_encodings


def evidence(ex) -> set:
    """The evidence passages of an example: those holding gold sentences, else the gold ones."""
    return set(ex.gold_sentences) or set(ex.gold_doc_ids)


def pick_examples(args: argparse.Namespace) -> list:
    """The split's examples: ``--limit`` first ones, ``--part`` half, ``--multi`` filter, then ``--sample`` spread."""
    exs, _ = load_benchmark(args.benchmark, split=args.split, limit=args.limit)
    half = len(exs) // 2
    exs = {"all": exs, "first": exs[:half], "second": exs[half:]}[args.part]
    if args.multi:
        exs = [ex for ex in exs if len(evidence(ex)) >= 2]
    return spread_sample(exs, args.sample)


def sweep(args: argparse.Namespace) -> dict:
    """Rank every pool once, apply every setting, return the summaries."""
    from logrerank.rankers import Models

    model = Models(args.checkpoint).log
    model.config.score = dataclasses.replace(  # the knobs it does not sweep: off, depth 30
        model.config.score,
        select_decay=1.0,
        select_redundancy=0.0,
        select_margin=0.0,
        select_keep=0,
        select_depth=30,
        select_ranking=False,
    )
    cache: dict = {}
    for folder in args.encodings:
        found, _ = encodings_for(model, folder, args.benchmark)
        cache.update(found)
    exs = pick_examples(args)
    settings = list(itertools.product(args.decays, args.redundancies, args.frees))
    rows: dict[tuple[float, float, int], list[tuple[bool, dict]]] = {st: [] for st in settings}
    new, new_qids = [], []
    for n, ex in enumerate(exs, 1):
        passages = example_passages(ex)
        key = (ex.query, tuple((p["title"], p["text"]) for p in passages))
        enc = cache.get(key)
        if enc is None:
            enc = model.encode(ex.query, passages)
            new.append(enc)
            new_qids.append(ex.qid)
        plain = model.rank_encoded(enc)
        gold_s = {(d, j) for d, js in ex.gold_sentences.items() for j in js}
        multi = len(evidence(ex)) >= 2
        for decay, red, free in settings:
            cfg = dataclasses.replace(
                model.config.score, select_decay=decay, select_redundancy=red, select_free=free
            )
            r = dataclasses.replace(
                plain, sentences=[dataclasses.replace(s) for s in plain.sentences]
            )
            apply_selection(r, enc.h, cfg)
            m = sentence_metrics(ex, r.sentences, gold_s, set(ex.gold_doc_ids), 10)
            rows[(decay, red, free)].append((multi, m))
        print(f"{n}/{len(exs)} pools ({len(new)} encoded)", file=sys.stderr, flush=True)
    if new and args.cache_out:
        stem = Path(args.cache_out) / f"{args.benchmark}-{args.split}-sel-{len(new_qids)}"
        save_encodings(stem, new_qids, new, local_digest(model))
    return {
        "benchmark": args.benchmark,
        "split": args.split,
        "part": args.part,
        "queries": len(exs),
        "multi_queries": sum(m for m, _ in rows[settings[0]]),
        "command": "python research/selection_sweep.py " + " ".join(sys.argv[1:]),
        "settings": [
            {
                "decay": d,
                "redundancy": r,
                "free": f,
                "all": mean(rows[(d, r, f)]),
                "multi": mean(rows[(d, r, f)], True),
            }
            for d, r, f in settings
        ],
    }


def mean(rows: list[tuple[bool, dict]], multi_only: bool = False) -> dict[str, float]:
    """Mean of each metric over the rows having it (percent; ``distinct@10`` a count)."""
    picked = [m for multi, m in rows if multi or not multi_only]
    out = {}
    for key in ("ndcg@10", "evcov@5", "distinct@10"):
        vals = [m[key] for m in picked if key in m]
        if vals:
            out[key] = (1.0 if key.startswith("distinct") else 100.0) * sum(vals) / len(vals)
    return out


def table(result: dict) -> str:
    """Markdown: one row per setting, all queries then the multi-evidence ones."""
    lines = [
        f"{result['benchmark']} {result['split']} ({result['part']}): {result['queries']} "
        f"queries, {result['multi_queries']} multi-evidence",
        "| decay | redundancy | free | S-nDCG@10 | S-cov@5 | S-dist@10 | multi S-nDCG@10 | multi "
        "S-cov@5 | multi S-dist@10 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in result["settings"]:
        cells = [
            s[g].get(k) for g in ("all", "multi") for k in ("ndcg@10", "evcov@5", "distinct@10")
        ]
        cells = ["–" if c is None else f"{c:.2f}" for c in cells]
        knobs = f"| {s['decay']} | {s['redundancy']} | {s['free']} | "
        lines.append(knobs + " | ".join(cells) + " |")
    return "\n".join(lines)


def choose(files: list[str]) -> dict:
    """The setting to ship, from sweeps of training splits: among the settings whose S-nDCG@10,
    averaged over the sets that have it (each set weighing the same), is not below the score
    order's, the one of largest mean S-cov@5 gain (then S-dist@10 gain)."""
    runs = [json.loads(Path(f).read_text(encoding="utf-8")) for f in files]

    def key(st: dict) -> tuple:
        return (st["decay"], st["redundancy"], st.get("free", 0))

    def gain(metric: str, st: dict) -> float | None:
        deltas = []
        for run in runs:
            by = {key(x): x["all"] for x in run["settings"]}
            base = by[(1.0, 0.0, st.get("free", 0))]
            if metric in base:
                deltas.append(by[key(st)][metric] - base[metric])
        return sum(deltas) / len(deltas) if deltas else None

    rows = []
    for st in runs[0]["settings"]:
        rows.append(
            {"setting": key(st), **{m: gain(m, st) for m in ("ndcg@10", "evcov@5", "distinct@10")}}
        )
    ok = [r for r in rows if (r["ndcg@10"] or 0.0) >= 0.0]
    best = max(ok, key=lambda r: (round(r["evcov@5"], 6), r["distinct@10"]))
    return {"files": files, "chosen": best, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    """Parse the options, sweep, print the table, write the JSON."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--benchmark")
    p.add_argument("--split")
    p.add_argument("--limit", type=int, help="first N queries of the split (file order)")
    p.add_argument("--part", choices=("all", "first", "second"), default="all")
    p.add_argument("--multi", action="store_true", help="only multi-evidence queries")
    p.add_argument("--sample", type=int, help="N queries spread over the (filtered) split")
    p.add_argument("--encodings", nargs="*", default=[], help="encoding cache folders (read)")
    p.add_argument("--cache-out", help="folder to keep newly encoded pools in")
    p.add_argument("--checkpoint", help="LoG checkpoint (default: bundled)")
    p.add_argument("--decays", type=float, nargs="+", default=[1.0, 0.9, 0.8, 0.7, 0.6, 0.5])
    p.add_argument("--redundancies", type=float, nargs="+", default=[0.0, 0.1])
    p.add_argument("--frees", type=int, nargs="+", default=[0, 1])
    p.add_argument("--out", help="JSON file for the result")
    p.add_argument("--choose", nargs="+", help="sweep JSON files of training splits: pick one")
    args = p.parse_args(argv)
    if args.choose:
        picked = choose(args.choose)
        for r in picked["rows"]:
            print(r)
        print("chosen:", picked["chosen"])
        return 0
    result = sweep(args)
    print(table(result))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
