"""Joining a paragraph's lines (line-end hyphens) and cutting long paragraphs into windows."""

from __future__ import annotations

import re

_WORD_END = re.compile(r"([A-Za-z][\w'-]*)[-\u00ad]$")
_WORD_START = re.compile(r"^([a-z][\w'-]*)")
_TOKEN = re.compile(r"[A-Za-z][\w'-]*[A-Za-z]")


def vocabulary(lines: list[str]) -> set[str]:
    """Lower-cased words of the document, the last word of a hyphen-ended line left out."""
    out: set[str] = set()
    for line in lines:
        words = _TOKEN.findall(line)
        if line.rstrip().endswith(("-", "\u00ad")) and words:
            words = words[:-1]
        out.update(w.lower() for w in words)
    return out


def join_lines(lines: list[str], vocab: set[str]) -> str:
    """One text from a paragraph's lines.

    A line ending in a hyphen after a letter, followed by a line starting with a lower-case
    letter, is joined without the hyphen ("gra-" + "phs" -> "graphs"), unless the word before
    it already holds a hyphen ("state-of-the-" + "art") or the document spells the pair with
    a hyphen and never without ("co-" + "authors" where "co-authors" occurs in ``vocab``).
    """
    out = ""
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if not out:
            out = line
            continue
        end, start = _WORD_END.search(out), _WORD_START.match(line)
        if end and start:
            left, right = end.group(1), start.group(1)
            joined = (left + right).lower()
            hyphened = f"{left}-{right}".lower()
            keep = "-" in left or (hyphened in vocab and joined not in vocab)
            out = out[:-1] + ("-" if keep else "") + line
        elif out.endswith("\u00ad"):
            out = out[:-1] + line
        elif end and line[:1].isalpha():  # "MED-" + "LINE": a compound, hyphen kept
            out += line
        else:
            out = f"{out} {line}"
    return out.replace("\u00ad", "")


def windows(text: str, max_chars: int) -> list[str]:
    """``text`` cut into windows of whole sentences of at most ``max_chars`` (a sentence longer
    than that is a window of its own)."""
    if len(text) <= max_chars:
        return [text]
    from ..text.segment import split_sentences

    out: list[str] = []
    start = end = 0
    for span in split_sentences(text):
        if span.end - start > max_chars and end > start:
            out.append(text[start:end].strip())
            start = span.start
        end = span.end
    if text[start:].strip():
        out.append(text[start:].strip())
    return [w for w in out if w]
