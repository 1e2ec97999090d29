"""Text lines of a PDF, with their position, font size and weight (pdfminer.six).

:func:`read_lines` opens a PDF and returns one :class:`Line` per text line fragment of every
page read, in top-down page coordinates. Characters are normalised here: ligatures
(``ﬁ`` -> ``fi``), TeX symbol glyph ids that have no Unicode mapping (``(cid:15)`` in a CMSY
font -> ``•``; any other ``(cid:N)`` is dropped and counted), soft hyphens and zero-width
characters. Layout analysis runs inside form XObjects too (``LAParams(all_texts=True)``):
some PDFs draw each whole page as one form, and pdfminer's default then returns the page's
words run together without spaces.

Every problem with the file raises :class:`~logrerank.types.InputError` naming it: not a PDF,
encrypted, damaged, or no text layer at all (a scan). A file damaged after some pages keeps
the pages read, with a notice.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from ..types import InputError

log = logging.getLogger(__name__)
logging.getLogger("pdfminer").setLevel(logging.ERROR)  # it logs every odd object as a warning

LIGATURES = {
    "\ufb00": "ff",
    "\ufb01": "fi",
    "\ufb02": "fl",
    "\ufb03": "ffi",
    "\ufb04": "ffl",
    "\ufb05": "st",
    "\ufb06": "st",
    "\u00ad": "",  # soft hyphen (a line-end one is restored as "-" by the line joiner)
    "\u200b": "",
    "\u200c": "",
    "\u200d": "",
    "\ufeff": "",
    "\u00a0": " ",
}
"""Characters replaced in every extracted character."""

CMSY = {0: "\u2212", 1: "\u00b7", 2: "\u00d7", 3: "*", 4: "\u00f7", 6: "\u00b1", 13: "\u00a9"}
CMSY.update({15: "\u2022", 20: "\u2264", 21: "\u2265", 24: "\u223c", 25: "\u2248", 33: "\u2192"})
CMSY.update({49: "\u221e", 50: "\u2208", 102: "{", 103: "}", 106: "|", 112: "\u221a"})
"""TeX math-symbol (OMS / CMSY) code points of glyphs PDFs often leave without Unicode."""
_CID = re.compile(r"\(cid:(\d+)\)")
_BOLD = re.compile(r"bold|black|heavy|semibold|demi|medi|[-+,]b$|\.b$", re.I)
_SYMBOL_FONT = re.compile(r"cmsy|msbm|msam|sy[st]|symbol|mt2sy", re.I)


@dataclass
class Line:
    """One text line fragment of a page (coordinates in points, y from the top of the page).

    Attributes:
        text: the normalised text (no trailing newline).
        x0: left edge.
        x1: right edge.
        top: top edge (distance from the top of the page).
        bottom: bottom edge.
        size: font size of most of its characters.
        bold: most of its letters are set in a bold font.
        page: 1-based page number.
        kind: what the layout pass found it to be ("body" until then).
        col: its column on the page (-1 = spans both columns).
        run_in: the bold words it starts with when the rest is not bold (a run-in heading
            such as "Training." or "Selecting PDFs"), else "".
    """

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool
    page: int
    kind: str = "body"
    col: int = 0
    run_in: str = ""

    @property
    def width(self) -> float:
        """Its width in points."""
        return self.x1 - self.x0


@dataclass
class PdfText:
    """What :func:`read_lines` found in a PDF.

    Attributes:
        pages: per page read, ``(width, height, lines)``.
        n_pages: pages in the document (may be more than read).
        meta_title: the document information's ``Title`` (may be empty or junk).
        notices: what was cut, dropped or could not be read.
        dropped_glyphs: ``(cid:N)`` glyph ids without a known character, dropped.
    """

    pages: list[tuple[float, float, list[Line]]] = field(default_factory=list)
    n_pages: int = 0
    meta_title: str = ""
    notices: list[str] = field(default_factory=list)
    dropped_glyphs: int = 0


def _char_text(text: str, fontname: str, glyphs: list[int]) -> str:
    """One character's text, normalised (ligatures, known glyph ids, stray glyph ids dropped)."""
    if text.startswith("(cid:"):
        m = _CID.fullmatch(text)
        if m and _SYMBOL_FONT.search(fontname or ""):
            code = int(m.group(1))
            if code in CMSY:
                return CMSY[code]
        glyphs[0] += 1
        return ""
    if text in LIGATURES:
        return LIGATURES[text]
    if len(text) == 1 and unicodedata.category(text) == "Co":  # private use: a lost glyph
        glyphs[0] += 1
        return ""
    return text


