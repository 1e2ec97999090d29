"""Scaling benchmark: time and peak memory of LoG and the cross-encoder against input size.

Usage::

    python bench/scaling.py --out runs/bench/scaling --figure bench/scaling.png
    python bench/scaling.py --passages 10,25 --sentences 2,5 --repeats 1 --warmup 0   # smoke

Two sweeps:

* **passages**: ``--passages`` (default 10, 25, 50, 100, 200) passages per query, real SciFact
  abstracts (a dev claim's BM25 pool, continued with the next claims' pools past 50) or, with
  ``--source synthetic`` / without the data, 8-sentence passages built from the built-in
  examples;
* **passage length**: ``--length-passages`` (default 50) passages of ``--sentences`` (default
  2, 5, 10, 20) sentences each, drawn from the same sentence bank.

Every (point, ranker) runs in a **fresh subprocess**, so the process peak (``ru_maxrss`` /
``VmHWM``) is that size's own: the process loads the model (timed), runs ``--warmup`` untimed
inputs and ``--repeats`` timed ones of that size (distinct queries/passages, nothing memoised),
and reports the median seconds (LoG end to end and per stage: segment, tokenize, local, graph,
global, context; cross-encoder end to end), the RSS after loading, the peak during inference and
their difference (``inference MB``: what the input costs on top of the loaded model; bounded by
the batch size, ``local.batch_tokens`` / the cross-encoder's ``batch_size``, when memory does
not grow with the input).

Linearity: a least-squares line ``seconds = a + b * size`` per ranker and sweep, with R², and
the seconds per passage / per sentence at each size. Writes ``results.json``, ``results.md``
and the inputs into ``--out``, a PNG figure (plotly + kaleido; an HTML figure when no PNG
can be written) to ``--figure`` (default ``<out>/scaling.png``), and prints the markdown.
The fits, the table and the figure are in ``bench/scaling_report.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from peak_memory import Memory  # siblings in bench/ (the script's folder is on sys.path)
from scaling_report import RANKERS, analyse, figure, markdown
from speed_inputs import example_sentences, scifact_pools, synthetic_passages
from speed_report import summary
from speed_runs import load_models, run_ce, run_log

ROOT = Path(__file__).resolve().parent.parent
LOG_STAGES = ("segment", "tokenize", "local", "graph", "global", "context")


def _ints(text: str) -> list[int]:
    try:
        vals = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from exc
    if any(v < 1 for v in vals):
        raise argparse.ArgumentTypeError("sizes must be >= 1")
    return vals


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passages", type=_ints, default=[10, 25, 50, 100, 200])
    ap.add_argument(
        "--sentences",
        type=_ints,
        default=[2, 5, 10, 20],
        help="sentences per passage for the length sweep (empty: skip it)",
    )
    ap.add_argument("--length-passages", type=int, default=50, help="passages in the length sweep")
    ap.add_argument("--repeats", type=int, default=3, help="timed inputs per size (median)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed inputs per size first")
    ap.add_argument("--rankers", default="log,ce", help="log, ce or both")
    ap.add_argument("--source", default="auto", choices=["auto", "scifact", "synthetic"])
    ap.add_argument("--data-root", default=None)
    ap.add_argument("--checkpoint", default=None)
    ap.add_argument("--cross-encoder", default=None)
    ap.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"])
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--quantize", default="none", choices=["none", "int8"])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--worker-timeout", type=float, default=3600.0, help="seconds per subprocess")
    ap.add_argument("--out", default="runs/bench/scaling")
    ap.add_argument(
        "--figure", default=None, help="PNG (or .html) path (default <out>/scaling.png)"
    )
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)  # internal: a spec file
    return ap


# --------------------------------------------------------------------------------------
# Inputs


def _scifact(n_pools: int, data_root: str | None) -> list[tuple[str, list[dict[str, str]]]]:
    return scifact_pools(n_pools, 50, data_root)


def sentence_bank(pools: list[tuple[str, list[dict[str, str]]]]) -> list[str]:
    """Every sentence of the pools' distinct passages, in order."""
    from logrerank.text.segment import split_sentences

    seen, bank = set(), []
    for _, passages in pools:
        for p in passages:
            key = (p["title"], p["text"])
            if key in seen:
                continue
            seen.add(key)
            bank += [s.text.strip() for s in split_sentences(p["text"]) if s.text.strip()]
    return bank


