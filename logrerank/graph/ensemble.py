"""A seed ensemble of multi-passage stages (an adaptation, not in the paper).

Stage 2 trained alike with different seeds moves the test figures by up to two points per seed
(the LoG model card, "Seed ensembles"). :class:`GlobalEnsemble` holds ``M`` such stages and
scores a graph by the mean of their global logits:

.. math::

    l_{global}(v) = \\frac{1}{M} \\sum_{m=1}^{M} l^{(m)}_{global}(v), \\qquad
    z_{global}(v) = \\sigma(l_{global}(v)),

and its attention weights (the app's graph view) are the members' mean per layer and edge. It
is built from trained checkpoints by ``logrerank ensemble-stage``
(:mod:`logrerank.training.log.ensemble_stage`) and never trained as a whole.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor, nn

from ..config import GlobalConfig
from .global_model import GlobalOutput, GlobalReranker


class GlobalEnsemble(nn.Module):
    """``config.members`` global stages with one :class:`GlobalReranker` interface.

    Args:
        d_enc: width of the contextual sentence vectors h.
        config: the members' settings; ``members`` is their number (>= 2).
    """

    def __init__(self, d_enc: int, config: GlobalConfig):
        super().__init__()
        self.config = config
        member = dataclasses.replace(config, members=1)
        self.members = nn.ModuleList(GlobalReranker(d_enc, member) for _ in range(config.members))

    @classmethod
    def of(cls, stages: list[nn.Module]) -> GlobalEnsemble:
        """The ensemble of trained :class:`GlobalReranker` ``stages`` (same settings), their
        tensors copied, in eval mode."""
        cfg = dataclasses.replace(stages[0].config, members=len(stages))
        ensemble = cls(stages[0].phi_h.in_features, cfg)
        for slot, stage in zip(ensemble.members, stages, strict=True):
            slot.load_state_dict(stage.state_dict())
        return ensemble.eval()

    def reset_parameters(self) -> None:
        for m in self.members:
            m.reset_parameters()

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
    ) -> tuple[GlobalOutput, None]:
        """The members' mean logits (and mean attention) on one sentence graph; the arguments
        are :meth:`GlobalReranker.forward`'s.

        Raises:
            ValueError: ``pairs`` given: an ensemble is built from trained stages, not trained.
        """
        if pairs is not None:
            raise ValueError("a seed ensemble is not trained; train its members, then ensemble")
        args = (h, role_probs, local_logits, edge_index, edge_type)
        kw = dict(return_attention=return_attention, lexical=lexical, passage_of=passage_of)
        outs = [m(*args, **kw)[0] for m in self.members]
        logits = torch.stack([o.logits for o in outs]).mean(0)  # [N]
        attention = None
        if return_attention:  # per layer: [E, H], the members' mean
            attention = [torch.stack(a).mean(0) for a in zip(*(o.attention for o in outs))]
        return GlobalOutput(logits, torch.sigmoid(logits), attention), None


def build_global_stage(d_enc: int, config: GlobalConfig) -> nn.Module:
    """A :class:`GlobalReranker`, or a :class:`GlobalEnsemble` when ``config.members`` > 1."""
    if config.members > 1:
        return GlobalEnsemble(d_enc, config)
    return GlobalReranker(d_enc, config)
