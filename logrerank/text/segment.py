"""Sentence segmentation for scientific text, with exact character offsets.

Candidate boundaries come from a fast regex pass (:mod:`logrerank.text.segment_fast`) that
reimplements the rules of `pysbd <https://github.com/nipunsadvilkar/pySBD>`_ that matter on
scientific text; pysbd itself is only used by the reference splitter
:func:`split_sentences_pysbd`. The cut points are positions only: every span is cut out of the
caller's original string, so every returned :class:`Span` satisfies
``text[span.start:span.end] == span.text``.

Pipeline of :func:`split_sentences`:

1. **Blocks.** The text is split at blank lines (a newline, optional non-newline whitespace,
   another newline). A blank line therefore always ends a sentence; blocks are processed
   independently and nothing is ever merged across them.
2. **Cut points** (:func:`~logrerank.text.segment_fast.fast_cuts`): after ``.``, ``!`` or ``?``
   (closing quotes, brackets and footnote marks stay on the left) and at every newline,
   except where pysbd's protections apply: its abbreviation lexicon, initials, ``e.g.``-style
   abbreviations, numbers, quotations and brackets. Citation numbers glued to the period
   ("disease.42 The") end the sentence after them. Unlike pysbd there is no cut before inline
   enumerators ("assigned to 1) diet, 2) exercise") or before a number ending a sentence
   ("areas 44 and 45."); ``bench/README.md`` ("Sentence segmentation") measures the
   differences on real pools. :func:`split_sentences_pysbd` takes these cut points from pysbd
   instead, in windows of ``_WINDOW`` chars (pysbd is quadratic in input length) that only
   accept cuts with ``_TAIL`` chars of right context, and :func:`split_with` from any callable.
3. **Repairs for scientific text**: a cut point between a *left* and a *right* piece is
   removed when a repair rule fires (non-terminal and weak abbreviations, numbers, caption
   labels, initials across a newline, lower-case continuation), and one is added after a
   label letter ("in group B. This held."); the rules and their lexicon are in
   :mod:`logrerank.text.segment_rules` (:func:`~logrerank.text.segment_rules.keep_cut`).
4. **Section headings** (:data:`~logrerank.text.segment_rules.HEADING`, e.g. ``BACKGROUND``,
   ``MATERIALS AND METHODS``) followed by ``:`` or a newline always start a new sentence,
   even without a preceding period ("... in mice METHODS: we did"). The heading is **joined
   to the text that follows it**: "BACKGROUND\\nFoo is bar." is one sentence, and any cut
   inside the heading or right after it is removed.
5. **Junk fragments** (:func:`~logrerank.text.segment_rules.is_junk`: ``"E."``, ``"(1)"``,
   ``"[12]"``, ``"et al."``) are splitting errors, merged into a neighbour: forward when the
   piece ends with ``<letter or digit>.`` or looks like ``(a)``/``1)``/``3.)`` (an initial,
   enumerator or abbreviation that belongs to what follows), otherwise backward (a trailing
   citation or stray punctuation); never across a heading start or a blank line.

Finally each piece is stripped of surrounding whitespace. Whitespace is what
:meth:`str.isspace` says it is, so stripping agrees with :meth:`str.strip`. A 50-passage pool
takes a few milliseconds (pysbd took a quarter of a second); texts up to 20,000 chars are also
memoised.

:func:`window_sentences` then groups consecutive sentences into token-budgeted windows.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from .segment_fast import fast_cuts
from .segment_pysbd import get_segmenter, locate, next_nonspace, prev_nonspace_end, run_pysbd
from .segment_rules import ENUMERATOR, JUNK_MAX, heading_spans, is_junk, keep_cut, label_cuts

__all__ = ["Span", "split_sentences", "split_sentences_pysbd", "split_with", "window_sentences"]


@dataclass(frozen=True)
class Span:
    """One sentence of a source text.

    Attributes:
        start: Char offset of the first (non-whitespace) char of the sentence, inclusive.
        end: Char offset just past the last (non-whitespace) char, exclusive.
        text: The sentence text, exactly ``source[start:end]``.
    """

    start: int
    end: int
    text: str


# --------------------------------------------------------------------------------------
# Windowed pysbd calls and the context the repair rules see.

_WINDOW = 2500  # chars per pysbd call
_TAIL = 300  # right context a cut point needs inside its window to be accepted
_SNAP = 200  # how far back a forced window advance may look for a word gap
_CONTEXT = 64  # chars of each piece that the repair rules look at


_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")  # ends a block (step 1)


# --------------------------------------------------------------------------------------
# Cut-point machinery. A "cut" is the index of the first char of a new piece; pieces of a
# block are the ranges between consecutive cuts.


def _pysbd_cuts(text: str, start: int, end: int) -> list[int]:
    """pysbd cut points strictly inside ``text[start:end]``, computed in windows.

    Args:
        text: The full source text.
        start: Block start (first non-whitespace char).
        end: Block end (exclusive, after the last non-whitespace char).

    Returns:
        Sorted absolute cut offsets in ``(start, end)``.
    """
    seg = get_segmenter()
    cuts: list[int] = []
    pos = start
    while pos < end:
        stop = min(end, pos + _WINDOW)
        last_window = stop == end
        limit = stop if last_window else stop - _TAIL
        try:
            found = locate(text[pos:stop], run_pysbd(seg, text[pos:stop]))
        except Exception:  # pysbd bug on odd input: this window yields no cut points
            found = []
        accepted = [pos + f for f in found if f > 0 and pos + f <= limit]
        cuts.extend(accepted)
        if last_window:
            break
        if accepted:
            pos = accepted[-1]
            continue
        # No boundary in this window: advance to a word gap not preceded by punctuation.
        target = stop - _TAIL
        j = target
        lo = max(pos + 1, target - _SNAP)
        while j > lo and not (
            text[j].isspace() and text[j - 1] not in ".!?:;" and not text[j - 1].isspace()
        ):
            j -= 1
        pos = next_nonspace(text, j if j > lo else target, end)
    return cuts


def _segment_block(text: str, start: int, end: int, raw: list[int]) -> list[tuple[int, int]]:
    """Split one blank-line-free block at the candidate cuts ``raw`` (steps 3-5) into stripped
    (start, end) sentence ranges."""

    # 3. Repairs: walk the cut points left to right, dropping the false ones.
    cuts: list[int] = []
    left_start = start
    for i, c in enumerate(raw):
        nxt = raw[i + 1] if i + 1 < len(raw) else end
        # Rules only look at the ends of the pieces: bounded slices keep this linear.
        left_end = prev_nonspace_end(text, c, left_start)
        left = text[max(left_start, left_end - _CONTEXT) : left_end]
        right = text[c : min(nxt, c + _CONTEXT)].strip()
        whole = left_end - left_start <= _CONTEXT
        if not left or not right or keep_cut(left, right, whole):
            cuts.append(c)
            left_start = c

    # 3b. Single capital letters used as labels ("group A. The") end a sentence.
    extra = label_cuts(text, start, end)
    if extra:
        cuts = sorted(set(cuts).union(extra))

    # 4. Headings start a sentence and are joined to what follows: drop cut points in
    # (heading start, first char of the heading's body], add one at each heading start.
    protected: set[int] = set()
    headings = heading_spans(text, start, end)
    if headings:
        kept: list[int] = []
        h = 0
        for c in cuts:
            while h < len(headings) and next_nonspace(text, headings[h][1], end) < c:
                h += 1
            if h < len(headings) and headings[h][0] < c:
                continue  # inside heading h or between it and its body
            kept.append(c)
        protected = {hs for hs, _ in headings if hs > start}
        cuts = sorted(set(kept) | protected)

    # 5. Merge junk fragments into a neighbour.
    bounds = [start, *cuts, end]
    out: list[tuple[int, int]] = []
    pending: int | None = None
    n = len(bounds) - 1
    for i in range(n):
        s, e = bounds[i], bounds[i + 1]
        if pending is not None:
            s, pending = pending, None
        piece_end = prev_nonspace_end(text, e, s)
        piece = text[s:piece_end] if piece_end - s <= JUNK_MAX else ""
        if n > 1 and piece and is_junk(piece):
            fwd_ok = i + 1 < n and e not in protected
            back_ok = bool(out) and s not in protected
            prefer_fwd = (
                len(piece) >= 2 and piece[-1] == "." and piece[-2].isalnum()
            ) or ENUMERATOR.fullmatch(piece) is not None
            if fwd_ok and (prefer_fwd or not back_ok):
                pending = s
                continue
            if back_ok:
                out[-1] = (out[-1][0], piece_end)
                continue
        out.append((s, piece_end))
    return out


def split_sentences(text: str) -> list[Span]:
    """Split text into sentences with exact character offsets.

    See the module docstring for the rules. Guarantees, for any ``str`` input: spans are in
    order and non-overlapping, ``text[s.start:s.end] == s.text``, each span starts and ends
    with a non-whitespace char, and every non-whitespace char of ``text`` lies in exactly
    one span. Empty or whitespace-only input gives ``[]``. Never raises on ``str`` input.

    Args:
        text: The passage to segment.

    Returns:
        The sentences as :class:`Span` objects, in text order.

    Example:
        >>> [s.text for s in split_sentences("BACKGROUND: E. coli grows. METHODS: We did x.")]
        ['BACKGROUND: E. coli grows.', 'METHODS: We did x.']
    """
    if not text or text.isspace():
        return []
    if len(text) <= _CACHE_MAX_CHARS:
        return list(_split_cached(text))
    return _split(text)


_CACHE_MAX_CHARS = 20_000
"""Texts up to this length are memoised (:func:`_split_cached`); longer ones are split afresh."""


@functools.lru_cache(maxsize=4096)
def _split_cached(text: str) -> tuple[Span, ...]:
    """Memo of :func:`_split`: a passage asked about again (another question, a knob change, a
    pool that shares passages) is not re-segmented. Spans are frozen, so sharing them is safe;
    at most 4,096 texts of at most 20,000 chars."""
    return tuple(_split(text))


def clear_cache() -> None:
    """Forget every memoised split (e.g. to time segmentation from cold)."""
    _split_cached.cache_clear()


def split_sentences_pysbd(text: str) -> list[Span]:
    """:func:`split_sentences` with pysbd's cut points instead of the fast pass (not memoised).

    The splitter as it was before :mod:`logrerank.text.segment_fast`: the same repairs, headings
    and junk merging, on cut points from windowed pysbd calls. 40 to 60 times slower; kept
    as the reference that ``bench/segment.py`` compares the fast pass with. Same guarantees.
    """
    if not text or text.isspace():
        return []
    return _split(text, _pysbd_cuts)


def split_with(text: str, cutter: Callable[[str, int, int], list[int]]) -> list[Span]:
    """Split ``text`` with another source of candidate cut points (step 2), not memoised.

    Blocks, repairs, headings and junk merging are those of :func:`split_sentences`, so the
    guarantees hold for any ``cutter`` (e.g. an external splitter's boundaries, as in
    ``bench/segment.py``).

    Args:
        text: The passage to segment.
        cutter: ``cutter(text, start, end)`` returns candidate cut offsets for the block
            ``text[start:end]``; offsets outside ``(start, end)`` are ignored.

    Returns:
        The sentences as :class:`Span` objects, in text order.
    """
    if not text or text.isspace():
        return []

    def checked(t: str, start: int, end: int) -> list[int]:
        return sorted({c for c in cutter(t, start, end) if start < c < end})

    return _split(text, checked)


def _split(text: str, cutter: Callable[[str, int, int], list[int]] = fast_cuts) -> list[Span]:
    """:func:`split_sentences` without the memo, with ``cutter`` for step 2 (its cuts must be
    sorted, distinct and strictly inside the block)."""
    spans: list[Span] = []
    block_start = 0
    breaks = [(m.start(), m.end()) for m in _BLANK_LINE.finditer(text)]
    breaks.append((len(text), len(text)))
    for b_start, b_end in breaks:
        s = next_nonspace(text, block_start, b_start)
        e = prev_nonspace_end(text, b_start, s)
        block_start = b_end
        if s >= e:
            continue
        for ps, pe in _segment_block(text, s, e, cutter(text, s, e)):
            spans.append(Span(ps, pe, text[ps:pe]))
    return spans


def window_sentences(lengths: list[int], max_len: int) -> list[list[int]]:
    """Group consecutive sentences into windows that fit a token budget.

    Greedy, left to right: a sentence joins the current window if the window's total stays
    ``<= max_len``; otherwise it opens a new window. A sentence longer than ``max_len`` is
    put alone in its own window (the caller truncates it and flags it). Every index appears
    exactly once, in order; empty input gives ``[]``.

    Args:
        lengths: Token length of each sentence (``>= 0``).
        max_len: Token budget for the sentence part of one window (``>= 1``).

    Returns:
        Lists of sentence indices, one list per window.

    Raises:
        ValueError: If ``max_len < 1`` or a length is negative.

    Example:
        >>> window_sentences([3, 4, 5, 20, 1], 10)
        [[0, 1], [2], [3], [4]]
    """
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    windows: list[list[int]] = []
    current: list[int] = []
    total = 0
    for i, n in enumerate(lengths):
        if n < 0:
            raise ValueError(f"sentence length must be >= 0, got {n} at index {i}")
        if n > max_len:
            if current:
                windows.append(current)
            windows.append([i])
            current, total = [], 0
        elif current and total + n > max_len:
            windows.append(current)
            current, total = [i], n
        else:
            current.append(i)
            total += n
    if current:
        windows.append(current)
    return windows


def passage_spans(passage) -> list[Span]:
    """Sentence spans of a :class:`~logrerank.types.Passage`.

    Uses the passage's given ``sentences`` when present (e.g. a dataset's own sentence units,
    so gold sentence ids match), locating each one in ``passage.text`` in order; otherwise
    :func:`split_sentences`. A given sentence that cannot be located (text not the join of the
    sentences) falls back to splitting the whole text, so offsets are always exact.
    """
    given = getattr(passage, "sentences", None)
    if not given:
        return split_sentences(passage.text)
    spans, pos, text = [], 0, passage.text
    for s in given:
        i = text.find(s, pos)
        if i < 0:
            return split_sentences(text)
        stripped = s.strip()
        if stripped:
            a = i + (len(s) - len(s.lstrip()))
            spans.append(Span(a, a + len(stripped), stripped))
        else:
            spans.append(Span(i, i, ""))  # keep indices aligned with the given list
        pos = i + len(s)
    return spans
