"""The local batch engine: one process, questions streamed one at a time, one batch in memory.

The ranker is built once (:func:`logrerank.rankers.build_rankers`, models loaded lazily on the
first question) and every question goes through ``ranker.rank``, so a record equals what
``LoGReranker.rerank`` returns for the same question and passages. The batch size is the
number of questions per write: memory holds one batch of records, and an interrupted run
loses at most that batch (see :mod:`logrerank.batch.io`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..types import InputError
from .io import BadLine, BatchSink, Question, ranking_record


def rank_question(ranker: Any, question: Question, top: int) -> dict[str, Any] | BadLine:
    """Rank one question: its record, or a :class:`BadLine` when the ranker refuses the input
    (e.g. every passage empty after cleaning)."""
    try:
        ranking = ranker.rank(question.question, question.passages)
    except InputError as exc:
        return BadLine(question.line, str(exc), question.qid, question.source)
    return ranking_record(question, ranking, top)


def run_local(
    items: Iterable[Question | BadLine],
    ranker: Any,
    sink: BatchSink,
    batch_size: int = 16,
    top: int = 5,
    bar: Any = None,
) -> None:
    """Rank ``items`` in order and write them to ``sink`` every ``batch_size`` questions.

    Args:
        items: questions to rank and bad lines to report (already filtered for resume).
        ranker: a registry ranker (``rank(query, passages) -> Ranking``).
        sink: the output and error files.
        batch_size: questions per write.
        top: sentences kept per record.
        bar: a tqdm bar to advance per question (optional).
    """
    records: list[dict[str, Any]] = []
    bad: list[BadLine] = []

    def flush() -> None:
        sink.write(records)
        sink.error(bad)
        records.clear()
        bad.clear()

    for item in items:
        out = item if isinstance(item, BadLine) else rank_question(ranker, item, top)
        if isinstance(out, BadLine):
            bad.append(out)
        else:
            records.append(out)
        if bar is not None:
            bar.update(1)
        if len(records) >= batch_size or len(bad) >= batch_size:
            flush()
    flush()
