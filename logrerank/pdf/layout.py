"""Page layout: margins, running headers and footers, columns, table rows and reading order.

:func:`reading_order` takes the lines of every page (:mod:`logrerank.pdf.extract`) and returns
the lines a reader reads, in order, each with its ``kind``:

* left out: ``"margin"`` (running headers and footers: text in the outer 6 % of the page, or
  repeated at the top or bottom of several pages; bare page and line numbers anywhere) and
  ``"figure"`` (rows of table cells and figure labels: fragments of one row far apart);
* ``"body"`` for the rest (headings and captions are told apart later).

Columns: a page is two-column when a vertical gutter near its middle is crossed by few lines
and both sides hold text. Its lines are then read in bands: a line spanning both columns
(a title, a full-width figure) closes a band; inside a band the left column is read before
the right one.
"""

from __future__ import annotations

import re
from collections import Counter

from .extract import Line

# a figure or table caption label ("Figure 2:", "Tab. 1.")
CAPTION = re.compile(r"^(figure|fig\.|table|tab\.)\s*[A-Z]?\d+\s*[.:|]", re.I)

MARGIN = 0.06  # outer share of the page height holding only headers / footers
BAND = 0.12  # share of the page height where repeated running heads are looked for
_NUMBER = re.compile(r"^(page\s*)?\(?(\d{1,5}|[ivx]{1,4})\)?(\s*(of|/)\s*\d+)?\.?$", re.I)
_DIGITS = re.compile(r"\d+")


