"""Input limits and input cleaning, shared by the Python API, the CLI and the app.

Nothing is dropped silently: every function here returns *notices*, one sentence each, that say
what was cut, dropped, replaced or found (they end up in ``Ranking.warnings``). Invalid input
raises :class:`~logrerank.types.InputError` with a message that says what is wrong.

Policy (the same everywhere):

* **Too many passages**: the first ``max_passages`` are ranked, the rest are dropped (notice).
* **A passage longer than** ``max_chars_per_passage``: its first characters are kept, cut at the
  last word gap before the limit when there is one in the last 100 characters (notice with the
  exact numbers). A passage with given ``sentences`` keeps its whole sentences that fit.
* **All passages together longer than** ``max_total_chars``: passages are kept in order until
  the budget is used up; the passage that crosses it is cut, the ones after it are dropped
  (notice). Cutting and dropping only ever happen at the *end* (of a passage, of the list), so
  the passage indices and character offsets of everything kept are the caller's own.
* **A question longer than** ``max_question_chars``: its first characters are kept (notice).
* ``strict=True`` turns every cut or drop above into an :class:`InputError` instead.
* **Control characters** (C0/C1 except tab, newline, CR, form feed, vertical tab and NEL) are
  replaced by spaces and **lone surrogates** (text that was not valid UTF-8/UTF-16) by U+FFFD.
  Both replacements are one character for one, so character spans still index the caller's
  original text (notice with the count and the passages).
* **Exact duplicates** (same text after stripping surrounding whitespace) are *kept*, each one
  ranked in its own right, so the caller's indices stay valid; a notice names them.
* Empty or whitespace-only passages are kept and rank last (the pipeline says so); only when
  every passage is empty, or the question is, is the input rejected.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from ..types import InputError, Passage

_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f]")
"""C0/C1 control characters except the whitespace ones (\\t \\n \\v \\f \\r and NEL)."""
_SURROGATE = re.compile("[\ud800-\udfff]")
"""Lone surrogates: what invalid UTF-8 decoded with ``surrogateescape`` (or JSON ``\\ud800``) gives."""
_GAP = re.compile(r"\s")
_SNAP = 100  # a cut moves back to a word gap at most this many characters
_LIST_AT_MOST = 5  # passages named one by one in a notice before summarising


@dataclass(frozen=True)
class Limits:
    """How much input one request may hold (defaults below; all are configurable).

    Attributes:
        max_passages: passages ranked per request (default 500); more are dropped with a notice.
        max_chars_per_passage: characters kept per passage (default 20,000); longer ones are cut.
        max_total_chars: characters kept over all passages (default 400,000).
        max_upload_bytes: size of an uploaded / passages file (default 10,000,000 bytes).
        max_question_chars: characters kept of the question (default 2,000; the model itself
            reads at most ``backbone.max_query_tokens`` tokens of it).
        max_title_chars: characters kept per title (default 1,000).
        max_pdf_pages: pages read per PDF (default 100); a notice names a longer PDF.
        strict: True = reject (InputError) instead of cutting or dropping.
    """

    max_passages: int = 500
    max_chars_per_passage: int = 20_000
    max_total_chars: int = 400_000
    max_upload_bytes: int = 10_000_000
    max_question_chars: int = 2_000
    max_title_chars: int = 1_000
    max_pdf_pages: int = 100
    strict: bool = False

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            if f.name == "strict":
                if not isinstance(self.strict, bool):
                    raise InputError(f"limits: strict must be true or false, got {self.strict!r}")
                continue
            v = getattr(self, f.name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"limits: {f.name} must be a positive integer, got {v!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Limits:
        """Limits from a dict (e.g. a ``"limits"`` section of a JSON config).

        Raises:
            InputError: unknown fields or values that are not positive integers.
        """
        data = dict(data or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"limits: unknown field(s) {unknown}; known: {sorted(known)}")
        return cls(**data)

    def to_dict(self) -> dict[str, Any]:
        """The limits as a JSON-ready dict."""
        return dataclasses.asdict(self)

    def describe(self) -> str:
        """One line for users, e.g. for the app's help text or a CLI message."""
        mb = self.max_upload_bytes / 1_000_000
        return (
            f"Limits: at most {self.max_passages:,} passages, "
            f"{self.max_chars_per_passage:,} characters per passage and "
            f"{self.max_total_chars:,} in total; questions up to "
            f"{self.max_question_chars:,} characters; files up to {mb:,.1f} MB. "
            + (
                "Longer input is rejected."
                if self.strict
                else "Longer input is cut, and the result says what was cut."
            )
        )


DEFAULT_LIMITS = Limits()
"""The limits used when none are given (``LoGReranker.limits``, the CLI, the app)."""


# --------------------------------------------------------------------------------------
# Cleaning (length-preserving)


