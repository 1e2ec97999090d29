"""Tests for logrerank.graph.sentence_graph: typed adjacency (eq. 9) and similarity edges (eq. 10)."""

from __future__ import annotations

import math

import pytest
import torch
from torch_geometric.data import Data

from logrerank.config import GraphConfig
from logrerank.graph.sentence_graph import (
    ADJACENCY_RELATIONS,
    NUM_RELATIONS,
    Relation,
    build_graph,
    edge_counts,
    relation_name,
)

BG, MT, RS = 0, 1, 2  # role indices (ROLE_NAMES order)


def onehot(roles: list[int]) -> torch.Tensor:
    return torch.nn.functional.one_hot(torch.tensor(roles), 3).float()


def unit(deg: float) -> list[float]:
    """A 2-d unit vector at ``deg`` degrees: cos between two of them = cos(angle difference)."""
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


def edges_of(data: Data, rel: Relation | None = None) -> set[tuple[int, int]]:
    keep = torch.ones(data.edge_index.size(1), dtype=torch.bool)
    if rel is not None:
        keep = data.relation_type == int(rel)
    return {tuple(e) for e in data.edge_index[:, keep].T.tolist()}


def graph(h, roles, z, passage_of, **cfg) -> Data:
    return build_graph(
        torch.tensor(h, dtype=torch.float),
        onehot(roles),
        torch.tensor(z, dtype=torch.float),
        torch.tensor(passage_of),
        GraphConfig(**cfg),
    )


# ---------------------------------------------------------------------------------------
# Relation ids and adjacency (eq. 9)


def test_eight_relations_seven_adjacency() -> None:
    assert NUM_RELATIONS == 11  # the paper's 8 + 3 link relations (logrerank.graph.links)
    assert len(ADJACENCY_RELATIONS) == 7
    assert Relation.SIMILAR not in ADJACENCY_RELATIONS


@pytest.mark.parametrize(
    ("src_role", "dst_role", "expected", "name"),
    [
        (BG, BG, Relation.SAME_ROLE, "same-role"),
        (MT, MT, Relation.SAME_ROLE, "same-role"),
        (RS, RS, Relation.SAME_ROLE, "same-role"),
        (BG, MT, Relation.BG_TO_MT, "background->method"),
        (BG, RS, Relation.BG_TO_RS, "background->result"),
        (MT, BG, Relation.MT_TO_BG, "method->background"),
        (MT, RS, Relation.MT_TO_RS, "method->result"),
        (RS, BG, Relation.RS_TO_BG, "result->background"),
        (RS, MT, Relation.RS_TO_MT, "result->method"),
    ],
)
def test_adjacency_relation_type(src_role, dst_role, expected, name) -> None:
    # Two consecutive sentences of one passage: exactly one directed edge 0 -> 1.
    data = graph([[1.0, 0.0], [0.0, 1.0]], [src_role, dst_role], [0.5, 0.5], [0, 0])
    assert data.edge_index.tolist() == [[0], [1]]
    assert data.edge_type.tolist() == [int(expected)]
    assert data.relation_type.tolist() == [int(expected)]
    assert relation_name(int(expected)) == name
    assert math.isnan(float(data.edge_sim[0]))  # adjacency edges carry no cosine


def test_all_seven_adjacency_types_in_one_passage() -> None:
    # Roles B M R B R M B B give the transitions
    # B->M, M->R, R->B, B->R, R->M, M->B, B->B: every adjacency type exactly once.
    roles = [BG, MT, RS, BG, RS, MT, BG, BG]
    n = len(roles)
    h = [unit(40 * i) for i in range(n)]
    data = graph(h, roles, [0.5] * n, [0] * n)
    assert data.edge_index.tolist() == [list(range(n - 1)), list(range(1, n))]
    assert data.edge_type.tolist() == [
        Relation.BG_TO_MT,
        Relation.MT_TO_RS,
        Relation.RS_TO_BG,
        Relation.BG_TO_RS,
        Relation.RS_TO_MT,
        Relation.MT_TO_BG,
        Relation.SAME_ROLE,
    ]
    assert sorted(data.edge_type.tolist()) == sorted(int(r) for r in ADJACENCY_RELATIONS)


def test_adjacency_never_crosses_passages_and_is_forward_only() -> None:
    # Passages [0, 0, 0], [1], [2, 2]: edges 0->1, 1->2, 4->5 only (no similarity: tau > 1).
    data = graph([unit(0)] * 6, [BG] * 6, [0.5] * 6, [0, 0, 0, 1, 2, 2], tau_sim=1.5)
    assert edges_of(data) == {(0, 1), (1, 2), (4, 5)}


def test_relation_name_similar() -> None:
    assert relation_name(Relation.SIMILAR) == "similar"
    names = {relation_name(r) for r in Relation}
    assert len(names) == NUM_RELATIONS  # all distinct


# ---------------------------------------------------------------------------------------
# Similarity edges (eq. 10): one base case with an edge, then each constraint broken alone.

BASE = {
    "h": [unit(0), unit(10)],  # cos = cos(10 deg) = 0.985 >= 0.75
    "roles": [MT, MT],
    "z": [0.50, 0.60],  # |dz| = 0.10 <= 0.25
    "passage_of": [0, 1],
}


