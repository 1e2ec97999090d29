"""``logrerank eval``: evaluate rankers on a benchmark, every ranker on the same pools."""

from __future__ import annotations

import argparse
import sys

from ..types import InputError


def load_eval_examples(args: argparse.Namespace):
    """``(benchmark name, examples, stats)`` from ``--benchmark`` or explicit files.

    Raises:
        InputError: no benchmark given, mismatched files, or the data is missing.
    """
    from ..data import pools, read_citation_integrity, read_hotpotqa, read_musique, read_scifact

    user = _load_user_collection(args)
    if user is not None:
        return user
    if args.claims or args.corpus:
        if not (args.claims and args.corpus):
            raise InputError("--claims and --corpus go together (SciFact format)")
        name = args.benchmark or "scifact"
        reader = read_citation_integrity if name == "citint" else read_scifact
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
        read = read_hotpotqa if name == "hotpotqa" else read_musique
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


def _load_user_collection(args: argparse.Namespace):
    """``(name, examples, stats)`` of ``--beir DIR`` or ``--run/--qrels/--corpus/--queries``.

    Returns:
        None when neither is asked for.

    Raises:
        InputError: options mixed with another source, or a bad folder or file.
    """
    from ..data.beir import load_beir, load_trec_collection

    beir = getattr(args, "beir", None)
    trec = [getattr(args, a, None) for a in ("run", "qrels", "queries")]
    if not beir and not any(trec):
        return None
    if args.claims or args.file or args.benchmark:
        raise InputError("--beir / --run --qrels take no --benchmark, --claims or --file")
    options = {
        "depth": args.depth,
        "insert_gold": args.insert_gold,
        "sentence_qrels": args.sentence_qrels,
    }
    if beir:
        if args.qrels or args.queries or args.corpus:
            raise InputError("--beir DIR reads DIR's corpus, queries and qrels (no --corpus etc.)")
        split = args.split or "test"
        examples, stats = load_beir(beir, split, run=args.run, **options)
    else:
        if not all([*trec, args.corpus]):
            raise InputError("--run, --qrels, --corpus and --queries go together (TREC files)")
        examples, stats = load_trec_collection(
            args.run, args.qrels, args.corpus, args.queries, **options
        )
    if args.limit:
        examples = examples[: args.limit]
    return stats["benchmark"], examples, stats


