"""Reading one or several passages files (JSON, JSONL, TXT and paper PDFs) into one input.

Shared by the app's upload, ``logrerank rerank --passages A --passages B`` and
``rerank-batch`` lines that name PDFs. :func:`read_files` reads every file; a file that
cannot be read is skipped with a notice naming it and saying why, and the others are still
ranked (only when no file can be read is that an error). A PDF is read by
:func:`logrerank.pdf.read_pdf` (its passages carry ``meta`` with the paper, section and
pages); any other file by :func:`logrerank.inputs.passages.read_passages_file`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..types import InputError, Passage
from .limits import DEFAULT_LIMITS, Limits
from .passages import read_passages_file

PASSAGE_SUFFIXES = (".json", ".jsonl", ".txt", ".pdf")
"""File types the app's upload takes (any other is read as plain text by the CLI)."""


@dataclass
class FilesInput:
    """What :func:`read_files` read.

    Attributes:
        question: the first question a JSON file held (None when none did).
        passages: the passages of every readable file, file after file.
        notices: one sentence per file skipped, per PDF read, per page limit hit.
        names: the files read, in order.
        skipped: the files that could not be read.
    """

    question: str | None = None
    passages: list[Passage] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def is_pdf(path: Path) -> bool:
    """A ``.pdf`` name, or a file that starts like a PDF whatever its name."""
    if path.suffix.lower() == ".pdf":
        return True
    try:
        with path.open("rb") as f:
            return f.read(5) == b"%PDF-"
    except OSError:
        return False


def read_one(
    path: str | Path, limits: Limits | None = None, name: str | None = None
) -> tuple[str | None, list[Passage], list[str]]:
    """``(question, passages, notices)`` of one passages file or PDF.

    Args:
        path: the file.
        limits: its size limit (``max_upload_bytes``) and page limit (``max_pdf_pages``).
        name: its name in messages (default: the file name).

    Raises:
        InputError: the file cannot be read (the message names it and says why).
    """
    limits = limits or DEFAULT_LIMITS
    path = Path(path)
    name = name or path.name
    if not path.exists():
        raise InputError(f"{name} not found")
    if path.is_file() and is_pdf(path):
        size = path.stat().st_size
        if size > limits.max_upload_bytes:
            raise InputError(
                f"{name} is {size:,} bytes ({size / 1e6:,.1f} MB); the limit is "
                f"{limits.max_upload_bytes:,} bytes ({limits.max_upload_bytes / 1e6:,.1f} MB)"
            )
        from ..pdf import read_pdf

        paper = read_pdf(path, name=name, max_pages=limits.max_pdf_pages)
        return None, paper.passages, paper.notices
    question, passages = read_passages_file(path, max_bytes=limits.max_upload_bytes)
    return question, passages, []


def read_files(
    paths: list[str | Path], limits: Limits | None = None, names: list[str] | None = None
) -> FilesInput:
    """Read several passages files into one input, skipping (with a notice) unreadable ones.

    Args:
        paths: the files, in order.
        limits: size and page limits per file.
        names: their names in messages (default: the file names).

    Raises:
        InputError: no file given, or none could be read (the message says why for each).
    """
    if not paths:
        raise InputError("no passages file given")
    out = FilesInput()
    errors: list[str] = []
    for i, path in enumerate(paths):
        name = names[i] if names and i < len(names) else Path(path).name
        try:
            question, passages, notices = read_one(path, limits, name)
        except InputError as exc:
            errors.append(str(exc))
            out.skipped.append(name)
            continue
        out.question = out.question or question
        out.passages += passages
        out.notices += notices
        out.names.append(name)
    if not out.passages:
        if len(errors) == 1:
            raise InputError(errors[0])
        raise InputError("no file could be read: " + "; ".join(errors))
    out.notices += [f"skipped: {e}; the other files are ranked" for e in errors]
    return out
