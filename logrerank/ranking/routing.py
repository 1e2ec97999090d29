"""How a pool is ranked, decided in one place (:class:`PoolRoute`).

A routed LoG model ranks a pool by what its passages look like. Every such decision and its
threshold lives here, is computed once per pool by :func:`pool_route`, and is used as is by
inference (:meth:`logrerank.pipeline.LoGReranker.rank_encoded`, which records it in
``Ranking.info["route"]`` for the app and the CLI), by training
(:mod:`logrerank.training.log.passage_stage`) and by the cross-encoder twin:

* **global stage**: pools where fewer than ``single.min_titled`` of the passages have a usable
  title go to the single-passage stage (the paper's graph), the others to the multi-passage
  stage with link relations and lexical node inputs (docs/method.md, "two global stages");
* **lexical prior**: pools where fewer than ``score.lexical_max_titled`` of the passages have a
  title get ``score.lexical_weight`` x passage BM25 added to their final logits
  (docs/method.md, section 5), since no stage reads lexical evidence for them, and their head
  shrinkage takes ``score.untitled_head_weight`` when that is set (>= 0);
* **untitled blend**: those same untitled pools rank by ``a x (with the graph stage) + (1 - a) x
  (local only)`` final logits, ``a = score.untitled_global_weight`` (1 = the graph alone), chosen
  by ``logrerank tune-score --untitled-route`` on training pools: the graph stage is kept there
  only as far as it measurably beats local only (docs/method.md, "Untitled pools");
* **paper pools**: pools whose titled passages carry long titles (at least
  ``score.paper_title_words`` words on average: paper titles, not the 1-6 word entity titles of
  Wikipedia) rank by ``a x (with the graph stage) + (1 - a) x (local only)`` final logits,
  ``a = score.paper_global_weight`` (:func:`logrerank.ranking.results.routed_logits`): the multi-passage
  stage was trained on entity-titled multi-hop pools, and on paper pools its link and lexical
  evidence helps Evidence Inference and SciFact but misleads on citing sentences (docs/method.md,
  "Paper pools");
* **citing queries**: with ``score.citance_route``, a paper pool whose query carries a citation
  marker (:func:`logrerank.text.citations.has_citation_marker`: a citing sentence, which wants
  the span of the one paper it cites) takes ``a = score.citance_global_weight`` instead, and
  with ``score.citance_stage`` its graph logits come from a multi-passage stage of its own
  (:data:`CITING`; ``logrerank citing-stage``, docs/method.md, "Paper pools");
* **paper lexical prior**: paper pools add ``score.paper_lexical_weight`` x passage BM25 to
  both ends of that blend (``score.citance_lexical_weight`` on the citing route), chosen with
  ``a`` by ``logrerank tune-score --paper-route``: on paper titles the multi-passage stage's
  lexical inputs fire little (docs/method.md, "Paper pools");
* **dense passage prior**: paper pools also add ``score.paper_dense_weight`` (citing route:
  ``score.citance_dense_weight``) x 10 x the packaged embedder's cosine of the query to
  ``title. text`` (:mod:`logrerank.ranking.dense_prior`), chosen with the two above.
* **titled-sentence prior**: and ``score.paper_sentence_weight`` (``score.citance_sentence_weight``)
  x 10 x its cosine to each ``title. sentence`` (same module), chosen with the three above.

Whether shared-term links are built at all is a graph setting (``graph.term_min_titled``,
:func:`logrerank.graph.links.pool_links`), not a route.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import LoGConfig, ScoreConfig
from ..graph.links import titled_fraction
from ..text.citations import has_citation_marker

MULTI, SINGLE, CITING = "multi-passage", "single-passage", "multi-passage (citing)"
"""Names of the global stages of a routed model (the third only with ``score.citance_stage``)."""


@dataclass(frozen=True)
class PoolRoute:
    """The routing decisions of one pool."""

    titled_fraction: float  # share of the pool's passages with a usable title
    stage: str  # global stage: MULTI, SINGLE or CITING
    lexical_weight: float  # w of the lexical prior in the final logits (0 = none)
    min_titled: float  # the threshold that chose the stage (single.min_titled; 0 = one stage)
    lexical_max_titled: float  # the threshold below which the lexical prior applies
    title_words: float = 0.0  # mean title length (words) of the titled passages
    global_weight: float = 1.0  # a: weight of the graph stage's logits (1 = the graph alone)
    citance: bool = False  # the query carries a citation marker (a citing sentence)
    paper: bool = False  # a paper pool (mean title words >= score.paper_title_words > 0)
    head_weight: float | None = None  # w of the head shrinkage (None = score.head_weight)
    dense_weight: float = 0.0  # v of the dense passage prior (ranking/dense_prior.py; 0 = none)
    sentence_weight: float = 0.0  # u of the titled-sentence prior (same module; 0 = none)

    def describe(self) -> str:
        """One line for people: which stage, why, and whether the lexical prior applies."""
        share = f"{100 * self.titled_fraction:.0f} % of the passages have a title"
        if self.stage == CITING:
            stage = "the multi-passage stage of citing queries"
        elif self.min_titled <= 0:
            stage = "one global stage"
        elif self.stage == SINGLE:
            stage = f"single-passage stage (under {100 * self.min_titled:.0f} % titled)"
        else:
            stage = f"multi-passage stage (at least {100 * self.min_titled:.0f} % titled)"
        lex = f"; lexical prior w = {self.lexical_weight:g}" if self.lexical_weight else ""
        if self.lexical_weight and self.titled_fraction < self.lexical_max_titled:
            lex += f", head weight {self.head_weight:g}"
        untitled = self.titled_fraction < self.lexical_max_titled
        if untitled and self.global_weight < 1.0:
            lex += (
                f"; untitled: graph stage weighted {self.global_weight:g}, "
                f"local only {1 - self.global_weight:g}"
            )
        elif self.paper and (self.global_weight < 1.0 or self.citance):
            kind = "paper titles"
            kind += ", citing query" if self.citance else ""
            lex += (
                f"; {kind} ({self.title_words:.0f} title words): graph stage weighted "
                f"{self.global_weight:g}, local only {1 - self.global_weight:g}"
            )
        if self.dense_weight:
            lex += f"; dense passage prior v = {self.dense_weight:g}"
        if self.sentence_weight:
            lex += f"; titled-sentence prior u = {self.sentence_weight:g}"
        return f"{share}: {stage}{lex}"


def lexical_weight_for(score: ScoreConfig, titled: float) -> float:
    """``score.lexical_weight`` when ``titled`` < ``score.lexical_max_titled``, else 0."""
    return score.lexical_weight if titled < score.lexical_max_titled else 0.0


def paper_weight(score: ScoreConfig, name: str, title_words: float, citance: bool = False) -> float:
    """A paper-pool weight ``name`` (``lexical``, ``dense``, ``sentence``): in a paper pool
    (:func:`is_paper_pool`) ``score.citance_<name>_weight`` for a citing query on the citing
    route (:func:`is_citance`), else ``score.paper_<name>_weight``; 0 for other pools."""
    if not is_paper_pool(score, title_words):
        return 0.0
    return getattr(score, f"{'citance' if citance else 'paper'}_{name}_weight")


def paper_lexical_weight_for(
    score: ScoreConfig, title_words: float, citance: bool = False
) -> float:
    """w of the lexical prior of a paper pool (:func:`paper_weight`)."""
    return paper_weight(score, "lexical", title_words, citance)


def dense_weight_for(score: ScoreConfig, title_words: float, citance: bool = False) -> float:
    """v of the dense passage prior of a paper pool (:func:`paper_weight`)."""
    return paper_weight(score, "dense", title_words, citance)


def sentence_weight_for(score: ScoreConfig, title_words: float, citance: bool = False) -> float:
    """u of the titled-sentence prior of a paper pool (:func:`paper_weight`)."""
    return paper_weight(score, "sentence", title_words, citance)


def head_weight_for(score: ScoreConfig, titled: float) -> float:
    """``score.untitled_head_weight`` for the pools of the lexical prior (``titled`` <
    ``score.lexical_max_titled``) when it is set (>= 0), else ``score.head_weight``."""
    untitled = titled < score.lexical_max_titled and score.untitled_head_weight >= 0
    return score.untitled_head_weight if untitled else score.head_weight


def mean_title_words(passages) -> float:
    """Mean number of words in the titles of the passages that have one (0 without titles)."""
    lengths = [len(t.split()) for t in (p.title or "" for p in passages) if t.strip()]
    return sum(lengths) / len(lengths) if lengths else 0.0


def is_paper_pool(score: ScoreConfig, title_words: float) -> bool:
    """Whether a pool is a paper pool: mean title words at least ``score.paper_title_words`` > 0."""
    return score.paper_title_words > 0 and title_words >= score.paper_title_words


def is_citance(score: ScoreConfig, query: str) -> bool:
    """Whether the citing-query route applies to ``query``: ``score.citance_route`` is on and
    the query carries a citation marker."""
    return bool(score.citance_route) and has_citation_marker(query)


def global_weight_for(
    score: ScoreConfig, title_words: float, citance: bool = False, titled: float = 1.0
) -> float:
    """``a`` of a pool: ``score.untitled_global_weight`` in an untitled pool (``titled`` <
    ``score.lexical_max_titled``, the pools of the lexical prior); in a paper pool
    (:func:`is_paper_pool`) ``score.citance_global_weight`` for a citing query
    (:func:`is_citance`) and ``score.paper_global_weight`` otherwise; else 1 (the graph stage
    alone)."""
    if titled < score.lexical_max_titled:
        return score.untitled_global_weight
    if not is_paper_pool(score, title_words):
        return 1.0
    return score.citance_global_weight if citance else score.paper_global_weight


def pool_route(config: LoGConfig, passages, query: str = "") -> PoolRoute:
    """The :class:`PoolRoute` of a pool (its passages and query) under ``config``."""
    titled = titled_fraction(passages)
    words = mean_title_words(passages)
    citance = is_citance(config.score, query)
    m = config.single.min_titled
    stage = SINGLE if m > 0 and titled < m else MULTI
    if (
        stage == MULTI
        and citance
        and config.score.citance_stage
        and is_paper_pool(config.score, words)
    ):
        stage = CITING
    return PoolRoute(
        titled_fraction=titled,
        stage=stage,
        lexical_weight=lexical_weight_for(config.score, titled)
        or paper_lexical_weight_for(config.score, words, citance),
        min_titled=m,
        lexical_max_titled=config.score.lexical_max_titled,
        title_words=words,
        global_weight=global_weight_for(config.score, words, citance, titled),
        citance=citance,
        paper=is_paper_pool(config.score, words),
        head_weight=head_weight_for(config.score, titled),
        dense_weight=dense_weight_for(config.score, words, citance),
        sentence_weight=sentence_weight_for(config.score, words, citance),
    )
