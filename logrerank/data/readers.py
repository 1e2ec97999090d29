"""Readers that turn the public datasets in ``../shared/data`` into the common schema.

Every reader takes explicit file paths, so it does not care where the data lives;
:func:`default_data_root` says where the project looks by default. The dataset README
(``shared/data/README.md``) documents the files; the quirks that matter for the readers are
repeated in each reader's docstring.

All ids are strings. Readers never edit source text except where a docstring says so
(stripping surrounding whitespace from sentences, and removing citation markers from
Citation-Integrity claims, whose raw form is kept in ``meta["raw_claim"]``).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from logrerank.data.schema import Doc, Example, RoleExample
from logrerank.resources import DATA_ENV_VAR, data_root  # noqa: F401

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------
# Label mappings to background / method / result
# ---------------------------------------------------------------------------------------------

#: CSAbstruct label -> role. ``objective`` is background (it states the problem the paper
#: addresses, before any method); ``other`` (acknowledgements, paper-structure notes, URLs)
#: has no role and maps to ``None``.
CSABSTRUCT_ROLE_MAP: dict[str, str | None] = {
    "background": "background",
    "objective": "background",
    "method": "method",
    "result": "result",
    "other": None,
}

#: NICTA-PIBOSO label -> role. Population, intervention and study design describe how the
#: study was done, so they are ``method``. PIBOSO's ``outcome`` covers sentences that report
#: outcomes (results and the conclusions drawn from them), so it is ``result``. ``other``
#: is a catch-all (methods details outside P/I/S, conclusions, statements of interest) with
#: no consistent role, so ``None``.
PIBOSO_ROLE_MAP: dict[str, str | None] = {
    "background": "background",
    "population": "method",
    "intervention": "method",
    "study design": "method",
    "outcome": "result",
    "other": None,
}

_BACKGROUND_HEADINGS = (
    "BACKGROUND",
    "INTRODUCTION",
    "CONTEXT",
    "BACKGROUND CONTEXT",
    "OBJECTIVE",
    "OBJECTIVES",
    "OBJECT",  # J Neurosurg's spelling of OBJECTIVE
    "PRIMARY OBJECTIVE",
    "STUDY OBJECTIVE",
    "STUDY OBJECTIVES",
    "PURPOSE",
    "PURPOSES",
    "PURPOSE OF THE STUDY",
    "PURPOSE OF INVESTIGATION",
    "AIM",
    "AIMS",
    "GOAL",
    "HYPOTHESIS",
    "HYPOTHESES",
    "RATIONALE",
    "RATIONALE AND OBJECTIVES",
    "RATIONALE, AIMS AND OBJECTIVES",
    "AIMS AND OBJECTIVES",
    "AIMS AND BACKGROUND",
    "CONTEXT AND OBJECTIVES",
    "INTRODUCTION AND HYPOTHESIS",
    "BACKGROUND AND PURPOSE",
    "BACKGROUND AND OBJECTIVE",
    "BACKGROUND AND OBJECTIVES",
    "BACKGROUND AND AIM",
    "BACKGROUND AND AIMS",
    "BACKGROUND AND AIM OF THE STUDY",
    "BACKGROUND AND STUDY AIMS",
    "BACKGROUND AND STUDY OBJECTIVE",
    "SUMMARY OF BACKGROUND DATA",
    "SUMMARY BACKGROUND DATA",
)
_METHOD_HEADINGS = (
    "METHOD",
    "METHODS",
    "METHODOLOGY",
    "MATERIAL",
    "MATERIALS AND METHODS",
    "MATERIAL AND METHODS",
    "MATERIAL AND METHOD",
    "METHODS AND MATERIALS",
    "METHOD AND MATERIAL",
    "PATIENTS AND METHODS",
    "PATIENTS AND METHOD",
    "PATIENT AND METHODS",
    "SUBJECTS AND METHODS",
    "PROBANDS AND METHODS",
    "STUDY POPULATION AND METHODS",
    "METHODS OR INTERVENTIONS",
    "DESIGN",
    "STUDY DESIGN",
    "RESEARCH DESIGN",
    "EXPERIMENTAL DESIGN",
    "DESIGN OF STUDY",
    "RESEARCH DESIGN AND METHODS",
    "STUDY DESIGN AND METHODS",
    "METHODS AND STUDY DESIGN",
    "STUDY DESIGN AND SETTING",
    "DESIGN AND SETTING",
    "DESIGN, SETTING, AND PARTICIPANTS",
    "DESIGN, SETTING AND PATIENTS",
    "DESIGN, SETTING, AND PATIENTS",
    "SETTING",
    "SETTINGS",
    "STUDY SETTING",
    "LOCATION",
    "SETTING AND PARTICIPANTS",
    "SETTINGS AND PARTICIPANTS",
    "SETTING AND PATIENTS",
    "PATIENTS AND SETTING",
    "LOCATION, SUBJECTS, AND INTERVENTIONS",
    "PATIENTS",
    "PARTICIPANTS",
    "SUBJECTS",
    "POPULATION",
    "SAMPLE",
    "PATIENT SAMPLE",
    "STUDY SAMPLE",
    "POPULATION AND SAMPLE",
    "PATIENTS AND PARTICIPANTS",
    "PARTICIPANTS AND INTERVENTION",
    "INTERVENTION",
    "INTERVENTIONS",
    "INTERVENTIONS AND OUTCOME MEASURES",
    "MAIN OUTCOME MEASURES",
    "MAIN OUTCOME MEASURE",
    "MAIN OUTCOME MEASUREMENTS",
    "MAIN OUTCOME",
    "OUTCOME MEASURES",
    "OUTCOME MEASURE",
    "OUTCOMES MEASURED",
    "PRIMARY AND SECONDARY OUTCOME MEASURES",
    "OUTCOME",  # in PQA-L these sections name the outcome measures, not results
    "OUTCOMES",
    "END POINT",
    "MEASURES",
    "MAIN MEASURES",
    "MEASUREMENTS",  # Annals style: what was measured
    "MAIN RESEARCH VARIABLES",
    "DATA SOURCES",
    "DATA SOURCE",
    "STUDY SELECTION",
    "DATA EXTRACTION",
    "EXTRACTION METHODS",
    "COLLECTION",
    "CASE DEFINITION",
)
_RESULT_HEADINGS = (
    "RESULTS",
    "RESULT",
    "MAIN RESULTS",
    "KEY RESULTS",
    "FINDINGS",
    "PRINCIPAL FINDINGS",
    "OBSERVATIONS",
    "MEASUREMENTS AND MAIN RESULTS",
    "MEASUREMENTS AND RESULTS",
    "MEASUREMENT AND RESULTS",
    "RESULTS AND DISCUSSION",
    "RESULTS AND LIMITATIONS",
    "DATA SYNTHESIS",  # systematic reviews report their pooled findings here
)

#: PubMedQA section heading (upper case, stripped) -> role. It covers 121 of the 140 distinct
#: headings in PQA-L, which carry all but 48 of its 3,358 sections. Headings not in the
#: table map to ``None`` (no role): mixed sections (``METHODS AND RESULTS``,
#: ``OBJECTIVE AND METHODS``), discussion-like ones (``DISCUSSION``, ``LIMITATIONS``,
#: ``SUMMARY``, ``MAIN BODY``), case descriptions (``CASE REPORT(S)``, ``CASE PRESENTATION``,
#: ``PRESENTATION``, ``DESCRIPTION``), registrations, ``UNLABELLED``, and splitting debris
#: such as ``", FSAII"`` or ``"ICU LOS"``.
PUBMEDQA_ROLE_MAP: dict[str, str] = {
    **dict.fromkeys(_BACKGROUND_HEADINGS, "background"),
    **dict.fromkeys(_METHOD_HEADINGS, "method"),
    **dict.fromkeys(_RESULT_HEADINGS, "result"),
}


def pubmedqa_role(heading: str) -> str | None:
    """Map a PubMedQA section heading to a role.

    Args:
        heading: A raw ``LABELS`` entry, e.g. ``"MATERIALS AND METHODS"``.

    Returns:
        ``"background"``, ``"method"`` or ``"result"``; ``None`` when the heading is not in
        :data:`PUBMEDQA_ROLE_MAP`.
    """
    return PUBMEDQA_ROLE_MAP.get(" ".join(heading.upper().split()))


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def default_data_root() -> Path:
    """Where the public datasets live by default.

    Returns:
        ``$LOGRERANK_DATA`` when that variable is set and non-empty, else ``../shared/data``
        from the working directory (:func:`logrerank.resources.data_root`). The path is
        returned whether or not it exists.
    """
    return data_root()


_PYSBD_SEGMENTER: Any = None


@functools.lru_cache(maxsize=16384)
def _split_cached(text: str) -> tuple[str, ...]:
    return tuple(_split_uncached(text))


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentence strings (stripped, empty ones dropped).

    Uses the project's segmenter ``logrerank.segment.split_sentences`` when that module
    exists (imported lazily, so this module does not depend on it), and falls back to
    ``pysbd`` (English, ``clean=False``) otherwise. The two may split differently, so sentence
    counts of PubMedQA and MuSiQue docs are not fixed numbers. Results are memoised per text
    (bounded LRU), since the readers split the same abstracts on every load.

    Args:
        text: Paragraph text.

    Returns:
        The sentences in order.
    """
    return list(_split_cached(text))


