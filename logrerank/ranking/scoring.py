"""Final score adjustments over a pool (adaptations, not in the paper; off by default).

Adjustments applied to the final logits ``l`` (the global logits, or the local ones in the
local-only ablation):

1. **Duplicate consensus** (``merge_duplicates``). A text that occurs in several passages of the
   pool (Citation-Integrity builds its passages from overlapping sentences of one paper: on dev
   pools the gold evidence sentence also sits in 6 other candidates on average) gets one score,
   the mean of its copies' logits:

       m_i = mean { l_j : norm(text_j) = norm(text_i) }

   The contextual encoder otherwise scores the copies differently (by up to 0.12 in z on one
   dev pool), and which copy wins is noise. Ties then break by input (retriever) order.

2. **Passage context** (``passage_weight`` = beta). A sentence inherits a share of its passage's
   mean score:

       l'_ij = m_ij + beta * (1 / n_i) * sum_k m_ik

   With the passage order taken from each passage's best sentence (docs/evaluation.md,
   section 4), this ranks passages by ``max + beta * mean``, which separates passages that
   share their best sentence.

3. **Head shrinkage** (``head_weight`` = w, isolated mode). The local logit is the packaged
   bi-encoder prior plus what training learned, ``l_local = prior + head``; the final logit keeps
   only a share w of the learned part:

       l' = l - (1 - w) * (l_local - prior)

   an output-space ensemble of the fine-tuned and the zero-shot model (WiSE-FT, Wortsman et al.
   2022), which trades in-domain fit for robustness on data unlike the training data. It is
   applied first, then 1, then 2.

All three are chosen on training queries (``logrerank tune-score``) and stored in the
checkpoint's ``score`` config section.
"""

from __future__ import annotations

import torch
from torch import Tensor


def normalise_text(text: str) -> str:
    """Whitespace-normalised text: the key for duplicate detection."""
    return " ".join(text.split())


def duplicate_groups(texts: list[str]) -> Tensor:
    """Group id per sentence: equal ids = the same normalised text. ``[N]`` long tensor.

    Example: ``["a b", "c", " a  b"]`` -> ``[0, 1, 0]``.
    """
    ids: dict[str, int] = {}
    return torch.tensor(
        [ids.setdefault(normalise_text(t), len(ids)) for t in texts], dtype=torch.long
    )


def group_mean(values: Tensor, groups: Tensor) -> Tensor:
    """Each entry replaced by the mean over its group. ``values`` ``[N]``, ``groups`` ``[N]``."""
    if values.numel() == 0:
        return values
    n = int(groups.max()) + 1
    sums = torch.zeros(n, dtype=values.dtype).index_add(0, groups, values)
    counts = torch.bincount(groups, minlength=n).to(values.dtype)
    return (sums / counts)[groups]


def adjust_logits(
    logits: Tensor,
    passage_of: Tensor,
    texts: list[str],
    merge_duplicates: bool = False,
    passage_weight: float = 0.0,
    head: Tensor | None = None,
    head_weight: float = 1.0,
) -> Tensor:
    """Apply head shrinkage, duplicate consensus and the passage term (module docstring).

    Args:
        logits: ``[N]`` final logits, one per sentence (node order).
        passage_of: ``[N]`` passage index of each sentence.
        texts: the N sentence texts (node order).
        merge_duplicates: replace each logit by the mean over copies of its text.
        passage_weight: beta >= 0.
        head: ``[N]`` the learned part of the local logits (``l_local - prior``); None = no
            shrinkage whatever ``head_weight`` says.
        head_weight: w in [0, 1].

    Returns:
        ``[N]`` adjusted logits (a new tensor; the input is unchanged). With the defaults the
        logits come back unchanged.
    """
    out = apply_adjustments(
        logits.detach().double().cpu(),
        passage_of.cpu(),
        duplicate_groups(texts) if merge_duplicates else None,
        passage_weight,
        None if head is None else head.detach().double().cpu(),
        head_weight,
    )
    return out.to(logits.dtype)


def apply_adjustments(
    logits: Tensor,
    passage_of: Tensor,
    groups: Tensor | None = None,
    passage_weight: float = 0.0,
    head: Tensor | None = None,
    head_weight: float = 1.0,
) -> Tensor:
    """The adjustments of :func:`adjust_logits` as differentiable tensor operations (training
    uses them on the global logits: ``losses.aligned_pool_loss``).

    Args:
        logits: ``[N]`` logits.
        passage_of: ``[N]`` passage index of each sentence.
        groups: ``[N]`` duplicate-text group ids (:func:`duplicate_groups`); None = no merge.
        passage_weight: beta >= 0.
        head: ``[N]`` learned part of the local logits, or None.
        head_weight: w in [0, 1].
    """
    out = logits
    if head is not None and head_weight != 1.0:
        out = out - (1.0 - head_weight) * head
    if groups is not None and out.numel():
        out = group_mean(out, groups)
    if passage_weight and out.numel():
        out = out + passage_weight * group_mean(out, passage_of)
    return out
