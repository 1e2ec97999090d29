"""Speed benchmark: LoG end to end and per stage vs the passage-level cross-encoder and BM25.

Usage, from the root of a repository checkout (``bench/`` is not installed with the package;
``logrerank bench ARGS`` runs this script with the same arguments from there)::

    python bench/speed.py --queries 50 --warmup 2 --out runs/bench/speed
    logrerank bench --queries 50 --warmup 2 --out runs/bench/speed        # same thing
    logrerank bench --queries 50 --quantize int8 --out runs/bench/speed-int8
    logrerank bench --queries 20 --runtime torch,onnx,onnx-int8 --out runs/bench/speed-rt
    logrerank bench --queries 50 --device cuda --out runs/bench/speed-cuda

On ``--queries`` SciFact dev 50-candidate pools (``logrerank.data``; ``--source synthetic``
needs no data), in one process, interleaved per query (the order of the four rankers rotates
from query to query so none of them always runs first):

* **LoG** ``encode`` + ``rank_encoded`` (= ``rerank``), timed end to end and per stage
  (segment, tokenize, local, graph, global = GAT, context, and ``overhead`` = the rest:
  input validation, result assembly);
* **knob change**: ``rank_encoded`` on the cached ``Encoded`` with another ``tau_sim`` (what
  the app re-runs when a slider moves);
* **cross-encoder** at passage level (``CrossEncoderRanker``, same MiniLM backbone) on the same
  passages (title + the first 1,000 characters). The bundled model is prior-anchored: a call
  runs its pair pass and a bi-encoder pass over the same texts (its prior), timed separately as
  ``.prior``, and the ratios are also given against the pair pass alone. Neither it nor LoG memoises scores, every
  measured query is a pool not seen before in the process, and a memo (the app's
  ``MemoCrossEncoder._memo``) is cleared before each call;
* **cross-encoder-full**: the same model reading title + the whole passage in windows of its
  ``max_length`` (best window; :mod:`logrerank.models.pair_windows`), so LoG / cross-encoder-full
  compares like with like (both read every token of every passage);
* **BM25** over the same passages (bm25s).

``--warmup`` further pools run every ranker once untimed first (the first call pays one-off
costs: pysbd, kernels, allocator). Reported: p50 / p95 / mean seconds per query for each ranker
and stage, the ratios LoG / cross-encoder (p50 and mean), the share of graph + GAT + context in
LoG's time, the model load times (LoG, cross-encoder: what the app pays at start-up), and
memory: the process peak resident set (``ru_maxrss`` / ``VmHWM``) and per phase the peak and
``VmRSS`` after it (the peak is reset before every phase through ``/proc/self/clear_refs`` where
Linux allows it; the process peak is tracked across resets). On CUDA also the peak allocated
GPU memory per phase. The speed targets (bench/README.md) are checked and printed as pass / FAIL.

Writes ``results.json`` (everything, per-query rows included) and ``results.md`` into ``--out``
and prints the markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from peak_memory import Memory
from speed_inputs import scifact_pools, synthetic_pools
from speed_report import analyse, check_targets, markdown, summary
from speed_runs import load_models, run_bm25, run_ce, run_log


def add_speed_arguments(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Declare the benchmark's options on ``ap``."""
    ap.add_argument("--queries", type=int, default=20, help="timed pools (default 20)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed pools first (default 2)")
    ap.add_argument("--checkpoint", default=None, help="LoG checkpoint (default: bundled)")
    ap.add_argument("--cross-encoder", default=None, help="cross-encoder folder (default: bundled)")
    ap.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"])
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    ap.add_argument(
        "--quantize",
        default="none",
        choices=["none", "int8"],
        help="int8: dynamic int8 Linear layers in LoG's encoder and the cross-encoder (CPU)",
    )
    ap.add_argument(
        "--runtime",
        default="torch",
        help="transformer runtime of LoG and the cross-encoder: torch, onnx, onnx-int8 "
        "(logrerank.runtime), or a comma list (torch,onnx,onnx-int8): each runtime's models run "
        "interleaved on the same pools, the first one gives the main tables",
    )
    ap.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, ...")
    ap.add_argument(
        "--segment-cache",
        default="on",
        choices=["on", "off"],
        help="on (default): LoG's frozen isolated layers once per segment, packed over the whole "
        "call; off: window batch by window batch (LoGReranker.segment_cache)",
    )
    ap.add_argument(
        "--pack-length",
        type=int,
        default=None,
        help="LoG's LocalConfig.pack_length: frozen layers on packed rows of N tokens "
        "(0 = window layout; default: the checkpoint's)",
    )
    ap.add_argument(
        "--passage-cache",
        default="off",
        choices=["off", "pool"],
        help="pool: each pool's passages are put in LoG's cross-call passage cache first, "
        "untimed (an indexed corpus: LoGReranker.cache_passages), then the question is timed",
    )
    ap.add_argument(
        "--source",
        default="scifact",
        choices=["scifact", "synthetic"],
        help="SciFact dev pools (needs ../shared/data) or synthetic passages (no data)",
    )
    ap.add_argument("--passages", type=int, default=50, help="passages per query (default 50)")
    ap.add_argument("--data-root", default=None, help="data folder (default ../shared/data)")
    ap.add_argument("--out", default="runs/bench/speed", help="folder for results.json / .md")
    return ap


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    """A stand-alone parser with the benchmark's options (``prog``: the name in its messages)."""
    return add_speed_arguments(
        argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    )


