"""Reader of PubMedQA PQA-L as question -> own-abstract retrieval."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from logrerank.data.common import read_json, split_sentences
from logrerank.data.headings import pubmedqa_role
from logrerank.data.schema import Doc, Example


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
    :data:`~logrerank.data.headings.PUBMEDQA_ROLE_MAP` (``None`` for unmapped headings).
    ``meta`` holds ``final_decision``, ``long_answer`` (the withheld conclusion), ``headings``, ``year`` and
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
    data: dict[str, dict[str, Any]] = read_json(path)
    ids_path = Path(path).with_name("test_ground_truth.json") if ids_path is None else ids_path
    test_ids = {str(k) for k in read_json(ids_path)}
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
