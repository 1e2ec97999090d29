"""Reader of Citation-Integrity (SciFact format), at passage level."""

from __future__ import annotations

import os
from typing import Any

from logrerank.data.schema import Doc, Example
from logrerank.data.scifact import read_scifact


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
