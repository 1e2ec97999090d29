"""Typed sentence graph across passages (paper eqs. 8-10).

Nodes are sentences in document order. Edges:

* **Adjacency** ``s_ij -> s_i,j+1`` inside a passage (eq. 9), typed by the argmax roles of its
  source and target: one same-role continuity type and six directed cross-role types.
* **Similarity** (eq. 10) between u and v when they lie in different passages, share the
  predicted role, ``cos(h_u, h_v) >= tau_sim`` and ``|z_u - z_v| <= delta``; each node keeps its
  ``top_k`` most similar eligible nodes, and every kept pair is added in both directions with one
  shared type.

* **Links** (an adaptation, not in the paper; :mod:`logrerank.graph.links`, off by default): *mentions* ``u -> v`` when
  sentence u names the title of v's passage, its reverse *mentioned-by* ``v -> u``, and
  *shared-term* pairs (both directions) of sentences of different passages sharing a rare term.

Construction is vectorised (no Python loop over node pairs) and the similarity matrix is computed
in row blocks, so memory is bounded by ``block_size * N``.
"""

from __future__ import annotations

import functools
from enum import IntEnum

import torch
from torch import Tensor
from torch_geometric.data import Data

from ..config import ROLE_NAMES, GraphConfig
from . import links


class Relation(IntEnum):
    """Edge relation ids: the paper's 8, then the 3 link relations (logrerank.graph.links)."""

    SAME_ROLE = 0  # adjacency, source and target share their role (continuity)
    BG_TO_MT = 1  # adjacency background -> method
    BG_TO_RS = 2  # adjacency background -> result
    MT_TO_BG = 3  # adjacency method -> background
    MT_TO_RS = 4  # adjacency method -> result
    RS_TO_BG = 5  # adjacency result -> background
    RS_TO_MT = 6  # adjacency result -> method
    SIMILAR = 7  # cross-passage similarity (both directions)
    MENTIONS = 8  # sentence u names the title of v's passage (u -> v)
    MENTIONED_BY = 9  # reverse of MENTIONS (v -> u)
    SHARED_TERM = 10  # sentences of different passages share a rare term (both directions)


NUM_RELATIONS = len(Relation)
PAPER_RELATIONS = 8  # adjacency + similarity: the relations of an 8-relation (paper) model
LINK_RELATIONS = (Relation.MENTIONS, Relation.MENTIONED_BY, Relation.SHARED_TERM)
ADJACENCY_RELATIONS = tuple(r for r in Relation if r < Relation.SIMILAR)
assert (links.MENTIONS, links.MENTIONED_BY, links.SHARED_TERM) == LINK_RELATIONS

# _TRANSITION[src_role, dst_role] -> relation id; roles are indices into ROLE_NAMES.
_TRANSITION = torch.tensor(
    [
        [Relation.SAME_ROLE, Relation.BG_TO_MT, Relation.BG_TO_RS],
        [Relation.MT_TO_BG, Relation.SAME_ROLE, Relation.MT_TO_RS],
        [Relation.RS_TO_BG, Relation.RS_TO_MT, Relation.SAME_ROLE],
    ],
    dtype=torch.long,
)
assert len(ROLE_NAMES) == 3


_LINK_NAMES = {
    Relation.MENTIONS: "mentions",
    Relation.MENTIONED_BY: "mentioned-by",
    Relation.SHARED_TERM: "shared-term",
}


@functools.cache
def relation_name(rel: int) -> str:
    """Human-readable relation name, e.g. ``"background->method"`` or ``"similar"``.

    Cached: a result lists every edge, thousands per pool, and the ``Relation`` lookup is slow.
    """
    r = Relation(rel)
    if r == Relation.SIMILAR:
        return "similar"
    if r in _LINK_NAMES:
        return _LINK_NAMES[r]
    if r == Relation.SAME_ROLE:
        return "same-role"
    src, dst = (int(r) == _TRANSITION).nonzero()[0].tolist()
    return f"{ROLE_NAMES[src]}->{ROLE_NAMES[dst]}"


def adjacency_edges(passage_of: Tensor, roles: Tensor) -> tuple[Tensor, Tensor]:
    """Directed edges between consecutive sentences of each passage (eq. 9).

    Args:
        passage_of: ``[N]`` passage id of each node, nodes in document order.
        roles: ``[N]`` argmax role of each node.

    Returns:
        ``edge_index [2, E]`` and ``edge_type [E]``.
    """
    src = torch.arange(passage_of.numel() - 1, device=passage_of.device)
    keep = passage_of[:-1] == passage_of[1:]
    src = src[keep]
    dst = src + 1
    etype = _TRANSITION.to(roles.device)[roles[src], roles[dst]]
    return torch.stack([src, dst]), etype


