"""Paper PDFs in, passages with their paper, section and pages out (``docs/pdf.md``).

:func:`read_pdf` reads a PDF with pdfminer.six (:mod:`logrerank.pdf.extract`), puts its lines
in reading order and leaves out running headers, footers, page numbers and table rows
(:mod:`logrerank.pdf.layout`), finds the title, the section headings, the paragraphs and
the reference list (:mod:`logrerank.pdf.structure`), and returns one
:class:`~logrerank.types.Passage` per paragraph (long ones windowed on sentence boundaries),
titled ``<paper title> — <section heading>``, with ``meta`` = ``{"source", "paper",
"section", "pages", "kind"}``. :func:`pdf_passages` returns just the passages.

pdfminer.six is imported only here; without it a PDF gets a message saying how to install it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..types import InputError, Passage

DEFAULT_MAX_PAGES = 100
"""Pages read per PDF unless the limits say otherwise (``Limits.max_pdf_pages``)."""
WINDOW_CHARS = 1200
"""Paragraphs longer than this are cut into windows of whole sentences."""
_SHORT = 150  # a paragraph shorter than this joins the one before it (same section)


@dataclass
class PdfPaper:
    """One PDF read into passages.

    Attributes:
        name: the file name.
        title: the paper title (from the document; the file name when it has none).
        passages: the passages, in reading order.
        headings: the section headings found, in order.
        references: the reference list's entries (left out of ``passages``).
        n_pages: pages in the document.
        pages_read: pages read (at most the page limit).
        notices: what was cut, left out or could not be read, one sentence each.
        left_out: counts of lines left out, by what they were.
    """

    name: str
    title: str
    passages: list[Passage] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    n_pages: int = 0
    pages_read: int = 0
    notices: list[str] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)


def _require_pdfminer() -> None:
    try:
        import pdfminer  # noqa: F401
    except ImportError:
        raise InputError(
            "reading PDFs needs pdfminer.six: pip install 'logrerank[pdf]' "
            "(or pip install -r requirements.txt)"
        ) from None


def _run_in(text: str, head: str) -> str:
    """``text`` with a full stop after its run-in heading when it has none ("Selecting PDFs We
    remove" -> "Selecting PDFs. We remove"), so the heading does not run into the sentence."""
    rest = text[len(head) :].lstrip()
    if not head or not text.startswith(head) or head[-1] in ".:;!?" or not rest[:1].isupper():
        return text
    return f"{head}. {rest}"


def _passages(st, name: str, window: int) -> list[Passage]:
    from .text import join_lines, vocabulary, windows

    vocab = vocabulary([ln.text for p in st.paragraphs for ln in p.lines])
    merged: list[tuple[str, Any]] = []
    for p in st.paragraphs:
        text = _run_in(join_lines([ln.text for ln in p.lines], vocab), p.lines[0].run_in)
        last = merged[-1][1] if merged else None
        if (
            last is not None
            and len(text) < _SHORT
            and (last.section, last.kind) == (p.section, p.kind)
            and p.kind == "body"
            and len(merged[-1][0]) + len(text) < window
        ):
            merged[-1] = (f"{merged[-1][0]} {text}", last)
            last.lines = last.lines + p.lines
            continue
        merged.append((text, p))
    out: list[Passage] = []
    stem = Path(name).stem
    for text, p in merged:
        head = f"{st.title} — {p.section}" if p.section else st.title
        for piece in windows(text, window):
            meta = {
                "source": name,
                "paper": st.title,
                "section": p.section,
                "pages": p.pages,
                "kind": p.kind,
            }
            out.append(Passage(text=piece, title=head, pid=f"{stem}#{len(out) + 1}", meta=meta))
    return out


def read_pdf(
    path: str | Path,
    *,
    name: str | None = None,
    max_pages: int = DEFAULT_MAX_PAGES,
    window_chars: int = WINDOW_CHARS,
) -> PdfPaper:
    """Read a paper PDF into passages (see the module doc).

    Args:
        path: the PDF file.
        name: its name in titles and messages (default: the file name; the app passes the
            uploaded file's own name).
        max_pages: pages read at most; a notice says when the document has more.
        window_chars: paragraphs longer than this are cut into windows of whole sentences.

    Returns:
        A :class:`PdfPaper`.

    Raises:
        InputError: pdfminer.six missing, not a PDF, encrypted, damaged, a scan without a text
            layer, or no body text found (the message names the file and says what to do).
    """
    _require_pdfminer()
    from .extract import read_lines
    from .layout import reading_order
    from .structure import parse

    path = Path(path)
    name = name or path.name
    if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
        raise InputError(f"max_pages must be a positive integer, got {max_pages!r}")
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a PDF")
    try:
        raw = read_lines(path, max_pages, name)
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None
    lines = reading_order(raw.pages)
    st = parse(lines, raw.meta_title, Path(name).stem)
    passages = _passages(st, name, window_chars)
    if not passages:
        raise InputError(
            f"{name}: no body text found on {len(raw.pages)} page(s) (only headings, figures, "
            "tables or references)"
        )
    notices = list(raw.notices)
    left = Counter(st.left_out)
    if raw.dropped_glyphs:
        left["unknown glyphs"] = raw.dropped_glyphs
    parts = [f"{k} ({v:,})" for k, v in left.items() if v]
    notices.append(
        f"{name}: {len(passages):,} passages from {len(raw.pages):,} page(s), "
        f"{len(st.headings):,} section heading(s)"
        + (f"; left out: {', '.join(parts)}" if parts else "")
    )
    return PdfPaper(
        name=name,
        title=st.title,
        passages=passages,
        headings=st.headings,
        references=st.references,
        n_pages=raw.n_pages,
        pages_read=len(raw.pages),
        notices=notices,
        left_out=dict(left),
    )


def pdf_passages(path: str | Path, **kwargs: Any) -> list[Passage]:
    """The passages of a paper PDF (:func:`read_pdf`'s, same arguments).

    Raises:
        InputError: see :func:`read_pdf`.
    """
    return read_pdf(path, **kwargs).passages


__all__ = ["DEFAULT_MAX_PAGES", "WINDOW_CHARS", "PdfPaper", "pdf_passages", "read_pdf"]
