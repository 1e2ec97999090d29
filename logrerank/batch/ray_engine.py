"""The Ray Data batch engine: ``read_json`` -> ``map_batches`` (one model per actor) -> write.

The driver streams the input through the same readers as the local engine (line numbers, bad
lines, resume skipping) and stages the questions still to do as JSONL files of one batch each
under ``OUTPUT.ray-staging/``. Ray Data reads them (``read_json``, one block per file), a pool
of ``workers`` actors ranks them (:class:`RankActor` loads the ranker once per actor, on a
GPU when the cluster has one), and the driver appends each finished batch to the output file
as it arrives (not ``write_json``, which writes one file per block and cannot resume). Output
lines come in completion order, not input order.

Ray is imported only here, and only when this engine runs: without it the engine stops with a
message saying what to install. With ``address`` the run joins an existing cluster; its nodes
must have logrerank installed and see the staging folder and the checkpoint paths (shared
storage); by default Ray starts a local cluster on this machine and stops it at the end.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..types import InputError
from .io import BadLine, BatchSink, Question
from .local import rank_question

MAX_STAGE_FILES = 10_000
"""Staging files at most; above ``MAX_STAGE_FILES`` batches a file holds several batches."""

INSTALL_HINT = (
    "--engine ray needs Ray Data, which is not installed here: "
    "pip install 'logrerank[ray]' (or 'ray[data]>=2.40')"
)


def import_ray() -> Any:
    """``ray`` with ``ray.data`` loaded.

    Raises:
        InputError: Ray Data is not installed (the message says what to install).
    """
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise InputError(INSTALL_HINT) from exc
    return ray


class RankActor:
    """A Ray Data actor: builds the ranker once, then ranks one batch of staged rows per call.

    Args:
        ranker: registry name (see :data:`logrerank.rankers.RANKERS`).
        checkpoint: LoG checkpoint folder (None = bundled).
        cross_encoder: cross-encoder folder (None = bundled).
        device: ``auto`` (CUDA when the actor has a GPU), ``cpu`` or ``cuda``.
        threads: torch threads in this actor (None = torch's default).
        top: sentences kept per record.
    """

    def __init__(
        self,
        ranker: str,
        checkpoint: str | None,
        cross_encoder: str | None,
        device: str,
        threads: int | None,
        top: int,
    ):
        import torch

        from ..rankers import Models, build_rankers

        if threads:
            torch.set_num_threads(threads)
        models = Models(checkpoint=checkpoint, cross_encoder_path=cross_encoder, device=device)
        self.ranker = build_rankers([ranker], models)[ranker]
        self.top = top

    def __call__(self, batch: Any) -> Any:
        """Rank a ``pyarrow.Table`` of staged rows; returns ``record`` / ``error`` JSON columns."""
        import pyarrow as pa

        records, errors = [], []
        names = ("line", "id", "question", "passages", "source")
        for line, qid, question, passages, source in zip(
            *(batch.column(c).to_pylist() for c in names)
        ):
            passages, pids = json.loads(passages)
            q = Question(int(line), str(qid), question, passages, pids, source)
            out = rank_question(self.ranker, q, self.top)
            bad = isinstance(out, BadLine)
            records.append("" if bad else json.dumps(out, ensure_ascii=False))
            errors.append(json.dumps(out.to_dict(), ensure_ascii=False) if bad else "")
        return pa.table({"record": records, "error": errors})


def stage(
    items: Iterable[Question | BadLine], folder: Path, sink: BatchSink, rows_per_file: int
) -> tuple[int, int]:
    """Write the questions of ``items`` as JSONL files of ``rows_per_file`` rows under
    ``folder`` (emptied first); bad lines go straight to ``sink``.

    Returns:
        ``(questions, files)`` staged.
    """
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    n = files = 0
    f = None
    try:
        for item in items:
            if isinstance(item, BadLine):
                sink.error([item])
                continue
            if n % rows_per_file == 0:
                if f is not None:
                    f.close()
                f = (folder / f"part-{files:05d}.jsonl").open("w", encoding="utf-8")
                files += 1
            row = {
                "line": item.line,
                "id": item.qid,
                "question": item.question,
                "passages": json.dumps([item.passages, item.pids], ensure_ascii=False),
                "source": item.source,
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            n += 1
    finally:
        if f is not None:
            f.close()
    return n, files


def run_ray(
    items: Iterable[Question | BadLine],
    sink: BatchSink,
    *,
    ranker: str,
    checkpoint: str | None = None,
    cross_encoder: str | None = None,
    device: str = "auto",
    workers: int = 1,
    threads: int | None = None,
    gpus_per_worker: float | None = None,
    batch_size: int = 16,
    top: int = 5,
    expected: int = 0,
    address: str | None = None,
    staging: str | Path | None = None,
    bar: Any = None,
) -> dict[str, Any]:
    """Rank ``items`` on a Ray cluster and append the results to ``sink`` batch by batch.

    Args:
        items: questions to rank and bad lines to report (already filtered for resume).
        sink: the output and error files.
        ranker, checkpoint, cross_encoder, device, top: as for :class:`RankActor`.
        workers: actors in the pool.
        threads: torch threads (and Ray CPUs) per actor; None = the cluster's CPUs shared out
            between the actors (1 with GPUs).
        gpus_per_worker: GPUs per actor; None = 1 when the cluster has GPUs and ``device`` is
            not ``cpu``, else 0.
        batch_size: questions per actor call (and per staging file).
        expected: about how many questions ``items`` holds (sizes the staging files).
        address: an existing cluster to join (``auto`` or ``ray://host:10001``); None = start
            a local one (or join ``RAY_ADDRESS``), stopped at the end.
        staging: the staging folder (default ``OUTPUT.ray-staging``), removed after a run.
        bar: a tqdm bar to advance per question (optional).

    Returns:
        Facts of the run: ``workers``, ``threads``, ``gpus_per_worker``, ``staged``, ``files``.

    Raises:
        InputError: Ray Data is missing.
    """
    ray = import_ray()
    folder = Path(staging) if staging else sink.output.with_name(sink.output.name + ".ray-staging")
    batches = max(1, math.ceil(expected / batch_size))
    rows_per_file = batch_size * max(1, math.ceil(batches / MAX_STAGE_FILES))
    n, files = stage(items, folder, sink, rows_per_file)
    facts: dict[str, Any] = {"workers": workers, "staged": n, "files": files}
    if n == 0:
        shutil.rmtree(folder, ignore_errors=True)
        return facts
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, logging_level="WARNING")
    try:
        resources = ray.cluster_resources()
        if gpus_per_worker is None:
            gpus_per_worker = 1.0 if resources.get("GPU", 0) >= 1 and device != "cpu" else 0.0
        if threads is None:
            cpus = int(resources.get("CPU", 1))
            threads = 1 if gpus_per_worker else max(1, cpus // workers)
        facts.update(threads=threads, gpus_per_worker=gpus_per_worker)
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False  # the run has its own bar
        # reads reserve no CPU: the actors may hold every CPU, and a read that waits for one
        # would never start
        ds = ray.data.read_json(str(folder), override_num_blocks=files, num_cpus=0)
        ds = ds.map_batches(
            RankActor,
            fn_constructor_kwargs={
                "ranker": ranker,
                "checkpoint": checkpoint,
                "cross_encoder": cross_encoder,
                "device": device,
                "threads": threads,
                "top": top,
            },
            batch_size=batch_size,
            batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=threads,
            num_gpus=gpus_per_worker,
        )
        for out in ds.iter_batches(batch_size=None, batch_format="pyarrow"):
            recs = out.column("record").to_pylist()
            errs = out.column("error").to_pylist()
            sink.write([json.loads(r) for r in recs if r])
            sink.error([BadLine(**_bad_fields(json.loads(e))) for e in errs if e])
            if bar is not None:
                bar.update(len(recs))
    finally:
        if started:
            ray.shutdown()
    shutil.rmtree(folder, ignore_errors=True)
    return facts


def _bad_fields(d: dict[str, Any]) -> dict[str, Any]:
    return {"line": d["line"], "reason": d["reason"], "qid": d.get("id"), "source": d["source"]}