def base_graph(**override) -> Data:
    args = {**BASE, **{k: v for k, v in override.items() if k in BASE}}
    cfg = {k: v for k, v in override.items() if k not in BASE}
    return graph(args["h"], args["roles"], args["z"], args["passage_of"], **cfg)


def test_similarity_base_case_has_both_directions() -> None:
    data = base_graph()
    assert edges_of(data) == {(0, 1), (1, 0)}
    assert data.edge_type.tolist() == [Relation.SIMILAR] * 2
    assert torch.allclose(data.edge_sim, torch.full((2,), math.cos(math.radians(10))))


def test_similarity_same_passage_no_edge() -> None:
    data = base_graph(passage_of=[0, 0])
    # Only the adjacency edge of the shared passage (method -> method) remains.
    assert edges_of(data, Relation.SIMILAR) == set()
    assert edges_of(data) == {(0, 1)}
    assert data.relation_type.tolist() == [Relation.SAME_ROLE]


def test_similarity_different_role_no_edge() -> None:
    data = base_graph(roles=[MT, RS])
    assert data.edge_index.size(1) == 0


def test_similarity_below_tau_no_edge() -> None:
    # cos(50 deg) = 0.643 < 0.75; cos(40 deg) = 0.766 >= 0.75.
    assert base_graph(h=[unit(0), unit(50)]).edge_index.size(1) == 0
    assert edges_of(base_graph(h=[unit(0), unit(40)])) == {(0, 1), (1, 0)}
    # The threshold is the config's tau_sim.
    assert base_graph(h=[unit(0), unit(40)], tau_sim=0.8).edge_index.size(1) == 0


def test_similarity_score_gap_above_delta_no_edge() -> None:
    # |0.5 - 0.8| = 0.3 > 0.25; |0.5 - 0.7| = 0.2 <= 0.25.
    assert base_graph(z=[0.5, 0.8]).edge_index.size(1) == 0
    assert edges_of(base_graph(z=[0.5, 0.7])) == {(0, 1), (1, 0)}
    assert base_graph(z=[0.5, 0.7], delta=0.1).edge_index.size(1) == 0


def test_top_k_keeps_k_per_node_bidirectional_no_duplicates() -> None:
    # Node 0 (passage 0) at 0 deg; passage 1 at 10, 20, 30 deg (nodes 1-3); passage 2 at
    # 12, 22, 32 deg (nodes 4-6). Every pair across passages is eligible (same role, cos >=
    # cos(32 deg) = 0.85 >= 0.75, equal z). With k = 1 each node keeps its single nearest
    # eligible node:
    #   0 -> 1 (10 deg); 1 -> 4 (2 deg); 2 -> 5; 3 -> 6; 4 -> 1; 5 -> 2; 6 -> 3.
    # Node 0 has 6 eligible neighbours but picks only one; (1, 4) is picked from both ends
    # and must appear once per direction. Union, both directions:
    angles = [0, 10, 20, 30, 12, 22, 32]
    data = graph([unit(a) for a in angles], [RS] * 7, [0.5] * 7, [0, 1, 1, 1, 2, 2, 2], top_k=1)
    sim = data.relation_type == Relation.SIMILAR
    pairs = {(0, 1), (1, 4), (2, 5), (3, 6)}
    expected = pairs | {(v, u) for u, v in pairs}
    got = [tuple(e) for e in data.edge_index[:, sim].T.tolist()]
    assert len(got) == len(set(got)) == len(expected)  # no duplicates
    assert set(got) == expected
    # Adjacency edges of passages 1 and 2 (result -> result) are there too.
    assert edges_of(data, Relation.SAME_ROLE) == {(1, 2), (2, 3), (4, 5), (5, 6)}

    # k = 2: node 0 keeps its 2 nearest (1 at 10 deg, 4 at 12 deg) of 6 eligible.
    data2 = graph([unit(a) for a in angles], [RS] * 7, [0.5] * 7, [0, 1, 1, 1, 2, 2, 2], top_k=2)
    out0 = {v for u, v in edges_of(data2, Relation.SIMILAR) if u == 0}
    # 0 picks {1, 4}. Node 1 (nearest: 4 at 2 deg, then 0 at 10 deg) also picks 0, which is
    # the already kept pair; nodes 2-6 have two nearer nodes than 0, so node 0 ends with
    # exactly k neighbours.
    assert out0 == {1, 4}


def reference_similarity(h, passage_of, roles, z, tau, delta, k) -> set[tuple[int, int]]:
    """Brute-force eq. 10: TopK_k over eligible nodes, then both directions."""
    hn = torch.nn.functional.normalize(h, dim=-1)
    cos = hn @ hn.T
    out = set()
    n = h.size(0)
    for u in range(n):
        elig = [
            v
            for v in range(n)
            if passage_of[u] != passage_of[v]
            and roles[u] == roles[v]
            and cos[u, v] >= tau
            and abs(float(z[u] - z[v])) <= delta
        ]
        elig.sort(key=lambda v: -float(cos[u, v]))
        for v in elig[:k]:
            out |= {(u, v), (v, u)}
    return out


