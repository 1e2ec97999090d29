"""Readers of the sentence-role corpora CSAbstruct and NICTA-PIBOSO, with their label
mappings to background / method / result (training data of the role tagger).
"""

from __future__ import annotations

import os
from pathlib import Path

from logrerank.data.common import read_jsonl
from logrerank.data.schema import RoleExample

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
    for i, row in enumerate(read_jsonl(path)):
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