def measure(
    pools: list[tuple[str, list[Any]]],
    log_model: Any,
    ce: Any,
    warmup: int = 1,
    mem: Memory | None = None,
    prefill: bool = False,
    others: dict[str, tuple[Any, Any]] | None = None,
) -> dict[str, Any]:
    """Run the interleaved benchmark on ``pools`` (the first ``warmup`` untimed).

    Args:
        pools: ``(query, passages)`` inputs, all distinct.
        log_model: a :class:`~logrerank.pipeline.LoGReranker`.
        ce: a loaded :class:`~logrerank.models.cross_encoder.CrossEncoder`.
        warmup: leading pools run once per ranker, untimed.
        mem: memory tracker (a new one when None).
        prefill: put each pool's passages in LoG's passage cache before timing it.
        others: ``{runtime: (log_model, ce)}`` further models, timed in the same rotation as
            ``log@<runtime>`` and ``ce@<runtime>``.

    Returns:
        ``{"rows": {"log": [...], "ce": [...], "ce_full": [...], "bm25": [...]},
        "warmup_s": {...}, "memory"}``.
    """
    from logrerank.baselines.bm25_ranker import BM25Reranker
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker

    mem = mem or Memory()
    ce_ranker = CrossEncoderRanker(ce, level="passage")
    ce_full = CrossEncoderRanker(ce, level="full")
    bm25 = BM25Reranker("passage")
    runners = {
        "log": lambda q, p, i: run_log(log_model, q, p, i, prefill),
        "ce": lambda q, p, i: run_ce(ce_ranker, q, p),
        "ce_full": lambda q, p, i: run_ce(ce_full, q, p),
        "bm25": lambda q, p, i: run_bm25(bm25, q, p),
    }
    for rt, (other_log, other_ce) in (others or {}).items():
        other_ranker = CrossEncoderRanker(other_ce, level="passage")
        runners[f"log@{rt}"] = lambda q, p, i, m=other_log: run_log(m, q, p, i, prefill)
        runners[f"ce@{rt}"] = lambda q, p, i, r=other_ranker: run_ce(r, q, p)
    names = list(runners)
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in names}
    warm: dict[str, list[float]] = {k: [] for k in names}
    for i, (query, passages) in enumerate(pools):
        timed = i >= warmup
        order = names[i % len(names) :] + names[: i % len(names)]  # rotate: no fixed first
        for name in order:
            with mem.phase(name if timed else "warmup"):
                row = runners[name](query, passages, i)
            if timed:
                rows[name].append(row)
            else:
                warm[name].append(row["e2e"])
    return {"rows": rows, "warmup_s": warm, "memory": mem}


