"""Command line: ``logrerank rerank | eval | train | app | bench``.

Errors in the user's input print a one-line message and exit with status 2; nothing crashes
with a traceback on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from .types import InputError, Ranking


def format_ranking(ranking: Ranking, top: int = 10, width: int = 100) -> str:
    """A readable text view: model status, top sentences, passage order, timings, warnings."""
    lines = [f"ranker: {ranking.ranker}   model: {ranking.info.get('model', '?')}"]
    if ranking.intent_probs:
        intent = ", ".join(f"{r} {p:.2f}" for r, p in zip(("bg", "mt", "rs"), ranking.intent_probs))
        lines.append(f"query intent: {intent}")
    lines.append(f"\nTop {min(top, len(ranking.sentences))} sentences:")
    for s in ranking.sentences[:top]:
        g = f"{s.global_score:.3f}" if s.global_score is not None else "  -  "
        head = f"{s.rank:>3}. [p{s.passage_idx + 1}.s{s.sent_idx + 1} {s.role or '?':<10}] "
        head += f"local {s.local_score:.3f} global {g}  "
        body = textwrap.shorten(s.text.replace("\n", " "), width=max(20, width - len(head)))
        lines.append(head + body)
    order = ", ".join(str(p.passage_idx + 1) for p in ranking.passages_ranked)
    lines.append(f"\nPassage order (by best sentence): {order}")
    if ranking.timings:
        lines.append("timings: " + ", ".join(f"{k} {v:.3f}s" for k, v in ranking.timings.items()))
    for w in ranking.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def _cmd_rerank(args: argparse.Namespace) -> int:
    from .io import prepare_input, read_passages_file
    from .pipeline import LoGReranker

    limits = _limits_from_args(args)
    question, passages = read_passages_file(args.passages, max_bytes=limits.max_upload_bytes)
    query = args.query or question
    if not query:
        raise InputError("no question: pass --query (or a {'question', 'ctxs'} JSON file)")
    prepare_input(query, passages, limits)  # bad input fails before the model loads
    model = LoGReranker.from_pretrained(args.checkpoint, device=args.device)
    model.limits = limits
    switches = {}
    if args.local_only:
        switches["use_global"] = False
    if args.no_cross:
        switches["cross_passage"] = False
    if args.untyped:
        switches["typed"] = False
    ranking = model.rerank(query, passages, **switches)
    print(format_ranking(ranking, top=args.top))
    if args.out:
        Path(args.out).write_text(json.dumps(ranking.to_dict(), indent=1), encoding="utf-8")
        print(f"\nwrote {args.out}")
    return 0


LIMIT_FLAGS = {
    "max_passages": "--max-passages",
    "max_chars_per_passage": "--max-chars-per-passage",
    "max_total_chars": "--max-total-chars",
    "max_question_chars": "--max-question-chars",
    "max_upload_bytes": "--max-file-bytes",
}
"""Limits fields -> ``rerank`` flags (see :class:`logrerank.limits.Limits`)."""


def _limits_from_args(args: argparse.Namespace):
    """The :class:`~logrerank.limits.Limits` given by the ``--max-*`` flags (defaults otherwise).

    Raises:
        InputError: a flag that is not a positive integer (named in the message).
    """
    from .limits import DEFAULT_LIMITS, Limits

    values = {}
    for field, flag in LIMIT_FLAGS.items():
        v = getattr(args, field, None)
        if v is None:
            continue
        if v < 1:
            raise InputError(f"{flag} must be a positive integer, got {v}")
        values[field] = v
    strict = bool(getattr(args, "strict_limits", False))
    return Limits(**values, strict=strict) if values or strict else DEFAULT_LIMITS


def _load_eval_examples(args: argparse.Namespace):
    """Examples + stats from --benchmark or explicit files."""
    from .data import pools, readers

    if args.claims or args.corpus:
        if not (args.claims and args.corpus):
            raise InputError("--claims and --corpus go together (SciFact format)")
        name = args.benchmark or "scifact"
        reader = readers.read_citation_integrity if name == "citint" else readers.read_scifact
        queries, corpus = reader(args.claims, args.corpus)
        if args.limit:
            queries = queries[: args.limit]
        examples, stats = pools.build_or_load_pools(name, queries, corpus)
        return name, examples, {"claims": args.claims, "corpus": args.corpus, **stats}
    if args.file:
        name = args.benchmark or "hotpotqa"
        if name not in ("hotpotqa", "musique"):
            raise InputError(
                "--file takes HotpotQA or MuSiQue format: --benchmark hotpotqa|musique"
            )
        read = readers.read_hotpotqa if name == "hotpotqa" else readers.read_musique
        examples = read(args.file)[: args.limit or None]
        return name, examples, {"file": args.file, "n_examples": len(examples)}
    if not args.benchmark:
        raise InputError("pass --benchmark NAME, or --claims/--corpus, or --file")
    try:
        examples, stats = pools.load_benchmark(
            args.benchmark, data_root=args.data_root, split=args.split, limit=args.limit
        )
    except (ValueError, FileNotFoundError) as exc:
        raise InputError(str(exc)) from exc
    return stats.get("benchmark", args.benchmark), examples, stats


def _cmd_eval(args: argparse.Namespace) -> int:
    import time

    from .evaluation.evaluate import MULTI_HOP, write_results
    from .rankers import Models, build_rankers

    name, examples, stats = _load_eval_examples(args)
    if not examples:
        raise InputError("no queries to evaluate")
    names = [n.strip() for n in args.rankers.split(",") if n.strip()]
    # One memo for the cross-encoder rankers: each (query, text) pair is scored once per run
    # (their sec_per_query then reflects memo hits; bench/speed.py times them without one).
    models = Models(
        args.checkpoint, args.cross_encoder, device=args.device, memo_cross_encoder=True
    )
    quantized = {}
    if getattr(args, "quantize", "none") == "int8":
        from .quantize import quantize_cross_encoder, quantize_log_reranker

        if any(n.startswith("log") for n in names):
            quantized["log"] = quantize_log_reranker(models.log)
        if any(n.startswith(("cross-encoder", "ce-", "evidence-graph-ce")) for n in names):
            quantized["cross_encoder"] = quantize_cross_encoder(models.cross_encoder)
    passage_cache_mb = float(getattr(args, "passage_cache_mb", 0.0) or 0.0)
    if passage_cache_mb < 0:
        raise InputError("--passage-cache-mb must be >= 0")
    if passage_cache_mb and any(n.startswith("log") for n in names):
        models.log.passage_cache_mb = passage_cache_mb
    rankers = build_rankers(names, models)
    coverage = (2, 3, 5) if name in MULTI_HOP else ()
    from .evaluation.evaluate import evaluate, results_markdown

    t0 = time.perf_counter()
    result = evaluate(examples, rankers, k=args.k, coverage_ks=coverage, progress=not args.quiet)
    meta = {
        "benchmark": name,
        "queries": len(examples),
        "k": args.k,
        "rankers": names,
        "command": "logrerank " + " ".join(sys.argv[1:]),
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "cross_encoder_memo": True,
        "quantize": getattr(args, "quantize", "none"),
        "quantized": quantized,
        "passage_cache_mb": passage_cache_mb,
        "pool_stats": {k: v for k, v in stats.items() if not isinstance(v, (list, dict))},
    }
    print(results_markdown(result, args.k, coverage))
    for rname, ws in result["warnings"].items():
        for w in ws:
            print(f"warning ({rname}): {w}")
    if args.out:
        j, m = write_results(args.out, result, meta, args.k, coverage)
        print(f"wrote {j} and {m}")
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    import json as _json

    if not Path(args.config).is_file():
        raise InputError(f"config file {args.config} not found")
    if args.task in ("local", "global"):
        from .training.stages import TrainConfig, train_global, train_local

        cfg = TrainConfig.load(args.config)
        for item in args.set or []:
            key, sep, raw = item.partition("=")
            if not sep or not hasattr(cfg, key):
                raise InputError(
                    f"--set {item!r}: expected FIELD=VALUE with a training config field"
                )
            try:
                value = _json.loads(raw)
            except _json.JSONDecodeError:
                value = raw  # a bare string, e.g. a path
            setattr(cfg, key, value)
        if cfg.stage != args.task:
            raise InputError(f"{args.config} is a {cfg.stage!r} config, not {args.task!r}")
        summary = train_local(cfg) if args.task == "local" else train_global(cfg)
    elif args.task == "roles":
        from .models.role_tagger import train_roles

        summary = train_roles(args.config)
    else:
        from .training.cross_encoder import train_crossencoder

        summary = train_crossencoder(args.config)
    print(_json.dumps(summary, indent=1, default=str))
    return 0


def _cmd_app(args: argparse.Namespace) -> int:
    import runpy

    app_path = Path(__file__).resolve().parents[1] / "app.py"
    if not app_path.exists():
        raise InputError(f"app.py not found next to the package ({app_path})")
    sys.argv = [str(app_path), "--port", str(args.port)]
    runpy.run_path(str(app_path), run_name="__main__")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    """Run ``bench/speed.py`` (a source checkout's benchmark script) with these options."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "bench" / "speed.py"
    if not path.is_file():
        raise InputError(
            f"bench/speed.py not found next to the package ({path}): run from a checkout"
        )
    spec = importlib.util.spec_from_file_location("logrerank_bench_speed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run(args)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(prog="logrerank", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    r = sub.add_parser("rerank", help="rerank passages for a question and print the ranking")
    r.add_argument("--query", "-q", help="the question (optional if the JSON file has one)")
    r.add_argument("--passages", "-p", required=True, help="passages: .json, .jsonl or .txt")
    r.add_argument("--out", "-o", help="write the full ranking as JSON here")
    r.add_argument("--checkpoint", help="checkpoint folder (default: bundled)")
    r.add_argument("--device", default="auto", help="auto, cpu, cuda")
    r.add_argument("--top", type=int, default=10, help="sentences to print")
    r.add_argument("--local-only", action="store_true", help="ablation: no graph stage")
    r.add_argument("--no-cross", action="store_true", help="ablation: no cross-passage edges")
    r.add_argument("--untyped", action="store_true", help="ablation: one edge type")
    from .limits import DEFAULT_LIMITS as L

    g = r.add_argument_group(
        "input limits",
        "Longer input is cut (or dropped from the end) and every cut is printed as a warning; "
        "--strict-limits rejects it instead.",
    )
    g.add_argument("--max-passages", type=int, help=f"passages ranked (default {L.max_passages:,})")
    g.add_argument(
        "--max-chars-per-passage",
        type=int,
        help=f"characters kept per passage (default {L.max_chars_per_passage:,})",
    )
    g.add_argument(
        "--max-total-chars",
        type=int,
        help=f"characters kept over all passages (default {L.max_total_chars:,})",
    )
    g.add_argument(
        "--max-question-chars",
        type=int,
        help=f"characters kept of the question (default {L.max_question_chars:,})",
    )
    g.add_argument(
        "--max-file-bytes",
        type=int,
        dest="max_upload_bytes",
        help=f"size limit of the passages file (default {L.max_upload_bytes:,})",
    )
    g.add_argument(
        "--strict-limits", action="store_true", help="reject input over a limit instead of cutting"
    )
    r.set_defaults(func=_cmd_rerank)

    e = sub.add_parser("eval", help="evaluate rankers on a benchmark (same pools for all)")
    e.add_argument("--benchmark", "-b", help="scifact, citint, pubmedqa, hotpotqa, musique")
    e.add_argument("--split", help="split (default: scifact/citint dev, pubmedqa test, ...)")
    e.add_argument("--claims", help="SciFact-format claims file (with --corpus)")
    e.add_argument("--corpus", help="SciFact-format corpus file (with --claims)")
    e.add_argument("--file", help="HotpotQA / MuSiQue format file (with --benchmark)")
    e.add_argument("--data-root", help="data folder (default $LOGRERANK_DATA or ../shared/data)")
    e.add_argument("--rankers", "-r", default="first-pass,bm25,bi-encoder,evidence-graph")
    e.add_argument("--k", type=int, default=10, help="metric cut-off")
    e.add_argument("--limit", type=int, help="first N queries only")
    e.add_argument("--out", "-o", help="folder for results.json and results.md")
    e.add_argument("--checkpoint", help="LoG checkpoint folder (default: bundled)")
    e.add_argument("--cross-encoder", help="cross-encoder folder (default: bundled)")
    e.add_argument("--device", default="auto")
    e.add_argument(
        "--quantize",
        default="none",
        choices=["none", "int8"],
        help="int8: dynamic int8 Linear layers in LoG and the cross-encoder (CPU; fp32 activations)",
    )
    e.add_argument(
        "--passage-cache-mb",
        type=float,
        default=0.0,
        help="keep LoG's query-independent passage states across queries, up to this many MiB "
        "(LoGReranker.passage_cache_mb; pools that share passages then skip the frozen layers)",
    )
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=_cmd_eval)

    t = sub.add_parser("train", help="train a model from a JSON run config (see configs/)")
    t.add_argument("task", choices=["local", "global", "crossencoder", "roles"])
    t.add_argument("--config", "-c", required=True, help="JSON run config")
    t.add_argument(
        "--set",
        action="append",
        metavar="FIELD=VALUE",
        help="override a field of a local/global config, e.g. --set seed=17 (repeatable)",
    )
    t.set_defaults(func=_cmd_train)

    a = sub.add_parser("app", help="start the Gradio app on 127.0.0.1")
    a.add_argument("--port", type=int, default=7860)
    a.set_defaults(func=_cmd_app)

    b = sub.add_parser(
        "bench",
        help="speed benchmark: LoG (per stage) vs cross-encoder vs BM25 (bench/speed.py)",
        description="Runs bench/speed.py: interleaved timings on SciFact dev 50-candidate pools, "
        "p50/p95 per ranker and stage, LoG/cross-encoder ratio, peak memory, model load times.",
    )
    b.add_argument("--queries", type=int, default=20, help="timed pools (default 20)")
    b.add_argument("--warmup", type=int, default=2, help="untimed pools first (default 2)")
    b.add_argument("--checkpoint", default=None, help="LoG checkpoint (default: bundled)")
    b.add_argument("--cross-encoder", default=None, help="cross-encoder folder (default: bundled)")
    b.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"])
    b.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    b.add_argument(
        "--quantize",
        default="none",
        choices=["none", "int8"],
        help="int8: dynamic int8 Linear layers in LoG's encoder and the cross-encoder (CPU)",
    )
    b.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, ...")
    b.add_argument(
        "--segment-cache",
        default="off",
        choices=["on", "off"],
        help="on: LoG's frozen isolated layers once per segment (LoGReranker.segment_cache)",
    )
    b.add_argument(
        "--pack-length",
        type=int,
        default=None,
        help="LoG's LocalConfig.pack_length: frozen layers on packed rows of N tokens "
        "(0 = window layout; default: the checkpoint's)",
    )
    b.add_argument(
        "--passage-cache",
        default="off",
        choices=["off", "pool"],
        help="pool: each pool's passages are put in LoG's cross-call passage cache first, "
        "untimed (an indexed corpus: LoGReranker.cache_passages), then the question is timed",
    )
    b.add_argument(
        "--source",
        default="scifact",
        choices=["scifact", "synthetic"],
        help="SciFact dev pools (needs ../shared/data) or synthetic passages (no data)",
    )
    b.add_argument("--passages", type=int, default=50, help="passages per query (default 50)")
    b.add_argument("--data-root", default=None, help="data folder (default ../shared/data)")
    b.add_argument("--out", default="runs/bench/speed", help="folder for results.json / .md")
    b.set_defaults(func=_cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``logrerank`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as exc:
        print(f"logrerank: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # checkpoint / backbone problems: one clear line, not a traceback
        from .backbone import BackboneError
        from .pipeline import CheckpointError

        if isinstance(exc, (CheckpointError, BackboneError)):
            print(f"logrerank: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
