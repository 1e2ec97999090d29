"""The fast cut-point pass of the sentence splitter (:mod:`logrerank.text.segment`).

:func:`fast_cuts` proposes the candidate sentence boundaries of one block with a few regex scans
and a small decision per terminal punctuation mark. It reimplements the boundary rules of
`pysbd <https://github.com/nipunsadvilkar/pySBD>`_ 0.3.4 (``language="en"``) that matter on
scientific text, so that the repair rules of :mod:`logrerank.text.segment_rules` see (nearly) the cut
points pysbd would give, at a small fraction of its cost (pysbd made up 94 % of the
splitter's time; ``bench/README.md``, "Sentence segmentation", has the measurements).

A cut is proposed after ``.``, ``!``, ``?`` (and the full-width ``。．！？``), with any closing
quotes, brackets and footnote marks (``)``, ``"``, ``’``, ``]``, ``∗``, ``†``, ``§``, ...) kept
on the left, at the next non-whitespace char, unless one of pysbd's protections applies:

* **Abbreviations**: pysbd's English list (:data:`ABBREVIATIONS`, e.g. ``al``, ``approx``,
  ``dept``, ``no``, ``vs``), matched as a whole whitespace-delimited word, case-insensitively.
  A *prepositive* one (``Dr.``, ``Fig.``, ``vs.``) never ends a sentence; a *number* one
  (``No.``, ``p.``, ``pp.``) not before a digit or ``(``; any other not before a lower-case
  letter, a digit, ``(`` or ``I`` (pysbd also keeps ``.,``, ``.-``, ``.:`` and ``.?``).
* **Initials and multi-period abbreviations**: a single capital letter after whitespace
  (``J. Smith``; :data:`~logrerank.text.segment_rules.LABEL_CUT` re-adds "group B. This"); ``e.g.``,
  ``i.e.``, ``U.S.``, ``i.p.`` never end a sentence, except ``a.m.``/``p.m.`` before a capital
  and ``U.S.``, ``U.K.``, ``E.U.``, ``i.v.`` before one of pysbd's sentence starters ("The").
* **Numbers and glued periods**: no cut at a period followed by a digit or preceded by a digit
  with no space ("0.05", "2.1%"), between two letters or digits ("e.coli") or before ``,;:``.
  A period followed directly by a letter after a non-alphanumeric char is a boundary
  ("(RISC).Ago").
* **Citation numbers**: ``disease.42 The``, ``efficacious.2,3 This``, ``risk.[12] It`` end
  the sentence after the reference (pysbd knows one or two numbers; ranges and lists too here).
* **Quotations and brackets**: no cut inside ``(...)``, ``[...]``, ``"..."``, ``“...”`` or
  ``«...»`` (innermost parentheses, like pysbd), except after the closing quote of a quoted
  sentence (``He said "it works." Then``). A quoted stretch over :data:`_QUOTE_MAX` chars is an
  unbalanced quote, not a quotation, and protects nothing.
* **Exclamations**: ``!`` before a lower-case word, and ``!``/``?`` inside a closing quote
  before anything but a capital, continue the sentence.

Also as in pysbd: every newline is a candidate cut (the repair rules rejoin hard-wrapped lines),
and a parenthesis or quotation that opens a piece and is followed by a capital is a piece of its
own ("(B recommendation) See the ...").

Deliberate differences from pysbd, each a pysbd error on real pools (``bench/README.md``): no
cut before inline enumerators ("assigned to 1) diet, 2) exercise"; "(a) ... (b) ..."), none
before a number that merely ends a sentence ("in areas 44 and | 45. These"), footnote marks and
closers stay with the sentence they end (pysbd starts the next one with ``)``, ``"`` or
``∗§``), and URLs ("index.php?page=...") are not cut.
"""

from __future__ import annotations

import re


def _words(s: str) -> frozenset[str]:
    """The whitespace-separated words of ``s``."""
    return frozenset(s.split())


# The English lexicon of pysbd 0.3.4 (pysbd/lang/common/standard.py and lang/english.py, MIT).
ABBREVIATIONS = _words(
    "adj adm adv al ala alta apr arc ariz ark art assn asst attys aug ave bart bld bldg blvd brig"
    " bros btw cal calif capt cl cmdr co col colo comdr con conn corp cpl cres ct d.phil dak dec"
    " del dept det dist dr dr.phil dr.philos drs e.g ens esp esq etc exp expy ext feb fed fla ft"
    " fwy fy ga gen gov hon hosp hr hway hwy i.e ia id ida ill inc ind ing insp is jan jr jul jun"
    " kan kans ken ky la lt ltd maj man mar mass may md me med messrs mex mfg mich min minn miss"
    " mlle mm mme mo mont mr mrs ms msgr mssrs mt mtn neb nebr nev no nos nov nr oct ok okla ont"
    " op ord ore p pa pd pde penn penna pfc ph ph.d pl plz pp prof pvt que rd rs ref rep reps res"
    " rev rt sask sec sen sens sep sept sfc sgt sr st supt surg tce tenn tex univ usafa u.s ut va"
    " v ver viz vs vt wash wis wisc wy wyo yuk fig"
)
PREPOSITIVE = _words(
    "adm attys brig capt cmdr col cpl det dr gen gov ing lt maj mr mrs ms mt messrs mssrs prof"
    " ph rep reps rev sen sens sgt st supt v vs fig"
)
NUMBER_ABBREVIATIONS = frozenset({"art", "ext", "no", "nos", "p", "pp"})
SENTENCE_STARTERS = _words(
    "A Being Did For He How However I In It Millions More She That The There They We What When"
    " Where Who Why"
)
_AM_PM = frozenset({"a.m", "p.m", "A.M", "P.M"})
_COUNTRY = frozenset({"U.S", "U.K", "E.U", "U.S.A", "i.v", "I.V"})

