"""Candidate pools of user collections: BM25 over a BEIR corpus, or a first-stage TREC run.

Called by :mod:`logrerank.data.beir`. BM25 pools reuse the project's pool builder and cache
(:func:`logrerank.data.pools.build_or_load_pools`); run pools are read by the reader
``rerank-batch`` uses (:func:`logrerank.batch.trec.read_trec_questions`). Either way a passage
is split into sentences once, when it first becomes a candidate (or is named by a sentence
qrel), and only then.
"""

from __future__ import annotations

import dataclasses
import statistics
from pathlib import Path
from typing import Any

from ..types import InputError
from .first_pass import pool_from_ranking
from .qrels import read_qrels
from .schema import Doc, Example
from .user_files import (
    DOC_ID_KEYS,
    attach_sentence_qrels,
    check_qrels,
    judged_examples,
    passage_doc,
    read_queries,
    split_doc,
)


def _pool_stats(examples: list[Example]) -> dict[str, Any]:
    """Counts of the evaluated queries and the pools' recall of the relevant passages."""
    recalls = []
    for ex in examples:
        if ex.gold_doc_ids and ex.candidates:
            pool = {d.doc_id for d in ex.candidates}
            recalls.append(sum(g in pool for g in ex.gold_doc_ids) / len(ex.gold_doc_ids))
    sizes = [len(ex.candidates) for ex in examples]
    return {
        "n_examples": len(examples),
        "queries_without_relevant": sum(not ex.gold_doc_ids for ex in examples),
        "queries_without_candidates": sum(not ex.candidates for ex in examples),
        "pool_recall": round(statistics.mean(recalls), 4) if recalls else None,
        "pool_size_min": min(sizes, default=0),
        "pool_size_max": max(sizes, default=0),
        "max_grade": max((g for ex in examples for g in ex.gold_gains.values()), default=0),
    }


def bm25_pools(
    name: str,
    examples: list[Example],
    corpus: dict[str, Doc],
    presplit: set[str],
    *,
    depth: int,
    insert_gold: bool,
    sentence_qrels: Path | None,
    corpus_path: Path,
    cache_dir: str | Path | None,
    extra: dict[str, Any],
) -> tuple[list[Example], dict[str, Any]]:
    """BM25 top-``depth`` over the whole corpus per query (cached), sentences split on demand.

    Without ``insert_gold`` the pool builder gets the queries without their gold ids, so it
    inserts nothing; the gold labels are put back afterwards.
    """
    from . import pools

    split: dict[str, Doc] = {}

    def sentence_doc(doc_id: str) -> Doc:
        if doc_id in presplit:
            return corpus[doc_id]
        if doc_id not in split:
            split[doc_id] = split_doc(corpus[doc_id])
        return split[doc_id]

    queries = (
        examples if insert_gold else [dataclasses.replace(ex, gold_doc_ids=[]) for ex in examples]
    )
    cache_name = name.replace(":", "-") + ("-gold" if insert_gold else "")
    pooled, stats = pools.build_or_load_pools(
        cache_name, queries, corpus, k=depth, cache_dir=cache_dir
    )
    out = [
        dataclasses.replace(
            ex,
            candidates=[sentence_doc(d.doc_id) for d in p.candidates],
            meta={**ex.meta, **p.meta},
        )
        for ex, p in zip(examples, pooled, strict=True)
    ]
    info: dict[str, Any] = {
        **extra,
        "pools": f"BM25 top {depth} over {corpus_path.name}",
        "depth": depth,
        "insert_gold": insert_gold,
        "corpus_size": len(corpus),
        "cache_file": stats.get("cache_file"),
        "cached": stats.get("cached"),
        "n_gold_inserted": stats.get("n_gold_inserted", 0) if insert_gold else 0,
    }
    if sentence_qrels is not None:
        info.update(
            attach_sentence_qrels(
                out,
                sentence_qrels,
                lambda d: sentence_doc(d).sentences if d in corpus else None,
                corpus_path,
            )
        )
    return out, {**info, **_pool_stats(out)}


def run_pools(
    name: str,
    run: Path,
    qrels_path: Path,
    corpus_path: Path,
    queries_path: Path,
    *,
    depth: int,
    insert_gold: bool,
    sentence_qrels: Path | None,
    extra: dict[str, Any],
) -> tuple[list[Example], dict[str, Any]]:
    """Pools from a first-stage TREC run: each judged query's ``depth`` best documents.

    A judged query the run lacks has no candidates (it scores 0); run queries without
    judgements are skipped. With ``insert_gold`` the paper's rule applies to the whole run
    (relevant passages the run lacks altogether rank after it, by id).

    Raises:
        InputError: a malformed run line, a run document missing from the corpus, a query whose
            lines are not together, unknown ids in the qrels, empty queries (file and line).
    """
    from ..batch.io import BadLine
    from ..batch.trec import OffsetIndex, read_trec_questions

    if not run.is_file():
        raise InputError(f"run file {run} not found")
    lines: dict[tuple[str, str], int] = {}
    qrels = read_qrels(qrels_path, lines)
    queries = read_queries(queries_path)
    docs = OffsetIndex(corpus_path, DOC_ID_KEYS)
    split: dict[str, Doc] = {}

    def doc_of(doc_id: str) -> Doc | None:
        """The corpus line as a Doc (its own ``sentences`` when it has them), split once."""
        if doc_id not in split:
            line = docs.get(doc_id)
            if line is None:
                return None
            split[doc_id] = passage_doc(line, doc_id)[0]
        return split[doc_id]

    def sentences_of(doc_id: str) -> list[str] | None:
        doc = doc_of(doc_id)
        return None if doc is None else doc.sentences

    try:
        check_qrels(
            qrels, lines, qrels_path, queries, queries_path, docs.offsets.__contains__, corpus_path
        )
        examples = judged_examples(qrels, queries, name)
        by_qid = {ex.qid: ex for ex in examples}
        pools: dict[str, list[Doc]] = {}
        n_inserted = unjudged = 0
        questions = read_trec_questions(
            run, corpus_path, queries_path, depth=None if insert_gold else depth
        )
        for item in questions:
            if isinstance(item, BadLine):
                if item.qid in by_qid or item.reason.startswith("malformed"):
                    raise InputError(f"{run} line {item.line}: {item.reason}")
                unjudged += 1
                continue
            ex = by_qid.get(item.qid)
            if ex is None:
                unjudged += 1
                continue
            if item.qid in pools:
                raise InputError(
                    f"{run} line {item.line}: query {item.qid!r} again (a query's lines must "
                    "be together)"
                )
            ranked = [p["id"] for p in item.passages]
            if insert_gold:
                in_run, top = set(ranked), set(ranked[:depth])
                missing = sorted(g for g in ex.gold_doc_ids if g not in in_run)
                n_inserted += sum(g not in top for g in set(ex.gold_doc_ids))
                ranked, _ = pool_from_ranking(ranked + missing, ex.gold_doc_ids, depth)
            pools[item.qid] = [doc_of(d) for d in ranked]
        out = [dataclasses.replace(ex, candidates=pools.get(ex.qid, [])) for ex in examples]
        info: dict[str, Any] = {
            **extra,
            "pools": f"run {run.name}, top {depth}",
            "run": str(run),
            "qrels": str(qrels_path),
            "depth": depth,
            "insert_gold": insert_gold,
            "n_gold_inserted": n_inserted,
            "run_queries_without_qrels": unjudged,
        }
        if sentence_qrels is not None:
            info.update(attach_sentence_qrels(out, sentence_qrels, sentences_of, corpus_path))
    finally:
        docs.close()
    return out, {**info, **_pool_stats(out)}
