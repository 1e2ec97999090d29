"""Paper-like PDFs written at test time with fpdf2 (requirements-dev.txt), for tests/…/test_pdf*.

:func:`make_paper` lays out a title, authors, an abstract, numbered sections of paragraphs
(first-line indents, words hyphenated at line ends), a table with its caption, a running
header, page-number footers, optional line numbers and a reference list, in one or two
columns, at exact positions (points, A4). :data:`SECTIONS` is the text, so tests know what
must come out where.
"""

from __future__ import annotations

from pathlib import Path

TITLE = "Sentence Graphs for Evidence Reranking"
HEADER = "Journal of Test Documents 12 (2026)"
SECTIONS: list[tuple[str, list[str]]] = [
    (
        "Abstract",
        [
            "We study how sentence graphs help rerank scientific evidence for a question. "
            "Our reranker links sentences across passages and scores them jointly."
        ],
    ),
    (
        "1 Introduction",
        [
            "Researchers read many papers to answer one question. Retrieval systems return "
            "passages, yet the evidence often sits in single sentences spread over several "
            "papers. Reranking those sentences together is the aim of this work.",
            "Earlier rerankers score each passage on its own. They cannot see that two "
            "sentences from different papers support the same finding, which wastes useful "
            "interdependencies between the candidates.",
        ],
    ),
    (
        "2 Methods",
        [
            "The encoder reads the question with every sentence of a passage. A graph then "
            "connects sentences that share rare terms, and attention layers pass messages "
            "along its edges before the final scores are computed.",
            "We trained the reranker on eleven thousand annotated questions drawn from public "
            "collections of biomedical abstracts, with a learning rate of three in ten "
            "thousand and a batch of sixteen questions.",
        ],
    ),
    (
        "3 Results",
        [
            "The graph reranker improved the ranking of the answering sentence by nine points "
            "of nDCG over the passage reranker. Gains were largest for questions whose "
            "evidence sits in two or more papers.",
            "Removing the cross-passage edges cost most of the gain, which shows that the "
            "links between papers matter more than the links inside one paper.",
        ],
    ),
    (
        "4 Conclusion",
        [
            "Sentence graphs make rerankers read evidence the way researchers do: across "
            "papers, one claim at a time. We release the code and the trained checkpoints."
        ],
    ),
]
REFERENCES = [
    "Ada Lovelace and Charles Babbage. 1843. Notes on the analytical engine. Scientific "
    "Memoirs, 3:666-731.",
    "Grace Hopper. 1952. The education of a computer. In Proceedings of the ACM National "
    "Meeting, pages 243-249.",
]
TABLE = [["Model", "P", "R", "F1"], ["Passage reranker", "71.2", "64.0", "67.4"]]
TABLE += [["Graph reranker", "80.5", "74.9", "77.6"]]
CAPTION = "Table 1: Scores of both rerankers on the test questions."
ROMAN = {1: "I", 2: "II", 3: "III", 4: "IV"}


class _Writer:
    """Places words line by line in columns of a page flow."""

    def __init__(self, pdf, columns: int, size: float, line_numbers: bool) -> None:
        self.pdf, self.size, self.line_numbers = pdf, size, line_numbers
        self.lead = size * 1.25
        left, right, gap = 57.0, 538.0, 20.0
        width = (right - left - gap * (columns - 1)) / columns
        self.cols = [(left + i * (width + gap), width) for i in range(columns)]
        self.col, self.top, self.bottom = 0, 90.0, 780.0
        self.y = self.top
        self.n_line = 0

    def _advance(self, height: float) -> None:
        if self.y + height > self.bottom:
            self.col += 1
            self.y = self.top
            if self.col == len(self.cols):
                self.pdf.add_page()
                self.col = 0

    def line(self, text: str, x_offset: float = 0.0, style: str = "", size=None) -> None:
        size = size or self.size
        self._advance(size * 1.25)
        self.y += size * 1.25
        self.pdf.set_font("Times", style, size)
        x, _ = self.cols[self.col]
        self.pdf.text(x + x_offset, self.y, text)
        if self.line_numbers:
            self.n_line += 1
            self.pdf.set_font("Times", "", 7)
            right = x + self.cols[self.col][1] + 6
            self.pdf.text(x - 18 if self.col == 0 else right, self.y, str(self.n_line))
            self.pdf.set_font("Times", style, size)

    def gap(self, points: float) -> None:
        self.y += points

    def paragraph(self, text: str, indent: bool, hyphenate: bool) -> None:
        """Word-wrap ``text``; with ``hyphenate``, split a long word at the line end."""
        _, width = self.cols[self.col]
        self.pdf.set_font("Times", "", self.size)
        words, line, first = text.split(), "", True
        while words:
            word = words[0]
            offset = 10.0 if (first and indent) else 0.0
            self.pdf.set_font("Times", "", self.size)
            trial = f"{line} {word}".strip()
            if self.pdf.get_string_width(trial) <= width - offset:
                line, words = trial, words[1:]
                continue
            if hyphenate and len(word) >= 8 and word.isalpha():
                head = f"{line} {word[:4]}-".strip()
                if self.pdf.get_string_width(head) <= width - offset:
                    self.line(head, offset)
                    words[0] = word[4:]
                    line, first = "", False
                    continue
            self.line(line, offset)
            line, first = "", False
        if line:
            self.line(line, 10.0 if (first and indent) else 0.0)

    def table(self) -> None:
        x, width = self.cols[self.col]
        self.gap(6)
        for row in TABLE:
            self._advance(self.lead)
            self.y += self.lead
            self.pdf.set_font("Helvetica", "", 8)
            self.pdf.text(x, self.y, row[0])
            for i, cell in enumerate(row[1:]):
                self.pdf.text(x + width * 0.55 + i * width * 0.16, self.y, cell)
        self.gap(4)
        self.line(CAPTION, size=9)
        self.gap(8)


