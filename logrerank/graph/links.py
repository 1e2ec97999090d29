"""Text-derived link relations of the sentence graph: mentions and shared rare terms (an
adaptation, not in the LoG-Reranker paper; ``docs/method.md``).

Both depend only on the passages (titles and sentence texts), not on the query, so they are
computed once per pool and reused under any graph setting (:func:`pool_links` caches them on the
:class:`~logrerank.ranking.results.Encoded`).

**Mention** (``Relation.MENTIONS`` u -> v, and its reverse ``Relation.MENTIONED_BY`` v -> u).
Sentence u of passage A *mentions* passage B when a *name* of B occurs in u as a whole-token
phrase after the evidence-graph selector's normalisation
(:func:`~logrerank.text.match.normalize_tokens`: NFKD, accents dropped,
casefolded, split on non-alphanumerics). B's names are its usable title
(:func:`~logrerank.text.match.title_tokens`: one trailing parenthetical
disambiguator dropped, unusable when it has fewer than 3 letters/digits or only stopwords) and,
when it differs, the title's leading-article-free form (``"The Beatles"`` is also named by
``"Beatles"``, as long as that form is still usable). As in the selector, a passage never
mentions a passage with the same normalised title (itself, or another chunk of one article).
v ranges over every sentence of B (``mention_target = "all"``) or only B's first sentence
(``"first"``). A sentence links to at most ``mention_max`` passages (longest names first, then
pool order), so a sentence full of common-word titles cannot flood the graph.

Matching is one pass over each sentence's token n-grams up to the longest name, against a hash
table of names: O(tokens x longest name), linear in the pool's text.

**Shared rare term** (``Relation.SHARED_TERM``, both directions, one type). A *content term* is a
normalised token that is not an English stopword (the full list,
:func:`~logrerank.text.match.content_stopwords`), has at least ``term_min_len`` characters and
is not all digits. A term is *rare* when it is rare **in science**: its background idf
``ln(N / df_bg)`` (:mod:`logrerank.text.background_df`, document frequencies of scientific training
corpora; a term missing from that table counts as rare) is at least ``term_bg_idf``; and when
it is shared by few passages of the pool: its pool document
frequency ``df`` (passages containing it, of P) is 2, or more with ``ln(P / df) >= term_idf``
(so in pools of 9 or more passages the pool rule is ``ln(P / df) >= term_idf``; in smaller ones
two passages sharing a term still link). So words such as "study", "also" or "results"
never link passages, however few passages of a pool hold them, while "metformin" does.
Sentences u, v of different passages are linked when they share a rare term; the pair's weight
is the summed background idf of the rare terms they share, and each sentence keeps its
``term_top_k`` heaviest partners (ties: lower node id), every kept pair added in both
directions. Built as a sparse product of the sentence-term
incidence matrix (cost = sum over rare terms of (sentences containing it)^2, and rare terms
occur in few passages).

:func:`annotate_edges` writes onto a result's :class:`~logrerank.types.GraphEdge` objects what
each link is: the shared terms of a shared-term edge, and the mentioning sentence and the name
found in it for a mention edge.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass

import torch
from torch import Tensor

from ..config import GraphConfig
from ..text.background_df import background_df
from ..text.match import content_stopwords, normalize_tokens, padded, title_tokens

# Relation ids (kept equal to logrerank.graph.sentence_graph.Relation; sentence_graph.py asserts it).
MENTIONS = 8
MENTIONED_BY = 9
SHARED_TERM = 10

_ARTICLES = ("the", "a", "an")
_NAMES = (
    "mentions",
    "mentioned-by",
    "shared-term",
)  # logrerank.graph.sentence_graph.relation_name of each


@dataclass
class LinkEdges:
    """Link edges of one pool: ``edge_index [2, E]``, ``relation [E]``, ``weight [E]``."""

    edge_index: Tensor
    relation: Tensor
    weight: Tensor

    @classmethod
    def empty(cls) -> LinkEdges:
        return cls(
            torch.empty(2, 0, dtype=torch.long),
            torch.empty(0, dtype=torch.long),
            torch.empty(0),
        )

    def select(self, mentions: bool, shared_terms: bool) -> LinkEdges:
        """The edges of the enabled relations only."""
        keep = torch.zeros_like(self.relation, dtype=torch.bool)
        if mentions:
            keep |= (self.relation == MENTIONS) | (self.relation == MENTIONED_BY)
        if shared_terms:
            keep |= self.relation == SHARED_TERM
        return LinkEdges(self.edge_index[:, keep], self.relation[keep], self.weight[keep])


def passage_names(title: str) -> list[tuple[str, ...]]:
    """The names by which a passage can be mentioned (token tuples; ``[]`` = none).

    Examples: ``"Mercury (planet)"`` -> ``[("mercury",)]``; ``"The Beatles"`` ->
    ``[("the", "beatles"), ("beatles",)]``; ``"It"`` / ``"AI"`` -> ``[]``.
    """
    tokens = title_tokens(title)
    if not tokens:
        return []
    names = [tuple(tokens)]
    if len(tokens) > 1 and tokens[0] in _ARTICLES:
        rest = title_tokens(" ".join(tokens[1:]))
        if rest:
            names.append(tuple(rest))
    return names


def mention_edges(
    sent_tokens: list[list[str]],
    passage_of: list[int],
    titles: list[str],
    target: str = "all",
    max_per_sentence: int = 8,
) -> tuple[list[int], list[int]]:
    """Directed (u, v) pairs: sentence u mentions the passage of sentence v.

    Args:
        sent_tokens: normalised tokens of each sentence (node order).
        passage_of: passage index of each sentence.
        titles: raw title of each passage.
        target: ``"all"`` sentences of the mentioned passage, or its ``"first"`` sentence.
        max_per_sentence: passages one sentence may mention at most.
    """
    if target not in ("all", "first"):
        raise ValueError(f"mention_target must be 'all' or 'first', got {target!r}")
    P = len(titles)
    own = [tuple(title_tokens(t)) for t in titles]  # normalised title (same-title rule)
    table: dict[tuple[str, ...], list[int]] = {}
    for b, t in enumerate(titles):
        for name in passage_names(t):
            table.setdefault(name, []).append(b)
    if not table:
        return [], []
    longest = max(len(n) for n in table)
    members: list[list[int]] = [[] for _ in range(P)]
    for node, p in enumerate(passage_of):
        members[p].append(node)
    src: list[int] = []
    dst: list[int] = []
    for u, toks in enumerate(sent_tokens):
        a = passage_of[u]
        hits: dict[int, int] = {}  # passage -> longest matched name length
        for i in range(len(toks)):
            for n in range(1, min(longest, len(toks) - i) + 1):
                for b in table.get(tuple(toks[i : i + n]), ()):
                    if b != a and (not own[b] or own[b] != own[a]):
                        hits[b] = max(hits.get(b, 0), n)
        if not hits:
            continue
        chosen = sorted(hits, key=lambda b: (-hits[b], b))[:max_per_sentence]
        for b in sorted(chosen):
            targets = members[b] if target == "all" else members[b][:1]
            src.extend([u] * len(targets))
            dst.extend(targets)
    return src, dst


def content_terms(tokens: list[str], min_len: int = 3) -> set[str]:
    """Content terms of a token list: no stopword (full list), at least ``min_len`` chars, not
    all digits."""
    stop = content_stopwords()
    return {t for t in tokens if len(t) >= min_len and t not in stop and not t.isdigit()}


def rare_vocabulary(
    terms: list[set[str]],
    passage_of: list[int],
    idf_threshold: float = 1.5,
    bg_idf: float = 4.0,
) -> dict[str, float]:
    """The pool's rare terms (module docstring) with their background idf.

    Args:
        terms: content terms of each sentence (:func:`content_terms`).
        passage_of: passage index of each sentence.
        idf_threshold: least pool idf ``ln(P / df)`` of a term in more than two passages.
        bg_idf: least background idf (0 = no background criterion).
    """
    if not terms:
        return {}
    P = max(passage_of) + 1
    df: dict[str, set[int]] = {}
    for u, ts in enumerate(terms):
        for t in sorted(ts):  # sets of str iterate in a per-process (hash seed) order
            df.setdefault(t, set()).add(passage_of[u])
    table = background_df()
    vocab: dict[str, float] = {}
    for t, ps in df.items():
        d = len(ps)
        # shared by few passages: two always count (a small pool has no pool idf to speak of),
        # more only while ln(P / df) >= idf_threshold
        if d == 2 or (d > 2 and math.log(P / d) >= idf_threshold):
            idf = table.idf(t)
            if idf >= bg_idf:
                vocab[t] = idf
    return vocab


def shared_term_edges(
    sent_tokens: list[list[str]],
    passage_of: list[int],
    idf_threshold: float = 1.5,
    top_k: int = 4,
    min_len: int = 3,
    bg_idf: float = 4.0,
) -> tuple[Tensor, Tensor]:
    """Cross-passage pairs sharing a rare term (module docstring), both directions.

    Returns:
        ``edge_index [2, E]`` (sorted by target, then source) and the pair weights ``[E]``
        (summed background idf of the shared rare terms).
    """
    n = len(sent_tokens)
    empty = torch.empty(2, 0, dtype=torch.long), torch.empty(0)
    if n < 2 or top_k <= 0:
        return empty
    terms = [content_terms(t, min_len) for t in sent_tokens]
    vocab = rare_vocabulary(terms, passage_of, idf_threshold, bg_idf)
    if not vocab:
        return empty
    col = {t: i for i, t in enumerate(vocab)}
    rows, cols, vals = [], [], []
    for u, ts in enumerate(terms):
        for t in sorted(ts):  # hash-seed independent column order and summation order
            if t in col:
                rows.append(u)
                cols.append(col[t])
                vals.append(vocab[t])
    S = torch.sparse_coo_tensor(
        torch.tensor([rows, cols]),
        torch.tensor(vals).sqrt(),
        (n, len(col)),
        check_invariants=False,
    ).coalesce()
    with warnings.catch_warnings():  # "sparse support is in beta" notices
        warnings.simplefilter("ignore", UserWarning)
        W = torch.sparse.mm(S, S.t()).coalesce()  # [n, n] summed idf of shared rare terms
    u, v = W.indices()
    w = W.values()
    pof = torch.tensor(passage_of)
    keep = pof[u] != pof[v]
    u, v, w = u[keep], v[keep], w[keep]
    if u.numel() == 0:
        return empty
    # top_k heaviest partners per source: sort by (u, -w, v), rank within each u
    order = torch.from_numpy(_lexsort(v.numpy(), -w.numpy(), u.numpy()))
    u, v, w = u[order], v[order], w[order]
    first = torch.ones_like(u, dtype=torch.bool)
    first[1:] = u[1:] != u[:-1]
    start = torch.cummax(torch.where(first, torch.arange(u.numel()), 0), 0).values
    rank = torch.arange(u.numel()) - start
    keep = rank < top_k
    u, v, w = u[keep], v[keep], w[keep]
    uu, vv, ww = torch.cat([u, v]), torch.cat([v, u]), torch.cat([w, w])
    key, order = torch.sort(vv * n + uu, stable=True)
    first = torch.ones_like(key, dtype=torch.bool)
    first[1:] = key[1:] != key[:-1]
    order = order[first]
    return torch.stack([uu[order], vv[order]]), ww[order].float()


def _lexsort(*keys):
    import numpy as np

    return np.lexsort(keys)


def link_edges(
    texts: list[str], passage_of: list[int], titles: list[str], config: GraphConfig
) -> LinkEdges:
    """All link edges of a pool under ``config`` (mention, mentioned-by, shared-term), whatever
    the on/off switches say (:meth:`LinkEdges.select` applies them)."""
    toks = [normalize_tokens(t) for t in texts]
    ms, md = mention_edges(toks, passage_of, titles, config.mention_target, config.mention_max)
    mi = torch.tensor([ms, md], dtype=torch.long).reshape(2, -1)
    ti, tw = shared_term_edges(
        toks,
        passage_of,
        config.term_idf,
        config.term_top_k,
        config.term_min_len,
        config.term_bg_idf,
    )
    index = torch.cat([mi, mi.flip(0), ti], dim=1)
    relation = torch.cat(
        [
            torch.full((mi.size(1),), MENTIONS, dtype=torch.long),
            torch.full((mi.size(1),), MENTIONED_BY, dtype=torch.long),
            torch.full((ti.size(1),), SHARED_TERM, dtype=torch.long),
        ]
    )
    weight = torch.cat([torch.ones(2 * mi.size(1)), tw])
    return LinkEdges(index, relation, weight)


def _link_key(config: GraphConfig) -> tuple:
    return (
        config.mention_target,
        config.mention_max,
        config.term_idf,
        config.term_top_k,
        config.term_min_len,
        config.term_bg_idf,
    )


def titled_fraction(passages) -> float:
    """Share of ``passages`` whose title has a usable token after normalisation
    (:func:`~logrerank.text.match.title_tokens`); 0.0 for no passages."""
    return _titled_fraction(tuple(p.title for p in passages))


@functools.lru_cache(maxsize=64)
def _titled_fraction(titles: tuple[str, ...]) -> float:
    # cached: the gate's pool features and the result's info each ask for one pool
    return sum(1 for t in titles if title_tokens(t)) / max(1, len(titles))


def pool_links(enc, config: GraphConfig) -> LinkEdges:
    """Link edges of an encoded pool under ``config`` (switches applied), cached on ``enc``."""
    if not (config.mentions or config.shared_terms):
        return LinkEdges.empty()
    cache = enc.__dict__.setdefault("_links", {})
    key = _link_key(config)
    if key not in cache:
        with torch.inference_mode(False):  # cached tensors must also serve training
            cache[key] = link_edges(
                [s.text for s in enc.sentences],
                enc.passage_of.tolist(),
                [p.title for p in enc.passages],
                config,
            )
    return cache[key].select(config.mentions, config.shared_terms)


def annotate_edges(edges: list, enc, config: GraphConfig) -> list:
    """Write onto a result's link edges (:class:`~logrerank.types.GraphEdge`) what they are.

    A shared-term edge gets ``terms``: the rare terms its two sentences share (rarest in
    science first, under the same criterion that built it). A mention edge (either direction)
    gets ``mention``: the text of the mentioning sentence, and ``terms``: the name of the
    mentioned passage found in it.

    Args:
        edges: the result's edges (changed in place; other relations are left alone).
        enc: the encoded pool (:class:`~logrerank.ranking.results.Encoded`) the edges were built on.
        config: the graph settings the edges were built under.

    Returns:
        ``edges``.
    """
    link = [e for e in edges if e.relation in _NAMES]  # names: the untyped ablation keeps them
    if not link:
        return edges
    texts = [s.text for s in enc.sentences]
    passage_of = enc.passage_of.tolist()
    # the pool's tokens and names are cached on ``enc``: a knob change re-annotates for free
    memo = enc.__dict__.setdefault("_annotate", {})
    if "toks" not in memo:
        memo["toks"] = [normalize_tokens(t) for t in texts]
        memo["names"] = [passage_names(p.title) for p in enc.passages]
    toks, names = memo["toks"], memo["names"]
    term_key = (config.term_min_len, config.term_idf, config.term_bg_idf)
    found: dict[int, str] = {}  # mentioning sentence -> its padded tokens
    for e in link:
        if e.relation == "shared-term":
            if term_key not in memo:
                terms = [content_terms(t, config.term_min_len) for t in toks]
                vocab = rare_vocabulary(terms, passage_of, config.term_idf, config.term_bg_idf)
                memo[term_key] = ([{w for w in t if w in vocab} for t in terms], vocab)
            rare, vocab = memo[term_key]
            e.terms = sorted(rare[e.source] & rare[e.target], key=lambda t: (-vocab[t], t))
            continue
        u, v = (e.source, e.target) if e.relation == "mentions" else (e.target, e.source)
        e.mention = texts[u]
        if u not in found:
            found[u] = padded(toks[u])
        hit = [" ".join(n) for n in names[passage_of[v]] if padded(n) in found[u]]
        e.terms = sorted(hit, key=len, reverse=True)[:1] or None
    return edges
