"""Batch input and output: question readers, ranking records, writers, resume and error lines.

Input is streamed one question at a time: a JSONL file (one ``{"id", "question", "passages"}``
object per line, passages as strings or ``{"id", "title", "text"}`` objects) or a TREC run
with its corpus and queries (:mod:`logrerank.batch.trec`). Every reader yields
:class:`Question` items for valid questions and :class:`BadLine` items for lines that cannot
be ranked (malformed JSON, empty question, no passages, duplicate id), each with its line
number, so one bad line never stops a run.

Output is resumable: :func:`prepare_output` reads what an earlier run wrote (cutting a line
left half-written by an interrupted run) and returns the ids already done, which the engines
skip. Writes go out one batch at a time (a single ``write`` and ``flush``), so an interrupted
run loses at most the batch in hand. Bad lines go to ``OUTPUT.errors.jsonl``, rewritten by
every run (each run reads the whole input again, so it finds them all again).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..inputs.passages import normalize_passages
from ..types import InputError, Ranking, json_safe

FORMATS = ("jsonl", "trec")
"""Output formats: JSONL rankings, or a TREC run (``qid Q0 docid rank score tag``)."""
_SPACE = re.compile(r"\s+")


@dataclass
class Question:
    """One question to rank.

    Attributes:
        line: 1-based line number in the input (the first run line of the query for TREC).
        qid: the question's id as a string (the line number when the input line has none).
        question: the question text.
        passages: the candidates as given (strings or ``{"id", "title", "text"}`` dicts).
        pids: per passage, its id when every passage has one, else its 0-based index.
        source: the input file's name (for error lines).
        notices: what reading the line's PDFs cut or skipped (added to its record's warnings).
    """

    line: int
    qid: str
    question: str
    passages: list[Any]
    pids: list[str | int]
    source: str = ""
    notices: list[str] = dataclasses.field(default_factory=list)


@dataclass
class BadLine:
    """An input line that cannot be ranked, and why."""

    line: int
    reason: str
    qid: str | None = None
    source: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The line of ``OUTPUT.errors.jsonl`` for it."""
        return {"line": self.line, "id": self.qid, "reason": self.reason, "source": self.source}


def passage_ids(passages: list[Any]) -> list[str | int]:
    """The passages' ids when every passage has one, else their 0-based indices.

    Raises:
        InputError: no passages or a malformed passage (the message names it).
    """
    plist = normalize_passages(passages)
    if all(p.pid is not None for p in plist):
        return [p.pid for p in plist]
    return list(range(len(plist)))


def make_question(
    line: int, qid: Any, question: Any, passages: Any, source: str = ""
) -> Question | BadLine:
    """Validate one question; a :class:`BadLine` says what is wrong with it."""
    qid = str(line) if qid is None else str(qid)
    if not isinstance(question, str) or not question.strip():
        return BadLine(line, "empty question", qid, source)
    if not isinstance(passages, list) or not passages:
        return BadLine(line, "no passages", qid, source)
    try:
        pids = passage_ids(passages)
    except InputError as exc:
        return BadLine(line, str(exc), qid, source)
    return Question(line, qid, question, passages, pids, source)


def read_jsonl_questions(path: str | Path) -> Iterator[Question | BadLine]:
    """Stream the questions of a JSONL file, one per non-blank line.

    Each line is ``{"id", "question", "passages": [...]}``; ``"id"`` is optional (the line
    number stands in), ``"query"`` is accepted for ``"question"`` and ``"ctxs"`` for
    ``"passages"``; ``"pdfs"`` names paper PDFs read into passages
    (:mod:`logrerank.batch.pdfs`). A UTF-8 byte-order mark on the first line is allowed.
    """
    from .pdfs import PdfCache, add_pdfs

    path = Path(path)
    cache = PdfCache(path.parent)
    with path.open("rb") as f:
        for n, data in enumerate(f, 1):
            if not data.strip():
                continue
            try:
                raw = data.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                yield BadLine(n, f"not UTF-8 (byte 0x{data[exc.start]:02x})", source=path.name)
                continue
            try:
                obj = json.loads(raw)
            except (json.JSONDecodeError, RecursionError) as exc:
                msg = getattr(exc, "msg", "nested too deeply")
                yield BadLine(n, f"malformed JSON: {msg}", source=path.name)
                continue
            if not isinstance(obj, dict):
                yield BadLine(n, "expected a JSON object", source=path.name)
                continue
            question = obj.get("question", obj.get("query"))
            passages = obj.get("passages", obj.get("ctxs"))
            notices: list[str] = []
            if obj.get("pdfs") is not None:
                passages, notices, error = add_pdfs(passages, obj["pdfs"], cache)
                if error:
                    yield BadLine(
                        n, error, None if obj.get("id") is None else str(obj["id"]), path.name
                    )
                    continue
            item = make_question(n, obj.get("id"), question, passages, path.name)
            if isinstance(item, Question):
                item.notices = notices
            yield item


