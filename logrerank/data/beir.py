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

from pathlib import Path
from typing import Any

from ..types import InputError
from .qrels import read_qrels
from .schema import Example
from .user_files import check_qrels, judged_examples, read_corpus, read_queries
from .user_pools import bm25_pools, run_pools


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
