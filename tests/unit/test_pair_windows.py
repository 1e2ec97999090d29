"""The full-text cross-encoder: windows of the whole passage, best window per passage."""

from __future__ import annotations

import pytest

from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
from logrerank.models.cross_encoder import CrossEncoder, pair_text
from logrerank.models.pair_windows import body_windows, full_pair_texts, window_budget
from logrerank.types import Passage

LONG = " ".join(f"Sentence {i} says gene BRCA{i} acts in repair." for i in range(80))


def test_short_text_is_one_window(tokenizer):
    assert body_windows(tokenizer, "Aspirin lowers risk.", 50) == ["Aspirin lowers risk."]
    assert body_windows(tokenizer, "", 50) == [""]


def test_windows_are_exact_slices_that_cover_the_text_and_overlap(tokenizer):
    budget, stride = 40, 8
    ws = body_windows(tokenizer, LONG, budget, stride)
    assert len(ws) > 3
    n_tokens = len(tokenizer(LONG, add_special_tokens=False)["input_ids"])
    pos = 0
    for w in ws:
        assert len(tokenizer(w, add_special_tokens=False)["input_ids"]) <= budget
        at = LONG.find(w, max(0, pos - len(w)))
        assert at >= 0  # a slice of the original text
        pos = at + len(w)
    assert ws[0] == LONG[: len(ws[0])] and LONG.endswith(ws[-1])  # first and last token kept
    # consecutive windows share the stride's tokens
    assert ws[1].split()[0] in ws[0]
    assert sum(len(tokenizer(w, add_special_tokens=False)["input_ids"]) for w in ws) >= n_tokens


def test_pairs_fit_the_model_length(tokenizer):
    p = Passage(title="Repair genes", text=LONG)
    q = "Which gene acts in DNA repair?"
    texts = full_pair_texts(tokenizer, q, p, 128)
    assert all(t.startswith("Repair genes. ") for t in texts)
    assert max(len(tokenizer(q, t)["input_ids"]) for t in texts) <= 128
    untitled = full_pair_texts(tokenizer, q, Passage(title="", text=LONG), 128)
    assert max(len(tokenizer(q, t)["input_ids"]) for t in untitled) <= 128
    assert window_budget(tokenizer, q, "", 128) > window_budget(tokenizer, q, "Repair genes", 128)


@pytest.fixture(scope="module")
def tiny_ce(tiny_ce_dir) -> CrossEncoder:
    return CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32", max_length=96)


def test_full_ranker_scores_each_passage_by_its_best_window(tiny_ce):
    passages = [
        Passage(title="Repair genes", text=LONG),
        Passage(title="", text="A short passage about aspirin."),
    ]
    q = "Which gene acts in DNA repair?"
    r = CrossEncoderRanker(tiny_ce, level="full").rank(q, passages)
    texts = full_pair_texts(tiny_ce.tokenizer, q, passages[0], tiny_ce.max_length)
    logits = tiny_ce.predict([(q, t) for t in texts])
    first = next(sp for sp in r.passages_ranked if sp.passage_idx == 0)
    assert first.extra["windows"] == len(texts) > 1
    assert first.extra["cross_encoder_logit"] == pytest.approx(max(logits), abs=1e-6)
    assert first.extra["best_window"] == logits.index(max(logits))
    short = next(sp for sp in r.passages_ranked if sp.passage_idx == 1)
    assert short.extra["windows"] == 1
    # a passage that fits reads the same text as the truncated ranker
    one = tiny_ce.predict([(q, pair_text(passages[1], None))])[0]
    assert short.extra["cross_encoder_logit"] == pytest.approx(one, abs=1e-6)
    assert r.info["windows"] == len(texts) + 1


def test_unknown_level_is_refused(tiny_ce):
    with pytest.raises(ValueError, match="full"):
        CrossEncoderRanker(tiny_ce, level="paragraph")