def _split_uncached(text: str) -> list[str]:
    global _PYSBD_SEGMENTER
    if not text.strip():
        return []
    try:
        from logrerank.segment import split_sentences as _project_split
    except ImportError:
        _project_split = None
    if _project_split is not None:
        parts = [getattr(span, "text", span) for span in _project_split(text)]
    else:
        if _PYSBD_SEGMENTER is None:
            import pysbd

            _PYSBD_SEGMENTER = pysbd.Segmenter(language="en", clean=False)
        parts = _PYSBD_SEGMENTER.segment(text)
    return [p.strip() for p in parts if str(p).strip()]


def _read_jsonl(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{line_no}: not valid JSON ({err.msg})") from err


def _read_json(path: str | os.PathLike[str]) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


_CIT_MARKER = re.compile(r"<\|(?:multi_|other_)?cit\|>")
_EMPTY_BRACKETS = re.compile(r"\[\s*[,;]?\s*\]|\(\s*[,;]?\s*\)")


def strip_citation_markers(text: str) -> str:
    """Remove Citation-Integrity citation markers and the empty brackets they leave.

    ``"respiratory failure [<|cit|>]."`` becomes ``"respiratory failure ."``; whitespace is
    collapsed to single spaces.

    Args:
        text: A claim that may contain ``<|cit|>``, ``<|multi_cit|>`` or ``<|other_cit|>``.

    Returns:
        The cleaned claim.
    """
    text = _CIT_MARKER.sub(" ", text)
    text = _EMPTY_BRACKETS.sub(" ", text)
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------
# SciFact and Citation-Integrity
# ---------------------------------------------------------------------------------------------


def read_scifact_corpus(corpus_path: str | os.PathLike[str]) -> dict[str, Doc]:
    """Read a SciFact-format ``corpus.jsonl``.

    Args:
        corpus_path: Path to the corpus file (``doc_id``, ``title``, ``abstract`` per line).

    Returns:
        ``doc_id -> Doc`` in file order. Sentences are stripped of surrounding whitespace but
        never dropped, so rationale indices stay valid.
    """
    corpus: dict[str, Doc] = {}
    for row in _read_jsonl(corpus_path):
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
    passage (DESIGN.md section 4), so a model trained on them learns "the first sentence is
    relevant". With ``sentence_labels=False`` ``gold_sentences`` stays empty (the raw indices
    remain in ``meta["rationales"]``) and the data is used at passage level only. Its corpus
    also repeats texts (47 passages share their text with another id); ids are kept as they
    are, and pools break BM25 ties by ``doc_id`` string order (see
    :mod:`logrerank.data.pools`), so the identical copies of a gold passage sit next to it
    in its pool, indistinguishable from it (5 of the 292 dev claims: their gold passages
    31029/31030/31041 and 31037/31051 are copies of each other); ``meta["gold_duplicates"]``
    names the copies, so an evaluation can decide whether to count them. Its claims carry citation markers (``<|cit|>`` ...), removed from ``query`` when
    ``clean_claims`` (see :func:`strip_citation_markers`); SciFact claims have none.

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
    for row in _read_jsonl(claims_path):
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