def body_size(lines: list[Line]) -> float:
    """The font size most characters are set in."""
    sizes = Counter()
    for ln in lines:
        sizes[ln.size] += len(ln.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def mark_margins(pages: list[tuple[float, float, list[Line]]]) -> int:
    """Mark running headers and footers as ``"margin"``; returns how many."""
    keys: Counter = Counter()
    for _, height, lines in pages:
        seen = set()
        for ln in lines:
            if ln.top < BAND * height or ln.bottom > (1 - BAND) * height:
                seen.add(_DIGITS.sub("#", ln.text.lower()))
        keys.update(seen)
    least = max(2, len(pages) // 3)
    repeated = {k for k, n in keys.items() if n >= least and re.search("[a-z]{2}", k)}
    n = 0
    for _, height, lines in pages:
        for ln in lines:
            in_band = ln.top < BAND * height or ln.bottom > (1 - BAND) * height
            outer = ln.bottom < MARGIN * height or ln.top > (1 - MARGIN) * height
            if outer or (in_band and _DIGITS.sub("#", ln.text.lower()) in repeated):
                ln.kind = "margin"
                n += 1
    return n


def gutter(lines: list[Line], width: float) -> float | None:
    """The x of the gutter of a two-column page, or None for a one-column page."""
    text = [ln for ln in lines if ln.kind == "body" and ln.width > 0.05 * width]
    if len(text) < 6:
        return None
    best, best_x = None, None
    x = 0.35 * width
    while x <= 0.65 * width:
        crossing = sum(1 for ln in text if ln.x0 < x - 1 < x + 1 < ln.x1)
        if best is None or crossing < best:
            best, best_x = crossing, x
        x += 2.0
    left = sum(1 for ln in text if ln.x1 <= best_x + 1)
    right = sum(1 for ln in text if ln.x0 >= best_x - 1)
    if best > 0.2 * len(text) or min(left, right) < max(3, 0.15 * len(text)):
        return None
    # the middle of the empty stretch around best_x
    lo = max((ln.x1 for ln in text if ln.x1 <= best_x + 1), default=best_x)
    hi = min((ln.x0 for ln in text if ln.x0 >= best_x - 1), default=best_x)
    return (lo + hi) / 2 if lo <= hi else best_x


def merge_rows(lines: list[Line]) -> list[Line]:
    """Join the fragments of one text row of a column; mark rows of far-apart cells ``"figure"``.

    pdfminer cuts a line at wide gaps (justified text, a section number before its heading,
    table cells). Fragments closer than 1.5 font sizes are joined; farther ones stay apart
    and the whole row is taken for table or figure content.
    """
    rows: list[list[Line]] = []
    out: list[Line] = [ln for ln in lines if ln.kind != "body"]
    for ln in sorted((ln for ln in lines if ln.kind == "body"), key=lambda ln: (ln.top, ln.x0)):
        mid = (ln.top + ln.bottom) / 2
        for row in rows[-4:]:
            r = row[0]
            if r.col == ln.col and r.top - 0.1 * r.size < mid < r.bottom + 0.1 * r.size:
                row.append(ln)
                break
        else:
            rows.append([ln])
    for row in rows:
        row.sort(key=lambda ln: ln.x0)
        _drop_line_numbers(row, out)
        if not row:
            continue
        merged = [row[0]]
        for ln in row[1:]:
            prev = merged[-1]
            if ln.x0 - prev.x1 <= 1.5 * max(prev.size, ln.size):
                prev.text = f"{prev.text} {ln.text}"
                prev.x1 = max(prev.x1, ln.x1)
                prev.top, prev.bottom = min(prev.top, ln.top), max(prev.bottom, ln.bottom)
                prev.bold = prev.bold and ln.bold
            else:
                merged.append(ln)
        for ln in merged:
            if len(merged) > 1:
                ln.kind = "figure"
            elif _NUMBER.match(ln.text):  # a page or line number on its own
                ln.kind = "margin"
        out.extend(merged)
    return out


def _drop_line_numbers(row: list[Line], out: list[Line]) -> None:
    """Move a row's line numbers (digits in a smaller font at either end) to ``out`` as
    ``"margin"``."""
    for end in (0, -1):
        if (
            len(row) > 1
            and row[end].text.isdigit()
            and row[end].size < 0.9 * row[end + 1 if end == 0 else -2].size
        ):
            ln = row.pop(end)
            ln.kind = "margin"
            out.append(ln)


def mark_table_lines(lines: list[Line]) -> None:
    """Mark ``"figure"`` a line between table rows (or a table row and a caption) in its column:
    a table's header row or a row whose cells sit close enough to be read as one line."""
    cols: dict[int, list[Line]] = {}
    for ln in lines:
        if ln.kind != "margin":
            cols.setdefault(ln.col, []).append(ln)
    for col in cols.values():
        col.sort(key=lambda ln: (ln.top, ln.x0))
        rows: list[list[Line]] = []
        for ln in col:
            if rows and abs(rows[-1][0].top - ln.top) < 0.3 * ln.size:
                rows[-1].append(ln)
            else:
                rows.append([ln])

        def table(row: list[Line] | None) -> bool:
            return row is not None and all(
                ln.kind == "figure" or CAPTION.match(ln.text) for ln in row
            )

        for _ in range(2):  # twice: a two-row header
            for i, row in enumerate(rows):
                if any(ln.kind != "body" for ln in row) or CAPTION.match(row[0].text):
                    continue
                above = rows[i - 1] if i else None
                below = rows[i + 1] if i + 1 < len(rows) else None
                near = (above is None or row[0].top - above[0].bottom < 2 * row[0].size) and (
                    below is None or below[0].top - row[0].bottom < 2 * row[0].size
                )
                if near and (table(above) and table(below)) and (above or below):
                    for ln in row:
                        ln.kind = "figure"


def order_page(lines: list[Line], width: float) -> list[Line]:
    """One page's lines in reading order (columns assigned, rows merged)."""
    x = gutter(lines, width)
    for ln in lines:
        if x is None or ln.x1 <= x + 2:
            ln.col = 0
        elif ln.x0 >= x - 2:
            ln.col = 1
        else:
            ln.col = -1
    lines = merge_rows(lines)
    mark_table_lines(lines)
    out: list[Line] = []
    band: list[Line] = []
    for ln in sorted(lines, key=lambda ln: (ln.top, ln.x0)):
        if ln.col == -1:
            out.extend(sorted(band, key=lambda b: (b.col, b.top, b.x0)))
            band = []
            out.append(ln)
        else:
            band.append(ln)
    out.extend(sorted(band, key=lambda b: (b.col, b.top, b.x0)))
    return out


def reading_order(pages: list[tuple[float, float, list[Line]]]) -> list[Line]:
    """Every line of the document in reading order, margins and table rows marked."""
    mark_margins(pages)
    out: list[Line] = []
    for width, _, lines in pages:
        out.extend(order_page(lines, width))
    return out
