"""User collections for ``logrerank eval``: BEIR folders and TREC runs with qrels.

Two inputs give :class:`~logrerank.data.schema.Example` lists that :func:`logrerank.evaluation.
evaluate.evaluate` scores like the built-in benchmarks:

* :func:`load_beir`: a BEIR folder, ``corpus.jsonl`` (``_id``, ``title``, ``text``),
  ``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (a header line, then
  ``query-id corpus-id score`` with graded scores), optionally ``qrels/<split>.sentences.tsv``
  (sentence qrels, :mod:`logrerank.data.qrels`);
* :func:`load_trec_collection`: a TREC run, a qrels file (TREC or BEIR layout), the corpus JSONL
  and the queries (JSONL or ``qid<TAB>text``), read by the readers ``rerank-batch`` uses
  (:mod:`logrerank.batch.trec`).

The evaluated queries are those of the qrels, in file order. Candidates come from the run (its
``depth`` best documents per query, :mod:`logrerank.data.user_pools`) or, for a BEIR folder
without ``run``, from BM25 over the corpus (:func:`logrerank.data.pools.build_or_load_pools`,
cached). Nothing is inserted unless ``insert_gold`` asks for the paper's rule (missed relevant
passages replace the lowest-ranked candidates), so by default a reranker sees what the first
stage found. A judged query without a relevant passage, or without candidates, scores 0 on every
metric, as ``trec_eval`` and ``ir_measures`` score it.

Sentences: a corpus line's ``sentences`` list (or SciFact's ``abstract`` list) is the passage's
sentence split, which sentence qrels index; other passages are split by the project's segmenter
(:func:`logrerank.data.common.split_sentences`), only when they are candidates.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ..batch.trec import DOC_ID_KEYS, QUERY_ID_KEYS, QUERY_TEXT_KEYS
from ..types import InputError
from .common import split_sentences
from .qrels import Qrels, read_qrels, read_sentence_qrels
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
                raise InputError(
                    f"{path} line {lines[(qid, doc)]}: passage {doc!r} has {len(sents)} "
                    f"sentence(s) (0-based indices 0..{len(sents) - 1}), got {idx[-1]}"
                )
        by_qid[qid].gold_sentences = {d: list(i) for d, i in docs.items()}
        n += 1
    return {"sentence_qrels": str(path), "sentence_judged_queries": n}


def beir_files(folder: str | Path, split: str) -> tuple[Path, Path, Path]:
    """``(corpus, queries, qrels)`` paths of a BEIR folder, each checked to exist.

    Raises:
        InputError: the folder or one of its files is missing (naming what is there).
    """
    root = Path(folder)
    if not root.is_dir():
        raise InputError(f"BEIR folder {root} not found")
    corpus, queries, qrels = root / "corpus.jsonl", root / "queries.jsonl", root / "qrels"
    for f in (corpus, queries):
        if not f.is_file():
            raise InputError(f"BEIR folder {root} has no {f.name}")
    split_file = qrels / f"{split}.tsv"
    if not split_file.is_file():
        have = sorted(p.stem for p in qrels.glob("*.tsv") if "." not in p.stem)
        raise InputError(
            f"BEIR folder {root} has no qrels/{split}.tsv (splits there: {', '.join(have) or 'none'})"
        )
    return corpus, queries, split_file


def load_beir(
    folder: str | Path,
    split: str = "test",
    *,
    run: str | Path | None = None,
    depth: int = 50,
    insert_gold: bool = False,
    sentence_qrels: str | Path | None = None,
    cache_dir: str | Path | None = None,
) -> tuple[list[Example], dict[str, Any]]:
    """The judged queries of a BEIR folder's split, with candidate pools.

    Args:
        folder: the BEIR folder.
        split: qrels split (``qrels/<split>.tsv``).
        run: a first-stage TREC run to take candidates from (None: BM25 over the corpus).
        depth: candidates per query.
        insert_gold: apply the paper's pool rule (missed relevant passages inserted).
        sentence_qrels: sentence qrels file; default ``qrels/<split>.sentences.tsv`` when it
            exists.
        cache_dir: pool cache directory (BM25 pools).

    Returns:
        ``(examples, stats)``.

    Raises:
        InputError: a missing or malformed file, unknown ids, empty queries (file and line).
    """
    from .user_pools import bm25_pools, run_pools

    corpus_path, queries_path, qrels_path = beir_files(folder, split)
    if depth < 1:
        raise InputError("--depth must be >= 1")
    if sentence_qrels is None:
        default = qrels_path.with_name(f"{split}.sentences.tsv")
        sentence_qrels = default if default.is_file() else None
    name = f"beir:{Path(folder).resolve().name}"
    if run is not None:
        return run_pools(
            name,
            Path(run),
            qrels_path,
            corpus_path,
            queries_path,
            depth=depth,
            insert_gold=insert_gold,
            sentence_qrels=sentence_qrels,
            extra={"benchmark": name, "beir_folder": str(folder), "split": split},
        )
    lines: dict[tuple[str, str], int] = {}
    qrels = read_qrels(qrels_path, lines)
    queries = read_queries(queries_path)
    corpus, presplit = read_corpus(corpus_path)
    check_qrels(qrels, lines, qrels_path, queries, queries_path, corpus.__contains__, corpus_path)
    examples = judged_examples(qrels, queries, name)
    return bm25_pools(
        name,
        examples,
        corpus,
        presplit,
        depth=depth,
        insert_gold=insert_gold,
        sentence_qrels=Path(sentence_qrels) if sentence_qrels else None,
        corpus_path=corpus_path,
        cache_dir=cache_dir,
        extra={"benchmark": name, "beir_folder": str(folder), "split": split},
    )


def load_trec_collection(
    run: str | Path,
    qrels: str | Path,
    corpus: str | Path,
    queries: str | Path,
    *,
    depth: int = 50,
    insert_gold: bool = False,
    sentence_qrels: str | Path | None = None,
) -> tuple[list[Example], dict[str, Any]]:
    """The judged queries of a TREC collection, candidates from the run's ``depth`` best.

    Raises:
        InputError: a missing or malformed file, unknown ids, empty queries (file and line).
    """
    from .user_pools import run_pools

    for what, p in (("run", run), ("corpus", corpus)):
        if not Path(p).is_file():
            raise InputError(f"{what} file {p} not found")
    if depth < 1:
        raise InputError("--depth must be >= 1")
    name = f"trec:{Path(run).name}"
    return run_pools(
        name,
        Path(run),
        Path(qrels),
        Path(corpus),
        Path(queries),
        depth=depth,
        insert_gold=insert_gold,
        sentence_qrels=Path(sentence_qrels) if sentence_qrels else None,
        extra={"benchmark": name},
    )
