"""Batch reranking of whole files of questions: local by default, Ray Data across machines.

``rerank_batch("rankings.jsonl", "questions.jsonl")`` ranks every question of a JSONL file
(or of a TREC run with its corpus and queries) with one registry ranker and appends one record
per question to the output (JSONL or a TREC run). A second call with the same output skips the
questions already written; bad lines go to ``OUTPUT.errors.jsonl`` and the run goes on. See
:mod:`logrerank.batch.io` (formats, resume), :mod:`logrerank.batch.local` and
:mod:`logrerank.batch.ray_engine`; throughput figures are in bench/README.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..rankers import RANKERS, Models, build_rankers
from ..types import InputError
from .io import (
    FORMATS,
    BadLine,
    BatchSink,
    Question,
    count_questions,
    prepare_output,
    read_jsonl_questions,
    unique,
)

ENGINES = ("local", "ray")
"""Batch engines: one local process, or a Ray Data actor pool."""

TREC_SUFFIXES = (".trec", ".run")
"""Output suffixes that select the TREC format when no format is given."""


@dataclass
class BatchResult:
    """What one :func:`rerank_batch` call did."""

    output: Path  # the output file
    errors_file: Path | None  # OUTPUT.errors.jsonl (None when no line was bad)
    engine: str
    written: int  # questions ranked and written by this call
    skipped: int  # questions already in the output (resume)
    errors: int  # bad lines reported by this call
    seconds: float  # wall time of this call, model loading included
    facts: dict[str, Any] = field(default_factory=dict)  # engine facts (workers, threads, ...)
    first_batch: tuple[float, int] | None = None  # (seconds to the first write, its records)

    @property
    def questions_per_second(self) -> float:
        """Questions written per second of wall time."""
        return self.written / self.seconds if self.seconds > 0 else 0.0

    @property
    def steady_questions_per_second(self) -> float | None:
        """Questions per second after the first written batch (start-up and model loading
        excluded); None when only one batch was written."""
        if self.first_batch is None or self.written <= self.first_batch[1]:
            return None
        span = self.seconds - self.first_batch[0]
        return (self.written - self.first_batch[1]) / span if span > 0 else None


def output_format(output: str | Path, fmt: str | None) -> str:
    """``fmt``, or ``trec`` for a ``.trec`` / ``.run`` output and ``jsonl`` otherwise."""
    if fmt is None:
        return "trec" if Path(output).suffix.lower() in TREC_SUFFIXES else "jsonl"
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    return fmt


def open_questions(
    input: str | Path | None,
    run: str | Path | None,
    corpus: str | Path | None,
    queries: str | Path | None,
    depth: int | None = None,
) -> tuple[Iterator[Question | BadLine], int]:
    """The question stream of a JSONL input or of a TREC run, and about how many it holds.

    Raises:
        InputError: neither or both inputs, a missing file, or a run without corpus / queries.
    """
    if (input is None) == (run is None):
        raise InputError("give either --input FILE (JSONL) or --run RUN --corpus --queries")
    if run is not None and (corpus is None or queries is None):
        raise InputError("--run needs --corpus (JSONL) and --queries (JSONL or TSV)")
    for p in (input, run, corpus, queries):
        if p is not None and not Path(p).is_file():
            raise InputError(f"no such file: {p}")
    if input is not None:
        return read_jsonl_questions(input), count_questions(input)
    from .trec import count_run_queries, read_trec_questions

    return read_trec_questions(run, corpus, queries, depth), count_run_queries(run)


def expected_lines(
    input: str | Path | None, run: str | Path | None, depth: int | None
) -> Callable[[str], int | None]:
    """``qid -> lines of its complete TREC ranking`` (its passages, at most the input limit),
    read from the input; None for an id the input does not hold (see :func:`prepare_output`)."""
    from ..inputs.limits import DEFAULT_LIMITS

    def count(qid: str) -> int | None:
        n = None
        if run is not None:
            from .trec import run_query_size

            n = run_query_size(run, qid, depth)
        elif input is not None:
            for item in unique(read_jsonl_questions(input)):
                if isinstance(item, Question) and item.qid == qid:
                    n = len(item.pids)
                    break
        return None if n is None else min(n, DEFAULT_LIMITS.max_passages)

    return count


def rerank_batch(
    output: str | Path,
    input: str | Path | None = None,
    *,
    run: str | Path | None = None,
    corpus: str | Path | None = None,
    queries: str | Path | None = None,
    depth: int | None = None,
    engine: str = "local",
    ranker: str = "log",
    checkpoint: str | None = None,
    cross_encoder: str | None = None,
    device: str = "auto",
    workers: int = 1,
    threads: int | None = None,
    gpus_per_worker: float | None = None,
    batch_size: int = 16,
    fmt: str | None = None,
    top_sentences: int = 5,
    tag: str | None = None,
    address: str | None = None,
    staging: str | Path | None = None,
    progress: bool = True,
) -> BatchResult:
    """Rerank every question of a file and append the rankings to ``output`` (resumable).

    Args:
        output: the output file; questions it already holds are skipped.
        input: JSONL, one ``{"id", "question", "passages": [str | {"id", "title", "text"}]}``
            per line (or give ``run``, ``corpus`` and ``queries`` instead).
        run, corpus, queries, depth: a TREC run input (see :mod:`logrerank.batch.trec`).
        engine: ``local`` (one process) or ``ray`` (Ray Data actors).
        ranker: registry name (:data:`logrerank.rankers.RANKERS`).
        checkpoint: LoG checkpoint folder (None = bundled); cross_encoder likewise.
        device: ``auto``, ``cpu`` or ``cuda``.
        workers: Ray actors (the local engine has exactly one worker).
        threads: torch threads (per actor for Ray; None = the default).
        gpus_per_worker: GPUs per Ray actor (None = 1 when the cluster has GPUs).
        batch_size: questions per write (local) or per actor call (Ray).
        fmt: ``jsonl`` or ``trec`` (None = from the output's suffix).
        top_sentences: best sentences kept per JSONL record.
        tag: TREC run tag (default the ranker's name).
        address: Ray cluster to join (None = a local cluster).
        staging: Ray staging folder (default ``OUTPUT.ray-staging``).
        progress: show a tqdm bar (questions per second, ETA) on stderr.

    Raises:
        InputError: bad options or missing files (checked before any model loads).
    """
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    if ranker not in RANKERS:
        raise InputError(f"unknown ranker {ranker!r}; known: {', '.join(RANKERS)}")
    for name, v in (("workers", workers), ("batch_size", batch_size), ("threads", threads or 1)):
        if v < 1:
            raise InputError(f"{name} must be a positive integer, got {v}")
    if engine == "local" and workers != 1:
        raise InputError("--engine local runs one worker; use --threads, or --engine ray")
    fmt = output_format(output, fmt)
    output = Path(output)
    if any(p is not None and Path(p).resolve() == output.resolve() for p in (input, run)):
        raise InputError("--output must not be the input file")
    items, total = open_questions(input, run, corpus, queries, depth)
    done = prepare_output(output, fmt, expected_lines(input, run, depth))
    skipped = 0

    def todo() -> Iterator[Question | BadLine]:
        nonlocal skipped
        for item in unique(items):
            if isinstance(item, Question) and item.qid in done:
                skipped += 1
                continue
            yield item

    from tqdm.auto import tqdm

    t0 = time.perf_counter()
    expected = max(0, total - len(done))
    bar = tqdm(total=expected, unit="q", desc="rerank-batch", disable=not progress, smoothing=0.1)
    facts: dict[str, Any] = {}
    with bar, BatchSink(output, fmt, tag) as sink:
        if engine == "local":
            from .local import run_local

            if threads:
                import torch

                torch.set_num_threads(threads)
            models = Models(checkpoint=checkpoint, cross_encoder_path=cross_encoder, device=device)
            the_ranker = build_rankers([ranker], models)[ranker]
            run_local(todo(), the_ranker, sink, batch_size, top_sentences, bar)
        else:
            from .ray_engine import run_ray

            facts = run_ray(
                todo(),
                sink,
                ranker=ranker,
                checkpoint=checkpoint,
                cross_encoder=cross_encoder,
                device=device,
                workers=workers,
                threads=threads,
                gpus_per_worker=gpus_per_worker,
                batch_size=batch_size,
                top=top_sentences,
                expected=expected,
                address=address,
                staging=staging,
                bar=bar,
            )
    return BatchResult(
        output=output,
        errors_file=sink.errors_file if sink.errors else None,
        engine=engine,
        written=sink.written,
        skipped=skipped,
        errors=sink.errors,
        seconds=time.perf_counter() - t0,
        facts=facts,
        first_batch=None
        if sink.first_write is None
        else (sink.first_write[0] - t0, sink.first_write[1]),
    )


__all__ = ["ENGINES", "BatchResult", "output_format", "rerank_batch"]
