"""PDF text extraction compared on paper PDFs (docs/pdf.md, "Why pdfminer.six").

For each PDF and each library that is installed, prints the words read, the share of "joined
runs" (words of more than 25 letters: text whose spaces were lost), the ``(cid:N)`` glyph ids
and ligature characters left in the text, section headings found (``logrerank.pdf`` only: the
plain extractors give no structure) and the seconds taken. Libraries: pypdf, pdfminer.six
with its default layout settings and with ``all_texts=True`` (layout analysis inside form
XObjects), pdfplumber, pypdfium2 (compiled, for reference) and ``logrerank.pdf`` (pdfminer.six
plus the layout and structure passes, passages only). A missing library is skipped.

    python bench/pdf_libraries.py ../shared/data/pdfs/*.pdf
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from pathlib import Path

_WORD = re.compile(r"[A-Za-z]+")
_LIGATURES = re.compile("[\ufb00-\ufb06]")


def _pypdf(path: Path) -> str:
    import pypdf

    return "\n".join(page.extract_text() or "" for page in pypdf.PdfReader(path).pages)


def _pdfminer(path: Path, **params) -> str:
    from pdfminer.high_level import extract_text
    from pdfminer.layout import LAParams

    return extract_text(str(path), laparams=LAParams(**params))


def _pdfplumber(path: Path) -> str:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return "\n".join(page.extract_text() or "" for page in pdf.pages)


def _pypdfium2(path: Path) -> str:
    import pypdfium2

    doc = pypdfium2.PdfDocument(str(path))
    return "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))


def _logrerank(path: Path) -> tuple[str, int]:
    from logrerank.pdf import read_pdf

    paper = read_pdf(path)
    return "\n\n".join(p.text for p in paper.passages), len(paper.headings)


LIBRARIES: dict[str, Callable[[Path], str | tuple[str, int]]] = {
    "pypdf": _pypdf,
    "pdfminer.six (default)": _pdfminer,
    "pdfminer.six (all_texts)": lambda p: _pdfminer(p, all_texts=True),
    "pdfplumber": _pdfplumber,
    "pypdfium2 (compiled)": _pypdfium2,
    "logrerank.pdf (passages)": _logrerank,
}


def measure(path: Path, name: str) -> str | None:
    """One row of the table (None when the library is not installed)."""
    t0 = time.perf_counter()
    try:
        out = LIBRARIES[name](path)
    except ImportError:
        return None
    seconds = time.perf_counter() - t0
    text, headings = out if isinstance(out, tuple) else (out, None)
    words = _WORD.findall(text)
    joined = sum(1 for w in words if len(w) > 25)
    share = 100 * joined / max(1, len(words))
    cids, ligatures = text.count("(cid:"), len(_LIGATURES.findall(text))
    heads = "-" if headings is None else str(headings)
    return (
        f"| {path.name} | {name} | {len(words):,} | {joined:,} ({share:.2f} %) | {cids} | "
        f"{ligatures} | {heads} | {seconds:.2f} |"
    )


def main(argv: list[str] | None = None) -> int:
    """Print the comparison table (Markdown) for the PDFs given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pdfs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    print(
        "| PDF | library | words | joined runs (>25 letters) | (cid:N) | ligatures | headings | s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for path in args.pdfs:
        for name in LIBRARIES:
            row = measure(path, name)
            if row:
                print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