def read_citation_integrity(
    claims_path: str | os.PathLike[str],
    corpus_path: str | os.PathLike[str],
    *,
    include_nei: bool = False,
    stats: dict[str, Any] | None = None,
) -> tuple[list[Example], dict[str, Doc]]:
    """Read Citation-Integrity at passage level (its degenerate sentence labels are dropped).

    Shorthand for :func:`read_scifact` with ``dataset="citint"`` and
    ``sentence_labels=False``; see that function for the quirks of this dataset.

    Args:
        claims_path: ``claims_{train,dev}.jsonl``.
        corpus_path: ``corpus.jsonl``.
        include_nei: Keep claims without evidence.
        stats: Optional dict that receives the counts.

    Returns:
        ``(examples, corpus)``.
    """
    return read_scifact(
        claims_path,
        corpus_path,
        dataset="citint",
        include_nei=include_nei,
        sentence_labels=False,
        stats=stats,
    )


# ---------------------------------------------------------------------------------------------
# PubMedQA
# ---------------------------------------------------------------------------------------------


def _pubmedqa_doc(pmid: str, record: dict[str, Any]) -> tuple[Doc, list[str | None]]:
    sentences: list[str] = []
    roles: list[str | None] = []
    contexts = record.get("CONTEXTS") or []
    headings = record.get("LABELS") or []
    for i, context in enumerate(contexts):
        role = pubmedqa_role(headings[i]) if i < len(headings) else None
        for sentence in split_sentences(str(context)):
            sentences.append(sentence)
            roles.append(role)
    return Doc(doc_id=pmid, title="", sentences=sentences), roles


