"""Readers of user collections' files (BEIR ``corpus.jsonl`` / ``queries.jsonl``, qrels checks).

Used by :mod:`logrerank.data.beir` and :mod:`logrerank.data.user_pools`. Every error raises
:class:`~logrerank.types.InputError` naming the file and the line. A corpus line's ``sentences``
list (or SciFact's ``abstract`` list) is the passage's sentence split; other texts are split by
the project's segmenter (:func:`logrerank.data.common.split_sentences`).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ..batch.trec import DOC_ID_KEYS, QUERY_ID_KEYS, QUERY_TEXT_KEYS
from ..types import InputError
from .common import split_sentences
from .qrels import Qrels, read_sentence_qrels
from .schema import Doc, Example


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((obj[k] for k in keys if obj.get(k) is not None), None)


def _json_lines(path: Path):
    """``(line number, object)`` of a JSONL file; a malformed line raises naming it."""
    with path.open("rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8-sig" if n == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(f"{path} line {n}: not UTF-8 ({exc.reason})") from None
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except ValueError as exc:
                raise InputError(f"{path} line {n}: malformed JSON ({exc})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{path} line {n}: expected a JSON object")
            yield n, obj


def passage_doc(obj: dict[str, Any], doc_id: str, split: bool = True) -> tuple[Doc, bool]:
    """A :class:`Doc` from a corpus line and whether its sentence split came from the file.

    Args:
        obj: the corpus line (``title``; ``text`` / ``contents``; optional ``sentences`` or
            SciFact's ``abstract`` list of sentences).
        doc_id: its id.
        split: split an unsplit text with the project's segmenter (False: one sentence holding
            the whole text, split later by :func:`split_doc`).

    Raises:
        InputError: a ``sentences`` / ``title`` field of the wrong type.
    """
    title = obj.get("title") or ""
    sentences = obj.get("sentences", obj.get("abstract"))
    if isinstance(sentences, list):
        if not all(isinstance(s, str) for s in sentences):
            raise InputError(f"passage {doc_id!r}: 'sentences' must be a list of strings")
        return Doc(doc_id, str(title), [s.strip() for s in sentences]), True
    text = obj.get("text", obj.get("contents"))
    text = "" if text is None else str(text)
    if split:
        return Doc(doc_id, str(title), split_sentences(text)), False
    return Doc(doc_id, str(title), [text] if text.strip() else []), False


def split_doc(doc: Doc) -> Doc:
    """The doc with its (single, unsplit) text split by the project's segmenter."""
    return dataclasses.replace(doc, sentences=split_sentences(" ".join(doc.sentences)))


def read_corpus(path: Path) -> tuple[dict[str, Doc], set[str]]:
    """The whole corpus (texts unsplit) and the ids whose sentence split is the file's.

    Raises:
        InputError: a malformed line, a line without id, or a repeated id (naming the line).
    """
    corpus: dict[str, Doc] = {}
    presplit: set[str] = set()
    lines: dict[str, int] = {}
    for n, obj in _json_lines(path):
        doc_id = _first(obj, DOC_ID_KEYS)
        if doc_id is None or not str(doc_id).strip():
            raise InputError(f"{path} line {n}: no '_id'")
        doc_id = str(doc_id)
        if doc_id in lines:
            raise InputError(f"{path} line {n}: id {doc_id!r} repeats line {lines[doc_id]}")
        lines[doc_id] = n
        try:
            doc, given = passage_doc(obj, doc_id, split=False)
        except InputError as exc:
            raise InputError(f"{path} line {n}: {exc}") from None
        corpus[doc_id] = doc
        if given:
            presplit.add(doc_id)
    if not corpus:
        raise InputError(f"{path} holds no passage")
    return corpus, presplit


