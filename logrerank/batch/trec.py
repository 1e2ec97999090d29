"""TREC run input for batch reranking: a run file plus its corpus and queries.

Input: a run file (``qid Q0 docid rank score [tag]``, each query's lines together, as
``trec_eval`` tools write them), a corpus JSONL and the queries (JSONL or ``qid<TAB>text``
TSV). The corpus and query files are not loaded: only the byte offset of each id is kept and
the line is read back when a query needs it, so memory stays small for large corpora.

Accepted field names: corpus ``_id`` / ``id`` / ``doc_id`` / ``docid``, ``title``, and
``text`` / ``contents`` or ``abstract`` (a list of sentences, as in SciFact's corpus, is kept
as the passage's sentence split); queries ``_id`` / ``id`` / ``qid`` / ``query_id`` and
``text`` / ``query`` / ``question`` / ``claim``.

TREC output is written by :func:`logrerank.batch.io.trec_lines`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .io import BadLine, Question, make_question

DOC_ID_KEYS = ("_id", "id", "doc_id", "docid")
QUERY_ID_KEYS = ("_id", "id", "qid", "query_id")
QUERY_TEXT_KEYS = ("text", "query", "question", "claim")


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    for k in keys:
        if obj.get(k) is not None:
            return obj[k]
    return None


class OffsetIndex:
    """``id -> byte offset`` of a JSONL (or TSV) file; :meth:`get` reads one line back.

    Args:
        path: the file.
        id_keys: JSON fields that may hold the id (first present wins).
        tsv: read ``id<TAB>text`` lines instead of JSON (the default for ``.tsv`` files).
    """

    def __init__(self, path: str | Path, id_keys: tuple[str, ...], tsv: bool | None = None):
        self.path = Path(path)
        self.tsv = self.path.suffix.lower() == ".tsv" if tsv is None else tsv
        self.id_keys = id_keys
        self.offsets: dict[str, int] = {}
        offset = 0
        with self.path.open("rb") as f:
            for raw in f:
                key = self._key(raw)
                if key is not None:
                    self.offsets.setdefault(key, offset)
                offset += len(raw)
        self._f = self.path.open("rb")

    def _parse(self, raw: bytes) -> dict[str, Any] | None:
        text = raw.decode("utf-8-sig", "replace").rstrip("\r\n")
        if not text.strip():
            return None
        if self.tsv:
            qid, _, body = text.partition("\t")
            return {"id": qid.strip(), "text": body}
        try:
            obj = json.loads(text)
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None

    def _key(self, raw: bytes) -> str | None:
        obj = self._parse(raw)
        key = None if obj is None else _first(obj, ("id",) if self.tsv else self.id_keys)
        return None if key is None else str(key)

    def get(self, key: str) -> dict[str, Any] | None:
        """The parsed line of ``key`` (None when the file has no such id)."""
        at = self.offsets.get(key)
        if at is None:
            return None
        self._f.seek(at)
        return self._parse(self._f.readline())

    def close(self) -> None:
        """Close the file."""
        self._f.close()


def corpus_passage(doc: dict[str, Any], docid: str) -> dict[str, Any]:
    """A ranker passage ``{"id", "title", "text"[, "sentences"]}`` from a corpus line."""
    out: dict[str, Any] = {"id": docid, "title": doc.get("title") or ""}
    text = doc.get("text", doc.get("contents"))
    abstract = doc.get("abstract")
    if text is None and isinstance(abstract, list):
        out["sentences"] = [str(s) for s in abstract]
        text = " ".join(out["sentences"])
    out["text"] = text if isinstance(text, str) else ("" if text is None else str(text))
    return out


def _run_groups(path: Path) -> Iterator[tuple[int, str, list[tuple[int, float, str]]] | BadLine]:
    """``(first line, qid, [(rank, -score, docid)])`` per run of equal qids, and bad lines."""
    qid, start, rows = None, 0, []
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            parts = raw.decode("utf-8", "replace").split()
            if not parts:
                continue
            try:
                if len(parts) < 5:
                    raise ValueError("expected 'qid Q0 docid rank score tag'")
                row = (int(parts[3]), -float(parts[4]), parts[2])
            except ValueError as exc:
                msg = str(exc) if "expected" in str(exc) else "rank or score is not a number"
                yield BadLine(n, f"malformed run line: {msg}", parts[0], path.name)
                continue
            if parts[0] != qid:
                if qid is not None:
                    yield start, qid, rows
                qid, start, rows = parts[0], n, []
            rows.append(row)
    if qid is not None:
        yield start, qid, rows


def read_trec_questions(
    run: str | Path,
    corpus: str | Path,
    queries: str | Path,
    depth: int | None = None,
) -> Iterator[Question | BadLine]:
    """Stream the questions of a TREC run: each query's documents in rank order.

    Args:
        run: the run file.
        corpus: the corpus JSONL (see the module docstring for the field names).
        queries: the queries, JSONL or ``qid<TAB>text`` (``.tsv``).
        depth: keep only each query's ``depth`` best-ranked documents (None = all).

    Yields:
        A :class:`Question` per query (line = its first run line), or a :class:`BadLine` for a
        malformed run line, a query missing from the queries file, or documents missing from
        the corpus.
    """
    run = Path(run)
    docs = OffsetIndex(corpus, DOC_ID_KEYS)
    qs = OffsetIndex(queries, QUERY_ID_KEYS)
    try:
        for item in _run_groups(run):
            if isinstance(item, BadLine):
                yield item
                continue
            line, qid, rows = item
            seen: set[str] = set()
            ids = [d for _, _, d in sorted(rows) if not (d in seen or seen.add(d))]
            ids = ids[:depth] if depth else ids
            q = qs.get(qid)
            if q is None:
                yield BadLine(line, f"query {qid!r} is not in {Path(queries).name}", qid, run.name)
                continue
            found = {d: docs.get(d) for d in ids}
            missing = [d for d, doc in found.items() if doc is None]
            if missing:
                shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
                reason = f"{len(missing)} docid(s) not in {Path(corpus).name}: {shown}"
                yield BadLine(line, reason, qid, run.name)
                continue
            passages = [corpus_passage(found[d], d) for d in ids]
            yield make_question(line, qid, _first(q, QUERY_TEXT_KEYS), passages, run.name)
    finally:
        docs.close()
        qs.close()


def run_query_size(path: str | Path, qid: str, depth: int | None = None) -> int | None:
    """How many distinct documents query ``qid`` ranks in a run (at most ``depth``; None when
    the run has no such query)."""
    for item in _run_groups(Path(path)):
        if not isinstance(item, BadLine) and item[1] == qid:
            n = len({d for _, _, d in item[2]})
            return min(n, depth) if depth else n
    return None


def count_run_queries(path: str | Path) -> int:
    """Queries of a run file (groups of equal qids; the progress bar's total)."""
    n, last = 0, None
    with Path(path).open("rb") as f:
        for raw in f:
            parts = raw.split(maxsplit=1)
            if parts and parts[0] != last:
                n, last = n + 1, parts[0]
    return n
