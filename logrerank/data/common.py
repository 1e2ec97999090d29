"""Helpers shared by the dataset readers (one module per dataset in :mod:`logrerank.data`).

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
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from logrerank.resources import data_root
from logrerank.text.segment import split_sentences as split_spans


def default_data_root() -> Path:
    """Where the public datasets live by default.

    Returns:
        ``$LOGRERANK_DATA`` when that variable is set and non-empty, else ``../shared/data``
        from the working directory (:func:`logrerank.resources.data_root`). The path is
        returned whether or not it exists.
    """
    return data_root()


@functools.lru_cache(maxsize=16384)
def _split_cached(text: str) -> tuple[str, ...]:
    if not text.strip():
        return ()
    parts = [span.text for span in split_spans(text)]
    return tuple(p.strip() for p in parts if p.strip())


def split_sentences(text: str) -> list[str]:
    """Split a paragraph into sentence strings (stripped, empty ones dropped).

    Uses the project's segmenter (:func:`logrerank.text.segment.split_sentences`). Results are
    memoised per text (bounded LRU), since the readers split the same abstracts on every load.

    Args:
        text: Paragraph text.

    Returns:
        The sentences in order.
    """
    return list(_split_cached(text))


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON-lines file, one per non-blank line.

    Raises:
        ValueError: a line is not valid JSON (the message names the file and line).
    """
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{line_no}: not valid JSON ({err.msg})") from err


def read_json(path: str | os.PathLike[str]) -> Any:
    """The parsed content of a JSON file."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


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