def read_pubmedqa(
    path: str | os.PathLike[str],
    ids_path: str | os.PathLike[str] | None = None,
    split: str = "test",
) -> tuple[list[Example], dict[str, Doc]]:
    """Read PubMedQA PQA-L as question -> own-abstract retrieval.

    The corpus is all 1,000 PQA-L abstracts (``doc_id`` = PMID, ``title`` = ``""``), each the
    concatenation of its ``CONTEXTS`` sections (the abstract without its conclusion) split
    into sentences with :func:`split_sentences`. Each question's gold doc is its own abstract.
    There are no sentence relevance labels (``gold_sentences`` is empty). ``roles[pmid]`` gives
    each sentence of the gold abstract the role of its section heading via
    :data:`PUBMEDQA_ROLE_MAP` (``None`` for unmapped headings). ``meta`` holds
    ``final_decision``, ``long_answer`` (the withheld conclusion), ``headings``, ``year`` and
    ``meshes``.

    Args:
        path: ``ori_pqal.json``.
        ids_path: ``test_ground_truth.json`` (the 500 official test PMIDs). Defaults to the
            file of that name next to ``path``.
        split: ``"test"`` (the 500 ids in ``ids_path``), ``"train"`` (the other 500) or
            ``"all"``.

    Returns:
        ``(examples, corpus)``; examples are in ``ori_pqal.json`` order, and the corpus always
        holds all 1,000 abstracts whatever the split.

    Raises:
        ValueError: For an unknown split, or test ids missing from ``path``.
    """
    if split not in {"test", "train", "all"}:
        raise ValueError(f"PubMedQA split must be 'test', 'train' or 'all', not {split!r}")
    data: dict[str, dict[str, Any]] = _read_json(path)
    ids_path = Path(path).with_name("test_ground_truth.json") if ids_path is None else ids_path
    test_ids = {str(k) for k in _read_json(ids_path)}
    missing = test_ids - set(data)
    if missing:
        raise ValueError(f"{ids_path}: {len(missing)} test ids are not in {path}")
    corpus: dict[str, Doc] = {}
    doc_roles: dict[str, list[str | None]] = {}
    examples: list[Example] = []
    for pmid, record in data.items():
        pmid = str(pmid)
        doc, roles = _pubmedqa_doc(pmid, record)
        corpus[pmid] = doc
        doc_roles[pmid] = roles
        in_test = pmid in test_ids
        if split == "all" or (split == "test") == in_test:
            examples.append(
                Example(
                    qid=pmid,
                    query=str(record["QUESTION"]),
                    gold_doc_ids=[pmid],
                    gold_sentences={},
                    roles={pmid: roles},
                    meta={
                        "dataset": "pubmedqa",
                        "split": "test" if in_test else "train",
                        "final_decision": record.get("final_decision"),
                        "long_answer": record.get("LONG_ANSWER", ""),
                        "headings": list(record.get("LABELS") or []),
                        "year": record.get("YEAR"),
                        "meshes": list(record.get("MESHES") or []),
                    },
                )
            )
    return examples, corpus


