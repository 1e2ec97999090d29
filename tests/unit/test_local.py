"""Tests for logrerank.local.tokenize and logrerank.local.scorer: joint windows (eq. 1), span pooling,
heads (eqs. 2-6), and one training step through the local scorer and the global model (eqs. 22-23)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from logrerank.config import GlobalConfig, GraphConfig, LocalConfig
from logrerank.graph.global_model import GlobalReranker
from logrerank.graph.sentence_graph import build_graph
from logrerank.local.backbone import load_encoder
from logrerank.local.scorer import LocalScorer
from logrerank.local.tokenize import Window, batches, collate, pad_encoded, pad_length, tokenize
from logrerank.ranking.losses import preference_pairs

QUERY = "Does aspirin reduce the risk of heart attack?"


def sentence(i: int) -> str:
    return f"Sentence number {i} reports that the effect of drug X{i} on outcome Y was large."


def ids_of(tokenizer, text: str) -> list[int]:
    return tokenizer(text, add_special_tokens=False)["input_ids"]


# ---------------------------------------------------------------------------------------
# tokenize: windows on sentence boundaries


def test_long_passage_is_split_into_windows(tokenizer) -> None:
    passages = [[sentence(i) for i in range(20)], ["A short one.", "And another."]]
    max_length, max_q = 64, 8
    tok = tokenize(tokenizer, QUERY, passages, max_length=max_length, max_query_tokens=max_q)
    q = ids_of(tokenizer, QUERY)
    assert len(q) > max_q and tok.query_truncated
    head = [tokenizer.cls_token_id, *q[:max_q], tokenizer.sep_token_id]

    assert tok.num_nodes == 22
    assert tok.truncated_nodes == []
    first = [w for w in tok.windows if w.passage_idx == 0]
    assert len(first) >= 4  # ~15 tokens per sentence, ~53 sentence tokens per window
    # Every node exactly once, in document order, each window within one passage.
    all_nodes = [n for w in tok.windows for n in w.nodes]
    assert all_nodes == list(range(22))
    assert [w.nodes for w in tok.windows if w.passage_idx == 1] == [[20, 21]]

    flat = [s for p in passages for s in p]
    for w in tok.windows:
        # [CLS] q [SEP] s1 [SEP] s2 [SEP] ... within the window size.
        assert w.input_ids[: len(head)] == head
        assert len(w.input_ids) <= max_length
        assert len(w.input_ids) == len(w.token_type_ids) == len(w.span_ids)
        assert w.token_type_ids == [0] * len(head) + [1] * (len(w.input_ids) - len(head))
        assert w.span_ids[: len(head)] == [-1, *([0] * max_q), -1]
        assert w.input_ids[-1] == tokenizer.sep_token_id
        assert w.truncated == [False] * len(w.nodes)
        for k, node in enumerate(w.nodes, 1):
            toks = [t for t, s in zip(w.input_ids, w.span_ids) if s == k]
            assert toks == ids_of(tokenizer, flat[node])  # the whole sentence, uncut
            last = max(i for i, s in enumerate(w.span_ids) if s == k)
            assert w.input_ids[last + 1] == tokenizer.sep_token_id
    # Windows are packed greedily: the next sentence would not have fitted.
    for a, b in zip(first, first[1:]):
        nxt = len(ids_of(tokenizer, flat[b.nodes[0]])) + 1
        assert len(a.input_ids) + nxt > max_length


def test_sentence_longer_than_window_is_truncated_and_flagged(tokenizer) -> None:
    long = " ".join(f"word{i}" for i in range(200)) + "."
    passages = [["Short before.", long, "Short after."]]
    tok = tokenize(tokenizer, "q?", passages, max_length=40, max_query_tokens=8)
    assert tok.truncated_nodes == [1]
    # The long sentence sits alone in its window; its neighbours are not merged across it.
    assert [w.nodes for w in tok.windows] == [[0], [1], [2]]
    cut = tok.windows[1]
    assert cut.truncated == [True]
    assert len(cut.input_ids) == 40  # filled exactly to the window
    assert cut.input_ids[-1] == tokenizer.sep_token_id
    sent = [t for t, s in zip(cut.input_ids, cut.span_ids) if s == 1]
    assert sent == ids_of(tokenizer, long)[: len(sent)]  # a prefix of the sentence
    assert tok.windows[0].truncated == [False] and tok.windows[2].truncated == [False]


def test_short_query_not_flagged(tokenizer) -> None:
    tok = tokenize(tokenizer, "short question", [["One.", "Two."]], max_length=64)
    assert not tok.query_truncated
    assert len(tok.windows) == 1 and tok.windows[0].nodes == [0, 1]


# ---------------------------------------------------------------------------------------
# collate: span ids for mean pooling


def test_collate_span_ids() -> None:
    # Window 0: [CLS] q q [SEP] a a [SEP] b [SEP]   (nodes 0, 1)
    # Window 1: [CLS] q [SEP] c c c [SEP]           (node 2), padded to length 9.
    w0 = Window(
        0, [0, 1], [1, 5, 6, 2, 7, 8, 2, 9, 2], [0] * 4 + [1] * 5, [-1, 0, 0, -1, 1, 1, -1, 2, -1]
    )
    w1 = Window(1, [2], [1, 5, 2, 7, 7, 7, 2], [0] * 3 + [1] * 4, [-1, 0, -1, 1, 1, 1, -1])
    b = collate([w0, w1])
    # Pooled rows: 0, 1 = query of window 0, 1; then sentences in window order: 2 = node 0,
    # 3 = node 1, 4 = node 2. -1 = not pooled ([CLS], [SEP], padding).
    assert b["span"].tolist() == [
        [-1, 0, 0, -1, 2, 2, -1, 3, -1],
        [-1, 1, -1, 4, 4, 4, -1, -1, -1],
    ]
    assert b["attention_mask"].tolist() == [[1] * 9, [1] * 7 + [0, 0]]
    assert b["input_ids"][1].tolist() == [1, 5, 2, 7, 7, 7, 2, 0, 0]
    assert b["token_type_ids"][1].tolist() == [0, 0, 0, 1, 1, 1, 1, 0, 0]
    assert b["sent_window"].tolist() == [0, 0, 1]
    assert b["nodes"].tolist() == [0, 1, 2]


def test_pad_length_and_pad_encoded_by_hand() -> None:
    assert pad_length(70, 32, 256) == 96
    assert pad_length(96, 32, 256) == 96
    assert pad_length(250, 32, 256) == 256  # capped at max_length
    assert pad_length(300, 32, 256) == 300  # never below the batch's own length
    assert pad_length(70, 0, 256) == pad_length(70, 1) == 70
    assert pad_length(70, 32) == 96  # no cap
    enc = {"input_ids": [[1, 5, 2], [1, 2]], "attention_mask": [[1, 1, 1], [1, 1]]}
    right = pad_encoded(enc, 4, pad_id=9)
    assert right["input_ids"].tolist() == [[1, 5, 2, 9], [1, 2, 9, 9]]
    assert right["attention_mask"].tolist() == [[1, 1, 1, 0], [1, 1, 0, 0]]
    assert "token_type_ids" not in right
    left = pad_encoded(enc, 4, pad_id=9, left=True)
    assert left["input_ids"].tolist() == [[9, 1, 5, 2], [9, 9, 1, 2]]
    assert left["input_ids"].dtype == torch.long


def test_batches_bound_windows_and_tokens() -> None:
    wins = [Window(0, [i], [1] * n, [0] * n, [-1] * n) for i, n in enumerate([5, 30, 10, 8, 30])]
    out = batches(wins, batch_tokens=40, max_windows=2)
    assert sorted(i for b in out for i in b) == list(range(5))
    for b in out:
        assert len(b) <= 2
        longest = max(len(wins[i].input_ids) for i in b)
        assert len(b) == 1 or len(b) * longest <= 40
    # A single window larger than the token budget still gets a batch.
    assert batches([Window(0, [0], [1] * 99, [0] * 99, [-1] * 99)], 10, 4) == [[0]]


# ---------------------------------------------------------------------------------------
# LocalScorer forward


@pytest.fixture
def scorer(tiny_dir) -> LocalScorer:
    torch.manual_seed(0)
    return LocalScorer(load_encoder(str(tiny_dir)), LocalConfig(head_hidden=16, role_proj_dim=8))


PASSAGES = [
    ["Aspirin inhibits platelet aggregation.", "We enrolled 2000 adults.", "Risk fell by 20%."],
    ["Heart attacks are common.", "A cohort was followed.", "No effect was found.", "Fine."],
    ["Background on COX enzymes.", "Trials were pooled."],
]


def test_local_scorer_shapes_and_mean_pooling(scorer, tokenizer) -> None:
    scorer.eval()
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32)
    batch = collate(tok.windows)
    out, loss = scorer(batch)
    W, M = len(tok.windows), tok.num_nodes
    assert loss is None
    assert out.h_q.shape == (W, 32) and out.h_s.shape == (M, 32)
    assert out.intent_logits.shape == (W, 3) and out.role_logits.shape == (M, 3)
    assert out.logits.shape == (M,)
    # h_s of a sentence is the mean of the encoder's token states over its span.
    with torch.no_grad():
        H = scorer.encoder(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            token_type_ids=batch["token_type_ids"],
        ).last_hidden_state
    for row in range(W + M):
        b, pos = (batch["span"] == row).nonzero(as_tuple=True)
        ref = H[b, pos].mean(0)
        got = out.h_q[row] if row < W else out.h_s[row - W]
        assert torch.allclose(got, ref, atol=1e-5)


def test_local_scorer_is_batch_invariant(scorer, tokenizer) -> None:
    # Scoring windows one at a time gives the same sentence outputs as one padded batch.
    scorer.eval()
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32)
    out, _ = scorer(collate(tok.windows))
    for w in tok.windows:
        single, _ = scorer(collate([w]))
        assert torch.allclose(single.logits, out.logits[w.nodes], atol=1e-5)


# ---------------------------------------------------------------------------------------
# One training step: gradients reach every trainable parameter


def training_step(scorer: LocalScorer, gm: GlobalReranker, tokenizer):
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32)
    batch = collate(tok.windows)
    passage_of = torch.tensor([p for p, s in enumerate(PASSAGES) for _ in s])
    nodes = batch["nodes"]
    assert nodes.tolist() == list(range(len(passage_of)))  # document order
    sentence_rank = torch.tensor([1, 3, 2, 2, 1, 4, 3, 2, 1])
    role_target = torch.tensor(
        [[0.8, 0.1, 0.1], [0.0, 1.0, 0.0], [0.1, 0.1, 0.8], [1.0, 0.0, 0.0], [0.2, 0.7, 0.1],
         [0.0, 0.0, 1.0], [0.3, 0.3, 0.4], [1.0, 0.0, 0.0], [0.0, 0.5, 0.5]]
    )  # fmt: skip
    targets = {
        "ranks": sentence_rank,
        "group": passage_of[nodes],
        "role_target": role_target,
        "role_mask": torch.tensor([True] * 8 + [False]),
        "lam": 0.5,
        "tau": 1.0,
    }
    out, loss_local = scorer(batch, targets)  # eq. 22
    role_probs = out.role_logits.softmax(-1)
    # A dense graph (tau_sim = -1, delta = 1) so every node has several in-neighbours.
    data = build_graph(
        out.h_s.detach(),
        role_probs.detach(),
        torch.sigmoid(out.logits).detach(),
        passage_of,
        GraphConfig(tau_sim=-1.0, delta=1.0, top_k=4),
    )
    pairs = preference_pairs(torch.tensor([2, 1, 3]), sentence_rank, passage_of)
    assert pairs.size(1) > 0
    gout, loss_global = gm(
        out.h_s, role_probs, out.logits, data.edge_index, data.edge_type, pairs=pairs
    )  # eq. 23
    return loss_local, loss_global, gout


# Parameters that no loss can reach: BERT's pooler (its output is not used; the sentence
# vectors are mean-pooled from last_hidden_state).
UNUSED = ("local.encoder.pooler.",)
# Parameters whose gradient is zero by construction: the bias of the global scorer's last
# layer shifts every global logit by the same amount, and eq. 23 only sees differences
# l_u - l_v, so its gradient is exactly zero (it still gets a finite, non-None gradient).
SHIFT_INVARIANT = ("global.scorer.2.bias",)


def test_gradients_reach_every_trainable_parameter(scorer, tokenizer) -> None:
    torch.manual_seed(0)
    gm = GlobalReranker(
        32, GlobalConfig(hidden=32, heads=4, rel_emb_dim=8, residual_local_logit=False)
    )
    scorer.train()
    gm.train()
    loss_local, loss_global, _ = training_step(scorer, gm, tokenizer)
    assert torch.isfinite(loss_local) and torch.isfinite(loss_global)
    (loss_local + loss_global).backward()
    named = [("local." + n, p) for n, p in scorer.named_parameters()]
    named += [("global." + n, p) for n, p in gm.named_parameters()]
    checked = 0
    for name, p in named:
        if not p.requires_grad:
            continue
        if name.startswith(UNUSED):
            assert p.grad is None, name
            continue
        assert p.grad is not None, f"no gradient reaches {name}"
        assert torch.isfinite(p.grad).all(), f"non-finite gradient in {name}"
        if name in SHIFT_INVARIANT:
            assert p.grad.abs().max() < 1e-6, name
            continue
        assert p.grad.abs().sum() > 0, f"zero gradient in {name}"
        checked += 1
    assert checked > 40


def test_global_loss_alone_trains_only_the_graph_side(scorer, tokenizer) -> None:
    # Stage 2 (eq. 23) with a frozen local scorer: gradients reach the global model only.
    torch.manual_seed(0)
    gm = GlobalReranker(32, GlobalConfig(hidden=32, heads=4, rel_emb_dim=8))
    for p in scorer.parameters():
        p.requires_grad_(False)
    _, loss_global, _ = training_step(scorer, gm, tokenizer)
    loss_global.backward()
    assert all(p.grad is None for p in scorer.parameters())
    # With the zero-initialised residual scorer, the last layer's gradient is non-zero.
    assert gm.scorer[-1].weight.grad.abs().sum() > 0


def test_residual_global_logits_equal_local_logits_at_init(scorer, tokenizer) -> None:
    torch.manual_seed(0)
    gm = GlobalReranker(32, GlobalConfig(hidden=32, heads=4, rel_emb_dim=8))
    assert gm.config.residual_local_logit  # the default
    scorer.eval()
    gm.eval()
    with torch.no_grad():
        tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32)
        out, _ = scorer(collate(tok.windows))
        passage_of = torch.tensor([p for p, s in enumerate(PASSAGES) for _ in s])
        role_probs = out.role_logits.softmax(-1)
        data = build_graph(
            out.h_s,
            role_probs,
            torch.sigmoid(out.logits),
            passage_of,
            GraphConfig(tau_sim=-1.0, delta=1.0),
        )
        gout, loss = gm(out.h_s, role_probs, out.logits, data.edge_index, data.edge_type)
    assert loss is None
    assert torch.equal(gout.logits, out.logits)
    assert torch.equal(gout.scores, torch.sigmoid(out.logits))
    # With residual off (the paper's eq. 15 exactly) the graph output is used as is.
    torch.manual_seed(0)
    plain = GlobalReranker(
        32, GlobalConfig(hidden=32, heads=4, rel_emb_dim=8, residual_local_logit=False)
    ).eval()
    with torch.no_grad():
        pout, _ = plain(
            out.h_s,
            role_probs,
            out.logits,
            data.edge_index,
            data.edge_type,
            return_attention=True,
        )
    assert not torch.allclose(pout.logits, out.logits)
    assert len(pout.attention) == 2
    assert pout.attention[0].shape == (data.edge_index.size(1), 4)


def test_global_without_h_ignores_the_sentence_vectors() -> None:
    """``GlobalConfig.use_h = False``: nodes carry only score and role, so changing the
    contextual vectors h changes nothing; with the default they do change the output."""
    torch.manual_seed(0)
    n = 6
    h, other_h = torch.randn(n, 32), torch.randn(n, 32)
    roles = torch.softmax(torch.randn(n, 3), -1)
    logits = torch.randn(n)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 0, 3, 2, 5, 4]])
    edge_type = torch.zeros(6, dtype=torch.long)
    for use_h in (False, True):
        torch.manual_seed(1)
        cfg = GlobalConfig(hidden=32, heads=4, rel_emb_dim=8, residual_local_logit=False)
        gm = GlobalReranker(32, dataclasses.replace(cfg, use_h=use_h)).eval()
        a, _ = gm(h, roles, logits, edge_index, edge_type)
        b, _ = gm(other_h, roles, logits, edge_index, edge_type)
        assert torch.allclose(a.logits, b.logits) is (not use_h)
