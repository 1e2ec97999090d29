"""``logrerank rerank-batch``: rerank a whole file of questions (local, or Ray Data actors)."""

from __future__ import annotations

import argparse
import sys


def cmd_rerank_batch(args: argparse.Namespace) -> int:
    """Run :func:`logrerank.batch.rerank_batch` with the options and print a summary line.

    Returns:
        0 when every line was ranked (or already there), 1 when some lines could not be ranked
        (listed in ``OUTPUT.errors.jsonl``; the others are written), 2 for bad options.
    """
    from ..batch import rerank_batch

    result = rerank_batch(
        args.output,
        args.input,
        run=args.run,
        corpus=args.corpus,
        queries=args.queries,
        depth=args.depth,
        engine=args.engine,
        ranker=args.ranker,
        checkpoint=args.checkpoint,
        cross_encoder=args.cross_encoder,
        device=args.device,
        workers=args.workers,
        threads=args.threads,
        gpus_per_worker=args.gpus_per_worker,
        batch_size=args.batch_size,
        fmt=args.format,
        top_sentences=args.top_sentences,
        tag=args.tag,
        address=args.address,
        staging=args.staging,
        progress=not args.no_progress,
    )
    line = (
        f"wrote {result.written:,} ranking(s) to {result.output} in {result.seconds:.1f}s "
        f"({result.questions_per_second:.2f} questions/s); "
        f"{result.skipped:,} already there (skipped)"
    )
    if result.errors:
        line += f"; {result.errors:,} bad line(s) in {result.errors_file} (exit status 1)"
    print(line, file=sys.stderr)
    return 1 if result.errors else 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``rerank-batch`` and its options."""
    b = sub.add_parser(
        "rerank-batch",
        help="rerank a file of questions (JSONL or a TREC run); resumable, local or Ray",
        description="Rerank every question of a JSONL file (one {'id', 'question', 'passages'} "
        "per line) or of a TREC run with its corpus and queries, and append one ranking per "
        "question to --output (JSONL or a TREC run). Re-running with the same --output skips "
        "the questions already written; bad lines go to OUTPUT.errors.jsonl and the exit status "
        "is then 1 (0: every line ranked; 2: bad options or files).",
    )
    src = b.add_argument_group("input (either --input, or --run with --corpus and --queries)")
    src.add_argument(
        "--input",
        "-i",
        help="JSONL: one question with its passages per line ({'id', 'question', 'passages'}; "
        "'pdfs': [paper PDF paths, relative to the file] adds their passages, docs/pdf.md)",
    )
    src.add_argument("--run", help="TREC run file (qid Q0 docid rank score tag)")
    src.add_argument("--corpus", help="corpus JSONL for --run (_id/id, title, text)")
    src.add_argument("--queries", help="queries for --run: JSONL (_id/id, text) or qid<TAB>text")
    src.add_argument("--depth", type=int, help="keep each query's N best run documents")
    b.add_argument("--output", "-o", required=True, help="output file (appended; resumable)")
    b.add_argument(
        "--format",
        choices=("jsonl", "trec"),
        help="output format (default: trec for .trec/.run outputs, else jsonl)",
    )
    b.add_argument("--ranker", default="log", help="registry ranker: log, log-local, bm25, ...")
    b.add_argument("--checkpoint", help="LoG checkpoint folder (default: bundled)")
    b.add_argument("--cross-encoder", help="cross-encoder folder (default: bundled)")
    b.add_argument("--device", default="auto", help="auto, cpu, cuda")
    b.add_argument("--engine", choices=("local", "ray"), default="local", help="default: local")
    b.add_argument("--workers", type=int, default=1, help="Ray actors (local: always 1)")
    b.add_argument("--threads", type=int, help="torch threads (per Ray actor)")
    b.add_argument("--gpus-per-worker", type=float, help="GPUs per Ray actor (default: 1 if any)")
    b.add_argument(
        "--batch-size", type=int, default=16, help="questions per write / per actor call"
    )
    b.add_argument("--top-sentences", type=int, default=5, help="sentences kept per record")
    b.add_argument("--tag", help="TREC run tag (default: the ranker's name)")
    b.add_argument("--address", help="Ray cluster to join (default: start a local one)")
    b.add_argument("--staging", help="Ray staging folder (default OUTPUT.ray-staging)")
    b.add_argument("--no-progress", action="store_true", help="no progress bar")
    b.set_defaults(func=cmd_rerank_batch)
