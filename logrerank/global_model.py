"""Global graph reranker: node init (eq. 7), relation-aware GAT layers (eqs. 11-14) and the
global scorer (eqs. 15-16)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .config import GlobalConfig
from .graph import NUM_RELATIONS
from .layers import GraphLayer
from .losses import pairwise_global_loss


@dataclass
class GlobalOutput:
    """Outputs of the global model for one graph of N nodes and E edges."""

    logits: Tensor  # [N] l_global (eq. 15)
    scores: Tensor  # [N] z_global = sigmoid(l_global) (eq. 16)
    attention: list[Tensor] | None  # per layer, [E, H] alpha_uv (edge order of the input)


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
        self.norm = nn.LayerNorm(d)
        self.layers = nn.ModuleList(
            GraphLayer(
                d,
                config.heads,
                NUM_RELATIONS,
                config.rel_emb_dim,
                config.dropout,
                config.negative_slope,
                config.ffn_mult,
            )
            for _ in range(config.layers)
        )
        self.scorer = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, 1))  # eq. 15
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.config.residual_local_logit:
            # Start as the identity on the local logit: the graph learns a correction.
            nn.init.zeros_(self.scorer[-1].weight)
            nn.init.zeros_(self.scorer[-1].bias)

    def forward(
        self,
        h: Tensor,
        role_probs: Tensor,
        local_logits: Tensor,
        edge_index: Tensor,
        edge_type: Tensor,
        pairs: Tensor | None = None,
        return_attention: bool = False,
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

        Returns:
            ``(GlobalOutput, loss)``; loss is None without pairs.
        """
        z = torch.sigmoid(local_logits).unsqueeze(-1)  # [N, 1]
        x = self.phi_r(role_probs) + self.phi_z(z)  # [N, d]
        if self.config.use_h:
            x = x + self.phi_h(h)
        x = self.norm(x)  # (eq. 7)
        attention = [] if return_attention else None
        for layer in self.layers:
            x, (_, alpha) = layer(x, edge_index, edge_type, return_attention_weights=True)
            if attention is not None:
                attention.append(alpha.detach())
        logits = self.scorer(x).squeeze(-1)  # [N] (eq. 15)
        if self.config.residual_local_logit:
            logits = logits + local_logits
        out = GlobalOutput(logits, torch.sigmoid(logits), attention)  # eq. 16
        loss = pairwise_global_loss(logits, pairs) if pairs is not None else None
        return out, loss
