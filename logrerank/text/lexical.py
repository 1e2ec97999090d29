"""Lexical node inputs of the global stage: the evidence-graph selector's signals (an
adaptation of eq. 7 of the LoG-Reranker paper; ``docs/method.md``).

Per node (sentence) of a pool, three numbers in [0, 1]:

0. ``sentence_bm25``: BM25 of the sentence for the query, IDF over the pool's sentences,
   min-max normalised over the pool (:func:`logrerank.text.bm25.bm25_scores`, the pools'
   settings; an all-tied pool maps to 1.0 as :func:`~logrerank.text.bm25.minmax` does);
1. ``passage_bm25``: BM25 of the sentence's passage (``title + " " + text``) over the pool's
   passages, min-max normalised (the selector's relevance);
2. ``query_title``: the fraction of the passage title's content words that the query contains
   (:func:`logrerank.text.match.query_title_match`; 0 for an unusable title).
"""

from __future__ import annotations

import torch
from torch import Tensor

from .bm25 import bm25_scores, minmax
from .match import query_title_match

NUM_LEXICAL = 3
LEXICAL_NAMES = ("sentence_bm25", "passage_bm25", "query_title")


def lexical_features(
    query: str, sentence_texts: list[str], passage_of: Tensor, titles: list[str], texts: list[str]
) -> Tensor:
    """``[N, 3]`` lexical inputs (module docstring).

    Args:
        query: the question.
        sentence_texts: the N sentence texts (node order).
        passage_of: ``[N]`` passage index of each node.
        titles: title of each passage.
        texts: body text of each passage.
    """
    n = len(sentence_texts)
    if n == 0:
        return torch.zeros(0, NUM_LEXICAL)
    sent = minmax(bm25_scores(query, sentence_texts))
    psg = minmax(bm25_scores(query, [f"{t} {x}" for t, x in zip(titles, texts)]))
    qt = [query_title_match(query, t) for t in titles]
    p = passage_of.cpu()
    out = torch.stack(
        [
            torch.tensor(sent, dtype=torch.float32),
            torch.tensor(psg, dtype=torch.float32)[p],
            torch.tensor(qt, dtype=torch.float32)[p],
        ],
        dim=1,
    )
    return out


def pool_lexical(enc) -> Tensor:
    """Lexical inputs of an encoded pool, computed once into its ``lexical`` field
    (:class:`~logrerank.ranking.results.Encoded`)."""
    cached = enc.lexical
    if cached is None:
        with torch.inference_mode(False):  # cached tensors must also serve training
            cached = lexical_features(
                enc.query,
                [s.text for s in enc.sentences],
                enc.passage_of,
                [p.title for p in enc.passages],
                [p.text for p in enc.passages],
            )
        enc.lexical = cached
    return cached
