"""What the graph gate reads about a pool: a few numbers on its titles, its query and its graph.

The global stage's correction of the local logits is weighted per pool by a learned gate
(:class:`~logrerank.graph.global_model.GlobalReranker`, ``GlobalConfig.pool_gate``):

.. math::

    l_{global}(v) = l_{local}(v) + g \\cdot \\Delta(v), \\qquad
    g = \\sigma(w_g^\\top f + b_g),

with ``f`` the :data:`NUM_POOL` features below, each scaled to about [0, 1]. No threshold is
applied to any of them: the gate is trained with the rest of the stage on pools in every title
condition (title dropout, :mod:`logrerank.training.log.graph_cv`), so what titles, their length,
a citation marker or a sparse graph say about the graph's worth is learned, not written down.

=====  ====================================================================================
index  feature
=====  ====================================================================================
0      share of the passages with a usable title
1      mean title words of the titled passages / 10 (capped at 2)
2      the query carries a citation marker (0 / 1)
3      log(1 + passages) / log(51)
4      link edges (mentions, mentioned-by, shared-term) per node / 4 (capped at 2)
5      cross-passage similarity edges per node / 8 (capped at 2)
6      the best local score sigma(l_local) in the pool
7      the standard deviation of the local logits / 5 (capped at 2)
=====  ====================================================================================
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from ..text.citations import has_citation_marker
from .links import titled_fraction
from .sentence_graph import LINK_RELATIONS, Relation

POOL_FEATURES: tuple[str, ...] = (
    "titled",
    "title_words",
    "citation",
    "passages",
    "link_edges",
    "similar_edges",
    "best_local",
    "local_spread",
)
"""Names of the gate's inputs, in order (the module table)."""

NUM_POOL = len(POOL_FEATURES)


def mean_title_words(passages) -> float:
    """Mean number of words in the titles of the passages that have one (0 without titles)."""
    lengths = [len(t.split()) for t in (p.title or "" for p in passages) if t.strip()]
    return sum(lengths) / len(lengths) if lengths else 0.0


def pool_features(query: str, passages, relation_type: Tensor, local_logits: Tensor) -> Tensor:
    """``[NUM_POOL]`` float32 features of one pool (the module table).

    Args:
        query: the question.
        passages: the pool's passages (anything with ``title``).
        relation_type: ``[E]`` the relation of each graph edge (before the untyped ablation).
        local_logits: ``[N]`` the local logits of its sentences.
    """
    n = max(1, local_logits.numel())
    counts = torch.bincount(relation_type.cpu().long(), minlength=len(Relation))
    links = float(sum(counts[int(r)] for r in LINK_RELATIONS))
    similar = float(counts[int(Relation.SIMILAR)])
    logits = local_logits.detach().float().cpu()
    spread = float(logits.std()) if logits.numel() > 1 else 0.0
    best = float(torch.sigmoid(logits.max())) if logits.numel() else 0.0
    values = [
        titled_fraction(passages),
        min(mean_title_words(passages) / 10.0, 2.0),
        float(has_citation_marker(query)),
        math.log1p(len(passages)) / math.log(51.0),
        min(links / n / 4.0, 2.0),
        min(similar / n / 8.0, 2.0),
        best,
        min(spread / 5.0, 2.0),
    ]
    return torch.tensor(values, dtype=torch.float32)