def unique(items: Iterable[Question | BadLine]) -> Iterator[Question | BadLine]:
    """Pass ``items`` through, turning a repeated question id into a :class:`BadLine`."""
    first: dict[str, int] = {}
    for item in items:
        if isinstance(item, Question):
            if item.qid in first:
                reason = f"duplicate id (first on line {first[item.qid]})"
                item = BadLine(item.line, reason, item.qid, item.source)
            else:
                first[item.qid] = item.line
        yield item


def count_questions(path: str | Path) -> int:
    """Non-blank lines of a JSONL file (the progress bar's total), read in binary chunks."""
    n = 0
    with Path(path).open("rb") as f:
        for raw in f:
            n += bool(raw.strip())
    return n


def ranking_record(question: Question, ranking: Ranking, top: int = 5) -> dict[str, Any]:
    """The JSON record of one ranked question (one output line).

    Fields: ``id``, ``line``, ``ranker``, ``passage_order`` (passage ids or 0-based indices,
    best first), ``passage_scores`` (same order), ``warnings``; sentence-level rankers add
    ``top_sentences`` (the ``top`` best, with their scores) and LoG the structured ``context``.
    Stage timings are left out, so equal rankings give equal records.
    """
    pids = question.pids
    rec: dict[str, Any] = {
        "id": question.qid,
        "line": question.line,
        "ranker": ranking.ranker,
        "passage_order": [pids[p.passage_idx] for p in ranking.passages_ranked],
        "passage_scores": [p.score for p in ranking.passages_ranked],
    }
    if ranking.sentences:
        rec["top_sentences"] = [
            {
                "rank": s.rank,
                "passage": pids[s.passage_idx],
                "passage_idx": s.passage_idx,
                "sent_idx": s.sent_idx,
                "score": s.score,
                "local_score": s.local_score,
                "global_score": s.global_score,
                "role": s.role,
                "text": s.text,
                "start": s.start,
                "end": s.end,
            }
            for s in ranking.sentences[:top]
        ]
    if ranking.context is not None:
        rec["context"] = ranking.context
    rec["warnings"] = list(question.notices) + list(ranking.warnings)
    return json_safe(rec)


def _clean(x: Any) -> str:
    return _SPACE.sub("_", str(x).strip()) or "_"


def trec_lines(record: dict[str, Any], tag: str | None = None) -> str:
    """``qid Q0 docid rank score tag`` lines of one ranking record (passages best first).

    ``ir_measures.read_trec_run`` reads them. Tools that read TREC runs sort by score, so
    passages with equal scores may come back in another order than the ranking's. Whitespace
    inside an id (impossible in the format) becomes ``_``.
    """
    qid, tag = _clean(record["id"]), _clean(tag or record.get("ranker") or "logrerank")
    out = []
    for rank, (doc, score) in enumerate(zip(record["passage_order"], record["passage_scores"]), 1):
        value = repr(float(score)) if score is not None else "0.0"
        out.append(f"{qid} Q0 {_clean(doc)} {rank} {value} {tag}\n")
    return "".join(out)


def errors_path(output: str | Path) -> Path:
    """``OUTPUT.errors.jsonl`` next to the output file."""
    output = Path(output)
    return output.with_name(output.name + ".errors.jsonl")