def make_paper(
    path: Path,
    *,
    columns: int = 2,
    header: bool = True,
    page_numbers: bool = True,
    references: bool = True,
    hyphenate: bool = True,
    line_numbers: bool = False,
    table: bool = True,
    repeat: int = 1,
    caps_headings: bool = False,
) -> Path:
    """Write a paper-like PDF to ``path`` (see the module doc); ``repeat`` repeats the body
    sections that many times (longer papers, more pages); ``caps_headings`` sets the numbered
    headings IEEE-like: roman numerals and capitals in the body font ("II. METHODS")."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_title(TITLE)
    pages: list[int] = []

    def decorate() -> None:
        n = pdf.page_no()
        if n in pages:
            return
        pages.append(n)
        if header and n > 1:
            pdf.set_font("Times", "I", 8)
            pdf.text(57, 62, HEADER)
        if page_numbers:
            pdf.set_font("Times", "", 9)
            pdf.text(290, 815, str(n))

    pdf.add_page()
    pdf.set_font("Times", "B", 17)
    pdf.text(297 - pdf.get_string_width(TITLE) / 2, 60, TITLE)
    pdf.set_font("Times", "", 11)
    pdf.text(230, 78, "Ada Tester and Bo Checker")
    w = _Writer(pdf, columns, 10.0, line_numbers)
    w.top = w.y = 100.0
    for k in range(repeat):
        for i, (heading, paragraphs) in enumerate(SECTIONS):
            if k and heading == "Abstract":
                continue
            decorate()
            w.gap(8)
            shown = heading if not k else f"{heading} (part {k + 1})"
            if caps_headings and heading[0].isdigit():
                number, _, name = shown.partition(" ")
                shown = f"{ROMAN[int(number)]}. {name.upper()}"
                w.line(shown, size=10)
            else:
                w.line(shown, style="B", size=12)
            w.gap(2)
            for j, text in enumerate(paragraphs):
                w.paragraph(text, indent=j > 0, hyphenate=hyphenate)
                decorate()
            if table and i == 3 and k == 0:
                w.table()
            w.top = 75.0
    if references:
        w.gap(8)
        w.line("References", style="B", size=12)
        for ref in REFERENCES:
            w.paragraph(ref, indent=False, hyphenate=False)
            w.gap(3)
    decorate()
    for n in range(1, pdf.page_no() + 1):
        if n not in pages:
            pdf.page = n
            decorate()
    path.write_bytes(bytes(pdf.output()))
    return path


def make_pages(path: Path, n: int) -> Path:
    """A PDF of ``n`` short pages, one sentence each (the page limit)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="A5")
    pdf.set_font("Times", "", 11)
    for i in range(n):
        pdf.add_page()
        pdf.text(40, 200, f"This is the text of page {i + 1} of a very long document.")
    path.write_bytes(bytes(pdf.output()))
    return path


def make_scan(path: Path) -> Path:
    """A PDF whose page is only an image (a scan without a text layer)."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (200, 100), "white")
    ImageDraw.Draw(img).text((10, 40), "scanned words", fill="black")
    pdf = FPDF(unit="pt", format="A5")
    pdf.add_page()
    pdf.image(img, x=20, y=20, w=300)
    path.write_bytes(bytes(pdf.output()))
    return path


def make_encrypted(path: Path) -> Path:
    """A paper PDF that needs a user password to open."""
    from fpdf import FPDF
    from fpdf.enums import EncryptionMethod

    pdf = FPDF(unit="pt", format="A5")
    pdf.set_encryption(
        owner_password="owner", user_password="secret", encryption_method=EncryptionMethod.RC4
    )
    pdf.add_page()
    pdf.set_font("Times", "", 11)
    pdf.text(40, 80, "Secret evidence that nobody may read without the password.")
    path.write_bytes(bytes(pdf.output()))
    return path
