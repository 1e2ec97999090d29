"""How a pool is ranked, decided in one place (:class:`PoolRoute`).

A routed LoG model ranks a pool by what its passages look like. Every such decision and its
threshold lives here, is computed once per pool by :func:`pool_route`, and is used as is by
inference (:meth:`logrerank.pipeline.LoGReranker.rank_encoded`, which records it in
``Ranking.info["route"]`` for the app and the CLI), by training
(:mod:`logrerank.training.passage_stage`) and by the cross-encoder twin:

* **global stage**: pools where fewer than ``single.min_titled`` of the passages have a usable
  title go to the single-passage stage (the paper's graph), the others to the multi-passage
  stage with link relations and lexical node inputs (docs/method.md, "two global stages");
* **lexical prior**: pools where fewer than ``score.lexical_max_titled`` of the passages have a
  title get ``score.lexical_weight`` x passage BM25 added to their final logits
  (docs/method.md, section 5), since no stage reads lexical evidence for them.

Whether shared-term links are built at all is a graph setting (``graph.term_min_titled``,
:func:`logrerank.links.pool_links`), not a route.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import LoGConfig, ScoreConfig
from .links import titled_fraction

MULTI, SINGLE = "multi-passage", "single-passage"
"""Names of the two global stages of a routed model."""


@dataclass(frozen=True)
class PoolRoute:
    """The routing decisions of one pool."""

    titled_fraction: float  # share of the pool's passages with a usable title
    stage: str  # global stage: MULTI or SINGLE
    lexical_weight: float  # w of the lexical prior in the final logits (0 = none)
    min_titled: float  # the threshold that chose the stage (single.min_titled; 0 = one stage)
    lexical_max_titled: float  # the threshold below which the lexical prior applies

    def describe(self) -> str:
        """One line for people: which stage, why, and whether the lexical prior applies."""
        share = f"{100 * self.titled_fraction:.0f} % of the passages have a title"
        if self.min_titled <= 0:
            stage = "one global stage"
        elif self.stage == SINGLE:
            stage = f"single-passage stage (under {100 * self.min_titled:.0f} % titled)"
        else:
            stage = f"multi-passage stage (at least {100 * self.min_titled:.0f} % titled)"
        lex = f"; lexical prior w = {self.lexical_weight:g}" if self.lexical_weight else ""
        return f"{share}: {stage}{lex}"


def lexical_weight_for(score: ScoreConfig, titled: float) -> float:
    """``score.lexical_weight`` when ``titled`` < ``score.lexical_max_titled``, else 0."""
    return score.lexical_weight if titled < score.lexical_max_titled else 0.0


def pool_route(config: LoGConfig, passages) -> PoolRoute:
    """The :class:`PoolRoute` of a pool's passages under ``config``."""
    titled = titled_fraction(passages)
    m = config.single.min_titled
    return PoolRoute(
        titled_fraction=titled,
        stage=SINGLE if m > 0 and titled < m else MULTI,
        lexical_weight=lexical_weight_for(config.score, titled),
        min_titled=m,
        lexical_max_titled=config.score.lexical_max_titled,
    )