# ---------------------------------------------------------------------------------------------
# Multi-hop (fixed pools)
# ---------------------------------------------------------------------------------------------


def read_hotpotqa(path: str | os.PathLike[str]) -> list[Example]:
    """Read a HotpotQA distractor-setting file (original JSON layout).

    Candidates are the question's own paragraphs in file order (10; one train item has 4),
    ``doc_id`` = ``title`` = the paragraph title (titles are unique within a question, and a
    title always denotes the same text across the sample). Sentences are stripped of the
    leading space HotpotQA puts on every sentence after the first, but none is dropped, so
    ``supporting_facts`` indices stay valid (two sentences in the train sample are blank and
    stay as ``""``). ``gold_doc_ids`` are the supporting titles in order of first mention;
    ``gold_sentences[title]`` the sorted ``sent_id`` values.

    The companion ``hotpotqa_train_corpus.json`` is only the union of these paragraphs
    (title -> sentences, identical text), so it is not needed.

    Args:
        path: e.g. ``hotpotqa/hotpotqa_train.json``.

    Returns:
        Examples with ``meta["fixed_pool"] = True`` and ``answer``, ``type``, ``level``,
        ``supporting_facts``.

    Raises:
        ValueError: If a supporting fact names a title or sentence that is not in the context.
    """
    examples: list[Example] = []
    for row in _read_json(path):
        qid = str(row["_id"])
        candidates: list[Doc] = []
        by_title: dict[str, Doc] = {}
        for title, sentences in row["context"]:
            title = str(title)
            if title in by_title:
                raise ValueError(f"{path}: question {qid} repeats paragraph title {title!r}")
            doc = Doc(doc_id=title, title=title, sentences=[str(s).strip() for s in sentences])
            candidates.append(doc)
            by_title[title] = doc
        gold_sentences: dict[str, list[int]] = {}
        for title, sent_id in row.get("supporting_facts") or []:
            title, sent_id = str(title), int(sent_id)
            if title not in by_title or not 0 <= sent_id < len(by_title[title].sentences):
                raise ValueError(
                    f"{path}: question {qid} supporting fact ({title!r}, {sent_id}) "
                    "is not in its context"
                )
            gold_sentences.setdefault(title, []).append(sent_id)
        examples.append(
            Example(
                qid=qid,
                query=str(row["question"]),
                candidates=candidates,
                gold_doc_ids=list(gold_sentences),
                gold_sentences={t: sorted(set(ids)) for t, ids in gold_sentences.items()},
                meta={
                    "dataset": "hotpotqa",
                    "fixed_pool": True,
                    "answer": row.get("answer"),
                    "type": row.get("type"),
                    "level": row.get("level"),
                    "supporting_facts": [list(f) for f in row.get("supporting_facts") or []],
                },
            )
        )
    return examples


def read_musique(path: str | os.PathLike[str]) -> list[Example]:
    """Read a MuSiQue(-Ans) file.

    Candidates are the question's 20 paragraphs in file order, each split into sentences with
    :func:`split_sentences`. ``doc_id`` is ``"<question id>#<idx>"``: titles are not usable as
    ids because 37 of the 100 sample questions have two different paragraphs with the same
    title. ``gold_doc_ids`` are the ``is_supporting`` paragraphs; there are no sentence labels.
    ``meta["hops"]`` lists, per step of ``question_decomposition``, the doc id of its
    ``paragraph_support_idx`` (what hop coverage@k is measured on).

    The companion ``musique_train_corpus.json`` is only the union of these paragraphs
    (``{title, text}`` records), so it is not needed.

    Args:
        path: e.g. ``musique/musique_train.json``.

    Returns:
        Examples with ``meta["fixed_pool"] = True`` and ``answer``, ``answer_aliases``,
        ``hops``, ``decomposition``, ``answerable``.
    """
    examples: list[Example] = []
    for row in _read_json(path):
        qid = str(row["id"])
        candidates: list[Doc] = []
        id_by_idx: dict[int, str] = {}
        gold: list[str] = []
        for position, para in enumerate(row["paragraphs"]):
            idx = int(para.get("idx", position))
            doc_id = f"{qid}#{idx}"
            id_by_idx[idx] = doc_id
            candidates.append(
                Doc(
                    doc_id=doc_id,
                    title=str(para.get("title") or ""),
                    sentences=split_sentences(str(para.get("paragraph_text") or "")),
                )
            )
            if para.get("is_supporting"):
                gold.append(doc_id)
        decomposition = row.get("question_decomposition") or []
        hops = [
            id_by_idx[int(step["paragraph_support_idx"])]
            for step in decomposition
            if step.get("paragraph_support_idx") is not None
        ]
        examples.append(
            Example(
                qid=qid,
                query=str(row["question"]),
                candidates=candidates,
                gold_doc_ids=gold,
                meta={
                    "dataset": "musique",
                    "fixed_pool": True,
                    "answer": row.get("answer"),
                    "answer_aliases": list(row.get("answer_aliases") or []),
                    "answerable": row.get("answerable"),
                    "hops": hops,
                    "decomposition": [
                        {"question": s.get("question"), "answer": s.get("answer")}
                        for s in decomposition
                    ],
                },
            )
        )
    return examples


