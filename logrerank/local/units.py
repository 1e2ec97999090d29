"""Passage units: the nodes of the cross-encoder twin (``LocalConfig.unit = "passage"``).

The twin is the passage-level baseline of the LoG-Reranker paper's question (what do sentence
granularity and the graph add over a passage model trained the same way?): the same frozen
layers, prior, joint layer and heads as LoG's local scorer, applied to whole passages instead of
sentences (docs/evaluation.md). Each passage becomes one or more units: a window of at most
``unit_tokens`` tokens of ``title + ". " + body``, the title kept in every unit, the body cut into
windows that overlap by ``unit_stride`` tokens (as the ``cross-encoder-full`` ranker reads a
passage, :mod:`logrerank.models.pair_windows`). A passage then scores as its best unit, which is
how the ranking already orders passages by their best node.

Windows start and end at word boundaries of the tokenizer's pre-tokenizer (a word longer than a
whole window aside), so re-tokenising a unit gives exactly the window's tokens and the unit's
length bound holds. Each unit's :class:`~logrerank.text.segment.Span` is the body window with exact
character offsets into ``passage.text``; the model reads :func:`unit_inputs` (title prefixed).
"""

from __future__ import annotations

from typing import Any

from ..config import LocalConfig
from ..text.segment import Span, passage_spans

MIN_BODY_TOKENS = 16
"""Body tokens a unit keeps at least; a longer title is cut to leave them."""


def title_prefix(tokenizer: Any, title: str, unit_tokens: int) -> tuple[str, int]:
    """``(prefix, tokens)``: ``title + ". "`` (the title cut at a token boundary so that at least
    :data:`MIN_BODY_TOKENS` body tokens fit, at most half the unit) and its token count.

    An empty title gives ``("", 0)``.
    """
    title = title.strip()
    if not title:
        return "", 0
    enc = tokenizer(title, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = enc["offset_mapping"]
    if not offsets:
        return "", 0
    keep = min(len(offsets), max(1, min(unit_tokens // 2, unit_tokens - MIN_BODY_TOKENS) - 1))
    if keep < len(offsets):  # cut before the word that does not fit (unless it is the first)
        starts = _word_starts(enc.word_ids())
        keep = next((j for j in range(keep, 0, -1) if starts[j]), keep)
    title = title[: offsets[keep - 1][1]]
    return f"{title}. ", keep + 1  # + the "." token (whitespace adds none)


def _word_starts(word_ids: list[int | None]) -> list[bool]:
    """Per token: does a new pre-tokenizer word start here?"""
    return [i == 0 or w is None or w != word_ids[i - 1] for i, w in enumerate(word_ids)]


def body_spans(tokenizer: Any, text: str, budget: int, stride: int) -> list[Span]:
    """The body ``text`` as windows of at most ``budget`` tokens overlapping by about ``stride``.

    Windows start and end at word starts (a word longer than ``budget`` tokens is cut). Every
    token of ``text`` lies in some window; each window is a :class:`Span` whose text is exactly
    ``text[start:end]`` (from its first token's start to its last token's end).

    Args:
        tokenizer: a Hugging Face fast tokenizer (offsets and word ids).
        text: the passage body.
        budget: body tokens per window (>= 1).
        stride: tokens shared by consecutive windows (snapped to a word start; < ``budget``).

    Returns:
        The windows in text order; ``[]`` for a text without tokens.
    """
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets, n = enc["offset_mapping"], len(enc["offset_mapping"])
    if not n:
        return []
    starts = _word_starts(enc.word_ids())
    spans: list[Span] = []
    a = 0
    while True:
        b = min(n, a + budget)
        if b < n:  # end before the word that does not fit (unless one word fills the window)
            back = next((j for j in range(b, a, -1) if starts[j]), None)
            b = back if back is not None else b
        s, e = offsets[a][0], offsets[b - 1][1]
        spans.append(Span(s, e, text[s:e]))
        if b >= n:
            return spans
        nxt = next((j for j in range(max(a + 1, b - stride), b + 1) if j == b or starts[j]), b)
        a = nxt


def passage_units(passage: Any, tokenizer: Any, unit_tokens: int, stride: int) -> list[Span]:
    """The units of one passage (anything with ``title`` and ``text``): body windows such that
    ``title + ". " + window`` has at most ``unit_tokens`` tokens (:func:`title_prefix`), sharing
    ``stride`` tokens (at most half a window's body)."""
    _, used = title_prefix(tokenizer, passage.title or "", unit_tokens)
    budget = unit_tokens - used
    return body_spans(tokenizer, passage.text, budget, min(stride, budget // 2))


def unit_inputs(passage: Any, tokenizer: Any, units: list[Span], unit_tokens: int) -> list[str]:
    """What the model reads for each unit of ``passage``: the title prefix + the window."""
    prefix, _ = title_prefix(tokenizer, passage.title or "", unit_tokens)
    return [prefix + u.text for u in units]


def scoring_units(
    passages: list[Any], config: LocalConfig, tokenizer: Any
) -> tuple[list[list[Span]], list[list[str]]]:
    """Per passage, the node spans and the texts the local scorer reads.

    ``config.unit == "sentence"``: the sentences (:func:`~logrerank.text.segment.passage_spans`), read
    as they are; ``"passage"``: the passage units of :func:`passage_units`, read with the title.
    """
    if config.unit == "sentence":
        spans = [passage_spans(p) for p in passages]
        return spans, [[s.text for s in sp] for sp in spans]
    spans = [passage_units(p, tokenizer, config.unit_tokens, config.unit_stride) for p in passages]
    texts = [unit_inputs(p, tokenizer, u, config.unit_tokens) for p, u in zip(passages, spans)]
    return spans, texts
