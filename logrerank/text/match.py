"""Lexical matching of titles against text and queries, shared by the evidence-graph selector
(:mod:`logrerank.baselines.evidence_graph`) and other title-based features.

**Text normalisation** (:func:`normalize_tokens`), shared by both title features: Unicode NFKD,
combining marks dropped (``é -> e``), ``str.casefold``, then the text is split into maximal runs
of letters/digits, so every other character (punctuation, ``_``, whitespace) is a boundary:
``"Nolan's"`` gives ``nolan s``, ``"Jean-Paul"`` gives ``jean paul``, ``"U.S."`` gives ``u s``.

**Usable title** (:func:`title_tokens`): the title with one trailing parenthetical
disambiguator removed (``"Mercury (planet)" -> "Mercury"``; kept when nothing else remains),
normalised as above. A title is *unusable* (no title feature fires for its passage)
when its tokens hold fewer than :data:`MIN_TITLE_CHARS` (3) letters/digits in total (``"AI"``,
``"Go"``) or when every token is an English stopword (``"The"``, ``"It"``); the stopword list
is the one BM25 uses (``bm25s.stopwords.STOPWORDS_EN``). Untitled passages have no usable title.

:func:`title_mentioned` is a whole-token phrase match of a usable title in a text;
:func:`query_title_match` the fraction of a usable title's content words that a query holds.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence

#: Minimum number of letters/digits in a usable (normalised) title.
MIN_TITLE_CHARS = 3

_WORD = re.compile(r"[^\W_]+")
_TRAILING_PAREN = re.compile(r"\s*\([^()]*\)\s*$")
_STOPWORDS: frozenset[str] | None = None


def stopwords() -> frozenset[str]:
    """English stopwords of ``bm25s`` (Lucene's list), loaded on first use."""
    global _STOPWORDS
    if _STOPWORDS is None:
        from bm25s.stopwords import STOPWORDS_EN

        _STOPWORDS = frozenset(STOPWORDS_EN)
    return _STOPWORDS


#: The words of the Glasgow stop list (as shipped by scikit-learn, BSD-3-Clause,
#: ``sklearn.feature_extraction.text.ENGLISH_STOP_WORDS``) that the NLTK and Lucene lists lack:
#: discourse words such as "however", "moreover", "therefore", "thus", "whereas".
GLASGOW_EXTRA: frozenset[str] = frozenset(
    """
    across afterwards almost alone along already also although always among amongst amoungst
    amount another anyhow anyone anything anyway anywhere around back became become becomes
    becoming beforehand behind beside besides beyond bill bottom call cannot cant co con could
    couldnt cry de describe detail done due eg eight either eleven else elsewhere empty enough
    etc even ever every everyone everything everywhere except fifteen fifty fill find fire first
    five former formerly forty found four front full get give go hasnt hence hereafter hereby
    herein hereupon however hundred ie inc indeed interest keep last latter latterly least less
    ltd made many may meanwhile might mill mine moreover mostly move much must name namely
    neither never nevertheless next nine nobody none noone nothing nowhere often one onto others
    otherwise part per perhaps please put rather see seem seemed seeming seems serious several
    show side since sincere six sixty somehow someone something sometime sometimes somewhere
    still system take ten thence thereafter thereby therefore therein thereupon thick thin third
    though three throughout thru thus together top toward towards twelve twenty two un upon us
    via well whatever whence whenever whereafter whereas whereby wherein whereupon wherever
    whether whither whoever whole whose within without would yet
    """.split()  # noqa: SIM905 - a word list, one string
)


@functools.lru_cache(maxsize=1)
def content_stopwords() -> frozenset[str]:
    """The full English stopword list for content terms: ``bm25s``'s NLTK list
    (``STOPWORDS_EN_PLUS``, 179 words: "more", "than", "between", ...), Lucene's
    (:func:`stopwords`) and the rest of the Glasgow list (:data:`GLASGOW_EXTRA`): 378 words.
    Titles keep the short list (:func:`title_tokens`)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS) | stopwords() | GLASGOW_EXTRA


def normalize_tokens(text: str) -> list[str]:
    """Normalised word tokens: NFKD, accents dropped, casefolded, split on non-alphanumerics.

    Args:
        text: Any text.

    Returns:
        The maximal runs of letters/digits, in order (``"Nolan's film" -> ["nolan", "s",
        "film"]``).
    """
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _WORD.findall(stripped.casefold())


def title_tokens(title: str) -> list[str]:
    """The tokens of a usable title, or ``[]`` when the title is unusable.

    One trailing parenthetical disambiguator is dropped first (``"Mercury (planet)"`` ->
    ``mercury``) unless nothing else remains. A title is unusable when it has fewer than
    :data:`MIN_TITLE_CHARS` letters/digits or only stopwords.

    Args:
        title: The raw passage title (may be empty).

    Returns:
        The normalised token sequence, or ``[]``.
    """
    if not title or not title.strip():
        return []
    core = _TRAILING_PAREN.sub("", title)
    tokens = normalize_tokens(core) or normalize_tokens(title)
    if sum(len(t) for t in tokens) < MIN_TITLE_CHARS:
        return []
    stop = stopwords()
    if all(t in stop for t in tokens):
        return []
    return tokens


def padded(tokens: Sequence[str]) -> str:
    """``" a b c "``: a substring test on it is a whole-token phrase match."""
    return " " + " ".join(tokens) + " "


def title_mentioned(title: str, text: str) -> bool:
    """Whether the usable ``title`` occurs in ``text`` as a whole-token phrase.

    Args:
        title: The title of the candidate that may be linked to.
        text: The body text of a (selected) passage.

    Returns:
        ``True`` when the normalised title tokens occur contiguously, in order, among the
        normalised tokens of ``text``; ``False`` for an unusable title.
    """
    tokens = title_tokens(title)
    return bool(tokens) and padded(tokens) in padded(normalize_tokens(text))


def query_title_match(query: str, title: str) -> float:
    """Fraction of the title's content words found in the query (0 for an unusable title).

    Args:
        query: The query.
        title: A passage title.

    Returns:
        ``|T ∩ Q| / |T|`` in ``[0, 1]``, ``T`` the non-stopword tokens of the usable title and
        ``Q`` the query tokens; 1.0 when the query mentions the whole title.
    """
    content = content_set(title_tokens(title))
    if not content:
        return 0.0
    return len(content & set(normalize_tokens(query))) / len(content)


def content_set(tokens: Sequence[str]) -> set[str]:
    """The tokens that are not stopwords, as a set."""
    stop = stopwords()
    return {t for t in tokens if t not in stop}