def similarity_edges(
    h: Tensor, passage_of: Tensor, roles: Tensor, z: Tensor, config: GraphConfig
) -> tuple[Tensor, Tensor]:
    """Cross-passage similarity edges (eq. 10), both directions, deduplicated.

    Args:
        h: ``[N, d]`` contextual sentence vectors.
        passage_of: ``[N]`` passage id of each node.
        roles: ``[N]`` argmax role of each node.
        z: ``[N]`` local scores in [0, 1].
        config: tau_sim, delta, top_k, block_size.

    Returns:
        ``edge_index [2, E]`` (sorted by target, then source) and ``cos [E]``.
    """
    n = h.size(0)
    empty = torch.empty(2, 0, dtype=torch.long, device=h.device)
    if n < 2 or config.top_k <= 0:
        return empty, torch.empty(0, device=h.device)
    hn = torch.nn.functional.normalize(h.float(), dim=-1)
    srcs, dsts, sims = [], [], []
    k = min(config.top_k, n - 1)
    for start in range(0, n, config.block_size):
        rows = torch.arange(start, min(start + config.block_size, n), device=h.device)
        c = hn[rows] @ hn.T  # [b, N]
        ok = (passage_of[rows, None] != passage_of[None, :]) & (roles[rows, None] == roles[None, :])
        ok &= c >= config.tau_sim
        ok &= (z[rows, None] - z[None, :]).abs() <= config.delta
        c = c.masked_fill(~ok, float("-inf"))
        val, col = c.topk(k, dim=1)  # [b, k]
        keep = torch.isfinite(val)
        srcs.append(rows[:, None].expand_as(col)[keep])
        dsts.append(col[keep])
        sims.append(val[keep])
    u, v, s = torch.cat(srcs), torch.cat(dsts), torch.cat(sims)
    # Both directions, shared type; dedupe pairs chosen from both ends.
    uu, vv, ss = torch.cat([u, v]), torch.cat([v, u]), torch.cat([s, s])
    key = vv * n + uu
    key, order = torch.sort(key, stable=True)
    first = torch.ones_like(key, dtype=torch.bool)
    first[1:] = key[1:] != key[:-1]
    order = order[first]
    return torch.stack([uu[order], vv[order]]), ss[order]


def build_graph(
    h: Tensor,
    role_probs: Tensor,
    z: Tensor,
    passage_of: Tensor,
    config: GraphConfig | None = None,
    link: links.LinkEdges | None = None,
) -> Data:
    """Build the query-specific typed sentence graph.

    Args:
        h: ``[N, d]`` contextual sentence vectors h_ij.
        role_probs: ``[N, 3]`` role distributions r_ij.
        z: ``[N]`` local scores z_local.
        passage_of: ``[N]`` passage id of each node (nodes in document order).
        config: thresholds and ablation switches.
        link: the pool's link edges (:func:`logrerank.graph.links.pool_links`); only the relations
            that ``config`` switches on are added (none by default). None = no link edges.

    Returns:
        ``Data`` with ``edge_index [2, E]``, ``edge_type [E]`` (``Relation`` ids),
        ``edge_sim [E]`` (cosine for similarity edges, NaN for the others), ``num_nodes``,
        and ``relation_type [E]``: the relation before the ``typed=False`` ablation collapses it.
    """
    config = config or GraphConfig()
    roles = role_probs.argmax(-1)
    adj_index, adj_type = adjacency_edges(passage_of, roles)
    if config.cross_passage:
        sim_index, sim_cos = similarity_edges(h, passage_of, roles, z, config)
    else:
        sim_index = torch.empty(2, 0, dtype=torch.long, device=h.device)
        sim_cos = torch.empty(0, device=h.device)
    sim_type = torch.full((sim_index.size(1),), int(Relation.SIMILAR), device=h.device)
    parts_index, parts_type = [adj_index, sim_index], [adj_type, sim_type]
    nan = torch.full((adj_index.size(1),), float("nan"), device=h.device)
    parts_sim = [nan, sim_cos]
    if link is not None and (config.mentions or config.shared_terms):
        link = link.select(config.mentions, config.shared_terms)
        parts_index.append(link.edge_index.to(h.device))
        parts_type.append(link.relation.to(h.device))
        parts_sim.append(torch.full((link.relation.numel(),), float("nan"), device=h.device))
    edge_index = torch.cat(parts_index, dim=1)
    relation_type = torch.cat(parts_type)
    edge_type = relation_type if config.typed else torch.zeros_like(relation_type)
    edge_sim = torch.cat(parts_sim)
    return Data(
        edge_index=edge_index,
        edge_type=edge_type,
        relation_type=relation_type,
        edge_sim=edge_sim,
        num_nodes=int(h.size(0)),
    )


def edge_counts(data: Data) -> dict[str, int]:
    """Number of edges per relation name (before the untyped ablation), every relation listed."""
    counts = torch.bincount(data.relation_type.cpu(), minlength=NUM_RELATIONS).tolist()
    return {relation_name(r): int(c) for r, c in enumerate(counts)}
