"""Passage score from LoG's own reading: a learned aggregation of a passage's sentence evidence.

The LoG-Reranker paper ranks sentences; a passage inherits the rank of its best sentence. An
expert-cited paragraph is relevant as a whole, and "best sentence plus a fixed term" throws away
what the rest of the paragraph says. :class:`PassageHead` scores each passage from the same
joint states the sentence scores come from (no extra transformer pass):

    s_p = max_{j in p} f_j + MLP([x_p ; W_v v_p])

where ``f`` are the final sentence logits (after the graph stage and the score adjustments,
:func:`logrerank.ranking.results.final_logits`), ``v_p = sum_j softmax_{j in p}(f_j) h_j`` pools the
contextual sentence vectors ``h`` of the passage by its own evidence, and ``x_p`` holds pool-relative
statistics of the passage's sentences (:data:`FEATURES`). The MLP's last layer starts at zero, so
an untrained head ranks passages exactly as the best-sentence rule does; training (listwise over
a pool's passages, :mod:`logrerank.training.log.passage_stage`) learns only a correction.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

FEATURES = (
    "max_final",  # max_j f_j - max over the pool
    "mean_final",  # mean_j f_j - pool max
    "lse_final",  # log mean_j exp f_j - pool max (a soft "several good sentences")
    "second_final",  # second best f_j - pool max (= max for one-sentence passages)
    "max_local",  # the same two for the local logits (before the graph)
    "mean_local",
    "max_prior",  # and for the bi-encoder prior part of the local logits (0 without one)
    "mean_prior",
    "passage_bm25",  # BM25 of title + text over the pool's passages, min-max (text/lexical.py)
    "query_title",  # share of the title's content words in the query
    "log_sentences",  # log(1 + number of sentences)
    "top_share",  # share of the pool's top-10 sentences that lie in this passage
)
"""Names of the scalar passage features ``x_p``, in input order."""


def segment_max(values: Tensor, index: Tensor, size: int) -> Tensor:
    """``out[p] = max {values[j] : index[j] = p}``; ``-inf`` for an empty segment. ``[size]``."""
    out = torch.full((size,), -math.inf, dtype=values.dtype, device=values.device)
    return out.scatter_reduce(0, index, values, reduce="amax", include_self=True)


def segment_mean(values: Tensor, index: Tensor, size: int) -> Tensor:
    """``out[p] = mean {values[j] : index[j] = p}``; 0 for an empty segment. Works on ``[N]``
    and ``[N, d]`` values."""
    shape = (size,) + tuple(values.shape[1:])
    sums = torch.zeros(shape, dtype=values.dtype, device=values.device).index_add(0, index, values)
    counts = torch.bincount(index, minlength=size).clamp(min=1).to(values.dtype)
    return sums / counts.view(-1, *([1] * (values.dim() - 1)))


def segment_softmax(values: Tensor, index: Tensor, size: int) -> Tensor:
    """Softmax of ``values`` within each segment (``[N]``)."""
    m = segment_max(values, index, size)[index]
    e = (values - m).exp()
    z = torch.zeros(size, dtype=values.dtype, device=values.device).index_add(0, index, e)
    return e / z[index]


def passage_features(
    final: Tensor,
    local: Tensor,
    prior: Tensor | None,
    lexical: Tensor,
    passage_of: Tensor,
    num_passages: int,
) -> Tensor:
    """``[P, len(FEATURES)]`` pool-relative passage statistics (:data:`FEATURES`).

    Args:
        final: ``[N]`` final sentence logits.
        local: ``[N]`` local logits.
        prior: ``[N]`` prior part of the local logits, or None.
        lexical: ``[N, 3]`` lexical node inputs (:func:`logrerank.text.lexical.pool_lexical`).
        passage_of: ``[N]`` passage index of each sentence.
        num_passages: P.
    """
    P, idx = num_passages, passage_of
    n = torch.bincount(idx, minlength=P).to(final.dtype)

    def stats(v: Tensor) -> tuple[Tensor, Tensor]:
        top = v.max()
        return segment_max(v, idx, P) - top, segment_mean(v, idx, P) - top

    mx_f, mean_f = stats(final)
    top = final.max()
    lse = segment_max(final, idx, P)
    lse_f = (
        (
            torch.zeros(P, dtype=final.dtype)
            .index_add(0, idx, (final - lse[idx]).exp())
            .clamp(min=1e-12)
            / n.clamp(min=1)
        ).log()
        + lse
        - top
    )
    best = segment_max(final, idx, P)[idx]
    is_best = final == best
    # second best: mask one copy of the best per passage (first in node order)
    first_best = torch.zeros_like(is_best)
    seen: set[int] = set()
    for j in torch.nonzero(is_best).flatten().tolist():
        p = int(idx[j])
        if p not in seen:
            seen.add(p)
            first_best[j] = True
    masked = final.masked_fill(first_best, -math.inf)
    second = segment_max(masked, idx, P)
    second = torch.where(torch.isinf(second), segment_max(final, idx, P), second) - top
    mx_l, mean_l = stats(local)
    if prior is None:
        mx_p = mean_p = torch.zeros(P, dtype=final.dtype)
    else:
        mx_p, mean_p = stats(prior.to(final.dtype))
    lex_p = segment_max(lexical[:, 1].to(final.dtype), idx, P)
    qt_p = segment_max(lexical[:, 2].to(final.dtype), idx, P)
    k = min(10, final.numel())
    top_nodes = torch.topk(final, k).indices
    share = torch.bincount(idx[top_nodes], minlength=P).to(final.dtype) / max(k, 1)
    x = torch.stack(
        [
            mx_f,
            mean_f,
            lse_f,
            second,
            mx_l,
            mean_l,
            mx_p,
            mean_p,
            lex_p,
            qt_p,
            (1 + n).log(),
            share,
        ],
        dim=1,
    )
    return torch.nan_to_num(x, nan=0.0, posinf=0.0, neginf=-20.0).clamp(-20.0, 20.0)


class PassageHead(nn.Module):
    """``s_p = max_j f_j + MLP([x_p ; W_v v_p])`` (module docstring).

    Args:
        d: width of the contextual sentence vectors ``h``.
        hidden: MLP width.
        proj_dim: width of ``W_v v_p``.
        dropout: dropout inside the MLP.
    """

    def __init__(self, d: int, hidden: int = 64, proj_dim: int = 16, dropout: float = 0.1):
        super().__init__()
        self.proj = nn.Linear(d, proj_dim)
        self.mlp = nn.Sequential(
            nn.Linear(len(FEATURES) + proj_dim, hidden),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, 1),
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Default init, then a zero last layer: an untrained head = the best-sentence rule."""
        self.proj.reset_parameters()
        for m in self.mlp:
            if isinstance(m, nn.Linear):
                m.reset_parameters()
        nn.init.zeros_(self.mlp[-1].weight)
        nn.init.zeros_(self.mlp[-1].bias)

    def forward(
        self, final: Tensor, h: Tensor, feats: Tensor, passage_of: Tensor
    ) -> tuple[Tensor, Tensor]:
        """Passage logits.

        Args:
            final: ``[N]`` final sentence logits.
            h: ``[N, d]`` contextual sentence vectors.
            feats: ``[P, F]`` from :func:`passage_features`.
            passage_of: ``[N]``.

        Returns:
            ``(scores [P], correction [P])``: the passage logits and the learned part (``scores``
            minus the best sentence's logit). Passages without sentences get ``-inf``.
        """
        P = feats.size(0)
        a = segment_softmax(final.float(), passage_of, P)  # [N]
        v = torch.zeros(P, h.size(1), dtype=h.dtype, device=h.device).index_add(
            0, passage_of, a[:, None].to(h.dtype) * h
        )  # [P, d]
        z = torch.cat([feats.float(), self.proj(v.float())], dim=1)
        corr = self.mlp(z).squeeze(-1)  # [P]
        best = segment_max(final.float(), passage_of, P)
        return best + corr, corr
