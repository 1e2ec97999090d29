"""The role tagger's data: sentence-role corpora as (sentences, labels) per abstract.

CSAbstruct, NICTA-PIBOSO and the section labels of the PubMedQA PQA-L abstracts, all mapped to
background / method / result by :mod:`logrerank.data.role_corpora` and :mod:`logrerank.data.headings`. PubMedQA has a ``train`` split
(its 500 non-test ids) and a ``test`` split (the 500 official test ids) only.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...config import ROLE_NAMES

IGNORE = -100  # label id of sentences without a role (CSAbstruct/NICTA "other", unmapped headings)

RoleDocs = tuple[list[list[str]], list[list[str | None]]]  # (sentences per doc, labels per doc)


def role_data_root(data_root: str | os.PathLike[str] | None) -> Path:
    from ...data.common import default_data_root

    return Path(data_root) if data_root else default_data_root()


def role_split_path(
    dataset: str, split: str, data_root: str | os.PathLike[str] | None = None
) -> Path:
    """The file holding one split (whether or not it exists).

    Raises:
        ValueError: unknown dataset or split.
    """
    root = role_data_root(data_root)
    if dataset == "pubmedqa":
        if split not in ("train", "test"):
            raise ValueError("PubMedQA has a train (non-test ids) and a test split only")
        return root / "pubmedqa" / "ori_pqal.json"
    if split not in ("train", "dev", "test"):
        raise ValueError(f"unknown split {split!r}")
    if dataset == "csabstruct":
        return root / "csabstruct" / f"{split}.jsonl"
    if dataset == "nicta":
        return root / "nicta_piboso" / f"{split}_clean.txt"
    raise ValueError(f"unknown role dataset {dataset!r}")


def load_role_split(
    dataset: str, split: str, data_root: str | os.PathLike[str] | None = None
) -> RoleDocs:
    """Sentences and mapped role labels of one split.

    Args:
        dataset: ``"csabstruct"``, ``"nicta"`` or ``"pubmedqa"``.
        split: ``"train"``, ``"dev"`` or ``"test"``; PubMedQA has ``"train"`` (the 500 non-test
            ids) and ``"test"`` (the 500 official test ids) only.
        data_root: public data folder; None = the default.

    Raises:
        FileNotFoundError: the split's file is absent. ValueError: unknown dataset/split.
    """
    from ...data.pubmedqa import read_pubmedqa
    from ...data.role_corpora import read_csabstruct, read_nicta

    path = role_split_path(dataset, split, data_root)
    if not path.is_file():
        raise FileNotFoundError(path)
    if dataset == "pubmedqa":
        examples, corpus = read_pubmedqa(path, split=split)
        docs, labels = [], []
        for ex in examples:
            sents, roles = list(corpus[ex.qid].sentences), list(ex.roles[ex.qid])
            if len(sents) != len(roles):
                raise ValueError(f"PubMedQA {ex.qid}: {len(sents)} sentences, {len(roles)} roles")
            docs.append(sents)
            labels.append(roles)
        return docs, labels
    reader = read_csabstruct if dataset == "csabstruct" else read_nicta
    rows = reader(path)
    return [list(r.sentences) for r in rows], [list(r.labels) for r in rows]


def label_ids(labels: list[list[str | None]]) -> list[int]:
    """Role label ids in flat sentence order (:data:`IGNORE` for unlabelled sentences)."""
    index = {r: i for i, r in enumerate(ROLE_NAMES)}
    return [index[x] if x is not None else IGNORE for doc in labels for x in doc]
