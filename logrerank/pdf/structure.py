"""A paper's structure from its lines in reading order: title, headings, paragraphs, references.

* **Title**: the largest text in the top half of page 1 (when larger than the body text),
  else the document information's title when it looks like one, else the file name.
* **Headings**: short lines set bold or larger than the body text (numbered or not), and
  the usual section names (Abstract, Introduction, ..., References) in any font. Text on
  page 1 before the first numbered or usual heading (authors, affiliations) is front matter.
* **Paragraphs**: a new one starts at a heading, a caption (``Figure 2:``), a vertical gap,
  a change of font size, a first-line indent, or after a short line ending a sentence. A
  paragraph continues across columns and pages. Lines are joined with line-end hyphens
  removed, except where the document spells the hyphenated word with its hyphen elsewhere.
* Left out: footnotes (text clearly smaller than the body), figure and table content
  (rows of far-apart cells, paragraphs of mostly short lines, few letters), and everything
  after a References heading up to the appendices, which is kept apart as the reference list.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

from .extract import Line
from .layout import CAPTION, body_size

_NUM = r"(\d+(\.\d+)*\.?|[A-Z](\.\d+)*\.?|[IVX]+\.)"
KNOWN = re.compile(
    rf"^({_NUM}\s+)?(abstract|introduction|background|related work|methods?|methodology|"
    r"materials and methods|results?|discussion|conclusions?|conclusion and future work|"
    r"references|bibliography|acknowledge?ments?|appendix|limitations|ethics statement|"
    r"future work|evaluation|experiments?|summary)\s*[.:]?$",
    re.I,
)
NUMBERED = re.compile(rf"^{_NUM}\s+[A-Za-z]")
REFS = re.compile(
    r"^((\d+|[IVX]+)\.?\s+)?(references|bibliography|works cited|literature cited)\s*:?$", re.I
)
APPENDIX = re.compile(r"^(appendix|appendices|supplementa|[A-Z](\.\d+)*\.?\s+[A-Z])", re.I)
_APPENDIX_LETTER = re.compile(r"^[A-Z](\.\d+)*\.?\s+[A-Z]")
_SENT_END = re.compile(r"[.?!:]['\")\]]*$")
_META_JUNK = re.compile(r"(\.(dvi|docx?|tex|pdf|indd)$|^microsoft|^untitled|^title$)", re.I)


@dataclass
class Paragraph:
    """One paragraph (or caption) of the body text."""

    lines: list[Line]
    section: str
    kind: str = "body"  # "body" or "caption"

    @property
    def pages(self) -> list[int]:
        """The 1-based pages its lines are on."""
        return sorted({ln.page for ln in self.lines})


@dataclass
class Structure:
    """What :func:`parse` found."""

    title: str
    paragraphs: list[Paragraph] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    left_out: Counter = field(default_factory=Counter)


def is_heading(ln: Line, body: float) -> bool:
    """A short line in a heading style, a numbered line in capitals, or a usual section name."""
    t = ln.text.strip()
    if len(t) > 100 or len(t.split()) > 14 or CAPTION.match(t) or not re.search("[A-Za-z]{2}", t):
        return False
    if t[0].islower() or t[-1] in ",;-":
        return False
    if KNOWN.match(t) and ln.size >= body - 1.5:
        return True
    letters = [c for c in t if c.isalpha()]
    if (
        NUMBERED.match(t)
        and ln.size >= body - 0.6
        and sum(c.isupper() for c in letters) > 0.9 * len(letters)
    ):
        return True  # "II. RELATED WORK": numbered, in capitals (small caps), any weight
    if not (ln.bold or ln.size >= body + 0.8) or ln.size < body - 0.6:
        return False
    return not (t.endswith(".") and len(t.split()) > 6 and not NUMBERED.match(t))


def find_title(lines: list[Line], body: float, meta: str, fallback: str) -> tuple[str, list[Line]]:
    """The paper title and its lines (none when it comes from the metadata or file name)."""
    first = [ln for ln in lines if ln.page == 1 and ln.kind == "body"]
    if first:
        height = max(ln.bottom for ln in first)
        top = [ln for ln in first if ln.top < 0.5 * height and re.search("[A-Za-z]{2}", ln.text)]
        big = max((ln.size for ln in top), default=0.0)
        if big >= 1.15 * body:
            picked = [ln for ln in top if ln.size >= big - 0.3]
            picked = [ln for ln in picked if ln.top - picked[0].bottom < 4 * big]
            return " ".join(ln.text for ln in picked).strip(), picked
    if len(meta.split()) >= 2 and not _META_JUNK.search(meta):
        return meta, []
    return fallback, []


def _edges(lines: list[Line]) -> dict[tuple[int, int], tuple[float, float]]:
    """Per (page, column): the left edge most lines start at and the right edge (90th pct)."""
    groups: dict[tuple[int, int], list[Line]] = {}
    for ln in lines:
        groups.setdefault((ln.page, ln.col), []).append(ln)
    out = {}
    for key, group in groups.items():
        left = Counter(round(ln.x0) for ln in group).most_common(1)[0][0]
        rights = sorted(ln.x1 for ln in group)
        out[key] = (float(left), rights[int(0.9 * (len(rights) - 1))])
    return out


def _leading(lines: list[Line]) -> float:
    """The usual gap between two lines of a paragraph."""
    gaps = [
        b.top - a.bottom
        for a, b in zip(lines, lines[1:])
        if (a.page, a.col) == (b.page, b.col) and abs(a.size - b.size) < 0.3 and b.top > a.top
    ]
    return max(0.0, statistics.median(gaps)) if gaps else 2.0


def _breaks(prev: Line, ln: Line, edges, leading: float) -> bool:
    """Whether ``ln`` starts a new paragraph after ``prev``."""
    if abs(prev.size - ln.size) > 0.6:
        return True
    left, right = edges.get((ln.page, ln.col), (ln.x0, ln.x1))
    same_col = (prev.page, prev.col) == (ln.page, ln.col)
    if same_col and ln.top - prev.bottom > leading + 0.6 * ln.size:
        return True
    ended = bool(_SENT_END.search(prev.text))
    p_left, p_right = edges.get((prev.page, prev.col), (prev.x0, prev.x1))
    short = prev.x1 < p_right - 2.5 * prev.size
    indent = 0.6 * ln.size < ln.x0 - left < 4 * ln.size
    if indent and (ended or short):
        return True
    return short and ended and (ln.text[:1].isupper() or not ln.text[:1].isalnum())


def parse(lines: list[Line], meta_title: str, fallback: str) -> Structure:
    """The structure of a document from its lines in reading order (see the module doc)."""
    body = body_size([ln for ln in lines if ln.kind == "body"])
    title, title_lines = find_title(lines, body, meta_title, fallback)
    st = Structure(title=title)
    for ln in lines:
        if ln.kind == "body" and ln.size < 0.88 * body:
            ln.kind = "footnote"
    text = [ln for ln in lines if ln.kind == "body"]
    for ln in title_lines:
        ln.kind = "title"
    heads = [is_heading(ln, body) for ln in text]
    first = next(
        (
            i
            for i, (ln, h) in enumerate(zip(text, heads))
            if h and ln.page == 1 and (KNOWN.match(ln.text) or NUMBERED.match(ln.text))
        ),
        None,
    )
    if first is not None:
        for ln in text[:first]:
            ln.kind = "front" if ln.kind == "body" else ln.kind
    edges = _edges([ln for ln in text if ln.kind == "body"])
    leading = _leading([ln for ln in text if ln.kind == "body"])
    section, mode = "", "body"
    para: Paragraph | None = None
    last: Paragraph | None = None  # the last body paragraph
    refs: list[Line] = []
    prev_head: Line | None = None
    for ln, head in zip(text, heads):
        if ln.kind != "body":
            continue
        if prev_head is not None and (head or ln.bold) and _continues_heading(prev_head, ln):
            section = f"{section} {ln.text}".strip()
            st.headings[-1] = section
            prev_head = ln
            continue
        if head:
            para = last = None
            section, prev_head = ln.text.strip().rstrip(".:"), ln
            st.headings.append(section)
            if REFS.match(section):
                mode = "references"
            elif mode == "references" and (
                _APPENDIX_LETTER.match(section) or APPENDIX.match(section)
            ):
                mode = "body"
            continue
        prev_head = None
        if mode == "references":
            refs.append(ln)
            continue
        new = para is None or _breaks(para.lines[-1], ln, edges, leading)
        cont = last is not None and _resumes(last, ln, section)
        cap = CAPTION.match(ln.text)
        if cap and (":" in cap.group(0) or bool(ln.bold) or not (cont or (para and not new))):
            para = Paragraph([ln], section, "caption")
            st.paragraphs.append(para)
        elif para is not None and not new:
            para.lines.append(ln)
        elif cont and (cap or ln.text[:1].islower()):
            para = last  # a paragraph interrupted by a caption, a column or a page
            para.lines.append(ln)
        else:
            para = Paragraph([ln], section)
            st.paragraphs.append(para)
        if para.kind == "body":
            last = para
    st.references = _entries(refs)
    st.paragraphs = [p for p in st.paragraphs if _keep(p, edges, st.left_out)]
    st.left_out.update(ln.kind for ln in lines if ln.kind in ("margin", "figure", "footnote"))
    st.left_out["reference lines"] += len(refs)
    return st


def _continues_heading(prev: Line, ln: Line) -> bool:
    """A heading line that continues the heading above it (a title wrapped over two lines)."""
    return (
        (prev.page, prev.col) == (ln.page, ln.col)
        and abs(prev.size - ln.size) < 0.3
        and prev.bold == ln.bold
        and 0 <= ln.top - prev.bottom < 0.8 * ln.size
        and not NUMBERED.match(ln.text)
        and not KNOWN.match(ln.text)
    )


def _resumes(last: Paragraph, ln: Line, section: str) -> bool:
    """Whether ``ln`` may go on with ``last`` (cut mid-sentence, same section and font size)."""
    return (
        last.section == section
        and not _SENT_END.search(last.lines[-1].text)
        and abs(last.lines[-1].size - ln.size) <= 0.6
    )


def _keep(p: Paragraph, edges, left_out: Counter) -> bool:
    """Whether a paragraph is text (not figure or table content, not an equation)."""
    if p.kind == "caption":
        return True
    text = " ".join(ln.text for ln in p.lines)
    letters = sum(c.isalpha() for c in text)
    narrow = sum(1 for ln in p.lines if _narrow(ln, edges))
    keep = letters >= 0.5 * len(text) and not (
        (len(p.lines) >= 2 and narrow * 2 > len(p.lines))
        or (len(p.lines) == 1 and narrow and len(text) < 60 and not _SENT_END.search(text))
    )
    if not keep:
        for ln in p.lines:
            ln.kind = "figure"
    return keep


def _narrow(ln: Line, edges) -> bool:
    left, right = edges.get((ln.page, ln.col), (ln.x0, ln.x1))
    return ln.width < 0.5 * max(1.0, right - left)


def _entries(lines: list[Line]) -> list[str]:
    """Reference entries: a new entry at the column's left edge after a line ending a sentence."""
    out: list[list[Line]] = []
    lefts: dict[tuple[int, int], float] = {}
    for ln in lines:
        key = (ln.page, ln.col)
        lefts[key] = min(lefts.get(key, ln.x0), ln.x0)
    for ln in lines:
        left = lefts[(ln.page, ln.col)]
        new = not out or (abs(ln.x0 - left) < 0.5 * ln.size and _SENT_END.search(out[-1][-1].text))
        if new:
            out.append([ln])
        else:
            out[-1].append(ln)
    from .text import join_lines

    return [join_lines([ln.text for ln in entry], set()) for entry in out]
