"""Tests for logrerank.graph.layers: relation-aware GAT (eqs. 11-13) and GraphLayer (eq. 14)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from logrerank.graph.layers import GraphLayer, RelationAwareGATConv

N, D, H, C, R = 6, 8, 2, 3, 8

# Node 5 has no in-edge; node 0 has three, node 2 two, nodes 1, 3, 4 one each.
EDGE_INDEX = torch.tensor(
    [
        [1, 2, 3, 0, 4, 1, 0, 5],  # sources u
        [0, 0, 0, 1, 2, 2, 3, 4],  # targets v
    ]
)
EDGE_TYPE = torch.tensor([0, 1, 7, 2, 3, 7, 4, 5])


def make_conv(seed: int = 0, **kw) -> RelationAwareGATConv:
    torch.manual_seed(seed)
    return RelationAwareGATConv(D, C, R, heads=H, rel_emb_dim=4, **kw).eval()


def features(seed: int = 1) -> torch.Tensor:
    return torch.randn(N, D, generator=torch.Generator().manual_seed(seed))


def test_output_shape_and_attention_shape() -> None:
    conv = make_conv()
    out, (ei, alpha) = conv(features(), EDGE_INDEX, EDGE_TYPE, return_attention_weights=True)
    assert out.shape == (N, H * C)
    assert torch.equal(ei, EDGE_INDEX)
    assert alpha.shape == (EDGE_INDEX.size(1), H)
    assert conv(features(), EDGE_INDEX, EDGE_TYPE).shape == (N, H * C)


def test_attention_sums_to_one_over_in_neighbours_per_head() -> None:
    conv = make_conv()
    _, (ei, alpha) = conv(features(), EDGE_INDEX, EDGE_TYPE, return_attention_weights=True)
    assert (alpha >= 0).all()
    total = torch.zeros(N, H).index_add_(0, ei[1], alpha)  # sum over in-edges of each v
    has_in = torch.zeros(N, dtype=torch.bool)
    has_in[ei[1]] = True
    assert torch.allclose(total[has_in], torch.ones(int(has_in.sum()), H), atol=1e-6)
    assert torch.equal(total[~has_in], torch.zeros(int((~has_in).sum()), H))
    # A node with a single in-edge gives it all the attention.
    single = ei[1] == 1
    assert torch.allclose(alpha[single], torch.ones(1, H))


def test_node_without_in_edges_gets_zero_message() -> None:
    out = make_conv()(features(), EDGE_INDEX, EDGE_TYPE)
    assert torch.equal(out[5], torch.zeros(H * C))
    assert out[:5].abs().sum(-1).gt(0).all()


def test_matches_equations_by_hand() -> None:
    # Recompute eqs. 11-13 with explicit loops over targets, edges and heads.
    conv = make_conv(negative_slope=0.2)
    x = features()
    out = conv(x, EDGE_INDEX, EDGE_TYPE)
    wv = conv.lin_v.weight  # [H*C, D]
    ref = torch.zeros(N, H * C)
    for v in range(N):
        in_edges = (EDGE_INDEX[1] == v).nonzero().flatten().tolist()
        if not in_edges:
            continue
        xv = (wv @ x[v]).view(H, C)  # W_v x_v
        for h in range(H):
            logits, msgs = [], []
            for e in in_edges:
                u, t = int(EDGE_INDEX[0, e]), int(EDGE_TYPE[e])
                xu = (x[u] @ conv.weight_t[t]).view(H, C)  # W_t x_u
                et = conv.rel_emb.weight[t]  # e_t
                a = torch.cat([conv.att_v[0, h], conv.att_u[0, h], conv.att_t[0, h]])
                score = a @ torch.cat([xv[h], xu[h], et])  # a_h^T [W_v x_v; W_t x_u; e_t]
                logits.append(F.leaky_relu(score, 0.2))  # eq. 11
                msgs.append(xu[h])
            alpha = torch.softmax(torch.stack(logits), 0)  # eq. 12
            ref[v, h * C : (h + 1) * C] = (alpha[:, None] * torch.stack(msgs)).sum(0)  # eq. 13
    assert torch.allclose(out, ref, atol=1e-5)


def test_relation_type_changes_output() -> None:
    conv = make_conv()
    x = features()
    a = conv(x, EDGE_INDEX, torch.zeros_like(EDGE_TYPE))
    b = conv(x, EDGE_INDEX, torch.full_like(EDGE_TYPE, 3))
    c = conv(x, EDGE_INDEX, EDGE_TYPE)
    has_in = torch.zeros(N, dtype=torch.bool)
    has_in[EDGE_INDEX[1]] = True
    # Every node with an in-edge sees a different message under different relations.
    assert not torch.allclose(a[has_in], b[has_in])
    assert (a - b)[has_in].abs().sum(-1).gt(1e-6).all()
    assert not torch.allclose(a, c)
    # Same graph, same types: deterministic.
    assert torch.equal(conv(x, EDGE_INDEX, EDGE_TYPE), c)


def test_empty_edge_set() -> None:
    conv = make_conv()
    empty = torch.empty(2, 0, dtype=torch.long)
    out, (ei, alpha) = conv(
        features(), empty, torch.empty(0, dtype=torch.long), return_attention_weights=True
    )
    assert out.shape == (N, H * C)
    assert torch.equal(out, torch.zeros(N, H * C))
    assert ei.shape == (2, 0)
    assert alpha.shape == (0, H)


def test_attention_dropout_only_in_training() -> None:
    conv = make_conv(dropout=0.5)
    x = features()
    assert torch.equal(conv(x, EDGE_INDEX, EDGE_TYPE), conv(x, EDGE_INDEX, EDGE_TYPE))
    conv.train()
    torch.manual_seed(0)
    outs = [conv(x, EDGE_INDEX, EDGE_TYPE) for _ in range(3)]
    assert not all(torch.equal(outs[0], o) for o in outs[1:])


def test_graph_layer_shapes_and_attention() -> None:
    torch.manual_seed(0)
    layer = GraphLayer(hidden=16, heads=4, num_relations=R, rel_emb_dim=4, dropout=0.1).eval()
    x = torch.randn(N, 16)
    y, (ei, alpha) = layer(x, EDGE_INDEX, EDGE_TYPE, return_attention_weights=True)
    assert y.shape == (N, 16)
    assert alpha.shape == (EDGE_INDEX.size(1), 4)
    assert torch.isfinite(y).all()
    # Output of LayerNorm (weight 1, bias 0 at init): zero mean, unit variance per node.
    assert torch.allclose(y.mean(-1), torch.zeros(N), atol=1e-5)
    assert torch.equal(layer(x, EDGE_INDEX, EDGE_TYPE), y)
    # No edges: still runs (residual path keeps the node's own state).
    y0 = layer(x, torch.empty(2, 0, dtype=torch.long), torch.empty(0, dtype=torch.long))
    assert y0.shape == (N, 16) and torch.isfinite(y0).all()


def test_graph_layer_rejects_indivisible_heads() -> None:
    with pytest.raises(ValueError, match="divisible"):
        GraphLayer(hidden=10, heads=4, num_relations=R)