_MARKS = "∗*†‡§¶#"  # footnote marks: kept on the left, but may open a note ("complex.*Note")
_FULL_WIDTH = "。．！？"  # end a sentence even without a following space
_QUOTE_MAX = 500  # longer "quotations" are unbalanced quote marks

# A terminal run, its closers/marks, the whitespace after it (maybe none), the next char. The
# period-only form starts with a literal, which the regex engine finds much faster; it is used
# for the (usual) texts without any other terminal.
_CLOSE = r"([\"'’”»)\]}∗*†‡§¶#]*)(\s*)(?=\S)"
_TERMINAL = re.compile(r"([.!?。．！？]+)" + _CLOSE)
_TERMINAL_DOT = re.compile(r"(\.\.*)" + _CLOSE)
# "disease.42 The", "efficacious.2,3 This", "mortality.25 26 The", "risk.[12] It"
_NUMREF = re.compile(r"\.(?:\[[\d,\s–-]*\d\]|\d{1,3}(?:(?:[,–-]\s?|\s)\d{1,3})*)\s+(?=[A-Z])")
# Stretches pysbd never splits (pysbd/between_punctuation.py), one pattern per opening char.
# Innermost pairs only (the inner class excludes the opening char too), so that a failed match
# stops at the next opening char and the scans stay linear in the text length.
_PROTECT = {
    "(": re.compile(r"\([^()]*\)"),
    "[": re.compile(r"\[[^\[\]]*\]"),
    '"': re.compile(r'"[^"]*"'),
    "“": re.compile(r"“[^“”]*”"),
    "«": re.compile(r"«[^«»]*»"),
}
# A parenthesis or quotation opening a piece, followed by a capital, is a piece of its own
# (bounded, as pysbd's 2,500-char windows bounded it, so that each try is short).
_OPENER = re.compile(
    r"\([^)]{2,500}\)(?=\s[A-Z])|\"[^\"]{0,500}[^,]\"(?=\s[A-Z])|“[^”]{0,500}[^,]”(?=\s[A-Z])"
)
_NEWLINE = re.compile(r"[\r\n]\s*(?=\S)")
_WORD = re.compile(r"(?<!\S)\S{1,16}\Z")  # the whitespace-delimited word before a period
_MULTI_PERIOD = re.compile(r"(?<!\w)[A-Za-z](?:\.[A-Za-z])+\Z")  # "e.g", "U.S", "i.p"
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _protected(text: str, start: int, end: int) -> list[tuple[int, int, bool]]:
    """Protected stretches of ``text[start:end]``: quotations and bracketed stretches, merged
    where they overlap, as sorted ``(start, end, is_one_quotation)``."""
    found = []
    for ch, pattern in _PROTECT.items():
        if text.find(ch, start, end) < 0:
            continue
        quote = ch in '"“«'
        for m in pattern.finditer(text, start, end):
            s, e = m.span()
            if not (quote and e - s > _QUOTE_MAX):
                found.append((s, e, quote))
    found.sort()
    merged: list[tuple[int, int, bool]] = []
    for s, e, quote in found:
        if merged and s < merged[-1][1]:
            ms, me, outer = merged[-1]
            merged[-1] = (ms, me, outer) if e <= me else (ms, e, False)  # nested / overlapping
        else:
            merged.append((s, e, quote))
    return merged


