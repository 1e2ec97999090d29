"""Sentence segmentation for scientific text, with exact character offsets.

The boundary detector is `pysbd <https://github.com/nipunsadvilkar/pySBD>`_
(rule-based, ``language="en"``, ``clean=False``). pysbd only proposes *cut points*; the
spans themselves are always cut out of the caller's original string, so every returned
:class:`Span` satisfies ``text[span.start:span.end] == span.text`` whatever pysbd does.

Pipeline of :func:`split_sentences`:

1. **Blocks.** The text is split at blank lines (a newline, optional non-newline whitespace,
   another newline). A blank line therefore always ends a sentence; blocks are processed
   independently and nothing is ever merged across them.
2. **pysbd cut points.** Each block is run through pysbd in windows of ``_WINDOW`` chars
   (pysbd is quadratic in input length: on abstract-like text 16k chars take ~0.2 s and
   200k chars ~27 s in one call, versus ~1 s windowed). Only cut points that have at least ``_TAIL`` chars of right context inside the
   window are accepted; the next window restarts at the last accepted cut point, so the
   result equals a whole-block run up to pysbd's local context. A window without any cut
   point (e.g. a long unpunctuated run) advances to a word gap that does not follow
   punctuation, so no artificial boundary is introduced. pysbd's sentence strings come from
   its processor and are located in the original text by our own offset recovery
   (``Segmenter.segment`` in pysbd 0.3.4 always re-locates sentences with one regex search
   over the whole text per sentence, even with ``char_span=False``: quadratic for repeated
   sentences, and a sentence it cannot find is silently dropped). A sentence we cannot
   locate just contributes no cut point; a pysbd exception makes its window contribute none.
3. **Repairs for scientific text** (a cut point between a *left* and a *right* piece is
   removed when any rule fires):

   * *Non-terminal abbreviations*: the left piece ends with an abbreviation that never ends
     a sentence (``Fig.``, ``Figs.``, ``Eq.``, ``e.g.``, ``i.e.``, ``vs.``, ``cf.``,
     ``approx.``, ``ca.``, ``Dr.``, ``Ref.``, ...). pysbd splits e.g. "Figs. | 3",
     "Eq. | 3", "approx. | 5" and "ca. | 5".
   * *Weak abbreviations* (``et al.``, ``sp.``, ``spp.``, ``etc.``, ``resp.``, ...) are
     merged unless the right piece starts with an upper-case letter (those may end a
     sentence). ``No.``/``Nos.`` is merged when the right piece starts with a digit or ``#``.
   * *Numbers*: the right piece starts with ``.<digit>`` or the left piece ends with a
     comparison sign (``p < | 0.05``, ``p= | .03``).
   * *Caption labels*: the left piece is only a label such as ``Table 1.``, ``Figure 2.``,
     ``Fig. S3.`` or ``TABLE II.``; it is joined to its caption
     ("Table 1. Baseline characteristics.").
   * *Initials across a newline*: the left piece ends with a single capital letter and a
     period, preceded by whitespace or an opening bracket (not "IM&A."), and the right piece
     starts with a letter ("J.\\nSmith", "E.\\ncoli"). pysbd
     already keeps "J. Smith" together within a line; it only splits at the newline.
   * *Lower-case continuation*: the right piece starts with a lower-case letter and the left
     piece does not end with ``!`` or ``?``. After a ``.`` the first right word must be a
     plain lower-case word of 2+ letters (so "... rose. mRNA levels fell.", "p53 ..." and
     "p-values ..." still split);
     after no terminal punctuation at all (pysbd splits at single newlines, i.e. hard-wrapped
     lines) a lower-case start, a start with ``,;:)]}``, or ``(`` plus a lower-case word
     of two or more letters (not a list marker like ``(a)``) continues the sentence. This
     covers species ("E. | coli"), "Table 1. | shows" and wrapped lines. A single newline
     followed by an upper-case start stays a boundary (titles, list items, headings).

   Then one cut point is *added*: pysbd never splits after a single capital letter (it reads
   it as an initial), so "in group B. This held." would stay one sentence. After a label
   noun (``group``, ``arm``, ``type``, ``phase``, ``stage``, ``vitamin``, ... see
   ``_LABEL_NOUNS``) a capital letter with a period followed by a capitalised word ends
   the sentence.

4. **Section headings.** An all-caps heading made of known structured-abstract words
   (``BACKGROUND``, ``METHODS``, ``MATERIALS AND METHODS``, ``RESULTS``, ``CONCLUSIONS``,
   ``OBJECTIVE``, ``PURPOSE``, ``DESIGN``, ``SETTING``, ``INTRODUCTION``, ``AIMS``,
   ``DESIGN, SETTING, AND PARTICIPANTS``, ... see ``_HEADING_WORDS``) followed by ``:`` or
   by a newline always starts a new sentence, even without a preceding period
   ("... in mice METHODS: we did"). The heading is **joined to the text that follows it**:
   "BACKGROUND\\nFoo is bar." is one sentence, and any pysbd cut inside the heading or right
   after it is removed. Only vocabulary words count, so "LPS METHODS:" starts the sentence
   at "METHODS" and acronyms such as "DNA:" are never headings.
5. **Junk fragments.** A piece with at most one letter (``"E."``, ``"3."``, ``"(1)"``,
   ``"..."``, ``"[12]"``) or that is nothing but a known abbreviation (``"et al."``,
   ``"Fig."``) is a splitting error and is merged into a neighbour: forward when it ends
   with ``<letter or digit>.`` or looks like ``(a)``/``1)`` (an initial, enumerator or
   abbreviation that belongs to what follows), otherwise backward (a trailing citation or
   stray punctuation); never across a heading start or a blank line. Pieces longer than
   ``_JUNK_MAX`` chars are never junk. Real short sentences with two or more letters ("Yes.",
   "No.", "OK.") are kept.

Finally each piece is stripped of surrounding whitespace. Whitespace is what
:meth:`str.isspace` says it is, so stripping agrees with :meth:`str.strip`.

:func:`window_sentences` then groups consecutive sentences into token-budgeted windows.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Span", "split_sentences", "window_sentences"]


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
# pysbd, constructed lazily once per process.

_WINDOW = 2500  # chars per pysbd call
_TAIL = 300  # right context a cut point needs inside its window to be accepted
_SNAP = 200  # how far back a forced window advance may look for a word gap
_JUNK_MAX = 200  # longest piece that may be treated as a junk fragment
_CONTEXT = 64  # chars of each piece that the repair rules look at

_segmenter: Any = None


def _get_segmenter() -> Any:
    """Return the shared pysbd segmenter, building it on first use."""
    global _segmenter
    if _segmenter is None:
        import pysbd

        _segmenter = pysbd.Segmenter(language="en", clean=False, char_span=False)
    return _segmenter


# --------------------------------------------------------------------------------------
# Rules.

_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")

# Abbreviations that (practically) never end a sentence: always merge the next piece.
_STRONG_ABBREV = (
    r"Figs?|figs?|FIGS?|Eqs?|eqs?|Eqns?|eqns?|e\.g|E\.g|i\.e|I\.e|vs|Vs|cf|Cf|approx|Approx"
    r"|ca|Dr|Drs|Prof|Mr|Mrs|Ms|Refs?|refs?|Tabs?|Sects?|Secs?|sect|Suppl|suppl|Vols?|vol"
    r"|pp|Ch|Chap|Dept|viz|incl|esp|Supp"
)
# Abbreviations that may end a sentence: merge unless the next piece starts upper-case.
_WEAK_ABBREV = r"et al|al|sp|spp|subsp|ssp|var|cv|etc|resp|Inc|Ltd|Co|Corp|Jr|Sr"
_NO_ABBREV = r"No|Nos|no|nos"

_STRONG_END = re.compile(rf"(?<![\w.])(?:{_STRONG_ABBREV})\.\Z")
_WEAK_END = re.compile(rf"(?<![\w.])(?:{_WEAK_ABBREV})\.\Z")
_NO_END = re.compile(rf"(?<![\w.])(?:{_NO_ABBREV})\.\Z")
_ABBREV_ONLY = re.compile(rf"(?:{_STRONG_ABBREV}|{_WEAK_ABBREV})\.\Z")
_COMPARISON_END = re.compile(r"[=<>≤≥≈~±]\s*\.?\Z")
_CLOSERS = "\"')]}’”»"
_INITIAL_END = re.compile(r"(?<![^\s(\[])[A-Z]\.\Z")
_CAPTION_LABEL = re.compile(
    r"(?:(?:Supplementary|Suppl\.|Extended\s+Data)\s+)?"
    r"(?:Table|TABLE|Tab\.|Figure|FIGURE|Fig\.|FIG\.|Scheme|Box|Chart|Appendix|Algorithm)"
    r"\s*S?(?:\d+[A-Za-z]?|[IVXL]+)\."
)
_ENUMERATOR = re.compile(r"\(?(?:\d{1,3}|[A-Za-z])\)")
# "in group A. The ..." : pysbd never splits after a single capital letter (it treats it as
# an initial); after these label nouns the letter is a label and the sentence may end.
_LABEL_NOUNS = (
    "arms?|categor(?:y|ies)|class|cluster|cohort|condition|factor|grade|groups?|hepatitis"
    "|lane|level|model|panel|phase|protocol|region|scenario|site|stage|strains?|subgroups?"
    "|types?|vitamin|zone"
)
_LABEL_CUT = re.compile(rf"(?<![\w-])(?i:{_LABEL_NOUNS})\s+[A-Z]\.\s+(?=[A-Z][a-z])")

_HEADING_WORDS = (
    "ABSTRACT|AIMS?|ANALYS[IE]S|ANIMALS|APPROACH|ASSESSMENT|AUTHORS'?|BACKGROUNDS?|BODY"
    "|CASES?|CLINICAL|COLLECTION|COMMENTS?|CONCLUSIONS?|CONTEXT|CRITERIA|DATA|DEFINITIONS?"
    "|DESCRIPTION|DESIGN|DISCUSSION|ELIGIBILITY|END|ETHICS|EVALUATION|EVIDENCE|EXPERIMENTAL"
    "|EXPOSURES?|EXTRACTION|FINDINGS?|FUNDING|GOALS?|HYPOTHES[IE]S|IMPLICATIONS?|IMPORTANCE"
    "|INTERPRETATIONS?|INTERVENTIONS?|INTRODUCTION|INVESTIGATION|KEY|KEYWORDS|LEARNED"
    "|LESSONS|LEVEL|LIMITATIONS?|LOCATION|MAIN|MATERIALS?|MEASURED|MEASUREMENTS?|MEASURES?"
    "|METHODOLOGY|METHODS?|OBJECTS?|OBJECTIVES?|OBSERVATIONS?|OUTCOMES?|OVERVIEW"
    "|PARTICIPANTS|PATIENTS?|POINTS?|POPULATION|PRACTICE|PRESENTATION|PRIMARY|PRINCIPAL"
    "|PROBANDS|PROCEDURES?|PURPOSES?|QUESTIONS?|RATIONALE|REGISTRATION|RELEVANCE|REPORTS?"
    "|RESEARCH|RESULTS?|REVIEW|SAMPLES?|SEARCH|SECONDARY|SELECTION|SETTINGS?|SIGNIFICANCE"
    "|SOURCES?|STATISTICAL|STRATEGY|STUDY|SUBJECTS?|SUMMARY|SYNTHESIS|TRIAL|UNLABEL+ED"
    "|VARIABLES|WORDS"
)
_HEADING = re.compile(
    rf"(?<![\w&/,-])(?:{_HEADING_WORDS})"
    r"(?:(?:[^\S\n]*[,/&-][^\S\n]*|[^\S\n]+)(?:(?:AND|OF|THE|FOR|OR)[^\S\n]+){0,3}"
    rf"(?:{_HEADING_WORDS})){{0,7}}"  # bounded: keeps the scan linear on long caps runs
    r"(?![\w&/-])(?:[^\S\n]*:|(?=[^\S\n]*\n))"
)


def _next_nonspace(text: str, i: int, end: int) -> int:
    """Index of the first non-whitespace char in ``text[i:end]``, or ``end``."""
    while i < end and text[i].isspace():
        i += 1
    return i


def _prev_nonspace_end(text: str, i: int, start: int) -> int:
    """Smallest ``j >= start`` such that ``text[j:i]`` is all whitespace."""
    while i > start and text[i - 1].isspace():
        i -= 1
    return i


def _strip_closers(s: str) -> str:
    """Drop trailing closing quotes/brackets, e.g. ``'done.")'`` -> ``'done.'``."""
    return s.rstrip(_CLOSERS)


_LOWER_WORD = re.compile(r"[^\W\d_]{2,}(?:[-'’][^\W\d_]+)*")


def _first_word(s: str) -> str:
    """The leading run of letters, hyphens and apostrophes (may be empty)."""
    j = 0
    while j < len(s) and (s[j].isalpha() or s[j] in "-'’"):
        j += 1
    return s[:j]


def _is_lower_word(s: str) -> bool:
    """True if ``s`` starts with a plain lower-case word of 2+ letters ("coli", "we").

    The first whitespace-delimited token, minus trailing punctuation, must consist only of
    lower-case letters (hyphen/apostrophe-joined parts allowed, the first part at least two
    letters), so sentence openers like "mRNA", "p53", "p-values" or "t-test" do not count.
    """
    tok = s.split(maxsplit=1)[0].rstrip(",;:.!?)]}\"'’”") if s.strip() else ""
    return _LOWER_WORD.fullmatch(tok) is not None and tok.islower()


def _keep_cut(left: str, right: str, whole: bool = True) -> bool:
    """Decide whether a pysbd cut between two stripped, non-empty pieces is real.

    Args:
        left: The end of the text before the cut (right-stripped), possibly already merged.
        right: The start of the piece after the cut (stripped).
        whole: Whether ``left`` is the entire left piece, not just its end.

    Returns:
        False when one of the repair rules in the module docstring fires.
    """
    tail = left[-24:]
    first = right[0]
    if whole and len(left) <= 40 and _CAPTION_LABEL.fullmatch(left):
        return False
    if _STRONG_END.search(tail):
        return False
    if _WEAK_END.search(tail) and not first.isupper():
        return False
    if _NO_END.search(tail) and (first.isdigit() or first == "#"):
        return False
    if right.startswith(".") and len(right) > 1 and right[1].isdigit():
        return False
    if _COMPARISON_END.search(tail):
        return False
    if _INITIAL_END.search(tail) and first.isalpha():
        return False
    core = _strip_closers(tail)
    last = core[-1] if core else tail[-1]
    if last in "!?‼⁇。！？":
        return True
    if last in ".…":
        return not _is_lower_word(right)
    # No terminal punctuation: pysbd cut at a (single) newline or similar.
    if first == "(":
        word = _first_word(right[1:])
        return not (len(word) >= 2 and word.islower())
    return not (first.islower() or first in ",;:)]}")


def _is_junk(piece: str) -> bool:
    """True for a piece that cannot be a sentence on its own (see module docstring).

    Pieces longer than ``_JUNK_MAX`` chars are never junk, which also keeps chains of junk
    merges linear in the input length.
    """
    if len(piece) > _JUNK_MAX:
        return False
    letters = 0
    for ch in piece:
        if ch.isalpha():
            letters += 1
            if letters > 1:
                break
    if letters <= 1:
        return True
    return len(piece) <= 8 and _ABBREV_ONLY.fullmatch(piece) is not None


# --------------------------------------------------------------------------------------
# Cut-point machinery. A "cut" is the index of the first char of a new piece; pieces of a
# block are the ranges between consecutive cuts.


def _run_pysbd(seg: Any, window: str) -> list[str]:
    """pysbd's sentence strings for ``window``, without its char-span recovery.

    ``Segmenter.segment`` (pysbd 0.3.4) re-locates every sentence with
    ``re.finditer(re.escape(sent) + r"\\s*", text)`` over the whole text, even with
    ``char_span=False``: quadratic for repeated sentences (70k "1." items took ~16 s) and a
    sentence it fails to find is silently dropped. We call the processor directly and
    locate the sentences ourselves in :func:`_locate`.
    """
    make = getattr(seg, "processor", None)
    # Other pysbd versions: fall back to the public API.
    out = seg.segment(window) if make is None else make(window).process()
    if isinstance(out, str):  # Processor.process returns its input when it is empty
        return [out]
    return [s for s in out if isinstance(s, str)]


def _locate(window: str, sentences: list[str]) -> list[int]:
    """Start offsets (in ``window``) of pysbd's sentences, found left to right.

    Args:
        window: The text handed to pysbd.
        sentences: pysbd's output for it.

    Returns:
        Offsets of the located sentences, strictly increasing; unlocatable ones are skipped.
    """
    starts: list[int] = []
    cursor = 0
    n = len(window)
    for sent in sentences:
        s = sent.strip()
        if not s:
            continue
        ideal = _next_nonspace(window, cursor, n)
        if window.startswith(s, ideal):
            pos = ideal
        else:
            pos = window.find(s, cursor, ideal + len(sent) + 64)
            if pos < 0:
                # pysbd altered the text: keep a rough alignment and drop this cut.
                cursor = min(n, ideal + len(s))
                continue
        if not starts or pos > starts[-1]:
            starts.append(pos)
        cursor = pos + len(s)
    return starts


def _pysbd_cuts(text: str, start: int, end: int) -> list[int]:
    """pysbd cut points strictly inside ``text[start:end]``, computed in windows.

    Args:
        text: The full source text.
        start: Block start (first non-whitespace char).
        end: Block end (exclusive, after the last non-whitespace char).

    Returns:
        Sorted absolute cut offsets in ``(start, end)``.
    """
    seg = _get_segmenter()
    cuts: list[int] = []
    pos = start
    while pos < end:
        stop = min(end, pos + _WINDOW)
        last_window = stop == end
        limit = stop if last_window else stop - _TAIL
        try:
            found = _locate(text[pos:stop], _run_pysbd(seg, text[pos:stop]))
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
        pos = _next_nonspace(text, j if j > lo else target, end)
    return cuts


def _heading_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Structured-abstract headings in ``text[start:end]`` as (start, end) incl. colon."""
    return [(m.start(), m.end()) for m in _HEADING.finditer(text, start, end)]


