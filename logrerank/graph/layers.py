"""Relation-aware graph attention (paper eqs. 11-14).

PyG's ``RGATConv`` is not this equation: it scores attention from relation-specific query/key
projections of both endpoints and has no relation embedding in the score. Here the target is
projected by a shared ``W_v``, the source by a relation-specific ``W_t``, and a learnable
relation embedding ``e_t`` enters the attention logit, exactly as eq. 11 writes it.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import MessagePassing
from torch_geometric.utils import softmax


class RelationAwareGATConv(MessagePassing):
    r"""Relation-aware graph attention convolution.

    For an edge :math:`(u, v)` of relation :math:`t` and head :math:`h`:

    .. math::
        e_{uv}^{h} = \mathrm{LeakyReLU}\big(\mathbf{a}_h^\top
            [\mathbf{W}_v \mathbf{x}_v \,;\, \mathbf{W}_t \mathbf{x}_u \,;\, \mathbf{e}_t]\big)
        \qquad \text{(eq. 11)}

        \alpha_{uv}^{h} = \mathrm{softmax}_{u \in \mathcal{N}(v)}\big(e_{uv}^{h}\big)
        \qquad \text{(eq. 12)}

        \mathbf{m}_v^{h} = \sum_{u \in \mathcal{N}(v)} \alpha_{uv}^{h}
            \big[\mathbf{W}_t \mathbf{x}_u\big]_h
        \qquad \text{(eq. 13)}

    and the output is the concatenation :math:`\|_h \mathbf{m}_v^{h}` (input to eq. 14's
    GraphLayer). ``a_h`` is split into target, source and relation parts. No self-loops are
    added (the paper adds none; the GraphLayer's residual keeps a node's own state); a node with
    no in-neighbour receives a zero message.

    Args:
        in_channels: input width.
        out_channels: width per head C (output is ``heads * C``).
        num_relations: number of relation types R.
        heads: number of heads H.
        rel_emb_dim: width of the relation embedding e_t.
        negative_slope: LeakyReLU slope.
        dropout: dropout on the attention weights (training only).
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        num_relations: int,
        heads: int = 4,
        rel_emb_dim: int = 32,
        negative_slope: float = 0.2,
        dropout: float = 0.0,
    ):
        super().__init__(aggr="add", node_dim=0)
        self.in_channels, self.out_channels, self.heads = in_channels, out_channels, heads
        self.num_relations, self.negative_slope, self.dropout = (
            num_relations,
            negative_slope,
            dropout,
        )
        self.lin_v = nn.Linear(in_channels, heads * out_channels, bias=False)  # W_v
        self.weight_t = nn.Parameter(torch.empty(num_relations, in_channels, heads * out_channels))
        self.rel_emb = nn.Embedding(num_relations, rel_emb_dim)  # e_t
        self.att_v = nn.Parameter(torch.empty(1, heads, out_channels))  # a_h, target part
        self.att_u = nn.Parameter(torch.empty(1, heads, out_channels))  # a_h, source part
        self.att_t = nn.Parameter(torch.empty(1, heads, rel_emb_dim))  # a_h, relation part
        self.reset_parameters()

    def reset_parameters(self) -> None:
        super().reset_parameters()
        nn.init.xavier_uniform_(self.lin_v.weight)
        bound = math.sqrt(6.0 / (self.in_channels + self.heads * self.out_channels))
        nn.init.uniform_(self.weight_t, -bound, bound)
        nn.init.normal_(self.rel_emb.weight, std=0.1)
        for a in (self.att_v, self.att_u, self.att_t):
            nn.init.xavier_uniform_(a)

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_type: Tensor,
        return_attention_weights: bool = False,
    ):
        """Run the convolution.

        Args:
            x: ``[N, in_channels]`` node features.
            edge_index: ``[2, E]`` (source u, target v).
            edge_type: ``[E]`` relation ids.
            return_attention_weights: also return ``(edge_index, alpha [E, H])``.

        Returns:
            ``[N, heads * out_channels]``, and the attention weights when asked.
        """
        H, C = self.heads, self.out_channels
        xv = self.lin_v(x).view(-1, H, C)  # [N, H, C]   W_v x
        # W_t x for every node and relation (N * R * H * C floats), then one row per edge.
        xt = torch.einsum("ni,rio->nro", x, self.weight_t)  # [N, R, H*C]
        xu = xt[edge_index[0], edge_type].view(-1, H, C)  # [E, H, C]   W_t x_u
        et = self.rel_emb(edge_type).unsqueeze(1)  # [E, 1, rel_emb_dim]
        size = (x.size(0), x.size(0))
        # attention is computed per call and passed along, never stored on the module, so one
        # model can serve concurrent requests (as GATConv does with edge_updater)
        alpha = self.edge_updater(edge_index, xv=xv, xu=xu, et=et, size=size)  # [E, H]
        out = self.propagate(edge_index, xu=xu, alpha=alpha, size=size)
        out = out.view(-1, H * C)  # [N, H*C]
        if return_attention_weights:
            return out, (edge_index, alpha)
        return out

    def edge_update(
        self, xv_i: Tensor, xu: Tensor, et: Tensor, index: Tensor, ptr: Tensor | None, dim_size: int
    ) -> Tensor:
        e = (xv_i * self.att_v).sum(-1) + (xu * self.att_u).sum(-1) + (et * self.att_t).sum(-1)
        e = F.leaky_relu(e, self.negative_slope)  # [E, H]  (eq. 11)
        return softmax(e, index, ptr, dim_size)  # [E, H]  (eq. 12)

    def message(self, xu: Tensor, alpha: Tensor) -> Tensor:
        alpha = F.dropout(alpha, p=self.dropout, training=self.training)
        return xu * alpha.unsqueeze(-1)  # [E, H, C]  summed into m_v (eq. 13)

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, "
            f"heads={self.heads}, num_relations={self.num_relations})"
        )


class GraphLayer(nn.Module):
    """eq. 14: output projection, residual + LayerNorm, feed-forward block (+ residual + LN).

    ``x' = LN(x + Dropout(W_o [||_h m_v^h]))``, ``x'' = LN(x' + FFN(x'))``.
    """

    def __init__(
        self,
        hidden: int,
        heads: int,
        num_relations: int,
        rel_emb_dim: int = 32,
        dropout: float = 0.1,
        negative_slope: float = 0.2,
        ffn_mult: int = 2,
    ):
        super().__init__()
        if hidden % heads:
            raise ValueError(f"hidden ({hidden}) must be divisible by heads ({heads})")
        self.conv = RelationAwareGATConv(
            hidden, hidden // heads, num_relations, heads, rel_emb_dim, negative_slope, dropout
        )
        self.out_proj = nn.Linear(hidden, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(
            nn.Linear(hidden, ffn_mult * hidden),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(ffn_mult * hidden, hidden),
        )
        self.norm2 = nn.LayerNorm(hidden)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        x: Tensor,
        edge_index: Tensor,
        edge_type: Tensor,
        return_attention_weights: bool = False,
    ):
        m, (ei, alpha) = self.conv(x, edge_index, edge_type, return_attention_weights=True)
        x = self.norm1(x + self.dropout(self.out_proj(m)))  # [N, hidden]
        x = self.norm2(x + self.dropout(self.ffn(x)))
        if return_attention_weights:
            return x, (ei, alpha)
        return x
