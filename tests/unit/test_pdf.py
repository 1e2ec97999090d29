"""logrerank.pdf on paper PDFs written at test time (tests/pdf_maker.py, fpdf2): reading order of
one and two columns, section headings, running headers, page and line numbers, table rows, the
reference list, hyphenation, ligatures and glyph ids, windows, and every bad file."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

pytest.importorskip("pdfminer")
pytest.importorskip("fpdf")

from logrerank import passages_from_pdf  # noqa: E402
from logrerank.pdf import read_pdf  # noqa: E402
from logrerank.pdf.extract import _char_text  # noqa: E402
from logrerank.pdf.text import join_lines, vocabulary, windows  # noqa: E402
from logrerank.types import InputError  # noqa: E402
from tests import pdf_maker as pm  # noqa: E402

HEADINGS = [h for h, _ in pm.SECTIONS]


def _joined(paper) -> str:
    return " ".join(p.text for p in paper.passages)


def _expected_order(text: str) -> list[int]:
    """Where each paragraph of the first round of SECTIONS starts in ``text``."""
    starts = [" ".join(par.split()[:6]) for _, pars in pm.SECTIONS for par in pars]
    return [text.find(s) for s in starts]


@pytest.fixture(scope="module")
def papers(tmp_path_factory):
    d = tmp_path_factory.mktemp("pdfs")
    return {
        "two": read_pdf(pm.make_paper(d / "upload-3f2a.pdf", repeat=2)),
        "one": read_pdf(pm.make_paper(d / "one.pdf", columns=1, repeat=2)),
        "numbers": read_pdf(pm.make_paper(d / "review.pdf", repeat=2, line_numbers=True)),
        "pages": read_pdf(pm.make_paper(d / "long.pdf", repeat=5)),
    }


@pytest.mark.parametrize("kind", ["two", "one", "numbers", "pages"])
def test_headings_title_and_reading_order(papers, kind):
    paper = papers[kind]
    assert paper.title == pm.TITLE  # from the document, not the file name
    assert paper.headings[: len(HEADINGS)] == HEADINGS
    assert paper.headings[-1] == "References"
    text = _joined(paper)
    at = _expected_order(text)
    assert -1 not in at and at == sorted(at)  # every paragraph, in reading order
    for p in paper.passages:
        assert p.title == f"{pm.TITLE} — {p.meta['section']}"
        assert p.meta["paper"] == pm.TITLE and p.meta["pages"] and p.meta["source"]


def test_numbered_headings_in_capitals_are_found(tmp_path):
    paper = read_pdf(pm.make_paper(tmp_path / "ieee.pdf", repeat=2, caps_headings=True))
    assert paper.headings[:5] == ["Abstract", "I. INTRODUCTION", "II. METHODS", "III. RESULTS",
                                  "IV. CONCLUSION"]  # fmt: skip
    assert {p.meta["section"] for p in paper.passages} >= {"II. METHODS", "III. RESULTS"}


@pytest.mark.parametrize("kind", ["two", "one", "numbers", "pages"])
def test_margins_tables_and_references_are_left_out(papers, kind):
    paper = papers[kind]
    text = _joined(paper)
    assert "Journal of Test Documents" not in text  # running header
    assert not re.search(r"\b(71\.2|80\.5|Passage reranker 71)", text)  # table cells
    assert "Lovelace" not in text and "Hopper" not in text  # reference list, kept apart
    assert len(paper.references) == 2 and paper.references[0].startswith("Ada Lovelace")
    captions = [p for p in paper.passages if p.meta["kind"] == "caption"]
    assert [c.text for c in captions] == [pm.CAPTION]
    for p in paper.passages:  # no page or line number glued to the text
        assert not re.search(r"(^|\s)\d{1,3}(\s|$)", p.text), p.text
    assert any("left out" in n for n in paper.notices)


def test_hyphenation_is_joined(papers):
    text = _joined(papers["two"])
    assert "Reranking those sentences" in text and "interdependencies" in text
    assert not re.search(r"[a-z]- [a-z]", text)


def test_pages_are_counted_across_page_breaks(papers):
    paper = papers["pages"]
    assert paper.pages_read >= 2
    assert {pg for p in paper.passages for pg in p.meta["pages"]} == set(
        range(1, paper.pages_read + 1)
    )


def test_public_function_returns_the_passages(tmp_path):
    passages = passages_from_pdf(pm.make_paper(tmp_path / "a.pdf"))
    assert passages and all(p.meta and p.pid.startswith("a#") for p in passages)


def test_glyphs_and_ligatures_are_normalised():
    count = [0]
    assert _char_text("\ufb01", "Times", count) == "fi"
    assert _char_text("\ufb03", "Times", count) == "ffi"
    assert _char_text("(cid:15)", "ABCDEF+CMSY10", count) == "\u2022"
    assert _char_text("(cid:0)", "CMSY8", count) == "\u2212"
    assert count == [0]
    assert _char_text("(cid:142)", "MT2MIS", count) == ""
    assert _char_text("(cid:7)", "Times-Roman", count) == ""
    assert count == [2]


def test_join_lines_keeps_real_hyphens():
    vocab = vocabulary(["the co-authors of this paper", "graphs are here"])
    assert join_lines(["sentence gra-", "phs are here"], vocab) == "sentence graphs are here"
    assert join_lines(["three co-", "authors"], vocab) == "three co-authors"
    assert join_lines(["a state-of-the-", "art model"], vocab) == "a state-of-the-art model"
    assert join_lines(["the MED-", "LINE index"], vocab) == "the MED-LINE index"
    assert join_lines(["one line", "two line"], vocab) == "one line two line"


def test_windows_cut_on_sentence_boundaries():
    text = " ".join(f"Sentence number {i} is here." for i in range(60))
    parts = windows(text, 200)
    assert len(parts) > 5 and all(len(p) <= 200 for p in parts)
    assert " ".join(parts) == text and all(p.endswith(".") for p in parts)


def test_long_paragraphs_are_windowed(tmp_path):
    paper = read_pdf(pm.make_paper(tmp_path / "w.pdf", repeat=2), window_chars=150)
    assert all(len(p.text) <= 230 for p in paper.passages)  # one sentence may run over
    assert len(paper.passages) > 14


# ---------------------------------------------------------------------------------- bad input
def _truncated(tmp_path: Path) -> Path:
    good = pm.make_paper(tmp_path / "good.pdf").read_bytes()
    bad = tmp_path / "truncated.pdf"
    bad.write_bytes(good[: len(good) // 3])
    return bad


BAD = {
    "encrypted": (lambda d: pm.make_encrypted(d / "locked.pdf"), "encrypted"),
    "scanned": (lambda d: pm.make_scan(d / "scan.pdf"), "no text layer"),
    "truncated": (_truncated, "damaged or truncated"),
    "corrupt": (
        lambda d: (
            (d / "corrupt.pdf").write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 40)
            and d / "corrupt.pdf"
        ),
        "damaged or truncated",
    ),
    "not a pdf": (
        lambda d: (d / "notes.pdf").write_text("just some notes\n") and d / "notes.pdf",
        "not a PDF file",
    ),
    "empty": (lambda d: (d / "empty.pdf").write_bytes(b"") or d / "empty.pdf", "is empty"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_files_get_a_clear_message(tmp_path, case):
    make, message = BAD[case]
    path = make(tmp_path)
    with pytest.raises(InputError) as err:
        read_pdf(path)
    assert message in str(err.value) and path.name in str(err.value)


def test_a_500_page_pdf_is_cut_at_the_page_limit(tmp_path):
    path = pm.make_pages(tmp_path / "book.pdf", 500)
    t0 = time.perf_counter()
    paper = read_pdf(path, max_pages=100)
    assert time.perf_counter() - t0 < 60
    assert paper.n_pages == 500 and paper.pages_read == 100
    assert any("has 500 pages; read the first 100" in n for n in paper.notices)
    assert "page 100 of" in _joined(paper) and "page 101 of" not in _joined(paper)
