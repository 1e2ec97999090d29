"""The pysbd adapter of the reference sentence splitter
(:func:`logrerank.text.segment.split_sentences_pysbd`) and the offset helpers of both splitters.

pysbd (rule-based, ``language="en"``, ``clean=False``) is built lazily once per process. Only
its sentence strings are used; they are located in the original text by :func:`locate`, since
pysbd's own char-span recovery is quadratic for repeated sentences and silently drops a
sentence it cannot find.
"""

from __future__ import annotations

from typing import Any

_segmenter: Any = None


def get_segmenter() -> Any:
    """Return the shared pysbd segmenter, building it on first use."""
    global _segmenter
    if _segmenter is None:
        import pysbd

        _segmenter = pysbd.Segmenter(language="en", clean=False, char_span=False)
    return _segmenter


def next_nonspace(text: str, i: int, end: int) -> int:
    """Index of the first non-whitespace char in ``text[i:end]``, or ``end``."""
    while i < end and text[i].isspace():
        i += 1
    return i


def prev_nonspace_end(text: str, i: int, start: int) -> int:
    """Smallest ``j >= start`` such that ``text[j:i]`` is all whitespace."""
    while i > start and text[i - 1].isspace():
        i -= 1
    return i


def run_pysbd(seg: Any, window: str) -> list[str]:
    """pysbd's sentence strings for ``window``, without its char-span recovery.

    ``Segmenter.segment`` (pysbd 0.3.4) re-locates every sentence with
    ``re.finditer(re.escape(sent) + r"\\s*", text)`` over the whole text, even with
    ``char_span=False``: quadratic for repeated sentences (70k "1." items took ~16 s) and a
    sentence it fails to find is silently dropped. We call the processor directly and
    locate the sentences ourselves in :func:`locate`.
    """
    make = getattr(seg, "processor", None)
    # Other pysbd versions: fall back to the public API.
    out = seg.segment(window) if make is None else make(window).process()
    if isinstance(out, str):  # Processor.process returns its input when it is empty
        return [out]
    return [s for s in out if isinstance(s, str)]


def locate(window: str, sentences: list[str]) -> list[int]:
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
        ideal = next_nonspace(window, cursor, n)
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