def abbreviation_holds(text: str, p: int, ws: str, n: int, end: int) -> bool:
    """True when pysbd's abbreviation rules keep the single period ``text[p]`` in its sentence.

    Args:
        text: The source text.
        p: Index of the period.
        ws: The whitespace between the period and the next char (may be empty).
        n: Index of the next non-whitespace char.
        end: End of the block.
    """
    m = _WORD.search(text, max(0, p - 16), p)
    if m is None:
        return False
    word = m.group()
    nxt = text[n] if n < end else ""
    if not ws:  # pysbd keeps ".," ".-" ".:" ".?" after any known abbreviation
        multi = _MULTI_PERIOD.search(word)
        return multi is not None or (word.lower() in ABBREVIATIONS and nxt in ".:-?,")
    multi = _MULTI_PERIOD.search(word)
    if multi is not None:
        w = multi.group()
        if w in _AM_PM:
            return not (len(ws) == 1 and nxt.isupper())
        if w in _COUNTRY:
            k = n
            while k < end and text[k].isalpha():
                k += 1
            starter = text[n:k] in SENTENCE_STARTERS and k < end and text[k].isspace()
            return not (len(ws) == 1 and starter)
        return True
    if len(word) == 1 and "A" <= word <= "Z":
        return True  # an initial ("J. Smith")
    low = word.lower()
    if low in PREPOSITIVE:
        return True
    if low in NUMBER_ABBREVIATIONS:
        return (len(ws) == 1 and nxt.isdigit()) or nxt == "("
    if low in ABBREVIATIONS and len(ws) == 1:
        if "a" <= nxt <= "z" or nxt.isdigit() or nxt == "(":
            return True
        return text.startswith(("I ", "I'm", "I'll"), n)
    return False


def _glued_cut(text: str, m: re.Match[str], end: int) -> int | None:
    """Cut point for a terminal run with no whitespace after it (see the module docstring)."""
    p0, p1 = m.span(1)
    c1 = m.end(2)
    n = m.end()
    nxt = text[n]
    if text[p1 - 1] in _FULL_WIDTH:
        return n
    if c1 > p1:  # closers glued to the next word: a boundary only where a mark opens a note
        k = c1
        while k > p1 and text[k - 1] in _MARKS:
            k -= 1
        return k if k < c1 and nxt.isalpha() else None
    if p1 - p0 != 1 or text[p0] != ".":
        return None
    if nxt.isdigit() or nxt == "[":
        if p0 > 0 and not (text[p0 - 1].isdigit() or text[p0 - 1].isspace()):
            r = _NUMREF.match(text, p0, end)
            if r is not None:
                return r.end()
        if nxt != "[":
            return None
    prev = text[p0 - 1] if p0 > 0 else ""
    if prev.isdigit() or (prev in _ALNUM and nxt in _ALNUM) or nxt == "/":
        return None
    if nxt in "-–" and not (n + 1 < end and text[n + 1].isupper()):
        return None
    if abbreviation_holds(text, p0, "", n, end):
        return None
    return n


def _spaced_cut(text: str, m: re.Match[str], end: int) -> int | None:
    """Cut point for a terminal run followed by whitespace (see the module docstring)."""
    p0, p1 = m.span(1)
    c1 = m.end(2)
    n = m.end()
    nxt = text[n]
    last = text[p1 - 1]
    if last == "!" and p1 - p0 == 1 and nxt.islower():
        return None
    if last in "!?" and c1 > p1 and text[p1] in "\"'’”" and not nxt.isupper():
        return None
    if c1 == p1 and p1 - p0 == 1 and last == "." and abbreviation_holds(text, p0, m[3], n, end):
        return None
    if nxt in "\"”'’" and n + 1 < end and text[n + 1].isspace():
        # A lone quote after the space closes the sentence: 'synthesis. " Our study'.
        k = n + 1
        while k < end and text[k].isspace():
            k += 1
        return k if k < end else None
    return n


def fast_cuts(text: str, start: int, end: int) -> list[int]:
    """Candidate cut points strictly inside the block ``text[start:end]``.

    Args:
        text: The full source text.
        start: Block start (first non-whitespace char).
        end: Block end (exclusive, after the last non-whitespace char).

    Returns:
        Sorted absolute offsets in ``(start, end)``, each the first char of a new piece.
    """
    cuts: set[int] = set()
    regions = _protected(text, start, end)
    r = 0
    other = any(text.find(ch, start, end) >= 0 for ch in "!?。．！？")
    for m in (_TERMINAL if other else _TERMINAL_DOT).finditer(text, start, end):
        p0 = m.start()
        if m.end() >= end or text[m.end()] in ",;:":
            continue
        while r < len(regions) and regions[r][1] <= p0:
            r += 1
        # Inside a quotation or brackets: only a quotation closing here (right after the
        # terminal, or as a lone quote after the space) ends a sentence.
        if r < len(regions) and regions[r][0] < p0:
            _, q_end, quote = regions[r]
            if not (quote and m[3] and (q_end <= m.end(2) or q_end == m.end() + 1)):
                continue
        c = _spaced_cut(text, m, end) if m[3] else _glued_cut(text, m, end)
        if c is not None:
            cuts.add(c)
    if text.find("\n", start, end) >= 0 or text.find("\r", start, end) >= 0:
        cuts.update(m.end() for m in _NEWLINE.finditer(text, start, end))
    for c in [start, *cuts]:
        o = _OPENER.match(text, c, end)
        if o is not None:
            cuts.add(o.end() + 1)  # the lookahead saw one whitespace char, then a capital
    return sorted(c for c in cuts if start < c < end)