def _segment_block(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split one blank-line-free block into stripped (start, end) sentence ranges."""
    raw = _pysbd_cuts(text, start, end)

    # 3. Repairs: walk the cut points left to right, dropping the false ones.
    cuts: list[int] = []
    left_start = start
    for i, c in enumerate(raw):
        nxt = raw[i + 1] if i + 1 < len(raw) else end
        # Rules only look at the ends of the pieces: bounded slices keep this linear.
        left_end = _prev_nonspace_end(text, c, left_start)
        left = text[max(left_start, left_end - _CONTEXT) : left_end]
        right = text[c : min(nxt, c + _CONTEXT)].strip()
        whole = left_end - left_start <= _CONTEXT
        if not left or not right or _keep_cut(left, right, whole):
            cuts.append(c)
            left_start = c

    # 3b. Single capital letters used as labels ("group A. The") end a sentence.
    extra = [m.end() for m in _LABEL_CUT.finditer(text, start, end)]
    if extra:
        cuts = sorted(set(cuts).union(extra))

    # 4. Headings start a sentence and are joined to what follows: drop cut points in
    # (heading start, first char of the heading's body], add one at each heading start.
    protected: set[int] = set()
    headings = _heading_spans(text, start, end)
    if headings:
        kept: list[int] = []
        h = 0
        for c in cuts:
            while h < len(headings) and _next_nonspace(text, headings[h][1], end) < c:
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
        piece_end = _prev_nonspace_end(text, e, s)
        piece = text[s:piece_end] if piece_end - s <= _JUNK_MAX else ""
        if n > 1 and piece and _is_junk(piece):
            fwd_ok = i + 1 < n and e not in protected
            back_ok = bool(out) and s not in protected
            prefer_fwd = (
                len(piece) >= 2 and piece[-1] == "." and piece[-2].isalnum()
            ) or _ENUMERATOR.fullmatch(piece) is not None
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


def _split(text: str) -> list[Span]:
    """:func:`split_sentences` without the memo."""
    spans: list[Span] = []
    block_start = 0
    breaks = [(m.start(), m.end()) for m in _BLANK_LINE.finditer(text)]
    breaks.append((len(text), len(text)))
    for b_start, b_end in breaks:
        s = _next_nonspace(text, block_start, b_start)
        e = _prev_nonspace_end(text, b_start, s)
        block_start = b_end
        if s >= e:
            continue
        for ps, pe in _segment_block(text, s, e):
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
