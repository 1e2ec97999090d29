"""Tests for logrerank.ranking.losses (eqs. 19-23), with hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch

from logrerank.ranking.losses import (
    drop_duplicate_negatives,
    group_log_softmax,
    listwise_loss,
    local_loss,
    pairwise_global_loss,
    preference_pairs,
    role_kl_loss,
    soft_rank_targets,
)

LN2, LN3 = math.log(2), math.log(3)
E = math.e


def t(*xs: float) -> torch.Tensor:
    return torch.tensor(xs, dtype=torch.float)


# ---------------------------------------------------------------------------------------
# group_log_softmax


def test_group_log_softmax_sums_to_one_per_group() -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(50, generator=g) * 10
    group = torch.randint(0, 7, (50,), generator=g)
    p = group_log_softmax(x, group).exp()
    sums = torch.zeros(7, dtype=p.dtype).index_add(0, group, p)
    assert torch.allclose(sums, torch.ones(7), atol=1e-6)
    # Equals a plain log_softmax inside each group.
    for k in range(7):
        m = group == k
        assert torch.allclose(group_log_softmax(x, group)[m], torch.log_softmax(x[m], 0), atol=1e-6)


def test_group_log_softmax_is_stable_and_handles_empty_groups() -> None:
    x = t(1000.0, 1000.0, -1000.0)
    group = torch.tensor([0, 0, 2])  # group 1 is empty
    out = group_log_softmax(x, group, num_groups=3)
    assert torch.isfinite(out).all()
    # log(1/2), log(1/2) for the tie; a singleton group has log-probability 0.
    assert torch.allclose(out, t(-LN2, -LN2, 0.0))


# ---------------------------------------------------------------------------------------
# eq. 19 targets and eq. 20 listwise loss


def test_soft_rank_targets_hand_values() -> None:
    # softmax(-[1, 2, 3]) = [e^-1, e^-2, e^-3] / (e^-1 + e^-2 + e^-3)
    z = E**-1 + E**-2 + E**-3
    got = soft_rank_targets(torch.tensor([1, 2, 3]), torch.tensor([0, 0, 0]), tau=1.0)
    assert torch.allclose(got, t(E**-1 / z, E**-2 / z, E**-3 / z))
    # Ties share the mass; groups are independent: [1, 1] -> [0.5, 0.5], singleton -> 1.
    got = soft_rank_targets(torch.tensor([1, 7, 1]), torch.tensor([0, 1, 0]))
    assert torch.allclose(got, t(0.5, 1.0, 0.5))
    # tau = 0.5 doubles the gap: softmax(-[2, 4]) = [1, e^-2] / (1 + e^-2).
    got = soft_rank_targets(torch.tensor([1, 2]), torch.tensor([0, 0]), tau=0.5)
    assert torch.allclose(got, t(1 / (1 + E**-2), E**-2 / (1 + E**-2)))
    # Small tau -> one-hot on rank 1; large tau -> uniform.
    sharp = soft_rank_targets(torch.tensor([2, 1, 3]), torch.tensor([0, 0, 0]), tau=0.01)
    assert torch.allclose(sharp, t(0.0, 1.0, 0.0), atol=1e-6)
    flat = soft_rank_targets(torch.tensor([2, 1, 3]), torch.tensor([0, 0, 0]), tau=1e6)
    assert torch.allclose(flat, torch.full((3,), 1 / 3), atol=1e-5)


def test_listwise_loss_hand_value() -> None:
    # Group 0 = entries 0 and 2: logits [0, ln 2], ranks [1, 2].
    #   target  P~ = softmax(-[1, 2]) = [1, e^-1] / (1 + e^-1) = [0.7311, 0.2689]
    #   predicted P = softmax([0, ln 2]) = [1/3, 2/3]
    #   loss_0 = -(0.7311 * ln(1/3) + 0.2689 * ln(2/3)) = 0.8032 + 0.1090 = 0.9122
    # Group 1 = entry 1 alone: log P = 0, loss_1 = 0.
    t1, t2 = 1 / (1 + E**-1), E**-1 / (1 + E**-1)
    expected = -(t1 * math.log(1 / 3) + t2 * math.log(2 / 3))
    assert expected == pytest.approx(0.9122, abs=1e-4)
    logits, ranks, group = t(0.0, 5.0, LN2), torch.tensor([1, 1, 2]), torch.tensor([0, 1, 0])
    assert float(listwise_loss(logits, ranks, group)) == pytest.approx(expected, rel=1e-5)
    # "mean" divides by the number of passages (2).
    got = listwise_loss(logits, ranks, group, reduction="mean")
    assert float(got) == pytest.approx(expected / 2, rel=1e-5)


def test_listwise_loss_is_minimised_by_matching_logits() -> None:
    # Cross-entropy is minimal when P = P~, i.e. logits = -ranks / tau (+ const); the minimum
    # is the target entropy H(P~).
    ranks, group = torch.tensor([1, 2, 3]), torch.tensor([0, 0, 0])
    target = soft_rank_targets(ranks, group)
    entropy = float(-(target * target.log()).sum())
    best = listwise_loss(-ranks.float() + 4.0, ranks, group)
    assert float(best) == pytest.approx(entropy, rel=1e-5)
    assert float(listwise_loss(ranks.float(), ranks, group)) > entropy  # reversed order


# ---------------------------------------------------------------------------------------
# eq. 21 role loss and eq. 22 local loss

ROLE_LOGITS = torch.tensor([[0.0, 0.0, 0.0], [LN2, 0.0, 0.0]])
ROLE_TARGET = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
# Row 0: r = [1/3, 1/3, 1/3], r~ = [1, 0, 0]:
#   KL = 1 * ln(1 / (1/3)) + 0 log 0 + 0 log 0 = ln 3
# Row 1: r = softmax([ln 2, 0, 0]) = [2, 1, 1] / 4 = [0.5, 0.25, 0.25], r~ = [0.5, 0.5, 0]:
#   KL = 0.5 ln(0.5 / 0.5) + 0.5 ln(0.5 / 0.25) + 0 log 0 = 0.5 ln 2
KL0, KL1 = LN3, 0.5 * LN2


def test_role_kl_loss_hand_values() -> None:
    assert float(role_kl_loss(ROLE_LOGITS, ROLE_TARGET)) == pytest.approx(KL0 + KL1, rel=1e-6)
    got = role_kl_loss(ROLE_LOGITS, ROLE_TARGET, reduction="mean")
    assert float(got) == pytest.approx((KL0 + KL1) / 2, rel=1e-6)
    # Equals torch's KL with the 0 log 0 = 0 convention.
    ref = torch.nn.functional.kl_div(
        torch.log_softmax(ROLE_LOGITS, -1), ROLE_TARGET, reduction="sum"
    )
    assert float(role_kl_loss(ROLE_LOGITS, ROLE_TARGET)) == pytest.approx(float(ref), rel=1e-6)


def test_role_kl_loss_zero_log_zero_is_finite_with_finite_gradient() -> None:
    # A one-hot target against a confident prediction of another class: large but finite.
    logits = torch.tensor([[-30.0, 30.0, 0.0]], requires_grad=True)
    loss = role_kl_loss(logits, torch.tensor([[1.0, 0.0, 0.0]]))
    assert torch.isfinite(loss)
    loss.backward()
    assert torch.isfinite(logits.grad).all()
    # Perfect prediction of a one-hot target: KL = 0 (not NaN from 0 * log 0).
    perfect = role_kl_loss(torch.tensor([[100.0, 0.0, 0.0]]), torch.tensor([[1.0, 0.0, 0.0]]))
    assert float(perfect) == pytest.approx(0.0, abs=1e-6)


def test_role_kl_loss_mask() -> None:
    mask = torch.tensor([True, False])
    assert float(role_kl_loss(ROLE_LOGITS, ROLE_TARGET, mask)) == pytest.approx(KL0, rel=1e-6)
    got = role_kl_loss(ROLE_LOGITS, ROLE_TARGET, torch.tensor([False, True]), reduction="mean")
    assert float(got) == pytest.approx(KL1, rel=1e-6)
    # No row with a target: zero, still differentiable.
    logits = ROLE_LOGITS.clone().requires_grad_(True)
    none = role_kl_loss(logits, ROLE_TARGET, torch.tensor([False, False]))
    assert float(none.detach()) == 0.0
    none.backward()
    assert torch.equal(logits.grad, torch.zeros_like(logits))


def test_local_loss_combines_rank_and_role() -> None:
    # eq. 22: L = L_rank + lambda * L_role.
    # Ranking part: one passage, logits [0, ln 2], ranks [1, 2] -> 0.9122 (see above).
    # Role part: rows as above, sum = ln 3 + 0.5 ln 2 = 1.4452; lambda = 0.5.
    t1, t2 = 1 / (1 + E**-1), E**-1 / (1 + E**-1)
    rank_part = -(t1 * math.log(1 / 3) + t2 * math.log(2 / 3))
    logits, ranks, group = t(0.0, LN2), torch.tensor([1, 2]), torch.tensor([0, 0])
    got = local_loss(logits, ranks, group, ROLE_LOGITS, ROLE_TARGET, lam=0.5)
    assert float(got) == pytest.approx(rank_part + 0.5 * (KL0 + KL1), rel=1e-5)
    # lambda = 0 leaves the ranking loss; the mask drops row 1's role term.
    got = local_loss(logits, ranks, group, ROLE_LOGITS, ROLE_TARGET, lam=0.0)
    assert float(got) == pytest.approx(rank_part, rel=1e-5)
    mask = torch.tensor([True, False])
    got = local_loss(logits, ranks, group, ROLE_LOGITS, ROLE_TARGET, mask, lam=2.0)
    assert float(got) == pytest.approx(rank_part + 2.0 * KL0, rel=1e-5)


# ---------------------------------------------------------------------------------------
# eq. 23 pairs and loss


def test_preference_pairs_hand_listed() -> None:
    # Passage 0 = nodes 0, 1 (sentence ranks 1, 2), passage rank 2.
    # Passage 1 = nodes 2, 3, 4 (sentence ranks 2, 1, 3), passage rank 1 (the better one).
    # (u, v): u in passage 1, v in passage 0, rank(u) <= rank(v):
    #   u=2 (r2): v=0 (r1) no, v=1 (r2) yes   -> (2, 1)
    #   u=3 (r1): v=0 (r1) yes, v=1 (r2) yes  -> (3, 0), (3, 1)
    #   u=4 (r3): v=0 no, v=1 no
    # Nothing from passage 0 (worse) and nothing within a passage.
    pairs = preference_pairs(
        passage_rank=torch.tensor([2, 1]),
        sentence_rank=torch.tensor([1, 2, 2, 1, 3]),
        passage_of=torch.tensor([0, 0, 1, 1, 1]),
    )
    assert pairs.dtype == torch.long and pairs.shape[0] == 2
    assert sorted(map(tuple, pairs.T.tolist())) == [(2, 1), (3, 0), (3, 1)]


def test_preference_pairs_three_passages_and_ties() -> None:
    # Passage ranks: p0 = 1, p1 = 2, p2 = 2 (tied with p1 -> no pairs between them).
    # Nodes: 0 (p0, r1), 1 (p1, r1), 2 (p1, r2), 3 (p2, r1).
    #   from node 0 (best passage, rank 1): to 1, 2, 3 (all ranks >= 1)
    #   p1 vs p2: tied passages, no pairs.
    pairs = preference_pairs(
        torch.tensor([1, 2, 2]), torch.tensor([1, 1, 2, 1]), torch.tensor([0, 1, 1, 2])
    )
    assert sorted(map(tuple, pairs.T.tolist())) == [(0, 1), (0, 2), (0, 3)]


def test_preference_pairs_max_pairs_subset() -> None:
    passage_of = torch.arange(4).repeat_interleave(5)
    sentence_rank = torch.arange(1, 6).repeat(4)
    full = preference_pairs(torch.tensor([1, 2, 3, 4]), sentence_rank, passage_of)
    sub = preference_pairs(torch.tensor([1, 2, 3, 4]), sentence_rank, passage_of, max_pairs=7)
    assert sub.shape == (2, 7)
    assert set(map(tuple, sub.T.tolist())) <= set(map(tuple, full.T.tolist()))
    again = preference_pairs(torch.tensor([1, 2, 3, 4]), sentence_rank, passage_of, max_pairs=7)
    assert torch.equal(sub, again)  # deterministic
    assert torch.equal(sub[:, 0], full[:, 0]) and torch.equal(sub[:, -1], full[:, -1])


def test_pairwise_global_loss_hand_value() -> None:
    # logits [2, 0, 1]; pairs (0, 1) and (2, 1):
    #   -log sigmoid(2 - 0) = log(1 + e^-2) = 0.126928
    #   -log sigmoid(1 - 0) = log(1 + e^-1) = 0.313262
    #   mean = 0.220095
    logits = t(2.0, 0.0, 1.0)
    pairs = torch.tensor([[0, 2], [1, 1]])
    expected = (math.log(1 + E**-2) + math.log(1 + E**-1)) / 2
    assert expected == pytest.approx(0.220095, abs=1e-6)
    assert float(pairwise_global_loss(logits, pairs)) == pytest.approx(expected, rel=1e-6)
    # Equal logits: log 2 per pair.
    assert float(pairwise_global_loss(t(0.0, 0.0), torch.tensor([[0], [1]]))) == pytest.approx(LN2)


def test_pairwise_global_loss_without_pairs() -> None:
    logits = t(1.0, 2.0).requires_grad_(True)
    loss = pairwise_global_loss(logits, torch.empty(2, 0, dtype=torch.long))
    assert float(loss.detach()) == 0.0
    loss.backward()
    assert torch.equal(logits.grad, torch.zeros(2))


def test_drop_duplicate_negatives_hand_listed() -> None:
    # nodes: 0 "a" grade 2, 1 "b" grade 1, 2 " a" grade 0 (a copy of node 0 elsewhere),
    # 3 "c" grade 0, 4 "b" grade 0 (a copy of node 1)
    grade = torch.tensor([2.0, 1.0, 0.0, 0.0, 0.0])
    texts = ["a", "b", " a", "c", "b"]
    pairs = torch.tensor([[0, 0, 0, 1, 1, 0], [1, 2, 3, 3, 2, 4]])
    kept = drop_duplicate_negatives(pairs, texts, grade)
    # (0, 2): node 2's text has best grade 2 -> dropped; (1, 2): 2 vs best 2 -> dropped;
    # (0, 4): node 4's text "b" has best grade 1 < 2 -> kept
    assert kept.tolist() == [[0, 0, 1, 0], [1, 3, 3, 4]]
    empty = torch.zeros(2, 0, dtype=torch.long)
    assert drop_duplicate_negatives(empty, [], torch.zeros(0)).shape == (2, 0)


def test_softmax_pool_loss_and_text_best_grade_hand_computed() -> None:
    from logrerank.ranking.losses import softmax_pool_loss, text_best_grade

    logits = torch.tensor([2.0, 0.0, 0.0])
    z = math.exp(2.0) + 2.0
    # one positive (node 0): -log(e^2 / z)
    assert softmax_pool_loss(logits, torch.tensor([True, False, False])).item() == pytest.approx(
        -(2.0 - math.log(z))
    )
    # two positives: the mean of their -log softmax
    two = softmax_pool_loss(logits, torch.tensor([True, True, False])).item()
    assert two == pytest.approx(-((2.0 - math.log(z)) + (0.0 - math.log(z))) / 2)
    grade = torch.tensor([2.0, 0.0, 1.0, 0.0])
    assert text_best_grade(grade, ["a", " a", "b", "c"]).tolist() == [2.0, 2.0, 1.0, 0.0]


def test_lambda_pair_loss_hand_computed() -> None:
    from logrerank.ranking.losses import lambda_pair_loss

    # ranking by logits: node 1 (rank 1), node 0 (rank 2), node 2 (rank 3); node 0 is relevant
    logits = torch.tensor([1.0, 2.0, 0.0], requires_grad=True)
    grade = torch.tensor([1.0, 0.0, 0.0])
    d1, d2, d3 = 1.0, 1 / math.log2(3), 0.5
    w01, w02 = abs(d2 - d1), abs(d2 - d3)  # gains 1 - 0; IDCG@10 = 1
    sp = lambda x: math.log1p(math.exp(-x))  # noqa: E731
    want = (w01 * sp(1.0 - 2.0) + w02 * sp(1.0 - 0.0)) / (w01 + w02)
    loss = lambda_pair_loss(logits, grade)
    assert loss.item() == pytest.approx(want, rel=1e-5)
    loss.backward()
    assert logits.grad[0] < 0  # raising the relevant node lowers the loss
    # with k = 1 only pairs that touch rank 1 count: (0, 1) alone
    assert lambda_pair_loss(logits, grade, k=1).item() == pytest.approx(sp(-1.0), rel=1e-5)
    assert lambda_pair_loss(logits, torch.zeros(3)).item() == 0.0  # nothing relevant


def test_aligned_pool_loss_hand_computed() -> None:
    from logrerank.ranking.losses import aligned_pool_loss

    logits = torch.tensor([1.0, 0.0, 2.0, 0.0], requires_grad=True)
    passage_of = torch.tensor([0, 0, 1, 1])
    head = torch.tensor([0.4, 0.0, 0.0, 0.2])
    dups = torch.tensor([0, 1, 2, 0])  # node 3 has node 0's text
    # shrink: [0.8, 0, 2, -0.1]; merge copies: [0.35, 0, 2, 0.35];
    # + 1.0 * passage mean (0.175, 1.175): [0.525, 0.175, 3.175, 1.525]; best: (0.525, 3.175)
    x = [0.525, 0.175, 3.175, 1.525]
    lse = lambda v: math.log(sum(math.exp(a) for a in v))  # noqa: E731
    want_p = -(0.525 - lse([0.525, 3.175]))
    want_s = -(0.525 - lse(x))
    loss = aligned_pool_loss(
        logits, passage_of, torch.tensor([True, False]), torch.tensor([True, False, False, False]),
        dups, head, passage_weight=1.0, head_weight=0.5,
    )  # fmt: skip
    assert loss.item() == pytest.approx(want_p + want_s, rel=1e-5)
    loss.backward()
    assert logits.grad[0] < 0 and logits.grad[2] > 0  # lift the cited passage's best sentence
    # passage labels only (no sentence term), nothing merged, no shrinkage
    plain = aligned_pool_loss(logits.detach(), passage_of, torch.tensor([False, True]))
    assert plain.item() == pytest.approx(-(2.0 - lse([1.0, 2.0])), rel=1e-5)


def test_train_config_rejects_unknown_pair_mode() -> None:
    from logrerank.training.log.log_config import TrainConfig

    with pytest.raises(ValueError, match="pairs must be one of"):
        TrainConfig(pairs="listwsie")
    with pytest.raises(ValueError, match="pairs must be one of"):
        TrainConfig().override(["pairs=nope"])
    assert TrainConfig().override(["pairs=aligned"]).pairs == "aligned"