# ---------------------------------------------------------------------------------------------
# Role corpora
# ---------------------------------------------------------------------------------------------


def read_csabstruct(path: str | os.PathLike[str]) -> list[RoleExample]:
    """Read a CSAbstruct split (``{train,dev,test}.jsonl``).

    Labels are mapped with :data:`CSABSTRUCT_ROLE_MAP` (``other`` -> ``None``); the raw labels
    are kept in ``raw_labels``. Every abstract is kept. ``abstract_id`` is 0 in every row, so
    ``doc_id`` is ``"<file stem>:<line index>"``.

    Args:
        path: Path to the split file.

    Returns:
        One :class:`RoleExample` per abstract, in file order.

    Raises:
        ValueError: If a row has a different number of sentences and labels.
    """
    stem = Path(path).stem
    out: list[RoleExample] = []
    for i, row in enumerate(_read_jsonl(path)):
        sentences = [str(s).strip() for s in row["sentences"]]
        raw = [str(label).strip().lower() for label in row["labels"]]
        if len(raw) != len(sentences):
            raise ValueError(f"{path}: row {i} has {len(sentences)} sentences, {len(raw)} labels")
        out.append(
            RoleExample(
                doc_id=f"{stem}:{i}",
                sentences=sentences,
                labels=[CSABSTRUCT_ROLE_MAP.get(label) for label in raw],
                source="csabstruct",
                raw_labels=raw,
            )
        )
    return out


def read_nicta(path: str | os.PathLike[str]) -> list[RoleExample]:
    """Read a processed NICTA-PIBOSO split (``{train,dev,test}_clean.txt``).

    Format: ``###<PMID>`` starts an abstract, then ``label<TAB>sentence`` lines, and a blank
    line ends it. Labels are mapped with :data:`PIBOSO_ROLE_MAP` (``other`` -> ``None``); raw
    labels are kept. Sentences are left as in the file, which is **tokenized** (spaces around
    punctuation, e.g. ``"( SA ) and"``), unlike every other corpus here. ``doc_id`` is
    ``"<file stem>:<PMID>"``.

    Args:
        path: Path to the split file.

    Returns:
        One :class:`RoleExample` per abstract, in file order.

    Raises:
        ValueError: On a sentence line outside an abstract or without a tab.
    """
    stem = Path(path).stem
    out: list[RoleExample] = []
    current: RoleExample | None = None

    def flush() -> None:
        nonlocal current
        if current is not None and current.sentences:
            out.append(current)
        current = None

    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("###"):
                flush()
                current = RoleExample(
                    doc_id=f"{stem}:{line[3:].strip()}",
                    sentences=[],
                    labels=[],
                    source="nicta_piboso",
                    raw_labels=[],
                )
            elif not line.strip():
                flush()
            else:
                if current is None or "\t" not in line:
                    raise ValueError(f"{path}:{line_no}: expected 'label<TAB>sentence'")
                label, sentence = line.split("\t", 1)
                label = label.strip().lower()
                current.sentences.append(sentence.strip())
                current.raw_labels.append(label)
                current.labels.append(PIBOSO_ROLE_MAP.get(label))
    flush()
    return out