def _line(obj, page: int, height: float, glyphs: list[int]) -> Line | None:
    """A :class:`Line` from a pdfminer text line (None: empty, or mostly rotated text)."""
    from pdfminer.layout import LTChar

    parts: list[str] = []
    sizes: dict[float, int] = {}
    bold = letters = upright = chars = 0
    lead = -1  # parts before the first letter in a regular font (-1: none yet)
    for ch in obj:
        if isinstance(ch, LTChar):
            chars += 1
            upright += bool(ch.upright)
            t = _char_text(ch.get_text(), ch.fontname, glyphs)
            if t.strip():
                size = round(ch.size, 1)
                sizes[size] = sizes.get(size, 0) + len(t)
            if t.isalpha():
                letters += 1
                is_bold = bool(_BOLD.search(ch.fontname or ""))
                bold += is_bold
                if not is_bold and lead < 0:
                    lead = len(parts)
            parts.append(t)
        else:  # LTAnno: a space or newline pdfminer inserted
            parts.append(ch.get_text())
    text = " ".join("".join(parts).split())
    run_in = " ".join("".join(parts[:lead]).split()) if lead > 0 else ""
    if sum(c.isalpha() for c in run_in) < 2:
        run_in = ""
    if not text or not sizes or upright * 2 < chars:
        return None
    x0, y0, x1, y1 = obj.bbox
    size = max(sizes, key=lambda s: (sizes[s], s))
    return Line(
        text,
        x0,
        x1,
        height - y1,
        height - y0,
        size,
        letters > 0 and bold * 20 >= letters * 19,
        page,
        run_in=run_in,
    )


def _lines(layout, page: int, height: float, glyphs: list[int]) -> list[Line]:
    """Every horizontal text line of a pdfminer page layout, figures' contents included."""
    from pdfminer.layout import LTTextLineHorizontal

    out: list[Line] = []
    stack = [layout]
    while stack:
        obj = stack.pop()
        if isinstance(obj, LTTextLineHorizontal):
            line = _line(obj, page, height, glyphs)
            if line is not None:
                out.append(line)
        elif hasattr(obj, "__iter__") and not isinstance(obj, str):
            stack.extend(reversed(list(obj)))
    return out


def check_header(path: Path, name: str) -> None:
    """Refuse a file that is not a PDF, before pdfminer sees it.

    Raises:
        InputError: no ``%PDF-`` marker in its first kilobyte (the message says what it is).
    """
    with path.open("rb") as f:
        head = f.read(1024)
    if not head:
        raise InputError(f"{name} is empty")
    if b"%PDF-" not in head:
        what = "text" if _looks_text(head) else "binary data"
        raise InputError(f"{name} is not a PDF file (it holds {what}, no %PDF- header)")


def _looks_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in head


def _meta_title(doc) -> str:
    from pdfminer.pdftypes import resolve1
    from pdfminer.utils import decode_text

    try:
        info = doc.info[0] if doc.info else {}
        raw = resolve1(info.get("Title"))
        title = decode_text(raw) if isinstance(raw, bytes) else str(raw or "")
    except Exception:  # broken info dictionary: no title
        return ""
    return " ".join(title.split())


