"""Reader of SciFact-format claims and corpora (SciFact; Citation-Integrity shares the format,
see :mod:`logrerank.data.citation_integrity`)."""

from __future__ import annotations

import logging
import os
from typing import Any

from logrerank.data.common import read_jsonl, strip_citation_markers
from logrerank.data.schema import Doc, Example

logger = logging.getLogger(__name__)


def read_scifact_corpus(corpus_path: str | os.PathLike[str]) -> dict[str, Doc]:
    """Read a SciFact-format ``corpus.jsonl``.

    Args:
        corpus_path: Path to the corpus file (``doc_id``, ``title``, ``abstract`` per line).

    Returns:
        ``doc_id -> Doc`` in file order. Sentences are stripped of surrounding whitespace but
        never dropped, so rationale indices stay valid.
    """
    corpus: dict[str, Doc] = {}
    for row in read_jsonl(corpus_path):
        doc_id = str(row["doc_id"])
        if doc_id in corpus:
            raise ValueError(f"{corpus_path}: duplicate doc_id {doc_id}")
        sentences = [str(s).strip() for s in row.get("abstract") or []]
        corpus[doc_id] = Doc(doc_id=doc_id, title=str(row.get("title") or ""), sentences=sentences)
    return corpus


def _text_key(doc: Doc) -> tuple[str, tuple[str, ...]]:
    return doc.title, tuple(doc.sentences)


def read_scifact(
    claims_path: str | os.PathLike[str],
    corpus_path: str | os.PathLike[str],
    *,
    dataset: str = "scifact",
    include_nei: bool = False,
    sentence_labels: bool = True,
    clean_claims: bool = True,
    stats: dict[str, Any] | None = None,
) -> tuple[list[Example], dict[str, Doc]]:
    """Read SciFact-format claims and corpus (SciFact and Citation-Integrity).

    Each claim becomes an :class:`Example` with no candidates yet (pools are built by
    :mod:`logrerank.data.pools`). ``gold_doc_ids`` are the keys of ``evidence`` in file order;
    ``gold_sentences[doc]`` is the sorted union of the sentence indices of all rationales for
    that doc. ``meta`` holds ``labels`` (doc -> SUPPORT/CONTRADICT or ACCURATE/NOT_ACCURATE),
    ``rationales`` (doc -> list of index lists, as in the file), ``cited_doc_ids``,
    ``raw_claim`` and ``gold_duplicates`` (gold doc -> other corpus ids with the identical
    title and sentences; only gold docs that have such copies appear).

    Claims with empty ``evidence`` (NOT ENOUGH INFO) are skipped unless ``include_nei``. The
    number skipped is logged at INFO level and, when ``stats`` is given, written into it
    together with the other counts: ``n_claims`` (in the file), ``n_examples`` (returned),
    ``n_skipped_nei``.

    Citation-Integrity uses this reader with ``dataset="citint", sentence_labels=False``. Its
    sentence labels are degenerate: every evidence entry is sentence 0 of its ~5-sentence
    passage (docs/evaluation.md), so a model trained on them learns "the first sentence is
    relevant". With ``sentence_labels=False`` ``gold_sentences`` stays empty (the raw indices
    remain in ``meta["rationales"]``) and the data is used at passage level only. Its corpus
    also repeats texts (47 passages share their text with another id); ids are kept as they
    are, and pools break BM25 ties by ``doc_id`` string order (see
    :mod:`logrerank.data.pools`), so the identical copies of a gold passage sit next to it
    in its pool, indistinguishable from it (5 of the 292 dev claims: their gold passages
    31029/31030/31041 and 31037/31051 are copies of each other); ``meta["gold_duplicates"]``
    names the copies, so an evaluation can decide whether to count them. Its claims carry
    citation markers (``<|cit|>`` ...), removed from ``query`` when ``clean_claims`` (see
    :func:`~logrerank.data.common.strip_citation_markers`); SciFact claims have none.

    Args:
        claims_path: ``claims_{train,dev}.jsonl``.
        corpus_path: ``corpus.jsonl`` of the same dataset.
        dataset: Name stored in ``meta["dataset"]``.
        include_nei: Keep claims without evidence (their gold lists are empty).
        sentence_labels: Fill ``gold_sentences`` from the rationales.
        clean_claims: Strip citation markers from the query text.
        stats: Optional dict that receives the counts described above.

    Returns:
        ``(examples, corpus)`` with ``corpus`` as from :func:`read_scifact_corpus`.

    Raises:
        ValueError: If a claim has no labels at all (an unlabelled test file), or if evidence
            points to a doc that is not in the corpus or to a sentence outside it.
    """
    corpus = read_scifact_corpus(corpus_path)
    same_text: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for doc in corpus.values():
        same_text.setdefault((doc.title, tuple(doc.sentences)), []).append(doc.doc_id)
    examples: list[Example] = []
    n_claims = n_nei = 0
    for row in read_jsonl(claims_path):
        n_claims += 1
        if "evidence" not in row:
            raise ValueError(
                f"{claims_path}: claim {row.get('id')} has no 'evidence' field "
                "(an unlabelled test split cannot be used for evaluation)"
            )
        evidence: dict[str, list[dict[str, Any]]] = row["evidence"] or {}
        if not evidence:
            n_nei += 1
            if not include_nei:
                continue
        raw_claim = str(row["claim"])
        gold_doc_ids = [str(d) for d in evidence]
        gold_sentences: dict[str, list[int]] = {}
        labels: dict[str, str] = {}
        rationales: dict[str, list[list[int]]] = {}
        for doc_id, rats in evidence.items():
            doc_id = str(doc_id)
            if doc_id not in corpus:
                raise ValueError(f"{claims_path}: claim {row['id']} cites unknown doc {doc_id}")
            n_sent = len(corpus[doc_id].sentences)
            idx_lists = [[int(i) for i in r["sentences"]] for r in rats]
            bad = [i for idx in idx_lists for i in idx if not 0 <= i < n_sent]
            if bad:
                raise ValueError(
                    f"{claims_path}: claim {row['id']} doc {doc_id}: sentence indices {bad} "
                    f"outside its {n_sent} sentences"
                )
            rationales[doc_id] = idx_lists
            labels[doc_id] = str(rats[0]["label"]) if rats else ""
            if sentence_labels:
                gold_sentences[doc_id] = sorted({i for idx in idx_lists for i in idx})
        examples.append(
            Example(
                qid=str(row["id"]),
                query=strip_citation_markers(raw_claim) if clean_claims else raw_claim,
                gold_doc_ids=gold_doc_ids,
                gold_sentences=gold_sentences,
                meta={
                    "dataset": dataset,
                    "raw_claim": raw_claim,
                    "labels": labels,
                    "rationales": rationales,
                    "cited_doc_ids": [str(d) for d in row.get("cited_doc_ids") or []],
                    "gold_duplicates": {
                        d: [o for o in same_text[_text_key(corpus[d])] if o != d]
                        for d in gold_doc_ids
                        if len(same_text[_text_key(corpus[d])]) > 1
                    },
                    "nei": not evidence,
                },
            )
        )
    logger.info(
        "%s: read %d claims from %s, skipped %d without evidence (NEI)%s",
        dataset,
        n_claims,
        claims_path,
        n_nei if not include_nei else 0,
        "" if not include_nei else f"; kept {n_nei} NEI claims",
    )
    if stats is not None:
        stats.update(
            n_claims=n_claims,
            n_examples=len(examples),
            n_skipped_nei=0 if include_nei else n_nei,
            n_nei=n_nei,
        )
    return examples, corpus