def build_inputs(args: argparse.Namespace) -> tuple[str, list[dict[str, Any]]]:
    """The sweep points, each with ``warmup + repeats`` distinct ``(query, passages)`` inputs.

    Returns:
        ``(source used, points)``; a point is ``{"sweep", "passages", "sentences", "inputs"}``
        (``sentences`` None = natural abstracts).
    """
    n_inputs = args.warmup + args.repeats
    source = args.source
    pools = None
    if source in ("auto", "scifact"):
        from logrerank.types import InputError

        need = n_inputs + (max(args.passages) + 49) // 50 + 4
        try:
            pools = _scifact(need, args.data_root)
            source = "scifact"
        except InputError:
            if source == "scifact":
                raise
            source = "synthetic"
    if pools is not None:
        queries = [q for q, _ in pools]
        bank = sentence_bank(pools)
    else:
        bank, qs = example_sentences()
        queries = [f"{qs[i % len(qs)]} (variant {i + 1})" for i in range(n_inputs)]

    points = []
    for P in args.passages:
        inputs = []
        for r in range(n_inputs):
            if pools is not None:
                seen, passages = set(), []
                for _, cands in pools[r:]:
                    for c in cands:
                        key = (c["title"], c["text"])
                        if key not in seen:
                            seen.add(key)
                            passages.append(c)
                passages = passages[:P]
            else:
                passages = synthetic_passages(bank, P, 8, offset=r)
            inputs.append((queries[r], passages))
        points.append({"sweep": "passages", "passages": P, "sentences": None, "inputs": inputs})
    for S in args.sentences:
        P = args.length_passages
        inputs = [
            (queries[r], synthetic_passages(bank, P, S, offset=r * 13)) for r in range(n_inputs)
        ]
        points.append({"sweep": "length", "passages": P, "sentences": S, "inputs": inputs})
    return source, points


# --------------------------------------------------------------------------------------
# Worker (one fresh process per point and ranker)


def _median(xs: list[float]) -> float:
    return summary(xs)["p50"]


def worker(spec_path: str) -> dict[str, Any]:
    """Load one model, run the point's inputs, report timings and memory (fresh process)."""
    t_start = time.perf_counter()
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    import torch

    if spec["threads"]:
        torch.set_num_threads(spec["threads"])
    from logrerank.local.backbone import pick_device

    mem = Memory(cuda=pick_device(spec["device"]).type == "cuda")
    ranker = spec["ranker"]
    models = load_models(
        spec["checkpoint"],
        spec["cross_encoder"],
        spec["device"],
        spec["precision"],
        spec["quantize"],
        mem,
        which=(ranker,),
    )
    rss_loaded = mem.rss_mb()
    inputs = [(q, p) for q, p in spec["inputs"]]
    warm, rows = inputs[: spec["warmup"]], inputs[spec["warmup"] :]
    if ranker == "log":
        from logrerank.inputs.limits import Limits

        model = models["log"]
        model.limits = Limits(
            max_passages=10**6, max_chars_per_passage=10**8, max_total_chars=10**9
        )

        def one(q: str, p: list[Any], i: int) -> dict[str, Any]:
            return run_log(model, q, p, i)

        precision = str(model.autocast_dtype or torch.float32)
    else:
        from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker

        ce_ranker = CrossEncoderRanker(models["ce"], level="passage")

        def one(q: str, p: list[Any], i: int) -> dict[str, Any]:
            return run_ce(ce_ranker, q, p)

        precision = str(models["ce"].autocast or torch.float32)
    for i, (q, p) in enumerate(warm):
        with mem.phase("warmup"):
            one(q, p, i)
    timed = []
    for i, (q, p) in enumerate(rows, len(warm)):
        with mem.phase("run"):
            timed.append(one(q, p, i))
    report = mem.report()
    infer_peak = max(v["peak_mb"] for k, v in report["phases"].items() if k in ("warmup", "run"))
    keys = [k for k in timed[0] if isinstance(timed[0][k], (int, float))]
    out = {
        "ranker": ranker,
        "precision": precision.replace("torch.", ""),
        "threads": torch.get_num_threads(),
        "load_s": models["load_s"],
        "median": {k: _median([float(r[k]) for r in timed]) for k in keys},
        "e2e_all": [r["e2e"] for r in timed],
        "rss_after_load_mb": round(rss_loaded, 1),
        "inference_peak_mb": round(infer_peak, 1),
        "inference_mb": round(infer_peak - rss_loaded, 1),
        "process_peak_rss_mb": report["process_peak_rss_mb"],
        "peak_reset_per_phase": report["peak_reset_per_phase"],
        "gpu_peak_alloc_mb": max(
            (v.get("gpu_peak_alloc_mb", 0.0) for v in report["phases"].values()), default=0.0
        ),
        "warnings": sorted({w for r in timed for w in r.get("warnings", [])}),
        "worker_s": time.perf_counter() - t_start,
    }
    return out