def clean_text(text: str) -> tuple[str, int, int]:
    """Replace control characters by spaces and lone surrogates by U+FFFD.

    One character is replaced by one, so offsets into the result are offsets into ``text``.

    Returns:
        ``(cleaned, n_control, n_surrogates)``.
    """
    n_ctl = n_sur = 0
    if _CONTROL.search(text):
        text, n_ctl = _CONTROL.subn(" ", text)
    if _SURROGATE.search(text):
        text, n_sur = _SURROGATE.subn("\ufffd", text)
    return text, n_ctl, n_sur


def _cut_point(text: str, limit: int) -> int:
    """Where to cut ``text`` to at most ``limit`` chars: a word gap near the limit, else it."""
    if len(text) <= limit:
        return len(text)
    if text[limit].isspace():
        return len(text[:limit].rstrip()) or limit
    lo = max(0, limit - _SNAP)
    gaps = [m.start() for m in _GAP.finditer(text, lo, limit)]
    if gaps:
        end = len(text[: gaps[-1]].rstrip())
        if end > 0:
            return end
    return limit


def _cut_passage(p: Passage, limit: int) -> Passage:
    """``p`` with its text cut to at most ``limit`` characters (a prefix of the text)."""
    if len(p.text) <= limit:
        return p
    if p.sentences and p.text == " ".join(p.sentences):
        kept, size = [], 0
        for s in p.sentences:
            add = len(s) + (1 if kept else 0)
            if size + add > limit:
                break
            kept.append(s)
            size += add
        if kept and " ".join(kept).strip():
            return dataclasses.replace(p, text=" ".join(kept), sentences=kept)
    return dataclasses.replace(p, text=p.text[: _cut_point(p.text, limit)], sentences=None)


def _names(idx: list[int]) -> str:
    """'passage 3', 'passages 3 and 7', 'passages 3, 7, 9, 12, 15 and 4 more' (1-based in)."""
    if len(idx) == 1:
        return f"passage {idx[0]}"
    shown = idx[:_LIST_AT_MOST]
    rest = len(idx) - len(shown)
    if rest:
        return f"passages {', '.join(map(str, shown))} and {rest:,} more"
    return f"passages {', '.join(map(str, shown[:-1]))} and {shown[-1]}"


def _dropped(first: int, last: int) -> str:
    """'passage 3 was dropped' / 'passages 4-10 (7) were dropped' (1-based)."""
    if first == last:
        return f"passage {first} was dropped"
    return f"passages {first}-{last} ({last - first + 1:,}) were dropped"


def _reject_or(strict: bool, message: str, notices: list[str]) -> None:
    """Raise ``message`` as an InputError in strict mode, else record it as a notice."""
    if strict:
        raise InputError(message)
    notices.append(message)


# --------------------------------------------------------------------------------------
# Question and passages


def limit_question(question: Any, limits: Limits | None = None) -> tuple[str, list[str]]:
    """Validate, clean and (if needed) cut the question.

    Returns:
        ``(question, notices)``.

    Raises:
        InputError: not a string, empty / whitespace only (after cleaning), or (strict) too long.
    """
    limits = limits or DEFAULT_LIMITS
    if not isinstance(question, str):
        raise InputError("the question is empty: type a question")
    question, n_ctl, n_sur = clean_text(question)
    if not question.strip():
        raise InputError("the question is empty: type a question")
    notices: list[str] = []
    if n_ctl:
        notices.append(f"the question held {n_ctl:,} control character(s); replaced by spaces")
    if n_sur:
        notices.append(
            f"the question held {n_sur:,} invalid character(s) (not UTF-8); replaced by U+FFFD"
        )
    cap = limits.max_question_chars
    if len(question) > cap:
        question = question.strip()  # surrounding whitespace never counts
    n = len(question)
    if n > cap:
        if limits.strict:
            raise InputError(f"the question has {n:,} characters; the limit is {cap:,}")
        question = question[: _cut_point(question, cap)]
        notices.append(
            f"the question has {n:,} characters; kept the first {len(question):,} (limit {cap:,})"
        )
    return question, notices


