"""Selection of complementary sentences across passages (an adaptation, not in the paper).

Ranked by score alone, a passage's weak sentences ride on its strong one: the joint encoding
lifts every sentence of a relevant passage, so the top of the list fills with one study's
background, method and result lines, and a second study's contrary or qualifying result ends
below them, outside the structured context. The LoG-Reranker paper selects the context's
units by global score (its eq. 17) and says nothing about redundancy; this module re-orders
the head of the sentence ranking greedily, in the manner of maximal marginal relevance, with
a per-passage diminishing return, a per-passage margin and a redundancy penalty:

``gain(s | S) = z_s * decay ** e - margin * e - redundancy * max(0, max_t cos(h_s, h_t))``,
``e = max(0, n_p(s) - free)``

where ``z_s`` is the sentence's final score, ``n_p(s)`` the number of sentences of its passage
already selected (``S``; ``t`` runs over it), ``free`` the further sentences a passage places
before its return diminishes, and ``h`` the contextual sentence vectors of the local stage.
With the margin alone (``decay = 1``), a passage's further sentence goes below a sentence of
another passage only when that one's score is within ``margin * e`` of its own: a passage's
clearly stronger sentences still come first. The first ``keep`` positions stay in score order
(they count in ``n_p``); then the sentence of largest gain is taken next (ties: the earlier one
in score order), up to position ``depth``; the rest follow in score order. ``decay = 1``,
``margin = 0`` and ``redundancy = 0`` give the score order exactly.

The defaults (``ScoreConfig.select_*``) keep sentence nDCG@10 on the training splits but lose
it on held-out SciFact and HotpotQA (docs/evaluation.md, "Sentence selection"), so by default
only the structured context takes the selected order (:func:`selected_sentences`); the
sentence ranking takes it with ``select_ranking``. Scores are never changed: :class:`~logrerank.types.Ranking` keeps each
sentence's own score, and :meth:`~logrerank.types.Ranking.by_score` gives the score order.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..config import ScoreConfig
from ..types import Ranking


def selection_active(cfg: ScoreConfig | None) -> bool:
    """Whether ``cfg`` asks for a selection (anything but the plain score order)."""
    return (
        cfg is not None
        and cfg.select_depth > cfg.select_keep
        and (cfg.select_decay < 1.0 or cfg.select_margin > 0.0 or cfg.select_redundancy > 0.0)
    )


def select_order(
    scores: Tensor,
    passage_of: Tensor,
    vectors: Tensor | None,
    decay: float,
    redundancy: float,
    depth: int,
    free: int = 0,
    margin: float = 0.0,
    keep: int = 0,
) -> list[int]:
    """Node ids in selected order (module docstring: the greedy gain).

    Args:
        scores: ``[N]`` final sentence scores ``z``.
        passage_of: ``[N]`` the passage of each sentence.
        vectors: ``[N, d]`` sentence vectors for the redundancy term (None: no redundancy).
        decay: per-passage diminishing return in (0, 1]; 1 = none.
        redundancy: weight of the largest cosine to a selected sentence; 0 = none.
        depth: positions chosen greedily; the rest follow in score order.
        free: sentences of a passage selected before the decay applies.
        margin: score subtracted per further sentence of a passage (after ``free``); 0 = none.
        keep: the first ``keep`` positions stay in score order (they count for their passages).

    Returns:
        A permutation of ``0..N-1``.
    """
    z = scores.detach().double().cpu()
    n = z.numel()
    plain = sorted(range(n), key=lambda i: (-float(z[i]), i))  # Ranking's score order
    depth = min(depth, n)
    if depth <= keep or (decay >= 1.0 and redundancy <= 0.0 and margin <= 0.0):
        return plain
    order = torch.tensor(plain, dtype=torch.long)
    zs = z[order]  # everything below is indexed by score position
    pas = passage_of.detach().cpu().long()[order]
    taken_in = torch.zeros(int(pas.max()) + 1 if n else 0, dtype=torch.double)
    use_red = redundancy > 0.0 and vectors is not None
    if use_red:
        v = torch.nn.functional.normalize(vectors.detach().double().cpu()[order], dim=-1)
        max_sim = torch.zeros(n, dtype=torch.double)
    unpicked = torch.ones(n, dtype=torch.bool)
    picked: list[int] = []
    for pos in range(depth):
        extra = (taken_in[pas] - free).clamp(min=0)
        gain = zs * torch.pow(torch.tensor(decay, dtype=torch.double), extra) - margin * extra
        if use_red:
            gain = gain - redundancy * max_sim.clamp(min=0.0)
        if pos < keep:
            gain = -torch.arange(n, dtype=torch.double)  # score order
        gain = torch.where(unpicked, gain, torch.tensor(float("-inf"), dtype=torch.double))
        j = int(torch.argmax(gain))  # first maximum: ties go to the earlier score position
        picked.append(j)
        unpicked[j] = False
        taken_in[pas[j]] += 1
        if use_red:
            max_sim = torch.maximum(max_sim, v @ v[j])
    chosen = set(picked)
    return [plain[j] for j in picked] + [plain[j] for j in range(n) if j not in chosen]


def apply_selection(
    ranking: Ranking, vectors: Tensor | None, cfg: ScoreConfig, raw: Tensor | None = None
) -> Ranking:
    """Re-order ``ranking.sentences`` by :func:`select_order` (in place; returns it).

    Args:
        ranking: a sentence ranking in score order.
        vectors: ``[N, d]`` sentence vectors indexed by node id (``Encoded.h``), or None.
        cfg: the ``select_*`` knobs (decay, margin, redundancy, depth, free, keep).
        raw: ``[N]`` the scores the selection reads, indexed by node id (the uncalibrated
            ``sigmoid(f)`` when the shown scores are calibrated); None = each sentence's
            ``score``.

    Scores and the passage order stay as they are. Each sentence's ``extra["score_rank"]`` keeps
    its rank in the score order; ``rank`` becomes its selected rank and ``sentence_order``
    becomes ``"selected"``. A ranking without sentences, or settings that select nothing,
    keep the score order (``sentence_order`` stays ``"score"``).
    """
    sents = ranking.sentences
    if not sents or not selection_active(cfg):
        return ranking
    order = _order(sents, vectors, cfg, raw)
    for s in sents:
        s.extra = {**s.extra, "score_rank": s.rank}
    ranking.sentences = [sents[i] for i in order]
    for r, s in enumerate(ranking.sentences, 1):
        s.rank = r
    ranking.sentence_order = "selected"
    return ranking


def _order(
    sents: list, vectors: Tensor | None, cfg: ScoreConfig, raw: Tensor | None = None
) -> list[int]:
    """:func:`select_order` of sentences in score order, with the ``select_*`` knobs of ``cfg``
    (on the ``raw`` scores by node id when given, else on each sentence's ``score``)."""
    nodes = torch.tensor([s.node for s in sents])
    vecs = None if vectors is None else vectors[nodes]
    if raw is not None:
        z = raw.detach().double().cpu()[nodes]
    else:
        z = torch.tensor([s.score for s in sents], dtype=torch.double)
    return select_order(
        z,
        torch.tensor([s.passage_idx for s in sents], dtype=torch.long),
        vecs,
        cfg.select_decay,
        cfg.select_redundancy,
        cfg.select_depth,
        cfg.select_free,
        cfg.select_margin,
        cfg.select_keep,
    )


def selected_sentences(
    sents: list, vectors: Tensor | None, cfg: ScoreConfig, raw: Tensor | None = None
) -> list:
    """The sentences (in score order) in selected order, as a new list; nothing is modified.

    What the structured context reads when the sentence ranking itself stays in score order
    (``select_ranking`` off). Settings that select nothing give the list as it is; ``raw`` as
    in :func:`apply_selection`.
    """
    if not sents or not selection_active(cfg):
        return list(sents)
    return [sents[i] for i in _order(sents, vectors, cfg, raw)]


def order_note(ranking: Ranking) -> str:
    """One line for a sentence table's header: which order the sentences are shown in."""
    if ranking.sentence_order == "selected":
        return (
            "order = selected: complementary sentences across passages first (a passage's "
            "further sentences count less; score.select_*), score = each sentence's own score"
        )
    if (ranking.context or {}).get("order") == "selected":
        return (
            "order = score: what the ranking is sorted by (the structured context picks "
            "complementary sentences across passages)"
        )
    return "order = score: what the ranking is sorted by"
