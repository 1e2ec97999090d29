"""``rerank-batch`` lines that name paper PDFs: ``{"id", "question", "pdfs": ["a.pdf", ...]}``.

A line's ``"pdfs"`` (paths relative to the input file's folder, or absolute) are read with
:func:`logrerank.pdf.read_pdf` into passages (``{"id", "title", "text", "meta"}`` dicts, ids
``<file stem>#<n>``) placed after the line's own ``"passages"`` (if any). Each PDF is read
once per run however many lines name it. A PDF that cannot be read is skipped with a notice
in the record's ``warnings``; a line none of whose PDFs can be read (and that has no other
passage) is a bad line saying why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..inputs.files import read_one
from ..types import InputError


class PdfCache:
    """PDFs read so far in this run: path -> (passage dicts, notices) or the error message."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.read: dict[Path, tuple[list[dict[str, Any]], list[str]] | str] = {}

    def get(self, name: str) -> tuple[list[dict[str, Any]], list[str]] | str:
        """The passages and notices of one PDF, or why it cannot be read."""
        path = Path(name) if Path(name).is_absolute() else self.folder / name
        if path not in self.read:
            try:
                _, passages, notices = read_one(path, name=str(name))
                dicts = [
                    {"id": p.pid, "title": p.title, "text": p.text, "meta": p.meta}
                    for p in passages
                ]
                self.read[path] = (dicts, notices)
            except InputError as exc:
                self.read[path] = str(exc)
        return self.read[path]


def add_pdfs(passages: Any, pdfs: Any, cache: PdfCache) -> tuple[Any, list[str], str | None]:
    """``(passages, notices, error)``: the line's passages with its PDFs' passages added.

    ``error`` is set (and the line bad) when ``pdfs`` is not a list of file names, or when no
    passage is left because none of the PDFs could be read.
    """
    if not isinstance(pdfs, list) or not all(isinstance(x, str) and x for x in pdfs):
        return passages, [], "'pdfs' must be a list of PDF file names"
    out = list(passages) if isinstance(passages, list) else []
    notices: list[str] = []
    errors: list[str] = []
    for name in pdfs:
        got = cache.get(name)
        if isinstance(got, str):
            errors.append(got)
            continue
        out += got[0]
        notices += got[1]
    if not out:
        return passages, notices, "; ".join(errors) or "no passages"
    notices += [f"skipped: {e}; the other files are ranked" for e in errors]
    return out, notices, None