def _page_count(doc) -> int:
    from pdfminer.pdftypes import resolve1

    try:
        return int(resolve1(resolve1(doc.catalog["Pages"])["Count"]))
    except Exception:  # damaged page tree: counted while reading
        return 0


def _open(fp, name: str):
    """The pdfminer document of an open file.

    Raises:
        InputError: encrypted with a password, or not readable as a PDF.
    """
    from pdfminer.pdfdocument import PDFDocument, PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFParser

    try:
        return PDFDocument(PDFParser(fp))
    except PDFPasswordIncorrect:
        raise InputError(
            f"{name} is encrypted (it needs a password); save a copy without the password and "
            "upload that"
        ) from None
    except PDFEncryptionError as exc:
        raise InputError(f"{name} is encrypted in a way that cannot be read ({exc})") from None
    except Exception as exc:
        raise InputError(
            f"{name} could not be read as a PDF: the file is damaged or truncated "
            f"({type(exc).__name__}: {exc})"
        ) from None


def _damaged(name: str, exc: Exception | None) -> str:
    why = f" ({type(exc).__name__}: {exc})" if exc is not None else ""
    return f"{name} could not be read as a PDF: the file is damaged or truncated{why}"


def read_lines(path: str | Path, max_pages: int, name: str | None = None) -> PdfText:
    """The text lines of the first ``max_pages`` pages of a PDF.

    Args:
        path: the PDF file.
        max_pages: pages read at most (a notice says when the document has more).
        name: the file's name in messages (default: its file name).

    Raises:
        InputError: not a PDF, encrypted, damaged before any page could be read, or no text
            layer (a scanned PDF).
    """
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage

    path = Path(path)
    name = name or path.name
    check_header(path, name)
    out = PdfText()
    glyphs = [0]
    params = LAParams(all_texts=True, boxes_flow=None)
    with path.open("rb") as fp:
        doc = _open(fp, name)
        out.meta_title = _meta_title(doc)
        out.n_pages = _page_count(doc)
        manager = PDFResourceManager(caching=True)
        device = PDFPageAggregator(manager, laparams=params)
        interpreter = PDFPageInterpreter(manager, device)
        n, failed = 0, []
        pages = PDFPage.create_pages(doc)
        while n < max_pages:
            try:
                page = next(pages)
            except StopIteration:
                break
            except Exception as exc:  # the page tree itself is broken here
                if not out.pages:
                    raise InputError(_damaged(name, exc)) from None
                out.notices.append(
                    f"{name}: page {n + 1} and after could not be read (damaged or truncated "
                    f"file: {type(exc).__name__}); kept pages 1-{n}"
                )
                break
            n += 1
            try:
                interpreter.process_page(page)
                layout = device.get_result()
            except Exception:  # one broken page: the others are still read
                failed.append(n)
                continue
            x0, y0, x1, y1 = layout.bbox
            out.pages.append((x1 - x0, y1 - y0, _lines(layout, n, y1, glyphs)))
    out.n_pages = max(out.n_pages, n)
    if failed:
        out.notices.append(
            f"{name}: page(s) {', '.join(map(str, failed[:10]))}"
            + (f" and {len(failed) - 10} more" if len(failed) > 10 else "")
            + " could not be read (damaged); left out"
        )
    if not out.pages:
        if failed:
            raise InputError(_damaged(name, None))
        raise InputError(f"{name} has no pages")
    if n == max_pages and out.n_pages > n:
        out.notices.append(
            f"{name} has {out.n_pages:,} pages; read the first {n:,} "
            f"(limit {max_pages:,} pages per PDF)"
        )
    n_chars = sum(len(ln.text) for _, _, lines in out.pages for ln in lines)
    if n_chars < 20 * len(out.pages) and n_chars < 200:
        raise InputError(
            f"{name} has no text layer ({n_chars} characters on {len(out.pages)} page(s)): it "
            "looks like a scanned image; run OCR on it (e.g. ocrmypdf) and upload the result"
        )
    out.dropped_glyphs = glyphs[0]
    return out
