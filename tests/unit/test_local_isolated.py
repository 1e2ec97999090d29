"""Tests for the isolated-segment local encoder (``LocalConfig.isolated_layers``): lower layers
see the query and each sentence alone, the frozen top reproduces the packaged bi-encoder (the
prior), and a trainable joint copy of the top layers lets the query and sentences interact."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from logrerank.config import LocalConfig
from logrerank.local.packing import first_fit_decreasing, pack_segments
from logrerank.local.scorer import LocalScorer
from logrerank.local.tokenize import collate, tokenize
from logrerank.ranking.losses import role_kl_loss

QUERY = "Does aspirin reduce the risk of heart attack?"
PASSAGES = [
    ["Aspirin reduced heart attacks by a third.", "The trial enrolled 5,000 adults.", "Fine."],
    ["Heart attacks are common.", "No effect was found."],
]


@pytest.fixture(scope="module")
def iso_scorer(tokenizer, make_tiny_encoder) -> LocalScorer:
    torch.manual_seed(0)
    enc = make_tiny_encoder(len(tokenizer), layers=2)
    cfg = LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1, dropout=0.0)
    return LocalScorer(enc, cfg).eval()


def standalone(encoder, tokenizer, text: str) -> torch.Tensor:
    """Mean-pooled, L2-normalised embedding of ``[CLS] text [SEP]`` encoded on its own."""
    ids = tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        h = encoder(input_ids=ids).last_hidden_state[0].mean(0)
    return torch.nn.functional.normalize(h, dim=-1)


def test_isolated_windows_have_one_segment_per_text(tokenizer) -> None:
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32, isolated=True)
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    flat = [s for p in PASSAGES for s in p]
    assert [n for w in tok.windows for n in w.nodes] == list(range(len(flat)))
    for w in tok.windows:
        assert len(w.input_ids) == len(w.position_ids) == len(w.span_ids)
        assert all(t == 0 for t in w.token_type_ids)
        for k in range(len(w.nodes) + 1):  # 0 = query segment
            seg = [i for i, s in enumerate(w.span_ids) if s == k]
            assert seg == list(range(seg[0], seg[-1] + 1))  # contiguous
            ids = [w.input_ids[i] for i in seg]
            assert ids[0] == cls and ids[-1] == sep
            assert [w.position_ids[i] for i in seg] == list(range(len(seg)))  # restart at 0
            text = QUERY if k == 0 else flat[w.nodes[k - 1]]
            assert ids[1:-1] == tokenizer(text, add_special_tokens=False)["input_ids"]


def test_untrained_logits_are_the_bi_encoder_prior(iso_scorer, tokenizer) -> None:
    # The zero-initialised head leaves l_local = a * (cos(e_q, e_s) - b), where e_q, e_s are the
    # packaged encoder's own embeddings of the query and each sentence encoded alone.
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32, isolated=True)
    out, _ = iso_scorer(collate(tok.windows))
    e_q = standalone(iso_scorer.encoder, tokenizer, QUERY)
    flat = [s for p in PASSAGES for s in p]
    cfg = iso_scorer.config
    for m, node in enumerate(out.nodes.tolist()):
        cos = float(e_q @ standalone(iso_scorer.encoder, tokenizer, flat[node]))
        assert out.logits[m].item() == pytest.approx(
            cfg.prior_scale * (cos - cfg.prior_shift), abs=1e-4
        )


def test_joint_branch_sees_the_query_and_padding_changes_nothing(iso_scorer, tokenizer) -> None:
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32, isolated=True)
    other = tokenize(tokenizer, "Unrelated words here", PASSAGES, 128, 32, isolated=True)
    a, _ = iso_scorer(collate(tok.windows))
    b, _ = iso_scorer(collate(other.windows))
    assert not torch.allclose(a.h_s, b.h_s, atol=1e-4)  # joint layer: sentences see the query
    for w in tok.windows:  # one window alone (no padding) == the same window in a padded batch
        single, _ = iso_scorer(collate([w]))
        assert torch.allclose(single.logits, a.logits[w.nodes], atol=1e-5)
        assert torch.allclose(single.h_s, a.h_s[w.nodes], atol=1e-5)


def test_only_joint_layers_and_heads_train(tokenizer, make_tiny_encoder) -> None:
    torch.manual_seed(1)
    enc = make_tiny_encoder(len(tokenizer), layers=2)
    for p in enc.parameters():
        p.requires_grad = False
    scorer = LocalScorer(enc, LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1))
    scorer.train()
    assert not scorer.encoder.training  # the frozen prior never uses dropout
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32, isolated=True)
    out, _ = scorer(collate(tok.windows))
    target = torch.full((out.role_logits.size(0), 3), 1 / 3)
    target[:, 0] += 0.2
    target = target / target.sum(-1, keepdim=True)
    loss = out.logits.sum() + role_kl_loss(out.role_logits, target)
    loss.backward()
    assert all(p.grad is None for p in scorer.encoder.parameters())
    joint = scorer.joint_parameters()
    assert joint
    for name, p in scorer.joint_layers.named_parameters():
        assert p.grad is not None, name
        if not name.endswith("attention.self.key.bias"):  # softmax-shift invariant: zero grad
            assert p.grad.abs().sum() > 0, name
    assert scorer.prior_scale.grad is not None
    assert not set(map(id, joint)) & set(map(id, scorer.head_parameters()))


def test_isolated_layers_out_of_range_is_rejected(tokenizer, make_tiny_encoder) -> None:
    enc = make_tiny_encoder(len(tokenizer), layers=2)
    with pytest.raises(ValueError, match="isolated_layers"):
        LocalScorer(enc, dataclasses.replace(LocalConfig(), isolated_layers=2))


def test_segment_cache_gives_the_uncached_forward(iso_scorer, tokenizer) -> None:
    # Training precomputes the query-independent lower layers once per sentence
    # (train.SegmentCache); the cached forward must equal the plain one.
    from logrerank.local.segment_cache import SegmentCache

    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=30, max_query_tokens=8, isolated=True)
    assert len(tok.windows) > len(PASSAGES)  # several windows per passage
    batch = collate(tok.windows)
    plain, _ = iso_scorer(batch)
    cache = SegmentCache(iso_scorer, chunk=3)
    cached_batch = collate(tok.windows)
    cache.fill(cached_batch, tok.windows)
    cached, _ = iso_scorer(cached_batch)
    assert torch.allclose(plain.logits, cached.logits, atol=1e-5)
    assert torch.allclose(plain.h_s, cached.h_s, atol=1e-5)
    assert torch.allclose(plain.role_logits, cached.role_logits, atol=1e-5)
    n_segments = len(tok.windows) + tok.num_nodes
    assert len(cache.store) == n_segments - len(tok.windows) + 1  # one query entry, reused


def test_segment_cache_prefill_packs_the_whole_call_in_row_chunks(
    iso_scorer, tokenizer, monkeypatch
) -> None:
    """``SegmentCache.prefill`` computes every distinct segment of a call once, packed first fit
    decreasing over the whole call, at most ``rows`` rows of ``width`` tokens per frozen-layer
    call (long segments apart); the filled forward equals the plain one."""
    from logrerank.local.segment_cache import SegmentCache

    width, rows = 10, 2  # segment lengths here: 4, 7, 10 and 12 tokens (long)
    iso_scorer.config = dataclasses.replace(iso_scorer.config, pack_length=width)
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=30, max_query_tokens=8, isolated=True)
    calls: list[list[int]] = []
    encode = iso_scorer.encode_segments

    def spy(segments):
        calls.append([len(t) for t in segments])
        return encode(segments)

    monkeypatch.setattr(iso_scorer, "encode_segments", spy)
    cache = SegmentCache(iso_scorer)
    cache.prefill(tok.windows, width, rows=rows, long_tokens=40)
    assert len(cache.store) == tok.num_nodes + 1  # every sentence and the query, once
    assert sum(map(len, calls)) == len(cache.store)
    assert len(calls) > 1
    for lens in calls:
        short = [n for n in lens if n <= width]
        assert not short or len(short) == len(lens)  # long segments run in calls of their own
        assert len(first_fit_decreasing(short, width)) <= rows
        assert sum(lens) <= 40 or short or len(lens) == 1  # long calls within long_tokens
    assert any(n > width for lens in calls for n in lens)  # the case is exercised
    plain, _ = iso_scorer(collate(tok.windows))
    batch = collate(tok.windows)
    cache.fill(batch, tok.windows)
    filled, _ = iso_scorer(batch)
    for f in ("logits", "h_s", "role_logits"):
        assert torch.allclose(getattr(plain, f), getattr(filled, f), atol=1e-5), f
    done = len(calls)
    cache.prefill(tok.windows, width, rows=rows, long_tokens=40)
    assert len(calls) == done  # everything stored: nothing recomputed


def test_pipeline_segment_cache_matches_block_masked_windows(
    tokenizer, make_tiny_encoder, tiny_config
) -> None:
    """``LoGReranker.segment_cache = True`` runs the isolated layers per segment; the scores must
    equal the default block-masked windows on multi-window passages."""
    from logrerank.config import LocalConfig
    from logrerank.pipeline import LoGReranker

    enc = make_tiny_encoder(len(tokenizer), layers=2)
    cfg = tiny_config(None, local=LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1))
    cfg.backbone.max_length, cfg.backbone.max_query_tokens = 40, 8
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        model = LoGReranker(cfg, encoder=enc, tokenizer=tokenizer)
    passages = [" ".join(p) for p in PASSAGES] + [" ".join(PASSAGES[0])]  # a repeated passage
    model.segment_cache = True
    fast = model.encode(QUERY, passages)
    model.segment_cache = False
    slow = model.encode(QUERY, passages)
    assert torch.allclose(fast.local_logits, slow.local_logits, atol=1e-5)
    assert torch.allclose(fast.h, slow.h, atol=1e-5)
    assert torch.allclose(fast.role_probs, slow.role_probs, atol=1e-6)
    model.segment_cache = True
    a, b = model.rerank(QUERY, passages), model.rerank(QUERY, passages)
    assert [(s.node, s.score) for s in a.sentences] == [(s.node, s.score) for s in b.sentences]


@pytest.fixture
def tiny_pipeline(tokenizer, tiny_config, make_tiny_encoder):
    """``tiny_pipeline(max_length=40)``: a seeded tiny 2-layer LoG model in isolated mode."""
    from logrerank.pipeline import LoGReranker

    def make(max_length: int = 40):
        enc = make_tiny_encoder(len(tokenizer), layers=2)
        cfg = tiny_config(
            None, local=LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1)
        )
        cfg.backbone.max_length, cfg.backbone.max_query_tokens = max_length, 8
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(3)
            return LoGReranker(cfg, encoder=enc, tokenizer=tokenizer)

    return make


def test_passage_cache_reuses_passages_across_questions(
    tokenizer, monkeypatch, tiny_pipeline
) -> None:
    """``passage_cache_mb``: a second question over the same passages runs no frozen layer on
    their sentences (only on the new query), and scores equal a cold, uncached call."""
    model = tiny_pipeline()
    passages = [" ".join(p) for p in PASSAGES]
    other = "Which drug lowers blood pressure?"
    cold = model.encode(other, passages)  # reference: cache off
    assert model.caches.passages is None
    model.passage_cache_mb = 64
    model.encode(QUERY, passages)  # fills the cache from the ordinary windows
    cache = model.caches.passages[1]
    n_sentences = sum(len(p) for p in PASSAGES)
    assert len(cache.store) == n_sentences + 1  # every sentence, and the first query
    stacked = []  # token ids of every frozen-layer pass
    real = LocalScorer._isolated_stack

    def spy(self, ids, pos, span):
        stacked.append(ids.tolist())
        return real(self, ids, pos, span)

    monkeypatch.setattr(LocalScorer, "_isolated_stack", spy)
    warm = model.encode(other, passages)
    q = tokenizer(other, add_special_tokens=False)["input_ids"]
    assert stacked == [[[tokenizer.cls_token_id, *q, tokenizer.sep_token_id]]]  # the query only
    assert torch.allclose(warm.local_logits, cold.local_logits, atol=1e-5)
    assert torch.allclose(warm.h, cold.h, atol=1e-5)
    assert torch.allclose(warm.role_probs, cold.role_probs, atol=1e-6)
    assert torch.allclose(warm.prior_logits, cold.prior_logits, atol=1e-5)
    assert cold.cached_windows == (0, 0)  # cache off
    n_windows = warm.cached_windows[1]
    assert warm.cached_windows == (n_windows, n_windows) and n_windows >= len(PASSAGES)
    assert model.rank_encoded(warm).info["passage_cache_windows"] == [n_windows, n_windows]


def test_passage_cache_is_bounded_and_mixed_calls_stay_exact(tokenizer, tiny_pipeline) -> None:
    """LRU eviction keeps the store under its budget; a call with some cached and some new
    passages equals the uncached call."""
    model = tiny_pipeline()
    passages = [" ".join(p) for p in PASSAGES]
    more = ["Statins lowered cholesterol in older adults.", "Placebo had no effect at all."]
    ref = model.encode(QUERY, passages + more)
    model.passage_cache_mb = 64
    model.encode("Something else entirely", passages)  # only the first two passages cached
    mixed = model.encode(QUERY, passages + more)
    assert torch.allclose(mixed.local_logits, ref.local_logits, atol=1e-5)
    assert torch.allclose(mixed.h, ref.h, atol=1e-5)
    cache = model.caches.passages[1]
    assert cache.hits > 0
    per_entry = cache.nbytes / len(cache.store)
    model.passage_cache_mb = 3 * per_entry / 2**20  # room for about three segments
    model.encode(QUERY, passages + more)
    assert 0 < len(cache.store) <= 4 and cache.nbytes <= model.passage_cache_mb * 2**20
    again = model.encode(QUERY, passages + more)
    assert torch.allclose(again.local_logits, ref.local_logits, atol=1e-5)


def test_passage_cache_is_dropped_when_the_encoder_changes(tokenizer, tiny_pipeline) -> None:
    model = tiny_pipeline()
    passages = [" ".join(p) for p in PASSAGES]
    model.passage_cache_mb = 64
    model.encode(QUERY, passages)
    first = model.caches.passages[1]
    with torch.no_grad():
        model.local.encoder.embeddings.word_embeddings.weight.mul_(1.5)
    after = model.encode(QUERY, passages)
    assert model.caches.passages[1] is not first  # stale states never reused
    model.passage_cache_mb = 0
    fresh = model.encode(QUERY, passages)
    assert model.caches.passages is None
    assert torch.allclose(after.local_logits, fresh.local_logits, atol=1e-5)


def test_pad_multiple_rounds_batch_length_and_keeps_scores(tokenizer, tiny_pipeline) -> None:
    """``LocalConfig.pad_multiple``: batches are padded to a multiple of it (fewer distinct
    shapes), never past the window length, and the scores do not change."""
    tok = tokenize(tokenizer, QUERY, PASSAGES, max_length=40, max_query_tokens=8, isolated=True)
    L = max(len(w.input_ids) for w in tok.windows)
    assert collate(tok.windows, pad_multiple=16)["input_ids"].size(1) == -(-L // 16) * 16
    assert collate(tok.windows, pad_multiple=64, max_length=40)["input_ids"].size(1) == max(L, 40)
    model = tiny_pipeline()
    passages = [" ".join(p) for p in PASSAGES]
    plain = model.encode(QUERY, passages)
    model.config.local.pad_multiple = 16
    padded = model.encode(QUERY, passages)
    assert torch.allclose(plain.local_logits, padded.local_logits, atol=1e-5)
    assert torch.allclose(plain.h, padded.h, atol=1e-5)


def test_first_fit_decreasing_by_hand() -> None:
    """Longest first, each into the first row with room: 4 | 3 3 | 2 joins the 4. Next fit in
    input order would need three rows ([3], [4], [3, 2])."""
    assert first_fit_decreasing([3, 4, 3, 2], 6) == [[1, 3], [0, 2]]
    assert first_fit_decreasing([], 6) == []
    assert first_fit_decreasing([6, 6], 6) == [[0], [1]]  # full rows take nothing more


def test_pack_segments_first_fit_query_once_and_long_segments() -> None:
    """Hand-built batch: two windows with the same 3-token query; segments go into rows of
    ``width`` tokens first fit decreasing; the second query reads the first's slots; a segment
    longer than ``width`` runs alone in the second group."""
    # window 0: query (span 0) 3 tokens, A (span 2) 4 tokens, B (span 3) 2 tokens
    # window 1: query (span 1) 3 tokens, C (span 4) 6 tokens, 2 pads
    span = torch.tensor([[0, 0, 0, 2, 2, 2, 2, 3, 3, -1, -1], [1, 1, 1, 4, 4, 4, 4, 4, 4, -1, -1]])
    ids = torch.tensor(
        [[5, 6, 7, 10, 11, 12, 13, 14, 15, 0, 0], [5, 6, 7, 20, 21, 22, 23, 24, 25, 0, 0]]
    )
    plan = pack_segments(span, ids, width=6)
    assert len(plan.groups) == 1
    rows, cols, src, is_long = plan.groups[0]
    assert not is_long
    # longest first: C -> row 0; A -> row 1 cols 0-3; q0 (3) has no room there -> row 2;
    # B (2) fills row 1 cols 4-5. Slots listed in token order: q0, A, B, C
    assert rows.tolist() == [2, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    assert cols.tolist() == [0, 1, 2, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5]
    assert 9 not in src.tolist()  # the second query is not computed ...
    assert plan.token_row[9:12].tolist() == [2, 2, 2]  # ... it reads the first one's slots
    assert plan.token_col[9:12].tolist() == [0, 1, 2]
    long = pack_segments(span, ids, width=5)  # C no longer fits a row: second group
    assert len(long.groups) == 2
    assert long.groups[1][0].tolist() == [0] * 6 and long.groups[1][1].tolist() == list(range(6))
    assert long.token_group.tolist() == [0] * 12 + [1] * 6
    assert long.groups[1][3]  # the long-segment group
    every = pack_segments(span, ids, width=1)  # every segment is long: one group, numbered 0
    assert len(every.groups) == 1 and every.groups[0][3]
    assert every.token_group.tolist() == [0] * 18
    other = ids.clone()
    other[1, 1] = 99  # different queries: both are computed
    assert pack_segments(span, other, width=6).groups[0][2].numel() == 18


@pytest.mark.parametrize("width", [12, 24, 128])
def test_packed_rows_give_the_window_layout_scores(
    tokenizer, width, make_tiny_encoder, tiny_pipeline
) -> None:
    """``LocalConfig.pack_length``: the frozen layers on packed rows (long segments alone, one
    query for the batch, row counts rounded up under ``pad_multiple``) give the scores of the
    block-masked window layout, also for a batch mixing two questions."""
    torch.manual_seed(0)
    enc = make_tiny_encoder(len(tokenizer), layers=2)
    cfg = LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1, dropout=0.0)
    scorer = LocalScorer(enc, dataclasses.replace(cfg, pack_length=0)).eval()
    a = tokenize(tokenizer, QUERY, PASSAGES, max_length=128, max_query_tokens=32, isolated=True)
    b = tokenize(
        tokenizer, "Is it safe?", PASSAGES, max_length=128, max_query_tokens=32, isolated=True
    )
    for windows in (a.windows, a.windows[:1] + b.windows):
        batch = collate(windows)
        ref, _ = scorer(batch)
        scorer.config = dataclasses.replace(cfg, pack_length=width)
        out, _ = scorer(batch)
        scorer.config = dataclasses.replace(cfg, pack_length=0)
        for f in ("logits", "h_s", "h_q", "prior"):
            assert torch.allclose(getattr(ref, f), getattr(out, f), atol=1e-5), f
    model = tiny_pipeline()
    passages = [" ".join(p) for p in PASSAGES]
    model.config.local.pack_length = 0
    plain = model.encode(QUERY, passages)
    model.config.local.pack_length = width
    model.config.local.pad_multiple = 16  # packed row counts and long rows rounded up as well
    packed = model.encode(QUERY, passages)
    assert torch.allclose(plain.local_logits, packed.local_logits, atol=1e-5)
