"""Batch reranking throughput: questions per second against engine, workers and batch size.

Usage::

    python bench/batch.py --questions 30                      # local + Ray, workers 1 and 2
    python bench/batch.py --questions 20 --passages 10        # what bench/README.md shows
    python bench/batch.py --questions 10 --engines local      # a quick check

What it does:

1. writes the first ``--questions`` SciFact dev claims with the ``--passages`` best of their
   BM25 pools of 50 abstracts
   (``logrerank.data.load_benchmark``; pools cached in ``.cache/pools``) as a batch input
   JSONL (passages with their ids and the dataset's sentence split);
2. times one LoG call per stage on the first ``--stage-questions`` of them (the split between
   the transformer and the CPU-side stages, for the GPU sizing in bench/README.md);
3. runs ``rerank_batch`` once per configuration into a fresh output: the local engine per
   batch size (``--threads`` torch threads), and Ray Data per (workers, batch size) with the
   same threads shared out between the actors of a local cluster;
4. checks that every configuration wrote the same rankings (passage order exactly, records
   equal up to 1e-5), and writes ``results.json`` and ``results.md`` to ``--out``.

Each configuration is timed end to end (``seconds``: start-up and model loading included) and
after its first written batch (``steady q/s``: what one more hour of the run would do).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def write_input(path: Path, n: int, data_root: str | None, passages: int) -> dict:
    """SciFact dev pools (their ``passages`` best BM25 candidates) as a batch input JSONL;
    returns pool facts."""
    from logrerank.data import load_benchmark
    from logrerank.data.schema import example_passages

    examples, stats = load_benchmark("scifact", data_root=data_root, split="dev", limit=n)
    with path.open("w", encoding="utf-8") as f:
        for ex in examples:
            ex.candidates = ex.candidates[:passages]
            row = {"id": ex.qid, "question": ex.query, "passages": example_passages(ex)}
            f.write(json.dumps(row) + "\n")
    sizes = [len(ex.candidates) for ex in examples]
    return {"questions": len(examples), "passages_mean": statistics.mean(sizes), "stats": stats}


def stage_split(path: Path, n: int, checkpoint: str | None, threads: int) -> dict:
    """Median seconds per LoG stage over the first ``n`` questions (after one warm-up)."""
    import torch

    from logrerank.pipeline import LoGReranker

    torch.set_num_threads(threads)
    model = LoGReranker.from_pretrained(checkpoint)
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()[: n + 1]]
    model.rerank(rows[0]["question"], rows[0]["passages"])
    timings = [model.rerank(r["question"], r["passages"]).timings for r in rows[1:]]
    keys = timings[0].keys()
    return {k: statistics.median(t.get(k, 0.0) for t in timings) for k in keys}


def close(a, b, tol: float = 1e-5) -> bool:
    """Equal JSON structures, floats equal up to ``tol``."""
    if isinstance(a, float) or isinstance(b, float):
        ok = isinstance(a, (int, float)) and isinstance(b, (int, float))
        return ok and math.isclose(a, b, rel_tol=tol, abs_tol=tol)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(close, a, b))
    return a == b


def records(path: Path) -> dict[str, dict]:
    return {
        r["id"]: r
        for r in (json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x)
    }


def run_configs(args: argparse.Namespace, inp: Path, out: Path) -> list[dict]:
    from logrerank.batch import rerank_batch

    configs = []
    if "local" in args.engines:
        configs += [("local", 1, b) for b in args.batch_sizes]
    if "ray" in args.engines:
        configs += [("ray", w, b) for w in args.workers for b in args.batch_sizes]
    rows = []
    for engine, workers, bs in configs:
        name = f"{engine}-w{workers}-b{bs}"
        target = out / f"{name}.jsonl"
        target.unlink(missing_ok=True)
        threads = max(1, args.threads // workers)
        print(f"[batch] {name}: {threads} thread(s) per worker", file=sys.stderr, flush=True)
        res = rerank_batch(
            target,
            inp,
            engine=engine,
            workers=workers,
            threads=threads,
            batch_size=bs,
            checkpoint=args.checkpoint,
            device=args.device,
            gpus_per_worker=args.gpus_per_worker if engine == "ray" else None,
            progress=not args.no_progress,
        )
        steady = res.steady_questions_per_second
        rows.append(
            {
                "name": name,
                "engine": engine,
                "workers": workers,
                "threads_per_worker": threads,
                "batch_size": bs,
                "questions": res.written,
                "errors": res.errors,
                "seconds": round(res.seconds, 2),
                "first_batch_s": round(res.first_batch[0], 2) if res.first_batch else None,
                "qps": round(res.questions_per_second, 3),
                "steady_qps": round(steady, 3) if steady else None,
                "steady_qps_per_worker": round(steady / workers, 3) if steady else None,
                "output": str(target),
            }
        )
        print(f"[batch] {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
    return rows


def equality(rows: list[dict]) -> dict:
    """Every output against the first: same ids, same passage order, records within 1e-5."""
    ref = records(Path(rows[0]["output"]))
    out = {"reference": rows[0]["name"], "compared": []}
    for row in rows[1:]:
        other = records(Path(row["output"]))
        same_ids = other.keys() == ref.keys()
        order = same_ids and all(other[k]["passage_order"] == ref[k]["passage_order"] for k in ref)
        exact = same_ids and all(other[k] == ref[k] for k in ref)
        near = same_ids and all(close(other[k], ref[k]) for k in ref)
        out["compared"].append(
            {"name": row["name"], "same_order": order, "exact": exact, "within_1e-5": near}
        )
    out["all_equal"] = all(c["same_order"] and c["within_1e-5"] for c in out["compared"])
    return out


def markdown(result: dict) -> str:
    lines = [
        f"Batch reranking, {result['questions']} SciFact dev questions "
        f"({result['passages_mean']:.0f} passages each), LoG on CPU, "
        f"{result['threads']} torch threads in all, {result['cpus']} CPUs shared with other jobs "
        f"(load average {result['load_average_1min_end']} at the end; {result['date']}).",
        "",
        "| engine | workers | threads/worker | batch size | seconds | first batch s | q/s "
        "| steady q/s | steady q/s per worker |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        r = dict(r)
        after = r["questions"] - (r["batch_size"] if r["first_batch_s"] is not None else 0)
        if r["engine"] == "ray" and after < 2 * r["workers"] * r["batch_size"]:
            r["steady_qps"] = r["steady_qps_per_worker"] = "n/a"  # batches ended together
        lines.append(
            f"| {r['engine']} | {r['workers']} | {r['threads_per_worker']} | {r['batch_size']} "
            f"| {r['seconds']:.1f} | {r['first_batch_s']} | {r['qps']:.3f} "
            f"| {r['steady_qps']} | {r['steady_qps_per_worker']} |"
        )
    st = result["stages"]
    lines += [
        "",
        "steady q/s: after the first written batch; n/a where Ray finished its few batches "
        "together (fewer than two per actor after the first), so no rate can be read.",
        "",
        "LoG stages, median s per question: " + ", ".join(f"{k} {v:.3f}" for k, v in st.items()),
        "",
        f"Equal rankings across configurations: {result['equality']['all_equal']} "
        f"(reference {result['equality']['reference']}; "
        + ", ".join(
            f"{c['name']}: order {c['same_order']}, exact {c['exact']}"
            for c in result["equality"]["compared"]
        )
        + ")",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=30, help="SciFact dev claims")
    p.add_argument("--passages", type=int, default=50, help="best BM25 candidates kept (<= 50)")
    p.add_argument("--engines", nargs="+", default=["local", "ray"], choices=("local", "ray"))
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="Ray actors")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 8])
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads in all")
    p.add_argument("--stage-questions", type=int, default=5)
    p.add_argument("--checkpoint", help="LoG checkpoint (default: bundled)")
    p.add_argument("--device", default="cpu", help="cpu, or auto / cuda")
    p.add_argument("--gpus-per-worker", type=float, help="GPUs per Ray actor (default: 1 if any)")
    p.add_argument("--data-root", help="data folder (default: ../shared/data)")
    p.add_argument("--out", default="runs/bench/batch")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    inp = out / "input.jsonl"
    facts = write_input(inp, args.questions, args.data_root, args.passages)
    stages = stage_split(inp, args.stage_questions, args.checkpoint, args.threads)
    runs = run_configs(args, inp, out)
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "load_average_1min_end": round(os.getloadavg()[0], 2),
        "threads": args.threads,
        "questions": facts["questions"],
        "passages_mean": facts["passages_mean"],
        "stages": stages,
        "runs": runs,
        "equality": equality(runs),
    }
    (out / "results.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    (out / "results.md").write_text(markdown(result), encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