def run(args: argparse.Namespace) -> int:
    """Run the benchmark as configured by ``args`` (see :func:`add_speed_arguments`)."""
    import torch

    from logrerank.types import InputError

    if args.queries < 1 or args.warmup < 0 or args.passages < 1:
        raise InputError("--queries and --passages must be >= 1, --warmup >= 0")
    if args.threads:
        torch.set_num_threads(args.threads)
    n = args.queries + args.warmup
    t0 = time.perf_counter()
    if args.source == "scifact":
        pools = scifact_pools(n, args.passages, args.data_root)
    else:
        pools = synthetic_pools(n, args.passages)
    if len(pools) < n:
        raise InputError(f"only {len(pools)} pools available, {n} asked for")
    data_s = time.perf_counter() - t0

    from logrerank.local.backbone import pick_device

    runtimes = parse_runtimes(args.runtime, args.quantize)
    mem = Memory(cuda=pick_device(args.device).type == "cuda")
    loaded = {}
    for rt in runtimes:
        loaded[rt] = load_models(
            args.checkpoint,
            args.cross_encoder,
            args.device,
            args.precision,
            args.quantize,
            mem,
            runtime=rt,
        )
        _configure(loaded[rt]["log"], args)
    models = loaded[runtimes[0]]
    log_model, ce = models["log"], models["ce"]
    others = {rt: (m["log"], m["ce"]) for rt, m in loaded.items() if rt != runtimes[0]}
    from logrerank.local.memory import freeze_startup_objects

    frozen = freeze_startup_objects()  # as the app does after start-up: no full-GC pauses
    prefill = args.passage_cache == "pool"
    if prefill:
        log_model.passage_cache_mb = 256.0
    if prefill:
        for other_log, _ in others.values():
            other_log.passage_cache_mb = 256.0
    out = measure(pools, log_model, ce, args.warmup, mem, prefill, others)
    a = analyse(out["rows"])
    by_runtime = compare_runtimes(out["rows"], loaded, runtimes)
    memory = mem.report()
    warnings = sorted({w for r in out["rows"]["log"] for w in r["warnings"]})
    if not log_model.config.trained:
        warnings.append(f"LoG model: {log_model.source} (speed is unaffected)")
    if not ce.trained:
        warnings.append(f"cross-encoder: {ce.source}")
    res = {
        "meta": {
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "queries": args.queries,
            "warmup": args.warmup,
            "source": args.source,
            "device": str(log_model.device_),
            "precision": str(log_model.autocast_dtype or torch.float32).replace("torch.", ""),
            "ce_precision": str(ce.autocast or torch.float32).replace("torch.", ""),
            "quantize": args.quantize,
            "runtime": args.runtime,
            "log_runtime_in_use": log_model.runtime_in_use,
            "ce_runtime_in_use": ce.runtime,
            "segment_cache": args.segment_cache,
            "pack_length": log_model.config.local.pack_length,
            "passage_cache": args.passage_cache,
            "gc_frozen_objects": frozen,
            "threads": torch.get_num_threads(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "log_model": log_model.source,
            "cross_encoder": ce.source,
            "data_load_s": data_s,
            "batch_tokens": log_model.config.local.batch_tokens,
            "ce_batch_size": ce.batch_size,
        },
        "load_s": models["load_s"],
        "quantize": models["quantize"],
        "warmup_s": out["warmup_s"],
        "analysis": a,
        "runtimes": by_runtime,
        "memory": memory,
        "targets": check_targets(a, memory["process_peak_rss_mb"]),
        "rows": out["rows"],
        "warnings": warnings,
    }
    md = markdown(res)
    dest = Path(args.out)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "results.json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    (dest / "results.md").write_text(md + "\n", encoding="utf-8")
    print(md)
    print(f"\nwrote {dest / 'results.json'} and {dest / 'results.md'}")
    return 0


def parse_runtimes(spec: str, quantize: str = "none") -> list[str]:
    """The runtimes of ``--runtime`` (one or a comma list; the first gives the main tables).

    Raises:
        InputError: an unknown or repeated runtime, or an ONNX runtime with ``--quantize int8``.
    """
    from logrerank.runtime import RUNTIMES
    from logrerank.types import InputError

    names = [s.strip() for s in spec.split(",") if s.strip()]
    bad = [n for n in names if n not in RUNTIMES]
    if not names or bad or len(set(names)) < len(names):
        raise InputError(
            f"--runtime takes distinct names among {', '.join(RUNTIMES)}; got {spec!r}"
        )
    if quantize != "none" and any(n != "torch" for n in names):
        raise InputError("--quantize int8 is torch's int8; use --runtime onnx-int8 instead")
    return names


def _configure(log_model: Any, args: argparse.Namespace) -> None:
    """Apply ``--segment-cache`` and ``--pack-length`` to a loaded LoG model."""
    from logrerank.types import InputError

    log_model.segment_cache = args.segment_cache == "on"
    if args.pack_length is not None:
        if args.pack_length < 0:
            raise InputError("--pack-length must be >= 0")
        log_model.config.local.pack_length = args.pack_length


def compare_runtimes(
    rows: dict[str, list[dict[str, Any]]], loaded: dict[str, dict[str, Any]], runtimes: list[str]
) -> dict[str, dict[str, Any]]:
    """Per runtime: p50 seconds of LoG (end to end, local stage), the cross-encoder, their
    ratio, the runtime each model actually ran on and its load seconds."""
    out = {}
    for i, rt in enumerate(runtimes):
        log_rows = rows["log"] if i == 0 else rows[f"log@{rt}"]
        ce_rows = rows["ce"] if i == 0 else rows[f"ce@{rt}"]
        log_p50 = summary([r["e2e"] for r in log_rows])["p50"]
        ce_p50 = summary([r["e2e"] for r in ce_rows])["p50"]
        out[rt] = {
            "log_p50": log_p50,
            "log_local_p50": summary([r["local"] for r in log_rows])["p50"],
            "ce_p50": ce_p50,
            "log_over_ce_p50": log_p50 / ce_p50 if ce_p50 else float("nan"),
            "log_in_use": loaded[rt]["log"].runtime_in_use,
            "ce_in_use": loaded[rt]["ce"].runtime,
            "load_s": loaded[rt]["load_s"],
        }
    return out


def main(argv: list[str] | None = None, prog: str = "speed.py") -> int:
    """Entry point of ``bench/speed.py`` and ``logrerank bench``: parse ``argv``, run, one-line
    errors (exit 2)."""
    args = build_parser(prog).parse_args(argv)
    from logrerank.types import InputError

    try:
        return run(args)
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