def run_point(spec: dict[str, Any], spec_path: Path, timeout: float) -> dict[str, Any]:
    """Run :func:`worker` for ``spec`` in a fresh Python process; its JSON result."""
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(spec_path)]
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr or proc.stdout)[-2000:]
        raise RuntimeError(f"worker for {spec_path.name} failed (rc {proc.returncode}):\n{tail}")
    return json.loads(lines[-1])


def run(args: argparse.Namespace) -> dict[str, Any]:
    from logrerank.types import InputError

    if args.repeats < 1 or args.warmup < 0:
        raise InputError("--repeats must be >= 1 and --warmup >= 0")
    rankers = [r.strip() for r in args.rankers.split(",") if r.strip()]
    if not rankers or set(rankers) - set(RANKERS):
        raise InputError(f"--rankers takes {', '.join(RANKERS)}")
    out = Path(args.out)
    (out / "inputs").mkdir(parents=True, exist_ok=True)
    source, points = build_inputs(args)
    results, warnings = [], set()
    t0 = time.perf_counter()
    total = len(points) * len(rankers)
    done = 0
    for pt in points:
        tag = f"{pt['sweep']}-p{pt['passages']}-s{pt['sentences'] or 'nat'}"
        n_sent = None
        for ranker in rankers:
            spec = {
                "ranker": ranker,
                "inputs": pt["inputs"],
                "warmup": args.warmup,
                "checkpoint": args.checkpoint,
                "cross_encoder": args.cross_encoder,
                "precision": args.precision,
                "threads": args.threads,
                "quantize": args.quantize,
                "device": args.device,
            }
            r = run_point(spec, out / "inputs" / f"{tag}-{ranker}.json", args.worker_timeout)
            done += 1
            if ranker == "log":
                n_sent = r["median"].get("sentences")
            r.update(
                sweep=pt["sweep"],
                passages=pt["passages"],
                sentences=pt["sentences"],
                sentences_total=n_sent,  # None for a CE-only run
            )
            warnings.update(r.pop("warnings", []))
            results.append(r)
            print(
                f"[{done}/{total}] {tag} {ranker}: {r['median']['e2e']:.3f} s/query, "
                f"peak {r['process_peak_rss_mb']:.0f} MB, inference {r['inference_mb']:.0f} MB "
                f"({time.perf_counter() - t0:.0f} s elapsed)",
                flush=True,
            )
        for r in results:  # the CE rows of this point get LoG's sentence count
            same = (r["sweep"], r["passages"], r["sentences"]) == (
                pt["sweep"],
                pt["passages"],
                pt["sentences"],
            )
            if same and r["sentences_total"] is None:
                r["sentences_total"] = n_sent
    import torch

    from logrerank.local.backbone import pick_device

    res = {
        "meta": {
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "source": source,
            "repeats": args.repeats,
            "warmup": args.warmup,
            "length_passages": args.length_passages,
            "device": str(pick_device(args.device)),
            "precision": args.precision,
            "quantize": args.quantize,
            "threads": args.threads or torch.get_num_threads(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "wall_s": time.perf_counter() - t0,
        },
        "results": results,
        "fits": analyse(results),
        "warnings": sorted(warnings),
    }
    md = markdown(res)
    (out / "results.json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    (out / "results.md").write_text(md + "\n", encoding="utf-8")
    fig_path = figure(res, Path(args.figure) if args.figure else out / "scaling.png")
    print(md)
    print(
        f"\nwrote {out / 'results.json'}, {out / 'results.md'}"
        + (f", {fig_path}" if fig_path else "")
    )
    res["figure"] = str(fig_path) if fig_path else None
    return res


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker)))
        return 0
    from logrerank.types import InputError

    try:
        run(args)
    except InputError as exc:
        print(f"scaling.py: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