@pytest.mark.parametrize("seed", range(4))
def test_similarity_matches_brute_force(seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    n = 40
    h = torch.randn(n, 4, generator=g) + torch.tensor([2.0, 0.0, 0.0, 0.0])
    passage_of = torch.sort(torch.randint(0, 6, (n,), generator=g)).values
    role_probs = torch.rand(n, 3, generator=g)
    z = torch.rand(n, generator=g)
    cfg = GraphConfig(tau_sim=0.5, delta=0.3, top_k=3)
    data = build_graph(h, role_probs, z, passage_of, cfg)
    sim = data.relation_type == Relation.SIMILAR
    got = [tuple(e) for e in data.edge_index[:, sim].T.tolist()]
    assert len(got) == len(set(got))
    roles = role_probs.argmax(-1)
    expected = reference_similarity(h, passage_of, roles, z, 0.5, 0.3, 3)
    assert expected  # the case is not vacuous
    assert set(got) == expected
    # Cosines stored on the edges are the true cosines.
    hn = torch.nn.functional.normalize(h, dim=-1)
    cos = (hn[data.edge_index[0, sim]] * hn[data.edge_index[1, sim]]).sum(-1)
    assert torch.allclose(data.edge_sim[sim], cos, atol=1e-5)
    assert torch.isnan(data.edge_sim[~sim]).all()


def test_block_size_does_not_change_graph() -> None:
    g = torch.Generator().manual_seed(7)
    n = 37
    h = torch.randn(n, 5, generator=g) + 1.5
    passage_of = torch.sort(torch.randint(0, 5, (n,), generator=g)).values
    role_probs = torch.rand(n, 3, generator=g)
    z = torch.rand(n, generator=g)
    one = build_graph(h, role_probs, z, passage_of, GraphConfig(tau_sim=0.6, top_k=4))
    assert (one.relation_type == Relation.SIMILAR).sum() > 0
    for block in (1, 5, 16, 36):
        other = build_graph(
            h, role_probs, z, passage_of, GraphConfig(tau_sim=0.6, top_k=4, block_size=block)
        )
        assert torch.equal(one.edge_index, other.edge_index)
        assert torch.equal(one.edge_type, other.edge_type)
        assert torch.allclose(one.edge_sim, other.edge_sim, equal_nan=True, atol=1e-6)


# ---------------------------------------------------------------------------------------
# Ablations and the returned object


def mixed_case() -> dict:
    # Passage 0: B -> M; passage 1: B -> M; cross-passage pairs (0, 2) and (1, 3) similar.
    return dict(
        h=[unit(0), unit(90), unit(5), unit(95)],
        roles=[BG, MT, BG, MT],
        z=[0.5, 0.5, 0.5, 0.5],
        passage_of=[0, 0, 1, 1],
    )


def test_cross_passage_ablation_removes_similarity_edges_only() -> None:
    case = mixed_case()
    full = graph(**case)
    assert edges_of(full, Relation.SIMILAR) == {(0, 2), (2, 0), (1, 3), (3, 1)}
    ablated = graph(**case, cross_passage=False)
    assert edges_of(ablated) == {(0, 1), (2, 3)}
    assert ablated.relation_type.tolist() == [Relation.BG_TO_MT] * 2
    assert ablated.edge_sim.numel() == 2


def test_typed_ablation_collapses_edge_type_keeps_relation_type() -> None:
    case = mixed_case()
    full = graph(**case)
    untyped = graph(**case, typed=False)
    assert torch.equal(full.edge_index, untyped.edge_index)
    assert torch.equal(full.relation_type, untyped.relation_type)
    assert untyped.edge_type.tolist() == [0] * untyped.edge_index.size(1)
    assert set(full.edge_type.tolist()) == {Relation.BG_TO_MT, Relation.SIMILAR}


def test_returns_pyg_data() -> None:
    data = graph(**mixed_case())
    assert isinstance(data, Data)
    assert data.num_nodes == 4
    assert data.edge_index.dtype == torch.long and data.edge_index.shape[0] == 2
    assert data.edge_type.dtype == torch.long
    e = data.edge_index.size(1)
    assert data.edge_type.shape == data.relation_type.shape == data.edge_sim.shape == (e,)
    counts = edge_counts(data)
    assert counts["similar"] == 4 and counts["background->method"] == 2
    assert sum(counts.values()) == e
    assert set(counts) == {relation_name(r) for r in Relation}


def test_degenerate_graphs() -> None:
    # One node: no edges at all.
    data = graph([unit(0)], [BG], [0.5], [0])
    assert data.num_nodes == 1 and data.edge_index.shape == (2, 0)
    # top_k = 0 disables similarity edges.
    data = base_graph(top_k=0)
    assert data.edge_index.shape == (2, 0)
    # A zero vector (e.g. a sentence with no tokens) gives cosine 0, never NaN edges.
    data = base_graph(h=[[0.0, 0.0], unit(0)], tau_sim=-1.0)
    assert not torch.isnan(data.edge_sim).any()
