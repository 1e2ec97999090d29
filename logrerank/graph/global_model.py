"""Global graph reranker: node init (eq. 7), relation-aware GAT layers (eqs. 11-14) and the
global scorer (eqs. 15-16).

Adaptations (not in the paper; ``GlobalConfig``), all off by default so older checkpoints load
unchanged:

* ``lexical_inputs``: eq. 7 becomes
  ``x_v^0 = LN(phi_h(h_v) + phi_r(r_v) + phi_z(z_v) + phi_lex(lex_v))`` with ``lex_v`` the
  node's lexical evidence (:mod:`logrerank.text.lexical`: sentence BM25, passage BM25, query-title
  match, each in [0, 1]);
* ``lexical_residual``: ``l_global += w_lex . lex_v`` (``w_lex`` zero-initialised);
* ``passage_pool``: eq. 15's MLP reads ``[x_v^L ; max_{u in passage(v)} x_u^L]``;
* ``relations``: the number of relation types with weights (8, or 11 with the link relations);
* ``pool_gate``: the correction is weighted per pool,
  ``l_global = l_local + g (MLP(x^L) + w_lex . lex)``, ``g = sigmoid(w_g . f + b_g)`` over the
  pool features ``f`` of :mod:`logrerank.graph.pool_features` (how much the graph counts is
  learned from what the pool looks like, not routed by a rule).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..config import GlobalConfig
from ..ranking.losses import pairwise_global_loss
from ..text.lexical import NUM_LEXICAL
from .layers import GraphLayer
from .pool_features import NUM_POOL


@dataclass
class GlobalOutput:
    """Outputs of the global model for one graph of N nodes and E edges."""

    logits: Tensor  # [N] l_global (eq. 15)
    scores: Tensor  # [N] z_global = sigmoid(l_global) (eq. 16)
    attention: list[Tensor] | None  # per layer, [E, H] alpha_uv (edge order of the input)
    gate: Tensor | None = None  # [] the pool's graph share g (pool_gate), else None


class GlobalReranker(nn.Module):
    """Node init + GraphLayers + global scorer.

    Args:
        d_enc: width of the contextual sentence vectors h (the backbone's hidden size).
        config: graph encoder sizes.
    """

    def __init__(self, d_enc: int, config: GlobalConfig):
        super().__init__()
        self.config = config
        d = config.hidden
        self.phi_h = nn.Linear(d_enc, d)  # eq. 7
        self.phi_r = nn.Linear(3, d)
        self.phi_z = nn.Linear(1, d)
        if config.lexical_inputs:
            self.phi_lex = nn.Linear(NUM_LEXICAL, d)
        if config.lexical_residual:
            self.w_lex = nn.Linear(NUM_LEXICAL, 1)
        if config.pool_gate:
            self.gate = nn.Linear(NUM_POOL, 1)
        self.norm = nn.LayerNorm(d)
        self.layers = nn.ModuleList(
            GraphLayer(
                d,
                config.heads,
                config.relations,
                config.rel_emb_dim,
                config.dropout,
                config.negative_slope,
                config.ffn_mult,
            )
            for _ in range(config.layers)
        )
        d_in = 2 * d if config.passage_pool else d
        self.scorer = nn.Sequential(nn.Linear(d_in, d), nn.GELU(), nn.Linear(d, 1))  # eq. 15
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.config.residual_local_logit:
            # Start as the identity on the local logit: the graph learns a correction.
            nn.init.zeros_(self.scorer[-1].weight)
            nn.init.zeros_(self.scorer[-1].bias)
        if self.config.lexical_residual:
            nn.init.zeros_(self.w_lex.weight)
            nn.init.zeros_(self.w_lex.bias)
        if self.config.pool_gate:
            nn.init.zeros_(self.gate.weight)  # g = 0.5 everywhere until trained
            nn.init.zeros_(self.gate.bias)

    def forward(
        self,
        h: Tensor,
        role_probs: Tensor,
        local_logits: Tensor,
        edge_index: Tensor,
        edge_type: Tensor,
        pairs: Tensor | None = None,
        return_attention: bool = False,
        lexical: Tensor | None = None,
        passage_of: Tensor | None = None,
        pool: Tensor | None = None,
    ) -> tuple[GlobalOutput, Tensor | None]:
        """Score the nodes of one sentence graph.

        Args:
            h: ``[N, d_enc]`` contextual sentence vectors.
            role_probs: ``[N, 3]`` role distributions.
            local_logits: ``[N]`` local logits (z_local = sigmoid of them).
            edge_index: ``[2, E]``.
            edge_type: ``[E]``.
            pairs: optional ``[2, P]`` preference pairs; gives the eq. 23 loss.
            return_attention: keep per-layer attention weights.
            lexical: ``[N, 3]`` lexical inputs (needed with ``lexical_inputs`` /
                ``lexical_residual``).
            passage_of: ``[N]`` passage index of each node (needed with ``passage_pool``).
            pool: ``[NUM_POOL]`` pool features (needed with ``pool_gate``;
                :func:`logrerank.graph.pool_features.pool_features`).

        Returns:
            ``(GlobalOutput, loss)``; loss is None without pairs.
        """
        z = torch.sigmoid(local_logits).unsqueeze(-1)  # [N, 1]
        x = self.phi_r(role_probs) + self.phi_z(z)  # [N, d]
        if self.config.use_h:
            x = x + self.phi_h(h)
        cfg = self.config
        if (cfg.lexical_inputs or cfg.lexical_residual) and lexical is None:
            raise ValueError("this global model needs the lexical inputs (lexical=...)")
        if cfg.pool_gate and pool is None:
            raise ValueError("this global model needs the pool features (pool=...)")
        if cfg.lexical_inputs:
            x = x + self.phi_lex(lexical.to(x.dtype))
        x = self.norm(x)  # (eq. 7)
        attention = [] if return_attention else None
        for layer in self.layers:
            x, (_, alpha) = layer(x, edge_index, edge_type, return_attention_weights=True)
            if attention is not None:
                attention.append(alpha.detach())
        if cfg.passage_pool:
            if passage_of is None:
                raise ValueError("this global model needs passage_of (passage_pool)")
            P = int(passage_of.max()) + 1 if passage_of.numel() else 0
            idx = passage_of[:, None].expand_as(x)
            pooled = torch.full((P, x.size(1)), float("-inf"), dtype=x.dtype, device=x.device)
            pooled = pooled.scatter_reduce(0, idx, x, reduce="amax", include_self=True)
            x = torch.cat([x, pooled[passage_of]], dim=-1)
        logits = self.scorer(x).squeeze(-1)  # [N] (eq. 15): the correction
        if cfg.lexical_residual:
            logits = logits + self.w_lex(lexical.to(logits.dtype)).squeeze(-1)
        gate = None
        if cfg.pool_gate:
            gate = torch.sigmoid(self.gate(pool.to(logits.dtype))).squeeze(-1)  # []
            logits = gate * logits
        if cfg.residual_local_logit:
            logits = logits + local_logits
        out = GlobalOutput(logits, torch.sigmoid(logits), attention, gate)  # eq. 16
        loss = pairwise_global_loss(logits, pairs) if pairs is not None else None
        return out, loss