def read_queries(path: Path) -> dict[str, tuple[str, int]]:
    """``{qid: (text, line)}`` of a JSONL (``_id``, ``text``) or ``qid<TAB>text`` file.

    Raises:
        InputError: missing file, a malformed line, a line without id, a repeated id, or no
            query at all (naming the file and line).
    """
    if not path.is_file():
        raise InputError(f"queries file {path} not found")
    queries: dict[str, tuple[str, int]] = {}
    if path.suffix.lower() == ".tsv":
        with path.open(encoding="utf-8-sig", errors="replace") as f:
            rows = [
                (n, {"_id": a.strip(), "text": b})
                for n, line in enumerate(f, 1)
                if line.strip()
                for a, _, b in [line.rstrip("\r\n").partition("\t")]
            ]
    else:
        rows = list(_json_lines(path))
    for n, obj in rows:
        qid = _first(obj, QUERY_ID_KEYS)
        if qid is None or not str(qid).strip():
            raise InputError(f"{path} line {n}: no '_id'")
        qid = str(qid)
        if qid in queries:
            raise InputError(f"{path} line {n}: query id {qid!r} repeats line {queries[qid][1]}")
        text = _first(obj, QUERY_TEXT_KEYS)
        queries[qid] = ("" if text is None else str(text).strip(), n)
    if not queries:
        raise InputError(f"{path} holds no query")
    return queries


def check_qrels(
    qrels: Qrels,
    lines: dict[tuple[str, str], int],
    qrels_path: Path,
    queries: dict[str, tuple[str, int]],
    queries_path: Path,
    has_doc,
    corpus_path: Path,
) -> None:
    """Every judged query is known and not empty, every judged passage is in the corpus.

    Raises:
        InputError: naming the qrels line (unknown id) or the queries line (empty text).
    """
    for qid, grades in qrels.items():
        if qid not in queries:
            line = lines[(qid, next(iter(grades)))]
            raise InputError(f"{qrels_path} line {line}: query-id {qid!r} is not in {queries_path}")
        text, qline = queries[qid]
        if not text:
            raise InputError(f"{queries_path} line {qline}: query {qid!r} has empty text")
        for doc in grades:
            if not has_doc(doc):
                raise InputError(
                    f"{qrels_path} line {lines[(qid, doc)]}: corpus-id {doc!r} is not in "
                    f"{corpus_path}"
                )


def judged_examples(
    qrels: Qrels, queries: dict[str, tuple[str, int]], dataset: str
) -> list[Example]:
    """One Example per judged query (qrels order): gold = grade >= 1, gains = every grade."""
    return [
        Example(
            qid=qid,
            query=queries[qid][0],
            gold_doc_ids=[d for d, g in grades.items() if g >= 1],
            gold_gains=dict(grades),
            meta={"dataset": dataset},
        )
        for qid, grades in qrels.items()
    ]


def attach_sentence_qrels(
    examples: list[Example], path: Path, sentences_of, corpus_path: Path
) -> dict[str, Any]:
    """Set ``gold_sentences`` from a sentence qrels file, checking every index.

    Args:
        examples: the evaluated queries (others in the file are ignored).
        path: the sentence qrels file.
        sentences_of: ``doc_id -> list of sentences`` (None when the corpus has no such id).
        corpus_path: the corpus, for messages.

    Returns:
        ``{"sentence_qrels": path, "sentence_judged_queries": n}``.

    Raises:
        InputError: an unknown passage or an index past the passage's last sentence.
    """
    gold, lines = read_sentence_qrels(path)
    by_qid = {ex.qid: ex for ex in examples}
    n = 0
    for qid, docs in gold.items():
        if qid not in by_qid:
            continue
        for doc, idx in docs.items():
            sents = sentences_of(doc)
            if sents is None:
                line = lines[(qid, doc)]
                raise InputError(f"{path} line {line}: corpus-id {doc!r} is not in {corpus_path}")
            if idx[-1] >= len(sents):
                has = f"indices 0..{len(sents) - 1}" if sents else "no sentence"
                raise InputError(
                    f"{path} line {lines[(qid, doc)]}: passage {doc!r} has {len(sents)} "
                    f"sentence(s) ({has}), got index {idx[-1]}"
                )
        by_qid[qid].gold_sentences = {d: list(i) for d, i in docs.items()}
        n += 1
    return {"sentence_qrels": str(path), "sentence_judged_queries": n}
