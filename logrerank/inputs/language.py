"""Is the input English? Notices for text the bundled models were not trained on.

The bundled models were trained on English scientific text. Two checks, each giving one notice
(:func:`logrerank.inputs.passages.prepare_input` collects them):

* :func:`non_latin_notice`: the question or the passages are mostly not in the Latin script;
* :func:`non_english_notice`: Latin-script text in another language (French, German, Spanish,
  ...), which the script check cannot see.

A (mostly Latin-script) text is judged *non-English* when both hold:

1. ``langdetect`` (a port of Google's language-detection library: character n-gram profiles of
   55 languages stored as JSON, no network, no pickle; seeded so it is deterministic) gives a
   language other than English a probability of at least :data:`MIN_PROB` and English less
   than ``1 - MIN_PROB``;
2. English function words (:func:`function_words`) make up less than
   :data:`MAX_EN_FUNCTION_SHARE` of its words. Short English claims full of gene names
   ("Natriuretic peptides protect against diabetes.") can fool the n-gram profiles; English
   prose keeps its function words ("against", "to", "in").

Texts with fewer than :data:`MIN_LETTERS_QUESTION` (question) or :data:`MIN_LETTERS_PASSAGE`
(passage) letters, or fewer than :data:`MIN_DISTINCT_WORDS` distinct words, are not judged: the
n-gram profiles need some text.

On the queries of the public training data (505 SciFact train claims, 1,995 Citation-Integrity
train claims, 1,000 PubMedQA questions, 230 Evidence Inference validation prompts, 611 ScisummNet
citing sentences), 300 SciFact abstracts and their sentences, no text is judged non-English
(``tests/integration/test_language_data.py``).
"""

from __future__ import annotations

import functools
import unicodedata
from collections import Counter

from ..text.match import normalize_tokens
from ..types import Passage

#: Least probability of the top non-English language.
MIN_PROB = 0.9
#: English function words above this share of the words mean English, whatever the n-grams say.
MAX_EN_FUNCTION_SHARE = 0.1
#: Questions with fewer letters are not judged ("Aging cells undergo substantial cellular changes .",
#: 43 letters, reads as Catalan to the profiles).
MIN_LETTERS_QUESTION = 50
#: Texts with fewer distinct words are not judged (a repeated token reads as some language).
MIN_DISTINCT_WORDS = 5
#: Passages with fewer letters are not judged.
MIN_LETTERS_PASSAGE = 80


@functools.lru_cache(maxsize=1)
def _detector():
    """``langdetect.detect_langs`` with the profiles loaded and the seed fixed."""
    from langdetect import DetectorFactory, detect_langs

    DetectorFactory.seed = 0
    return detect_langs


def non_latin_share(text: str) -> tuple[float, int]:
    """Share of the letters of ``text`` outside the Latin script, and the number of letters.

    A letter is Latin when its Unicode name starts with ``LATIN`` (so accented letters count as
    Latin); Greek symbols in a scientific English text stay a small share.
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0, 0
    other = sum(not unicodedata.name(c, "").startswith("LATIN") for c in letters)
    return other / len(letters), len(letters)


def non_latin_notice(question: str, passages: list[Passage], threshold: float = 0.5) -> str | None:
    """A notice when the question or the passages are mostly not in the Latin script.

    The bundled models were trained on English scientific text; they still rank such input, but
    the user should know the scores are out of their domain.
    """
    parts = []
    q_share, _ = non_latin_share(question)
    if q_share > threshold:
        parts.append("the question")
    p_share, n = non_latin_share(" ".join(p.title + " " + p.text for p in passages))
    if n and p_share > threshold:
        parts.append(f"the passages ({p_share:.0%} of their letters)")
    if not parts:
        return None
    return (
        f"{' and '.join(parts)} {'look' if len(parts) > 1 or q_share <= threshold else 'looks'} "
        "mostly non-English (not Latin script); the models were "
        "trained on English scientific text, so the scores may be unreliable"
    )


@functools.lru_cache(maxsize=1)
def function_words() -> frozenset[str]:
    """English function words: ``bm25s``'s NLTK and Lucene stopword lists without their
    one-letter entries (``"a"``, ``"y"``, ``"o"``, ``"d"`` are words or clitics of other
    languages too): 171 words ("against", "between", "in", "the", ...)."""
    from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS

    return frozenset(w for w in {*STOPWORDS_EN, *STOPWORDS_EN_PLUS} if len(w) > 1)


def en_function_share(text: str) -> float:
    """Share of the words of ``text`` that are English function words (0 for no words).

    ``share = |{w in words: w in function_words()}| / |words|`` over :func:`normalize_tokens`.
    """
    words = normalize_tokens(text)
    if not words:
        return 0.0
    stop = function_words()
    return sum(w in stop for w in words) / len(words)


def non_english_language(text: str, min_letters: int = MIN_LETTERS_QUESTION) -> str | None:
    """The language code (``"fr"``, ``"de"``, ...) when ``text`` looks non-English, else None.

    Args:
        text: Any text.
        min_letters: Texts with fewer letters are not judged (None).

    Returns:
        The ISO 639-1 code langdetect gives, or None (English, too short, or undecided).
    """
    share, letters = non_latin_share(text)
    if letters < min_letters or share > 0.5:  # too short, or left to the script notice
        return None
    if en_function_share(text) >= MAX_EN_FUNCTION_SHARE:
        return None
    if len(set(normalize_tokens(text))) < MIN_DISTINCT_WORDS:  # "word word word ..."
        return None
    try:
        langs = _detector()(text)
    except Exception:  # langdetect raises LangDetectException on text with no features
        return None
    english = sum(lang.prob for lang in langs if lang.lang == "en")
    top = langs[0] if langs else None
    if top is None or top.lang == "en" or top.prob < MIN_PROB or english >= 1 - MIN_PROB:
        return None
    return top.lang


def non_english_notice(question: str, passages: list[Passage]) -> str | None:
    """A notice when the question or some passages look like Latin-script non-English text.

    Returns:
        E.g. ``"the question looks French (fr) and 3 of 12 passages look non-English (fr 2, de
        1); the models were trained on English scientific text, so the scores may be
        unreliable"``, or None.
    """
    parts = []
    q_lang = non_english_language(question, MIN_LETTERS_QUESTION)
    if q_lang:
        parts.append(f"the question looks non-English ({q_lang})")
    langs = Counter(
        lang
        for p in passages
        if (lang := non_english_language(f"{p.title}\n{p.text}", MIN_LETTERS_PASSAGE))
    )
    if langs:
        n = sum(langs.values())
        which = ", ".join(f"{k} {v}" for k, v in langs.most_common())
        verb = "looks" if n == 1 else "look"
        parts.append(f"{n} of {len(passages)} passages {verb} non-English ({which})")
    if not parts:
        return None
    return (
        " and ".join(parts) + "; the models were trained on English scientific text, so the "
        "scores may be unreliable"
    )