def _cut_partial_line(path: Path) -> None:
    """Drop a last line without its newline (a write cut short by an interrupted run)."""
    size = path.stat().st_size
    if not size:
        return
    with path.open("rb+") as f:
        pos, keep = size, 0
        while pos > 0:
            step = min(65536, pos)
            pos -= step
            f.seek(pos)
            chunk = f.read(step)
            at = chunk.rfind(b"\n")
            if at >= 0:
                keep = pos + at + 1
                break
        if keep != size:
            f.truncate(keep)


def prepare_output(
    path: str | Path, fmt: str, expected: Callable[[str], int | None] | None = None
) -> set[str]:
    """Make an existing output resumable and return the question ids it already holds.

    A half-written last line is cut. For JSONL every complete line is a done question. In a
    TREC run only the last query can be incomplete (an interrupted batch write): it is kept when
    it has as many lines as ``expected(qid)`` says its question ranks, else (or without
    ``expected``) it is cut and done again, so a finished run is never redone and an
    interrupted one repeats at most one question.

    Args:
        path: the output file.
        fmt: ``"jsonl"`` or ``"trec"``.
        expected: TREC only: the number of lines a complete ranking of a question id has
            (None when unknown).
    """
    path = Path(path)
    if not path.exists() or path.stat().st_size == 0:
        return set()
    _cut_partial_line(path)
    done: set[str] = set()
    last_qid, last_start, last_lines, offset = None, 0, 0, 0
    with path.open("rb") as f:
        for raw in f:
            if raw.strip():
                if fmt == "jsonl":
                    # a line that is not one of ours stays in place; its question is done again
                    with contextlib.suppress(ValueError, KeyError, TypeError):
                        done.add(str(json.loads(raw)["id"]))
                else:
                    qid = raw.split(maxsplit=1)[0].decode("utf-8", "replace")
                    if qid != last_qid:
                        last_qid, last_start, last_lines = qid, offset, 0
                        done.add(qid)
                    last_lines += 1
            offset += len(raw)
    if fmt == "trec" and last_qid is not None:
        want = expected(last_qid) if expected is not None else None
        if want is None or last_lines < want:
            done.discard(last_qid)
            with path.open("rb+") as f:
                f.truncate(last_start)
    return done


class BatchSink:
    """The output and error files of one run; each batch is one write, flushed to disk.

    Args:
        output: the output file (appended to; see :func:`prepare_output`).
        fmt: ``"jsonl"`` or ``"trec"``.
        tag: the TREC run tag (default: each record's ranker name).
    """

    def __init__(self, output: str | Path, fmt: str, tag: str | None = None):
        if fmt not in FORMATS:
            raise InputError(f"unknown output format {fmt!r}; known: {', '.join(FORMATS)}")
        self.output, self.fmt, self.tag = Path(output), fmt, tag
        self.output.parent.mkdir(parents=True, exist_ok=True)
        self.errors_file = errors_path(self.output)
        self._out = self.output.open("a", encoding="utf-8", newline="\n")
        self._err = self.errors_file.open("w", encoding="utf-8", newline="\n")
        self.written = self.errors = 0
        self.first_write: tuple[float, int] | None = None  # (perf_counter, records) of batch 1

    def write(self, records: list[dict[str, Any]]) -> None:
        """Append the rankings of one batch."""
        if not records:
            return
        if self.fmt == "jsonl":
            text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        else:
            text = "".join(trec_lines(r, self.tag) for r in records)
        self._out.write(text)
        self._flush(self._out)
        self.written += len(records)
        if self.first_write is None:
            self.first_write = (time.perf_counter(), len(records))

    def error(self, bad: list[BadLine]) -> None:
        """Append bad lines to ``OUTPUT.errors.jsonl``."""
        if not bad:
            return
        self._err.write("".join(json.dumps(b.to_dict(), ensure_ascii=False) + "\n" for b in bad))
        self._flush(self._err)
        self.errors += len(bad)

    @staticmethod
    def _flush(f) -> None:
        f.flush()
        os.fsync(f.fileno())

    def close(self) -> None:
        """Close both files (an empty error file is removed)."""
        self._out.close()
        self._err.close()
        if not self.errors:
            self.errors_file.unlink(missing_ok=True)

    def __enter__(self) -> BatchSink:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
