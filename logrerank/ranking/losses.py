"""Training objectives of the paper (eqs. 19-23), written over flat tensors with group ids.

Sentences of many passages are scored in one flat tensor; ``group`` gives each sentence's
passage (0..G-1), so grouped softmaxes need no padding.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def group_log_softmax(x: Tensor, group: Tensor, num_groups: int | None = None) -> Tensor:
    """log softmax of ``x`` within each group.

    Args:
        x: ``[M]`` logits.
        group: ``[M]`` group id of each entry, in ``0..G-1``.
        num_groups: G (inferred when None).

    Returns:
        ``[M]`` log-probabilities; each group's exp sums to 1.
    """
    num_groups = int(group.max()) + 1 if num_groups is None else num_groups
    gmax = torch.full((num_groups,), float("-inf"), dtype=x.dtype, device=x.device)
    gmax = gmax.scatter_reduce(0, group, x.detach(), reduce="amax", include_self=True)
    shifted = x - gmax[group]
    denom = torch.zeros(num_groups, dtype=x.dtype, device=x.device).index_add(
        0, group, shifted.exp()
    )
    return shifted - denom.log()[group]


def soft_rank_targets(ranks: Tensor, group: Tensor, tau: float = 1.0) -> Tensor:
    """Soft targets of eq. 19: ``P~_i = softmax(-y_i / tau)`` within each passage.

    Args:
        ranks: ``[M]`` supervision ranks (1 = most relevant; ties allowed).
        group: ``[M]`` passage id of each sentence.
        tau: temperature; small tau concentrates the mass on the best rank.
    """
    return group_log_softmax(-ranks.float() / tau, group).exp()


def listwise_loss(
    logits: Tensor, ranks: Tensor, group: Tensor, tau: float = 1.0, reduction: str = "sum"
) -> Tensor:
    """Local listwise ranking loss (eqs. 19-20).

    ``L = - sum_i P~_i^T log P_i``, with ``P~_i = softmax(-y_i / tau)`` and
    ``P_i = softmax(l_i)`` over the sentences of passage i.

    Args:
        logits: ``[M]`` local logits l (eq. 5).
        ranks: ``[M]`` supervision ranks y.
        group: ``[M]`` passage id of each sentence.
        tau: target temperature.
        reduction: "sum" over passages (the paper's eq. 20) or "mean" over passages.
    """
    num_groups = int(group.max()) + 1
    target = soft_rank_targets(ranks, group, tau)
    loss = -(target * group_log_softmax(logits, group, num_groups)).sum()
    return loss if reduction == "sum" else loss / num_groups


def role_kl_loss(
    role_logits: Tensor, target: Tensor, mask: Tensor | None = None, reduction: str = "sum"
) -> Tensor:
    """Role loss (eq. 21): ``sum_ij KL(r~_ij || r_ij)`` with ``r = softmax(role_logits)``.

    ``0 log 0`` is taken as 0. Rows where ``mask`` is False (no role target) are skipped.

    Args:
        role_logits: ``[M, 3]``.
        target: ``[M, 3]`` target distributions (rows sum to 1).
        mask: ``[M]`` bool, which rows have a target.
        reduction: "sum" (eq. 21) or "mean" over the rows used.
    """
    logp = F.log_softmax(role_logits.float(), dim=-1)
    kl = torch.xlogy(target, target) - target * logp
    per_row = kl.sum(-1)
    if mask is not None:
        per_row = per_row[mask]
    if per_row.numel() == 0:
        return role_logits.sum() * 0.0
    return per_row.sum() if reduction == "sum" else per_row.mean()


def local_loss(
    logits: Tensor,
    ranks: Tensor,
    group: Tensor,
    role_logits: Tensor,
    role_target: Tensor,
    role_mask: Tensor | None = None,
    lam: float = 0.5,
    tau: float = 1.0,
    reduction: str = "sum",
) -> Tensor:
    """Local-stage objective (eq. 22): ``L_rank^loc + lambda * L_role``."""
    return listwise_loss(logits, ranks, group, tau, reduction) + lam * role_kl_loss(
        role_logits, role_target, role_mask, reduction
    )


def preference_pairs(
    passage_rank: Tensor, sentence_rank: Tensor, passage_of: Tensor, max_pairs: int | None = None
) -> Tensor:
    """Cross-passage preference pairs D_q of eq. 23.

    ``(u, v)`` is a pair when u and v lie in different passages, u's passage ranks higher
    (smaller rank) than v's, and u's sentence rank is no worse than v's.

    Args:
        passage_rank: ``[P]`` rank of each passage (1 = best).
        sentence_rank: ``[M]`` within-passage rank of each sentence (1 = best).
        passage_of: ``[M]`` passage id of each sentence.
        max_pairs: if set, keep a deterministic, evenly strided subset of this size.

    Returns:
        ``[2, |D|]`` long tensor of (u, v) node ids.
    """
    pr = passage_rank[passage_of]
    better_passage = pr[:, None] < pr[None, :]
    no_worse_sentence = sentence_rank[:, None] <= sentence_rank[None, :]
    u, v = (better_passage & no_worse_sentence).nonzero(as_tuple=True)
    pairs = torch.stack([u, v])
    if max_pairs is not None and pairs.size(1) > max_pairs:
        idx = torch.linspace(0, pairs.size(1) - 1, max_pairs).round().long()
        pairs = pairs[:, idx]
    return pairs


def text_best_grade(grade: Tensor, texts: list[str]) -> Tensor:
    """``[N]`` each node's grade replaced by the best grade among the copies of its text
    (whitespace-normalised equal texts)."""
    if grade.numel() == 0:
        return grade
    from .scoring import duplicate_groups

    groups = duplicate_groups(texts)
    best = torch.full((int(groups.max()) + 1,), float("-inf")).scatter_reduce(
        0, groups, grade.float(), reduce="amax"
    )
    return best[groups].to(grade.dtype)


def softmax_pool_loss(logits: Tensor, positive: Tensor) -> Tensor:
    """Listwise loss over one pool: ``-1/|P| sum_{u in P} log softmax(l)_u``.

    The cross-entropy between the softmax over all N nodes and the uniform distribution on the
    positives P (ListNet with a top-1 target): a negative costs in proportion to its softmax
    mass, so the loss is dominated by the negatives ranked near the top, as nDCG@10 is.

    Args:
        logits: ``[N]`` global logits.
        positive: ``[N]`` bool, at least one True.
    """
    return -torch.log_softmax(logits, dim=-1)[positive].mean()


def aligned_pool_loss(
    logits: Tensor,
    passage_of: Tensor,
    passage_positive: Tensor,
    sentence_positive: Tensor | None = None,
    duplicate_groups: Tensor | None = None,
    head: Tensor | None = None,
    passage_weight: float = 0.0,
    head_weight: float = 1.0,
) -> Tensor:
    """Listwise loss on the scores that are ranked at inference (``pairs = "aligned"``).

    The final score adjustments of :mod:`logrerank.ranking.scoring` are applied differentiably,
    ``l' = adjust(l)`` (head shrinkage, duplicate consensus when ``duplicate_groups`` is given,
    passage term), passages are scored by their best sentence, ``s_p = max_{u in p} l'_u``, and

        L = -1/|P+| sum_{p in P+} log softmax(s)_p  -  1/|S+| sum_{u in S+} log softmax(l')_u

    where P+ are the cited passages and S+ the rationale sentences (the second term only where
    sentence labels exist). Each label set enters at the level it is defined at: passage labels
    (Citation-Integrity) never ask every sentence of a cited passage to rise.

    Args:
        logits: ``[N]`` global logits.
        passage_of: ``[N]`` passage index of each node (0..P-1, every passage has a node).
        passage_positive: ``[P]`` bool, the cited passages (at least one).
        sentence_positive: ``[N]`` bool rationale sentences, or None (no sentence labels).
        duplicate_groups: ``[N]`` text group ids (``scoring.duplicate_groups``); None = no merge.
        head: ``[N]`` the learned part of the local logits (``l_local - prior``), or None.
        passage_weight: beta of the passage term.
        head_weight: w of the head shrinkage.
    """
    from .scoring import apply_adjustments

    x = apply_adjustments(
        logits, passage_of, duplicate_groups, passage_weight, head, head_weight
    )  # [N] the adjusted scores that are ranked
    P = passage_positive.numel()
    best = torch.full((P,), float("-inf"), dtype=x.dtype, device=x.device)
    best = best.scatter_reduce(0, passage_of, x, reduce="amax", include_self=True)
    loss = softmax_pool_loss(best, passage_positive)
    if sentence_positive is not None and bool(sentence_positive.any()):
        loss = loss + softmax_pool_loss(x, sentence_positive)
    return loss


def lambda_pair_loss(logits: Tensor, grade: Tensor, k: int = 10) -> Tensor:
    """LambdaRank-weighted pairwise loss for nDCG@k over one pool.

    For every pair with ``grade(u) > grade(v)``, the weight is the change in nDCG@k if u and v
    swapped places in the current ranking (by ``logits``, not differentiated):
    ``w_uv = |(2^g_u - 2^g_v) (D(r_u) - D(r_v))| / IDCG@k`` with ``D(r) = 1/log2(1 + r)`` for
    ``r <= k`` and 0 beyond. The loss is ``sum w_uv log(1 + exp(-(l_u - l_v))) / sum w_uv``:
    pairs that cannot change the top k weigh nothing.

    Args:
        logits: ``[N]`` scores.
        grade: ``[N]`` relevance grades (0 = not relevant).
        k: the cut-off.
    """
    n = logits.numel()
    order = torch.argsort(logits.detach(), descending=True)
    rank = torch.empty(n, dtype=torch.float, device=logits.device)
    rank[order] = torch.arange(1, n + 1, dtype=torch.float, device=logits.device)
    disc = torch.where(rank <= k, 1.0 / torch.log2(1.0 + rank), torch.zeros_like(rank))
    gain = 2.0 ** grade.float() - 1.0
    ideal = torch.sort(gain, descending=True).values[:k]
    idcg = (ideal / torch.log2(torch.arange(2, ideal.numel() + 2, dtype=torch.float))).sum()
    u, v = (grade[:, None] > grade[None, :]).nonzero(as_tuple=True)
    if u.numel() == 0 or idcg <= 0:
        return logits.sum() * 0.0
    w = ((gain[u] - gain[v]) * (disc[u] - disc[v])).abs() / idcg
    if w.sum() <= 0:
        return logits.sum() * 0.0
    return (w * F.softplus(-(logits[u] - logits[v]))).sum() / w.sum()


def drop_duplicate_negatives(pairs: Tensor, texts: list[str], grade: Tensor) -> Tensor:
    """Remove pairs that rank a sentence below a copy of itself.

    A text's grade is the best grade of its copies (whitespace-normalised equal texts): the same
    sentence cannot be evidence in one passage and not in another. A pair ``(u, v)`` is kept
    only when ``grade(u) > best_grade(text(v))``.

    Args:
        pairs: ``[2, |D|]`` preferred / less preferred node ids.
        texts: the sentence text of every node.
        grade: ``[N]`` the label grade of every node (higher = preferred).

    Returns:
        ``[2, |D'|]`` the kept pairs, in their original order.
    """
    if pairs.numel() == 0:
        return pairs
    best = text_best_grade(grade.float(), texts)
    return pairs[:, grade[pairs[0]].float() > best[pairs[1]]]


def pairwise_global_loss(logits: Tensor, pairs: Tensor) -> Tensor:
    """Global pairwise loss (eq. 23): ``-1/|D| sum_(u,v) log sigmoid(l_u - l_v)``.

    Args:
        logits: ``[N]`` global logits (eq. 15).
        pairs: ``[2, |D|]`` preferred / less preferred node ids.
    """
    if pairs.numel() == 0:
        return logits.sum() * 0.0
    return -F.logsigmoid(logits[pairs[0]] - logits[pairs[1]]).mean()
