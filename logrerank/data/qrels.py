"""Relevance judgements and TREC run files of user collections, read with line-exact errors.

Two qrels layouts are read, line by line:

* **BEIR** ``qrels/<split>.tsv``: a header line (``query-id corpus-id score``), then
  ``query-id<TAB>corpus-id<TAB>score`` per judgement;
* **TREC** ``qid 0 docid rel`` (whitespace-separated, no header), as ``trec_eval`` reads it.

Grades are integers; a grade ``>= 1`` is relevant (recall, MAP, the gold ids) and ``max(grade,
0)`` is the gain in nDCG, as in ``trec_eval`` and ``ir_measures``.

Sentence qrels (optional) name a sentence of a passage: a header line, then
``query-id<TAB>corpus-id<TAB>sentence-index[<TAB>score]`` with a 0-based sentence index into the
passage's sentences (the corpus line's ``sentences`` list when it has one, else the project's
segmenter); a score ``>= 1`` (default 1) makes the sentence gold.

Every error raises :class:`~logrerank.types.InputError` naming the file and the line.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ..types import InputError

#: ``qid -> {docid: grade}``.
Qrels = dict[str, dict[str, int]]
#: ``qid -> {docid: sorted gold sentence indices}``.
SentenceQrels = dict[str, dict[str, list[int]]]


def _lines(path: str | Path, what: str) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` of the non-blank lines of ``path`` (tabs, else whitespace)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} {path} not found")
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8-sig" if n == 1 else "utf-8").strip("\r\n")
            except UnicodeDecodeError as exc:
                raise InputError(f"{path} line {n}: not UTF-8 ({exc.reason})") from None
            if not text.strip():
                continue
            parts = text.split("\t") if "\t" in text else text.split()
            yield n, [p.strip() for p in parts]


def _grade(value: str, path: Path, n: int) -> int:
    try:
        return int(value)
    except ValueError:
        try:
            grade = float(value)
        except ValueError:
            grade = float("nan")
        if grade != grade or grade != int(grade):
            raise InputError(
                f"{path} line {n}: relevance {value!r} is not an integer grade"
            ) from None
        return int(grade)


def read_qrels(path: str | Path, lines: dict[tuple[str, str], int] | None = None) -> Qrels:
    """Read a BEIR (``query-id corpus-id score``, header) or TREC (``qid 0 docid rel``) qrels file.

    The layout is decided per line by its number of fields (3: BEIR, 4: TREC); a first line
    whose score is not a number is the BEIR header. A repeated (query, doc) pair keeps its last
    grade, as ``trec_eval`` does.

    Args:
        path: the qrels file.
        lines: filled with the line of each ``(qid, docid)`` judgement (for messages).

    Returns:
        ``{qid: {docid: grade}}`` in file order.

    Raises:
        InputError: missing file, a line with another number of fields, a non-integer grade, or
            no judgement at all (the message names the file and line).
    """
    path = Path(path)
    qrels: Qrels = {}
    for n, parts in _lines(path, "qrels file"):
        if len(parts) == 3:
            qid, doc, value = parts
        elif len(parts) == 4:
            qid, _, doc, value = parts
        else:
            raise InputError(
                f"{path} line {n}: expected 'query-id corpus-id score' (BEIR) or "
                f"'qid 0 docid rel' (TREC), got {len(parts)} fields"
            )
        if n == 1 and not _is_number(value):
            continue  # the BEIR header line
        if not qid or not doc:
            raise InputError(f"{path} line {n}: empty query or document id")
        qrels.setdefault(qid, {})[doc] = _grade(value, path, n)
        if lines is not None:
            lines[(qid, doc)] = n
    if not qrels:
        raise InputError(f"{path} holds no judgement")
    return qrels


def read_sentence_qrels(path: str | Path) -> tuple[SentenceQrels, dict[tuple[str, str], int]]:
    """Read sentence qrels: ``query-id corpus-id sentence-index [score]`` after a header line.

    Args:
        path: the sentence qrels file.

    Returns:
        ``(gold, lines)``: ``{qid: {docid: sorted gold sentence indices}}`` (score ``>= 1``)
        and the line of each (qid, docid) pair's first judgement, for error messages.

    Raises:
        InputError: missing file, wrong number of fields, a negative or non-integer sentence
            index, or a non-integer score (the message names the file and line).
    """
    path = Path(path)
    gold: dict[str, dict[str, set[int]]] = {}
    lines: dict[tuple[str, str], int] = {}
    for n, parts in _lines(path, "sentence qrels file"):
        if len(parts) not in (3, 4):
            raise InputError(
                f"{path} line {n}: expected 'query-id corpus-id sentence-index [score]', "
                f"got {len(parts)} fields"
            )
        if n == 1 and not _is_number(parts[2]):
            continue  # header
        qid, doc, index = parts[:3]
        if not index.isdigit():
            raise InputError(f"{path} line {n}: sentence index {index!r} is not an integer >= 0")
        score = _grade(parts[3], path, n) if len(parts) == 4 else 1
        lines.setdefault((qid, doc), n)
        if score >= 1:
            gold.setdefault(qid, {}).setdefault(doc, set()).add(int(index))
    return {q: {d: sorted(s) for d, s in docs.items()} for q, docs in gold.items()}, lines


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def read_run_rankings(path: str | Path) -> dict[str, list[str]]:
    """Each query's documents of a TREC run, in the order ``trec_eval`` and ``ir_measures`` use.

    Documents sort by score (descending), equal scores by document id (descending), which is
    how ``trec_eval`` breaks ties; the rank column is ignored, as it ignores it.

    Args:
        path: ``qid Q0 docid rank score [tag]`` lines.

    Returns:
        ``{qid: [docid, ...]}`` best first (a repeated document keeps its best score).

    Raises:
        InputError: missing file or a malformed line (the message names the file and line).
    """
    path = Path(path)
    scores: dict[str, dict[str, float]] = {}
    for n, parts in _lines(path, "run file"):
        if len(parts) < 5:
            raise InputError(f"{path} line {n}: expected 'qid Q0 docid rank score [tag]'")
        try:
            score = float(parts[4])
        except ValueError:
            raise InputError(f"{path} line {n}: score {parts[4]!r} is not a number") from None
        docs = scores.setdefault(parts[0], {})
        docs[parts[2]] = max(score, docs.get(parts[2], score))
    return {
        qid: [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)]
        for qid, docs in scores.items()
    }