def spread_sample(examples: list, n: int | None) -> list:
    """``n`` examples at evenly spaced positions ``floor(i * len / n)`` (all when ``n`` is None
    or not smaller); deterministic.

    Raises:
        InputError: ``n`` < 1.
    """
    if n is None or n >= len(examples):
        return examples
    if n < 1:
        raise InputError("--sample must be >= 1")
    return [examples[i * len(examples) // n] for i in range(n)]


def cmd_eval(args: argparse.Namespace) -> int:
    """Rank every query with every ranker, print the metrics table, write results if asked."""
    import time

    from ..baselines.twin import TWIN_NAME
    from ..data.pools import COVERAGE_KS
    from ..data.titles import with_titles
    from ..evaluation.evaluate import MULTI_HOP, evaluate, results_markdown, write_results
    from ..rankers import Models, build_rankers

    names = [n.strip() for n in args.rankers.split(",") if n.strip()]
    # One memo for the cross-encoder rankers: each (query, text) pair is scored once per run
    # (their sec_per_query then reflects memo hits; `logrerank bench` times them without one).
    runtime = getattr(args, "runtime", "torch")
    if runtime != "torch" and getattr(args, "quantize", "none") != "none":
        raise InputError("--quantize int8 is torch's int8; use --runtime onnx-int8 instead")
    models = Models(
        args.checkpoint,
        args.cross_encoder,
        device=args.device,
        runtime=runtime,
        precision=getattr(args, "precision", None),
        memo_cross_encoder=True,
        twin_checkpoint=getattr(args, "twin", None),
    )
    if TWIN_NAME in names:
        models.twin  # noqa: B018 - a missing twin checkpoint fails here, before any pool is built
    save_runs = getattr(args, "save_runs", False)
    if save_runs and not args.out:
        raise InputError("--save-runs writes OUT/runs/<ranker>.trec: pass --out OUT")
    name, examples, stats = load_eval_examples(args)
    examples = spread_sample(examples, getattr(args, "sample", None))
    titles = getattr(args, "titles", "full") or "full"
    examples = with_titles(examples, titles)
    if not examples:
        raise InputError("no queries to evaluate")
    enc_info = None
    if getattr(args, "encodings", None) and any(n.startswith("log") for n in names):
        from ..training.log.encode_cache import encodings_for

        models.encodings, enc_info = encodings_for(models.log, args.encodings, name)
        models.collect_encodings = True
        print(f"encodings: {enc_info['pools']} cached pools from {args.encodings}", file=sys.stderr)
        if enc_info["without_digest"]:
            print(f"warning: {enc_info['without_digest']} record no model digest", file=sys.stderr)
    quantized = {}
    if getattr(args, "quantize", "none") == "int8":
        from ..local.quantize import quantize_cross_encoder, quantize_log_reranker

        if any(n.startswith("log") for n in names):
            quantized["log"] = quantize_log_reranker(models.log)
        if TWIN_NAME in names:
            quantized["twin"] = quantize_log_reranker(models.twin)
        ce_names = ("cross-encoder", "ce-", "evidence-graph-ce")
        if any(n.startswith(ce_names) and n != TWIN_NAME for n in names):
            quantized["cross_encoder"] = quantize_cross_encoder(models.cross_encoder)
    passage_cache_mb = float(getattr(args, "passage_cache_mb", 0.0) or 0.0)
    if passage_cache_mb < 0:
        raise InputError("--passage-cache-mb must be >= 0")
    if passage_cache_mb and any(n.startswith("log") for n in names):
        models.log.passage_cache_mb = passage_cache_mb
    stage_fp = getattr(args, "stage_first_pass", "auto") or "auto"
    # Built pools are in BM25-over-the-corpus order: that order is the first pass the stage
    # reranks (as in its held-out training eval). Multi-hop pools are in file order: BM25.
    models.stage_first_pass = (
        stage_fp if stage_fp != "auto" else ("bm25" if name in MULTI_HOP else "first-pass")
    )
    rankers = build_rankers(names, models)
    coverage = COVERAGE_KS.get(name, ())

    t0 = time.perf_counter()
    result = evaluate(
        examples,
        rankers,
        k=args.k,
        coverage_ks=coverage,
        progress=not args.quiet,
        keep_rankings=save_runs,
    )
    rankings = result.pop("rankings", None)
    meta = {
        "benchmark": name,
        "queries": len(examples),
        "k": args.k,
        "titles": titles,
        "rankers": names,
        "command": "logrerank " + " ".join(sys.argv[1:]),
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "cross_encoder_memo": True,
        "ce_stage_first_pass": models.stage_first_pass,
        "twin_checkpoint": models.twin.source if TWIN_NAME in names else None,
        "quantize": getattr(args, "quantize", "none"),
        "quantized": quantized,
        "runtime": runtime,
        "runtime_in_use": _runtimes_in_use(models),
        "precision": getattr(args, "precision", None) or "checkpoint",
        "passage_cache_mb": passage_cache_mb,
        "encodings": enc_info,
        "pool_stats": {k: v for k, v in stats.items() if not isinstance(v, (list, dict))},
    }
    if save_runs:
        meta["runs"] = [f"runs/{n}.trec" for n in names]
    if models.new_encodings:  # pools encoded in this run: kept for the next one
        from ..training.log.encode_cache import append_encodings

        stem = append_encodings(models.log, args.encodings, f"{name}-eval", models.new_encodings)
        print(f"encodings: {len(models.new_encodings)} new pools kept in {stem}", file=sys.stderr)
    print(results_markdown(result, args.k, coverage))
    for rname, ws in result["warnings"].items():
        for w in ws:
            print(f"warning ({rname}): {w}")
    for key, what in (
        ("queries_without_relevant", "have no relevant passage in the qrels"),
        ("queries_without_candidates", "are not in the first-stage run"),
    ):
        if stats.get(key):
            print(f"note: {stats[key]} judged queries {what}; they score 0 (as in trec_eval)")
    if args.out:
        j, m = write_results(args.out, result, meta, args.k, coverage)
        print(f"wrote {j} and {m}")
    if rankings is not None:
        from ..evaluation.runs import write_runs

        files = write_runs(args.out, rankings)
        print(f"wrote {len(files)} run files under {files[0].parent}")
    return 0


def _runtimes_in_use(models) -> dict[str, str]:
    """The runtime each loaded transformer model actually ran on (after any fallback)."""
    used = {}
    if models._log is not None:
        used["log"] = models.log.runtime_in_use
    if models._ce is not None:
        used["cross_encoder"] = models.cross_encoder.runtime
    return used


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``eval`` and its options."""
    from ..data.titles import TITLE_CONDITIONS
    from .rerank import add_runtime_argument

    e = sub.add_parser("eval", help="evaluate rankers on a benchmark (same pools for all)")
    e.add_argument(
        "--benchmark",
        "-b",
        help="scifact, citint, pubmedqa, hotpotqa, musique, evinf (Evidence Inference 2.0; "
        "--split validation for choices), scisumm (CL-SciSumm 2019), scholarqa (ScholarQA-Multi, "
        "expert multi-paper questions; evaluation only)",
    )
    e.add_argument("--split", help="split (default: scifact/citint dev, pubmedqa test, ...)")
    e.add_argument("--claims", help="SciFact-format claims file (with --corpus)")
    e.add_argument(
        "--corpus", help="corpus JSONL: SciFact format (with --claims) or _id/title/text (--run)"
    )
    e.add_argument(
        "--beir",
        metavar="DIR",
        help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv (--split, default test)",
    )
    e.add_argument(
        "--run",
        help="first-stage TREC run giving the candidates (with --beir, or --qrels/--corpus/--queries)",
    )
    e.add_argument("--qrels", help="qrels of a TREC collection (TREC or BEIR TSV layout)")
    e.add_argument("--queries", help="queries of a TREC collection (JSONL or qid<TAB>text)")
    e.add_argument(
        "--depth", type=int, default=50, help="candidates per query: run or BM25 top (50)"
    )
    e.add_argument(
        "--insert-gold",
        action="store_true",
        help="user data: insert relevant passages the first stage missed (the paper's pool rule)",
    )
    e.add_argument(
        "--sentence-qrels",
        help="sentence qrels: query-id corpus-id sentence-index [score] (default for --beir: "
        "qrels/<split>.sentences.tsv when present)",
    )
    e.add_argument(
        "--save-runs", action="store_true", help="write OUT/runs/<ranker>.trec (TREC runs)"
    )
    e.add_argument("--file", help="HotpotQA / MuSiQue format file (with --benchmark)")
    e.add_argument("--data-root", help="data folder (default $LOGRERANK_DATA or ../shared/data)")
    e.add_argument("--rankers", "-r", default="first-pass,bm25,bi-encoder,evidence-graph")
    e.add_argument("--k", type=int, default=10, help="metric cut-off")
    e.add_argument("--limit", type=int, help="first N queries only")
    e.add_argument(
        "--sample",
        type=int,
        help="N queries spread evenly over the (pooled) queries in file order: every "
        "(n / N)-th, so every paper of a paper-ordered benchmark is represented",
    )
    e.add_argument(
        "--titles",
        choices=TITLE_CONDITIONS,
        default="full",
        help="passage titles: as the benchmark gives them (full), cut to their first three "
        "words (first3), or removed (none); texts and gold labels are unchanged",
    )
    e.add_argument("--out", "-o", help="folder for results.json and results.md")
    e.add_argument("--checkpoint", help="LoG checkpoint folder (default: bundled)")
    e.add_argument("--cross-encoder", help="cross-encoder folder (default: bundled)")
    e.add_argument(
        "--twin",
        help="cross-encoder-twin checkpoint folder, e.g. runs/twin (default: bundled "
        "logrerank/checkpoints/cross-encoder-twin)",
    )
    e.add_argument(
        "--stage-first-pass",
        choices=("auto", "bm25", "first-pass"),
        default="auto",
        help="first pass of ce-stage: the pool's retrieval order (first-pass), BM25 over the "
        "candidates (bm25), or auto (first-pass for pooled benchmarks, bm25 for multi-hop)",
    )
    e.add_argument("--device", default="auto")
    e.add_argument(
        "--quantize",
        default="none",
        choices=["none", "int8"],
        help="int8: dynamic int8 Linear layers in LoG and the cross-encoder (CPU; fp32 activations)",
    )
    add_runtime_argument(e)
    e.add_argument(
        "--precision",
        choices=["auto", "bf16", "fp32"],
        help="torch autocast of LoG and the cross-encoder (default: the checkpoint's, auto)",
    )
    e.add_argument(
        "--passage-cache-mb",
        type=float,
        default=0.0,
        help="keep LoG's query-independent passage states across queries, up to this many MiB "
        "(LoGReranker.passage_cache_mb; pools that share passages then skip the frozen layers)",
    )
    e.add_argument(
        "--encodings",
        help="folder of LoG encoding caches (logrerank.training.log.encode_cache; e.g. runs/enc): "
        "pools this checkpoint's local stage already encoded are read, not re-encoded",
    )
    e.add_argument("--quiet", action="store_true", help="no progress bar")
    e.set_defaults(func=cmd_eval)
