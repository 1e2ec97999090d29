"""Full-text windows of a passage for a cross-encoder: title + each stretch of the body.

The cross-encoder baseline reads ``title + ". " + the first 1,000 body characters``
(:func:`~logrerank.models.cross_encoder.pair_text`). Its full-text variant (the
``cross-encoder-full`` ranker) reads the whole passage, as LoG does: the body is cut into windows
of at most ``budget`` tokens that overlap by ``stride`` tokens, each shown with the title, and the
passage scores as its best window (the MaxP rule of Dai and Callan, 2019). Windows are cut at
token boundaries of the model's own tokenizer and taken from the original string, so no text is
lost or rewritten.
"""

from __future__ import annotations

from typing import Any

from ..types import Passage

DEFAULT_STRIDE = 32
"""Tokens shared by consecutive windows (context for a sentence cut by a window edge)."""


def window_budget(tokenizer: Any, query: str, title: str, max_length: int) -> int:
    """Body tokens a window may hold: ``max_length`` minus the query, the title, ``". "`` and
    the 3 special tokens of a BERT pair (at least 16)."""
    if title:
        used = len(tokenizer(query, f"{title}. ", verbose=False)["input_ids"])
    else:
        used = len(tokenizer(query, verbose=False)["input_ids"]) + 1  # + the pair's second [SEP]
    return max(16, max_length - used)


def body_windows(tokenizer: Any, text: str, budget: int, stride: int = DEFAULT_STRIDE) -> list[str]:
    """The body ``text`` cut into windows of at most ``budget`` tokens overlapping by ``stride``.

    Returns ``[text]`` when it fits (or is empty); every window is a slice of ``text`` from the
    start of its first token to the end of its last one.
    """
    if not text.strip():
        return [text]
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    offsets = enc["offset_mapping"]
    if len(offsets) <= budget:
        return [text]
    step = max(1, budget - max(0, min(stride, budget - 1)))
    out = []
    for start in range(0, len(offsets), step):
        chunk = offsets[start : start + budget]
        out.append(text[chunk[0][0] : chunk[-1][1]])
        if start + budget >= len(offsets):
            break
    return out


def full_pair_texts(
    tokenizer: Any, query: str, p: Passage, max_length: int, stride: int = DEFAULT_STRIDE
) -> list[str]:
    """What the full-text cross-encoder reads for ``p``: one ``title + ". " + window`` per
    window of the body (:func:`body_windows`), the title kept whole in each."""
    budget = window_budget(tokenizer, query, p.title, max_length)
    windows = body_windows(tokenizer, p.text, budget, stride)
    return [f"{p.title}. {w}" if p.title else w for w in windows]