def apply_limits(
    passages: list[Passage], limits: Limits | None = None
) -> tuple[list[Passage], list[str]]:
    """Clean passages and apply ``limits``, saying what was changed.

    Args:
        passages: normalised passages (see :func:`logrerank.inputs.passages.normalize_passages`).
        limits: the limits (default :data:`DEFAULT_LIMITS`).

    Returns:
        ``(passages, notices)``: the passages to rank (a prefix of the input, in order; each
        text a cleaned prefix of the input text) and one notice per change or finding.

    Raises:
        InputError: ``limits.strict`` and something would have to be cut or dropped.
    """
    limits = limits or DEFAULT_LIMITS
    strict = limits.strict
    notices: list[str] = []
    n_in = len(passages)

    # 1. Number of passages.
    if n_in > limits.max_passages:
        msg = (
            f"got {n_in:,} passages; the limit is {limits.max_passages:,}"
            if strict
            else f"got {n_in:,} passages; ranked the first {limits.max_passages:,} "
            f"(limit {limits.max_passages:,}); {_dropped(limits.max_passages + 1, n_in)}"
        )
        _reject_or(strict, msg, notices)
        passages = passages[: limits.max_passages]

    # 2. Cleaning (length-preserving).
    out: list[Passage] = []
    ctl_at, sur_at, n_ctl_all, n_sur_all = [], [], 0, 0
    title_cut: list[int] = []
    for i, p in enumerate(passages, 1):
        text, c1, s1 = clean_text(p.text)
        title, c2, s2 = clean_text(p.title)
        sents = p.sentences
        if sents is not None and (c1 or s1):
            sents = [clean_text(s)[0] for s in sents]
        if len(title) > limits.max_title_chars:
            title_cut.append(i)
            title = title[: _cut_point(title, limits.max_title_chars)]
        if c1 + c2:
            ctl_at.append(i)
            n_ctl_all += c1 + c2
        if s1 + s2:
            sur_at.append(i)
            n_sur_all += s1 + s2
        if (text, title, sents) != (p.text, p.title, p.sentences):
            p = dataclasses.replace(p, text=text, title=title, sentences=sents)
        out.append(p)
    if n_ctl_all:
        notices.append(
            f"{_names(ctl_at)} held {n_ctl_all:,} control character(s) (binary data?); "
            "replaced by spaces"
        )
    if n_sur_all:
        notices.append(
            f"{_names(sur_at)} held {n_sur_all:,} invalid character(s) (not UTF-8); "
            "replaced by U+FFFD"
        )
    if title_cut:
        _reject_or(
            strict,
            f"the title of {_names(title_cut)} is longer than {limits.max_title_chars:,} "
            "characters; "
            + ("the limit rejects it" if strict else f"kept the first {limits.max_title_chars:,}"),
            notices,
        )

    # 3. Characters per passage.
    cap = limits.max_chars_per_passage
    long_ = [(i, len(p.text)) for i, p in enumerate(out) if len(p.text) > cap]
    if long_:
        if strict:
            i, n = long_[0]
            raise InputError(
                f"passage {i + 1} has {n:,} characters; the limit is {cap:,} per passage"
                + (f" ({len(long_):,} passages are over it)" if len(long_) > 1 else "")
            )
        for i, _n in long_:
            out[i] = _cut_passage(out[i], cap)
        for i, n in long_[:_LIST_AT_MOST]:
            notices.append(
                f"passage {i + 1} has {n:,} characters; kept the first {len(out[i].text):,} "
                f"(limit {cap:,} per passage)"
            )
        rest = [i + 1 for i, _ in long_[_LIST_AT_MOST:]]
        if rest:
            notices.append(
                f"{len(rest):,} more passage(s) were over {cap:,} characters and were cut "
                f"the same way: {_names(rest)}"
            )

    # 4. Characters in total.
    total = sum(len(p.text) for p in out)
    if total > limits.max_total_chars:
        budget = limits.max_total_chars
        if strict:
            raise InputError(
                f"the passages hold {total:,} characters in all; the limit is {budget:,}"
            )
        kept: list[Passage] = []
        used = 0
        cut_note = ""
        for i, p in enumerate(out):
            room = budget - used
            if len(p.text) <= room:
                kept.append(p)
                used += len(p.text)
                continue
            if room > 0:
                q = _cut_passage(p, room)
                if q.text.strip():
                    kept.append(q)
                    cut_note = f"passage {i + 1} was cut to its first {len(q.text):,} characters"
            break
        dropped = len(out) - len(kept)
        parts = [cut_note] if cut_note else []
        if dropped:
            parts.append(_dropped(len(kept) + 1, len(out)))
        notices.append(
            f"the passages hold {total:,} characters in all (limit {budget:,}): "
            + " and ".join(parts)
        )
        out = kept

    # 5. Exact duplicates (kept; reported).
    first_of: dict[str, int] = {}
    groups: dict[int, list[int]] = {}
    for i, p in enumerate(out, 1):
        key = p.text.strip()
        if not key:
            continue
        j = first_of.setdefault(key, i)
        if j != i:
            groups.setdefault(j, []).append(i)
    if groups:
        n_dup = sum(len(v) for v in groups.values())
        parts = [
            f"{_names(v)} {'repeats' if len(v) == 1 else 'repeat'} passage {j}"
            for j, v in list(groups.items())[:_LIST_AT_MOST]
        ]
        if len(groups) > _LIST_AT_MOST:
            parts.append(f"{len(groups) - _LIST_AT_MOST:,} more group(s)")
        notices.append(
            f"{n_dup:,} exact duplicate passage(s): {'; '.join(parts)}; all are kept and ranked"
        )
    return out, notices
