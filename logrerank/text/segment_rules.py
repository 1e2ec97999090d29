"""The repair rules of the sentence splitter (:mod:`logrerank.text.segment`): the lexicon of
scientific-text abbreviations, caption labels, label nouns and structured-abstract headings, and
the two decisions built on it, :func:`keep_cut` (is a candidate cut point real?) and
:func:`is_junk` (can a piece not stand alone as a sentence?).

**Repairs** (a cut point between a *left* and a *right* piece is removed when any rule fires):

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

**Headings** (:data:`HEADING`): an all-caps run of known structured-abstract words
(``BACKGROUND``, ``METHODS``, ``MATERIALS AND METHODS``, ``RESULTS``, ``CONCLUSIONS``,
``OBJECTIVE``, ``DESIGN, SETTING, AND PARTICIPANTS``, ... see ``_HEADING_WORDS``; ``AND``,
``OF``, ``THE``, ``FOR``, ``OR`` between them) followed by ``:`` or by a newline. Only
vocabulary words count, so "LPS METHODS:" starts at "METHODS" and acronyms such as "DNA:" are
never headings.

**Junk** (:func:`is_junk`): a piece with at most one letter (``"E."``, ``"3."``, ``"(1)"``,
``"..."``, ``"[12]"``) or that is nothing but a known abbreviation (``"et al."``, ``"Fig."``).
Pieces longer than ``JUNK_MAX`` chars are never junk. Real short sentences with two or more
letters ("Yes.", "No.", "OK.") are kept.

:func:`label_cuts` and :func:`heading_spans` give exactly the matches of :data:`LABEL_CUT` and
:data:`HEADING` but try the patterns only at rare anchors (together they took a third of the
splitter's time once pysbd was gone).
"""

from __future__ import annotations

import re

JUNK_MAX = 200  # longest piece that may be treated as a junk fragment

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
ENUMERATOR = re.compile(r"\(?(?:\d{1,3}|[A-Za-z])\.?\)")  # "(a)", "1)", "3.)"
# "in group A. The ..." : pysbd never splits after a single capital letter (it treats it as
# an initial); after these label nouns the letter is a label and the sentence may end.
_LABEL_NOUNS = (
    "arms?|categor(?:y|ies)|class|cluster|cohort|condition|factor|grade|groups?|hepatitis"
    "|lane|level|model|panel|phase|protocol|region|scenario|site|stage|strains?|subgroups?"
    "|types?|vitamin|zone"
)
LABEL_CUT = re.compile(rf"(?<![\w-])(?i:{_LABEL_NOUNS})\s+[A-Z]\.\s+(?=[A-Z][a-z])")

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
HEADING = re.compile(
    rf"(?<![\w&/,-])(?:{_HEADING_WORDS})"
    r"(?:(?:[^\S\n]*[,/&-][^\S\n]*|[^\S\n]+)(?:(?:AND|OF|THE|FOR|OR)[^\S\n]+){0,3}"
    rf"(?:{_HEADING_WORDS})){{0,7}}"  # bounded: keeps the scan linear on long caps runs
    r"(?![\w&/-])(?:[^\S\n]*:|(?=[^\S\n]*\n))"
)


# Fast scans for LABEL_CUT and HEADING. Both patterns open with a lookbehind, so the regex
# engine tries them at every char; these find rare anchors with a plain substring search first
# (a period before a capitalised word; a colon or newline) and try the rule only there. They
# give exactly the matches of ``finditer`` (tested on real pools and generated text).
_LABEL_DOT = re.compile(r"\.\s+(?=[A-Z][a-z])")
_LABEL_NOUN_END = re.compile(rf"(?<![\w-])(?i:{_LABEL_NOUNS})\Z")
_CAPS_RUN = re.compile(r"[A-Z]{3,}")
_HEADING_PUNCT = frozenset(",/&'-")


def label_cuts(text: str, start: int, end: int) -> list[int]:
    """``[m.end() for m in LABEL_CUT.finditer(text, start, end)]``, in a fraction of the time."""
    out = []
    for m in _LABEL_DOT.finditer(text, start, end):
        p = m.start()
        if p - 2 < start or not ("A" <= text[p - 1] <= "Z") or not text[p - 2].isspace():
            continue
        j = p - 2
        while j > start and text[j - 1].isspace():
            j -= 1
        if j > start and _LABEL_NOUN_END.search(text, max(start, j - 12), j):
            out.append(m.end())
    return out


def _anchors(text: str, start: int, end: int) -> list[int]:
    """Offsets of every ``:`` and newline in ``text[start:end]``, sorted."""
    out = []
    for ch in ":\n":
        i = text.find(ch, start, end)
        while i >= 0:
            out.append(i)
            i = text.find(ch, i + 1, end)
    return sorted(out)


def heading_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``[m.span() for m in HEADING.finditer(text, start, end)]``, in a fraction of the time.

    A heading is made of capitals, ``,/&'-`` and non-newline whitespace up to the ``:`` or the
    newline that ends it, and starts at the start of a maximal run of three or more capitals (it
    never follows a word char). So only such runs in such stretches before a ``:`` or newline
    are tried, left to right, as ``finditer`` would.
    """
    out: list[tuple[int, int]] = []
    last = start
    for a in _anchors(text, start, end):
        j = a
        while j > last:
            c = text[j - 1]
            if not ("A" <= c <= "Z" or c in _HEADING_PUNCT or (c.isspace() and c != "\n")):
                break
            j -= 1
        if a - j < 3:
            continue
        for run in _CAPS_RUN.finditer(text, j, a):
            p = run.start()
            if p < last:
                continue
            m = HEADING.match(text, p, end)
            if m is not None:
                out.append(m.span())
                last = m.end()
    return out


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


def keep_cut(left: str, right: str, whole: bool = True) -> bool:
    """Decide whether a candidate cut between two stripped, non-empty pieces is real.

    Args:
        left: The end of the text before the cut (right-stripped), possibly already merged.
        right: The start of the piece after the cut (stripped).
        whole: Whether ``left`` is the entire left piece, not just its end.

    Returns:
        False when one of the repair rules (module docstring) fires.
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
    # No terminal punctuation: a cut at a (single) newline or similar.
    if first == "(":
        word = _first_word(right[1:])
        return not (len(word) >= 2 and word.islower())
    return not (first.islower() or first in ",;:)]}")


def is_junk(piece: str) -> bool:
    """True for a piece that cannot be a sentence on its own (see :mod:`logrerank.text.segment`).

    Pieces longer than ``JUNK_MAX`` chars are never junk, which also keeps chains of junk
    merges linear in the input length.
    """
    if len(piece) > JUNK_MAX:
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
