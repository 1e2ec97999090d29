"""Result types shared by every ranker: LoG, its ablations and all baselines.

One ``Ranking`` is returned by every ranker. A sentence-level ranker fills ``sentences`` (in
rank order) and derives the passage order from each passage's best sentence; a passage-level
ranker fills only ``passages_ranked``. ``Ranking.to_dict()`` is JSON-serialisable.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any


class InputError(ValueError):
    """The caller's input (query or passages) is invalid; the message says how."""


@dataclass
class Passage:
    """One candidate passage as given by the caller."""

    text: str  # passage body
    title: str = ""  # optional title
    pid: str | None = None  # optional caller-side id (e.g. a corpus doc id)
    # Optional given segmentation (e.g. a dataset's sentence list); text must equal
    # " ".join(sentences). None = split the text with logrerank.text.segment.
    sentences: list[str] | None = None
    # Optional facts about where the passage came from, for display (a PDF's passages:
    # {"source", "paper", "section", "pages", "kind"}; logrerank/pdf). Never ranked on.
    meta: dict[str, Any] | None = None


@dataclass
class ScoredSentence:
    """One sentence with everything a ranker knows about it."""

    node: int  # node id in the sentence graph = position in document order
    passage_idx: int  # index of its passage in the caller's list
    sent_idx: int  # index of the sentence inside its passage
    text: str  # exact source text: passage.text[start:end]
    start: int  # char offset in passage.text (inclusive)
    end: int  # char offset in passage.text (exclusive)
    score: float  # the score this ranker sorts by, in [0, 1]
    rank: int = 0  # 1-based rank over all sentences of the input
    role_probs: list[float] | None = None  # P(background), P(method), P(result) (eq. 3)
    role: str | None = None  # argmax role label
    local_score: float | None = None  # z_local (eq. 6)
    global_score: float | None = None  # z_global (eq. 16)
    truncated: bool = False  # True if the sentence alone exceeded the window and was cut
    extra: dict[str, float] = field(default_factory=dict)  # other signals (bm25, ce, ...)


@dataclass
class ScoredPassage:
    """A passage in the passage-level order."""

    passage_idx: int  # index in the caller's list
    score: float  # passage score (a sentence ranker uses its best sentence's score)
    rank: int = 0  # 1-based
    title: str = ""  # the passage title, for display
    best_node: int | None = None  # node id of its best sentence (sentence rankers)
    extra: dict[str, float] = field(default_factory=dict)  # score breakdown


@dataclass
class GraphEdge:
    """A directed edge of the sentence graph."""

    source: int  # node id of u
    target: int  # node id of v (messages flow u -> v)
    relation: str  # relation name (see logrerank.graph.sentence_graph.Relation)
    relation_id: int  # relation id used by the model
    similarity: float | None = None  # cosine c_uv for similarity edges
    attention: list[float] | None = None  # alpha_uv per layer, averaged over heads
    # link edges (logrerank/graph/links.py): the shared rare terms of a shared-term edge (rarest
    # first), or the passage name found in the mentioning sentence of a mention edge
    terms: list[str] | None = None
    mention: str | None = None  # mention edges: the mentioning sentence's text


@dataclass
class Ranking:
    """The single output type of every ranker."""

    query: str
    passages: list[Passage]
    ranker: str  # registry name of the ranker that produced it
    sentences: list[ScoredSentence] = field(default_factory=list)  # rank order
    passages_ranked: list[ScoredPassage] = field(default_factory=list)  # rank order
    intent_probs: list[float] | None = None  # query intent (eq. 2), mean over passages
    intent_by_passage: list[list[float]] | None = None  # gamma_q^(i) per passage
    edges: list[GraphEdge] = field(default_factory=list)
    context: dict[str, Any] | None = None  # structured context (see logrerank.ranking.context)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    warnings: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # model/config facts for display
    # order of ``sentences``: "score" (by score, ties by node) or "selected" (complementary
    # sentences across passages first; logrerank/ranking/selection.py). Scores are the same in both.
    sentence_order: str = "score"

    def passage_order(self) -> list[int]:
        """Passage indices, best first."""
        return [p.passage_idx for p in self.passages_ranked]

    def by_score(self) -> list[ScoredSentence]:
        """The sentences in plain score order (ties by node id), whatever ``sentence_order``."""
        return sorted(self.sentences, key=lambda s: (-s.score, s.node))

    def sentence_by_node(self) -> dict[int, ScoredSentence]:
        """Map node id -> sentence."""
        return {s.node: s for s in self.sentences}

    def top(self, k: int) -> list[ScoredSentence]:
        """The k best sentences."""
        return self.sentences[:k]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (non-finite floats become None)."""
        return json_safe(dataclasses.asdict(self))

    @classmethod
    def from_sentence_scores(
        cls,
        query: str,
        passages: list[Passage],
        sentences: list[ScoredSentence],
        ranker: str,
        **kwargs: Any,
    ) -> Ranking:
        """Sort sentences by score and derive the passage order from each best sentence.

        Ties break by document order (node id), so rankings are deterministic. A passage with no
        sentence (impossible after validation, but kept total) goes last.
        """
        ordered = sorted(sentences, key=lambda s: (-s.score, s.node))
        for r, s in enumerate(ordered, 1):
            s.rank = r
        best: dict[int, ScoredSentence] = {}
        for s in ordered:
            best.setdefault(s.passage_idx, s)
        ranked = [
            ScoredPassage(i, best[i].score, title=passages[i].title, best_node=best[i].node)
            for i in best
        ]
        ranked += [
            ScoredPassage(i, 0.0, title=p.title) for i, p in enumerate(passages) if i not in best
        ]
        for r, p in enumerate(ranked, 1):
            p.rank = r
        return cls(query, passages, ranker, sentences=ordered, passages_ranked=ranked, **kwargs)

    @classmethod
    def from_passage_scores(
        cls,
        query: str,
        passages: list[Passage],
        scores: list[float],
        ranker: str,
        extras: list[dict[str, float]] | None = None,
        **kwargs: Any,
    ) -> Ranking:
        """Rank passages by score (ties by input order)."""
        order = sorted(range(len(passages)), key=lambda i: (-scores[i], i))
        ranked = [
            ScoredPassage(
                i,
                float(scores[i]),
                rank=r,
                title=passages[i].title,
                extra=dict(extras[i]) if extras else {},
            )
            for r, i in enumerate(order, 1)
        ]
        return cls(query, passages, ranker, passages_ranked=ranked, **kwargs)


def json_safe(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None, dict keys as strings and tuples as
    lists, so that strict JSON can hold it (``NaN`` / ``Infinity`` are not JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj
