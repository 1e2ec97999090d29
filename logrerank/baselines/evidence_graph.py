"""The evidence-graph selector: greedy joint selection with title links.

A training-free passage-level selector. It orders the candidates by greedy joint selection:
starting from the empty set ``S``, it repeatedly picks the remaining candidate ``c`` with the
highest

.. code-block:: text

    score(c | S, q) = w_rel   * minmax(relevance)(c)          (w_rel   = 0.4)
                    + w_link  * directed_title_link(S -> c)   (w_link  = 0.5)
                    + w_title * query_title_match(q, c)       (w_title = 0.2)

adds it to ``S`` and recomputes the scores of the rest, until every candidate is placed. The
order of the picks is the ranking, so a first pick that names a follow-up passage's title can
promote that passage (a second hop) above a more relevant distractor.

**Relevance.** Per-passage scores from a first stage (cross-encoder logits, any ranker's
passage scores, or a list given by the caller), or, when none are given, a lexical BM25 score
computed over the candidate list itself (``bm25s``, Lucene variant, ``k1 = 1.5``, ``b = 0.75``,
lower-cased ``\\w\\w+`` tokens, English stopwords removed, no stemming, indexed text
``title + " " + text``). The scores are min-max normalised once per query over all candidates
(:func:`~logrerank.text.bm25.minmax`: a single or all-tied list maps to 1.0, not 0).

**Text normalisation and usable titles** (:func:`~logrerank.text.match.normalize_tokens`,
:func:`~logrerank.text.match.title_tokens`): see :mod:`logrerank.text.match`. Both title
features are 0 for a passage without a usable title.

**directed_title_link(S -> c)** = 1.0 if the usable title of ``c``, as a whole-token phrase
(its token sequence, contiguous, in the same order), occurs in the normalised *body text*
(``Passage.text``, not the title) of at least one selected passage ``s`` in ``S`` whose own
normalised title differs from ``c``'s, else 0.0. The link is directed: ``s`` names ``c``, not
the reverse. A passage naming its own title, or two chunks of one article sharing a title, do
not link to each other (otherwise every sibling chunk of a first pick would be promoted).

**query_title_match(q, c)** = ``|T ∩ Q| / |T|`` where ``T`` is the set of non-stopword tokens
of ``c``'s usable title and ``Q`` the set of normalised query tokens: the fraction of the
title's content words that the query contains. It is 1.0 whenever the query mentions the full
title (also when the words appear in another order), graded in between, and 0 for an
unusable title.

**Limits** (see the algorithm card). The links are purely lexical: they cannot model a
connection that is not a literal title mention (paraphrase, pronoun, alias, abbreviation,
inflection such as ``Nolans``). A common-word title (``"Time"``) links to every body that uses
the word, and ``"Mercury (planet)"`` is matched by any ``mercury``. Without usable titles (e.g.
QASC-style untitled sentences) both features vanish and the order is the relevance order (a
warning says so). The greedy order has no proven approximation guarantee.

**Scores.** The greedy score at the time of a pick is not monotone in the rank (a link can lift
a later pick above an earlier one), so every :class:`~logrerank.types.ScoredPassage` carries the
monotone ``score = 1 - (rank - 1) / n`` (1.0 for the first pick, strictly decreasing), and the
greedy score in ``extra["greedy_score"]``. ``extra`` also holds ``relevance`` (normalised),
``relevance_raw``, ``title_link``, ``query_title`` and ``step`` (the 1-based pick step, equal to
the rank), all as they were at the moment of the pick.

**Trace.** ``Ranking.info["trace"]`` lists one dict per pick: ``step``, ``passage_idx``,
``title``, the three components and ``total``, the ``runner_up`` (index of the best remaining
candidate at that step, ``None`` at the last step), ``margin`` over it, the weighted
per-component ``margin_parts`` and ``signal``, which names what decided the pick by this rule:

* ``"last"``: the only candidate left;
* ``"input_order"``: the total is tied with the runner-up (within 1e-12) and the earlier input
  index won;
* otherwise the component with the largest weighted difference ``w_k * (x_k(c) - x_k(r))``
  between the pick ``c`` and the runner-up ``r`` (``"relevance"``, ``"title_link"`` or
  ``"query_title"``; a tie between components goes to that order).

**Degraded mode.** When the ``relevance_ranker`` fails (e.g. the cross-encoder cannot be
loaded), :meth:`EvidenceGraphSelector.rank` falls back to BM25 relevance, says so first in
``warnings`` and sets ``info["degraded"] = True`` with the reason in ``info["degraded_reason"]``
(the same contract as the cross-encoder stage, blended with the first pass). Invalid input
still raises.

``link_from`` is the index of the earliest-selected passage whose body names the pick's title
(``None`` without a link), ``link_from_title`` its title and ``link_sources`` all such indices.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from ..inputs.passages import normalize_passages
from ..text.bm25 import bm25_scores, minmax
from ..text.match import normalize_tokens, padded, query_title_match, title_tokens
from ..types import InputError, Passage, Ranking

#: Totals closer than this count as tied (the earlier input index wins).
TIE_EPS = 1e-12
#: Component names in tie-break priority order (also the ``extra`` / trace keys).
COMPONENTS = ("relevance", "title_link", "query_title")


def bm25_relevance(query: str, passages: Sequence[Passage]) -> list[float]:
    """BM25 score of each candidate for ``query``, indexed over the candidates themselves.

    Uses :func:`logrerank.text.bm25.bm25_scores` (the candidate pools' BM25 settings) on
    ``title + " " + text``. A query or a candidate list without indexable terms (only
    stopwords / punctuation) scores 0 everywhere.

    Args:
        query: The query.
        passages: The candidates.

    Returns:
        One raw (unnormalised, non-negative) score per passage, in input order.
    """
    return bm25_scores(query, [f"{x.title} {x.text}" for x in passages])


def _check_query(query: Any) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InputError("the query is empty: give a non-empty question or query string")
    return query


class EvidenceGraphSelector:
    """Greedy evidence-graph selector: relevance + directed title links + query title.

    ``score(c | S, q) = w_rel * minmax(relevance)(c) + w_link * directed_title_link(S -> c)
    + w_title * query_title_match(q, c)``, recomputed after every pick; the pick order is the
    ranking. See the module docstring for the exact feature definitions, the score rule and
    the trace.

    Args:
        relevance_ranker: Optional first stage, any object with ``.rank(query, passages) ->
            Ranking`` (e.g. a cross-encoder stage); :meth:`rank` uses its passage scores as
            relevance. ``None``: lexical BM25 over the candidates (no neural model).
        w_rel: Weight of the min-max-normalised relevance.
        w_link: Weight of the directed title link.
        w_title: Weight of the query-title match.

    Raises:
        ValueError: a weight is negative or not finite.
    """

    name = "evidence-graph"
    level = "passage"

    def __init__(
        self,
        relevance_ranker: Any | None = None,
        w_rel: float = 0.4,
        w_link: float = 0.5,
        w_title: float = 0.2,
    ) -> None:
        for label, w in (("w_rel", w_rel), ("w_link", w_link), ("w_title", w_title)):
            if not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
                raise ValueError(f"{label} must be a finite non-negative number, got {w!r}")
        self.relevance_ranker = relevance_ranker
        self.w_rel = float(w_rel)
        self.w_link = float(w_link)
        self.w_title = float(w_title)

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        """Rank ``passages`` for ``query``.

        Relevance comes from ``relevance_ranker`` (its passage scores) when one was given, else
        from BM25 over the candidates.

        Args:
            query: The query (non-empty).
            passages: Strings, ``{"title", "text"}`` dicts or :class:`Passage` objects.

        Returns:
            The :class:`Ranking` in greedy pick order (see the module docstring).

        Raises:
            InputError: empty query or passage list, or a malformed passage.
        """
        query = _check_query(query)
        items = normalize_passages(passages)
        if self.relevance_ranker is None:
            return self.rank_with_scores(query, items)
        t0 = time.perf_counter()
        source = str(getattr(self.relevance_ranker, "name", type(self.relevance_ranker).__name__))
        try:
            first = self.relevance_ranker.rank(query, items)
        except InputError:
            raise
        except (
            Exception
        ) as exc:  # a failing neural stage degrades to BM25, visibly (as the cross-encoder stage)
            ranking = self.rank_with_scores(query, items)
            ranking.warnings.insert(
                0,
                f"relevance ranker {source!r} failed ({type(exc).__name__}: {exc}); "
                "the selector used BM25 relevance instead",
            )
            ranking.info["degraded"] = True
            ranking.info["degraded_reason"] = f"{type(exc).__name__}: {exc}"
            ranking.timings["relevance_failed"] = time.perf_counter() - t0
            return ranking
        elapsed = time.perf_counter() - t0
        by_idx = {sp.passage_idx: float(sp.score) for sp in first.passages_ranked}
        warnings = list(first.warnings)
        finite = [v for v in by_idx.values() if math.isfinite(v)]
        floor = min(finite) if finite else 0.0
        relevance = []
        for i in range(len(items)):
            v = by_idx.get(i, math.nan)
            if not math.isfinite(v):
                warnings.append(
                    f"relevance ranker {source!r} gave no finite score for passage {i + 1}; "
                    "it gets the lowest relevance"
                )
                v = floor
            relevance.append(v)
        return self._select(
            query,
            items,
            relevance,
            source=source,
            warnings=warnings,
            timings={"relevance": elapsed},
        )

    def rank_with_scores(
        self,
        query: str,
        passages: list[Any],
        relevance: Sequence[float] | None = None,
    ) -> Ranking:
        """Rank with given relevance scores, or lexical BM25 when ``relevance`` is ``None``.

        Needs no neural model (the ``relevance_ranker`` is not used).

        Args:
            query: The query (non-empty).
            passages: Strings, ``{"title", "text"}`` dicts or :class:`Passage` objects.
            relevance: One finite score per passage (any scale, higher is better; e.g.
                cross-encoder logits), aligned with ``passages``; ``None`` for BM25.

        Returns:
            The :class:`Ranking` in greedy pick order (see the module docstring).

        Raises:
            InputError: empty query or passage list, a malformed passage, or ``relevance`` of
                the wrong length or with a non-finite value.
        """
        query = _check_query(query)
        items = normalize_passages(passages)
        warnings: list[str] = []
        if relevance is None:
            t0 = time.perf_counter()
            scores = bm25_relevance(query, items)
            elapsed = time.perf_counter() - t0
            if not any(scores):
                warnings.append(
                    "no query term matches any passage (BM25 is 0 everywhere): relevance is "
                    "flat, so only title features and input order decide"
                )
            return self._select(
                query, items, scores, "bm25", warnings=warnings, timings={"relevance": elapsed}
            )
        if isinstance(relevance, (str, bytes)) or not isinstance(relevance, Sequence):
            try:
                relevance = list(relevance)  # e.g. a numpy array
            except TypeError as exc:
                raise InputError("relevance must be a list of numbers, one per passage") from exc
        if len(relevance) != len(items):
            raise InputError(
                f"relevance has {len(relevance)} scores for {len(items)} passages; "
                "give one score per passage, in passage order"
            )
        scores = []
        for i, v in enumerate(relevance):
            try:
                f = float(v)
            except (TypeError, ValueError) as exc:
                raise InputError(f"relevance score {i + 1} is not a number: {v!r}") from exc
            if not math.isfinite(f):
                raise InputError(f"relevance score {i + 1} is not finite: {v!r}")
            scores.append(f)
        return self._select(query, items, scores, "given", warnings=warnings, timings={})

    def _select(
        self,
        query: str,
        passages: list[Passage],
        raw: list[float],
        source: str,
        warnings: list[str],
        timings: dict[str, float],
    ) -> Ranking:
        """The greedy loop shared by :meth:`rank` and :meth:`rank_with_scores`."""
        t0 = time.perf_counter()
        n = len(passages)
        rel = minmax(raw)
        titles = [title_tokens(p.title) for p in passages]
        padded_titles = [padded(t) if t else "" for t in titles]
        bodies = [padded(normalize_tokens(p.text)) for p in passages]
        qtm = [query_title_match(query, p.title) for p in passages]
        if not any(titles):
            warnings.append(
                "no passage has a usable title: the title-link and query-title features are 0 "
                "and the order is the relevance order"
            )
        weights = {"relevance": self.w_rel, "title_link": self.w_link, "query_title": self.w_title}
        link_sources: list[list[int]] = [[] for _ in range(n)]
        remaining = list(range(n))
        picks: list[tuple[int, dict[str, float], float]] = []
        trace: list[dict[str, Any]] = []

        def components(c: int) -> dict[str, float]:
            return {
                "relevance": rel[c],
                "title_link": 1.0 if link_sources[c] else 0.0,
                "query_title": qtm[c],
            }

        def total(comp: dict[str, float]) -> float:
            return sum(weights[k] * comp[k] for k in COMPONENTS)

        for step in range(1, n + 1):
            scored = [(c, components(c)) for c in remaining]
            totals = {c: total(comp) for c, comp in scored}
            # Best total; totals within TIE_EPS of the top are tied and the earliest index wins.
            top = max(totals.values())
            best = min(c for c in remaining if totals[c] >= top - TIE_EPS)
            others = [c for c in remaining if c != best]
            runner = None
            if others:
                top_other = max(totals[c] for c in others)
                runner = min(c for c in others if totals[c] >= top_other - TIE_EPS)
            comp = dict(scored[remaining.index(best)][1])
            entry: dict[str, Any] = {
                "step": step,
                "passage_idx": best,
                "title": passages[best].title,
                **comp,
                "total": totals[best],
                "runner_up": runner,
            }
            if runner is None:
                entry.update(margin=None, margin_parts=None, signal="last")
            else:
                rcomp = components(runner)
                parts = {k: weights[k] * (comp[k] - rcomp[k]) for k in COMPONENTS}
                margin = totals[best] - totals[runner]
                if margin <= TIE_EPS:
                    signal = "input_order"
                else:
                    signal = max(COMPONENTS, key=lambda k: (parts[k], -COMPONENTS.index(k)))
                entry.update(margin=margin, margin_parts=parts, signal=signal)
            sources = list(link_sources[best])
            entry["link_from"] = sources[0] if sources else None
            entry["link_from_title"] = passages[sources[0]].title if sources else None
            entry["link_sources"] = sources
            trace.append(entry)
            picks.append((best, comp, totals[best]))
            remaining.remove(best)
            # Recompute: the new pick's body may name the titles of the remaining candidates.
            own = padded_titles[best]
            for c in remaining:
                t = padded_titles[c]
                if t and t != own and t in bodies[best]:
                    link_sources[c].append(best)

        scores = [0.0] * n
        extras: list[dict[str, float]] = [{} for _ in range(n)]
        for rank, (idx, comp, greedy) in enumerate(picks, 1):
            scores[idx] = 1.0 - (rank - 1) / n
            extras[idx] = {
                **comp,
                "relevance_raw": raw[idx],
                "greedy_score": greedy,
                "step": rank,
            }
        timings = {**timings, "selection": time.perf_counter() - t0}
        info = {
            "relevance_source": source,
            "weights": {"w_rel": self.w_rel, "w_link": self.w_link, "w_title": self.w_title},
            "score_rule": "1 - (rank - 1) / n; greedy score in extra['greedy_score']",
            "usable_titles": sum(1 for t in titles if t),
            "trace": trace,
            "degraded": False,
        }
        return Ranking.from_passage_scores(
            query,
            passages,
            scores,
            self.name,
            extras=extras,
            timings=timings,
            warnings=warnings,
            info=info,
        )
