"""Tests of the cross-encoder model, its baseline ranker and the cross-encoder rerank stage.

A tiny random 1-layer BertForSequenceClassification (hidden 32, one label; ``tiny_ce_dir`` of
conftest.py) with the packaged tokenizer stands in for a real cross-encoder, so every test runs in
milliseconds. Blending arithmetic is checked by replacing ``predict`` with fixed logits. The run
on the real packaged backbone is in ``tests/integration/test_cross_encoder.py``.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pytest
import torch

from logrerank.baselines.base import Ranker
from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
from logrerank.baselines.cross_encoder_stage import CrossEncoderStage
from logrerank.models import cross_encoder as ce_mod
from logrerank.models.cross_encoder import (
    CrossEncoder,
    CrossEncoderError,
    default_checkpoint_dir,
    pair_text,
    sigmoid,
)
from logrerank.text.segment import split_sentences
from logrerank.types import InputError, Passage, Ranking

SEED = 4321


# --------------------------------------------------------------------------------------
# Test-only first-pass rankers.


class OverlapRanker:
    """Fraction of query words found in ``title + text`` (a trivial lexical first pass)."""

    name = "overlap"
    level = "passage"

    def rank(self, query: str, passages: list) -> Ranking:
        words = set(re.findall(r"\w+", query.lower()))
        scores = []
        for p in passages:
            found = set(re.findall(r"\w+", f"{p.title} {p.text}".lower()))
            scores.append(len(words & found) / max(len(words), 1))
        return Ranking.from_passage_scores(
            query, passages, scores, self.name, extras=[{"overlap": s} for s in scores]
        )


class FixedRanker:
    """Returns the given scores (for hand-checked arithmetic)."""

    name = "fixed"
    level = "passage"

    def __init__(self, scores: list[float]) -> None:
        self.scores = scores

    def rank(self, query: str, passages: list) -> Ranking:
        return Ranking.from_passage_scores(query, passages, self.scores, self.name)


def fake_predict(logits: list[float], calls: list | None = None):
    """A ``predict`` replacement returning ``logits`` (and recording the pairs it got)."""

    def predict(pairs):
        if calls is not None:
            calls.append(list(pairs))
        assert len(pairs) == len(logits)
        return list(logits)

    return predict


PASSAGES = [
    Passage("Aspirin reduces the risk of heart attack in adults.", title="Aspirin"),
    Passage("Statins lower cholesterol. They are widely prescribed.", title="Statins"),
    Passage("The weather in Paris is mild in spring."),
    Passage("Heart attack risk rises with smoking and high cholesterol."),
    Passage("Cats sleep for most of the day. Dogs need walks."),
    Passage("Low-dose aspirin is used after a heart attack to prevent another one."),
    Passage("Exercise improves heart health and lowers the risk of attack."),
    Passage("Python is a programming language."),
]
QUERY = "does aspirin lower heart attack risk"


# --------------------------------------------------------------------------------------
# Fixtures: the tiny sequence-classification checkpoint (``tiny_ce_dir``, conftest.py).


@pytest.fixture(scope="module")
def tiny_ce(tiny_ce_dir) -> CrossEncoder:
    """The tiny cross-encoder, fp32 on CPU. Do not mutate it (use ``fresh_ce``)."""
    return CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32")


@pytest.fixture
def fresh_ce(tiny_ce_dir) -> CrossEncoder:
    """A tiny cross-encoder a test may monkeypatch."""
    return CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32")


# --------------------------------------------------------------------------------------
# CrossEncoder.


def test_loads_checkpoint_with_head(tiny_ce, tiny_ce_dir):
    assert tiny_ce.trained is True
    assert tiny_ce.source == f"checkpoint {tiny_ce_dir}"
    assert tiny_ce.max_length == 256
    assert tiny_ce.autocast is None  # precision="fp32"


def test_predict_deterministic_and_batch_size_independent(tiny_ce):
    pairs = [(QUERY, pair_text(p)) for p in PASSAGES] + [
        ("short", "x"),
        ("a much longer query with many words in it " * 3, "y " * 300),  # gets truncated
        ("", ""),
    ]
    ref = tiny_ce.predict(pairs)
    assert len(ref) == len(pairs)
    assert all(isinstance(x, float) and math.isfinite(x) for x in ref)
    assert tiny_ce.predict(pairs) == ref  # deterministic
    for bs in (1, 3, 5):
        tiny_ce.batch_size = bs
        try:
            got = tiny_ce.predict(pairs)
        finally:
            tiny_ce.batch_size = 32
        assert got == pytest.approx(ref, abs=1e-5)
    # Order-preserving: scoring a reversed list gives the reversed scores.
    assert tiny_ce.predict(pairs[::-1]) == pytest.approx(ref[::-1], abs=1e-5)
    assert len(set(round(x, 6) for x in ref)) > 1  # not a constant model


def test_padding_to_a_multiple_changes_no_logit_and_bounds_the_shapes(tiny_ce_dir, monkeypatch):
    """pad_multiple pads each batch to a multiple of 32 tokens (at most max_length): the attention
    mask makes it inert, and the model sees only a few distinct widths."""
    pairs = [(QUERY, pair_text(p)) for p in PASSAGES] + [("short", "x"), ("q " * 40, "y " * 300)]
    exact = CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32", pad_multiple=0)
    padded = CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32", batch_size=2)
    assert padded.pad_multiple == 32  # the default
    widths: list[int] = []
    forward = padded.model.forward
    monkeypatch.setattr(
        padded.model,
        "forward",
        lambda **kw: widths.append(kw["input_ids"].shape[1]) or forward(**kw),
    )
    assert padded.predict(pairs) == pytest.approx(exact.predict(pairs), abs=1e-5)
    assert widths and all(w % 32 == 0 and w <= padded.max_length for w in widths)


def test_predict_empty(tiny_ce):
    assert tiny_ce.predict([]) == []


def test_bf16_autocast_close_to_fp32(tiny_ce_dir):
    fp32 = CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32")
    bf16 = CrossEncoder(tiny_ce_dir, device="cpu", precision="bf16")
    pairs = [(QUERY, pair_text(p)) for p in PASSAGES]
    if bf16.autocast is None:
        pytest.skip("bf16 autocast unsupported on this CPU")
    assert bf16.autocast == torch.bfloat16
    assert bf16.predict(pairs) == pytest.approx(fp32.predict(pairs), abs=0.05)


def test_save_and_from_pretrained_roundtrip(tiny_ce, tmp_path):
    out = tmp_path / "saved"
    tiny_ce.save_pretrained(out)
    names = {p.name for p in out.iterdir()}
    assert "config.json" in names
    assert any(n.endswith(".safetensors") for n in names)
    assert not any(n.endswith((".bin", ".pt", ".pkl")) for n in names)
    assert "tokenizer.json" in names or "vocab.txt" in names
    assert len(json.loads((out / "config.json").read_text())["id2label"]) == 1  # one label
    again = CrossEncoder.from_pretrained(out, device="cpu", precision="fp32")
    assert again.trained
    pairs = [(QUERY, p.text) for p in PASSAGES]
    assert again.predict(pairs) == pytest.approx(tiny_ce.predict(pairs), abs=1e-6)


def test_folder_without_head_gets_seeded_untrained_head(tmp_path, save_tiny_bert):
    save_tiny_bert(tmp_path, seed=SEED, max_positions=512)
    a = CrossEncoder(tmp_path, device="cpu", precision="fp32")
    b = CrossEncoder(tmp_path, device="cpu", precision="fp32")
    assert a.trained is False
    assert a.source == f"UNTRAINED head on {tmp_path}"
    pairs = [(QUERY, p.text) for p in PASSAGES[:3]]
    assert a.predict(pairs) == b.predict(pairs)  # the fresh head is seeded


def test_load_errors_are_clear(tmp_path, tokenizer, tiny_bert_config):
    with pytest.raises(CrossEncoderError, match="does not exist"):
        CrossEncoder(tmp_path / "missing")
    with pytest.raises(CrossEncoderError, match="no config.json"):
        CrossEncoder(tmp_path)
    (tmp_path / "config.json").write_text(
        json.dumps(tiny_bert_config(len(tokenizer), max_positions=512, num_labels=1).to_dict())
    )
    (tmp_path / "pytorch_model.bin").write_bytes(b"not loaded")
    with pytest.raises(CrossEncoderError, match="no .safetensors"):
        CrossEncoder(tmp_path)


def test_two_label_checkpoint_loads_with_its_own_head(tmp_path, save_tiny_bert):
    """A 2-label classifier keeps its trained head (scored by the relevant class's log-odds,
    tests/unit/test_cross_encoder_folders.py); more labels are refused."""
    save_tiny_bert(tmp_path / "two", seed=None, max_positions=512, num_labels=2)
    ce = CrossEncoder(tmp_path / "two", device="cpu", precision="fp32")
    assert ce.trained and ce.positive == 1
    save_tiny_bert(tmp_path / "three", seed=None, max_positions=512, num_labels=3)
    with pytest.raises(CrossEncoderError, match="3-label"):
        CrossEncoder(tmp_path / "three")


def test_default_checkpoint_lookup(tiny_ce_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("LOGRERANK_CHECKPOINTS", raising=False)
    package = Path(ce_mod.__file__).resolve().parents[1]  # logrerank/
    assert default_checkpoint_dir().resolve() == package / "checkpoints" / "cross-encoder"
    monkeypatch.setenv("LOGRERANK_CHECKPOINTS", str(tmp_path))
    assert default_checkpoint_dir() == tmp_path / "cross-encoder"
    shutil.copytree(tiny_ce_dir, tmp_path / "cross-encoder")
    model = CrossEncoder(None, device="cpu", precision="fp32")
    assert model.trained
    assert model.source == f"checkpoint {tmp_path / 'cross-encoder'}"


def test_constructor_validation(tiny_ce_dir):
    with pytest.raises(ValueError):
        CrossEncoder(tiny_ce_dir, batch_size=0)
    with pytest.raises(ValueError):
        CrossEncoder(tiny_ce_dir, max_length=2)
    with pytest.raises(ValueError):
        CrossEncoder(tiny_ce_dir, precision="fp8")


def test_pair_text_keeps_title_and_cuts_body():
    p = Passage("x" * 1500, title="A title")
    assert pair_text(p) == "A title. " + "x" * 1000
    assert pair_text(Passage("abc")) == "abc"
    assert pair_text(Passage("abcdef"), max_chars=3) == "abc"
    assert pair_text(Passage("abcdef"), max_chars=None) == "abcdef"


def test_sigmoid_stable():
    assert sigmoid(0.0) == 0.5
    assert sigmoid(1000.0) == 1.0
    assert sigmoid(-1000.0) == 0.0
    assert sigmoid(2.0) == pytest.approx(1 / (1 + math.exp(-2.0)))


# --------------------------------------------------------------------------------------
# CrossEncoderStage: blending arithmetic.


def test_stage_is_a_ranker(tiny_ce):
    stage = CrossEncoderStage(OverlapRanker(), tiny_ce)
    assert isinstance(stage, Ranker)
    assert (stage.name, stage.level) == ("ce-stage", "passage")


def test_blend_arithmetic_by_hand(fresh_ce, monkeypatch):
    passages = [Passage(f"passage {i}", title=f"T{i}") for i in range(5)]
    first = FixedRanker([0.9, 0.8, 0.5, 0.3, 0.1])
    calls: list = []
    # The top 3 of the first pass are p0, p1, p2 (in that order); their CE logits:
    monkeypatch.setattr(fresh_ce, "predict", fake_predict([1.0, 3.0, 2.0], calls))
    stage = CrossEncoderStage(first, fresh_ce, top_n=3, blend_weight=0.5)
    r = stage.rank("q", passages)
    # ce    = minmax([1, 3, 2])       = [0.0, 1.0, 0.5]
    # fp    = minmax([0.9, 0.8, 0.5]) = [1.0, 0.75, 0.0]
    # final = 0.5 * ce + 0.5 * fp     = [0.5, 0.875, 0.25]   -> order p1, p0, p2
    # beyond: floor = min(final) = 0.25; first-pass scores scaled over the whole list
    #         minmax([0.9, 0.8, 0.5, 0.3, 0.1]) = [1, .875, .5, .25, 0]
    #         p3 -> 0.25 * 0.25 = 0.0625, p4 -> 0.25 * 0 = 0.0
    assert calls == [[("q", "T0. passage 0"), ("q", "T1. passage 1"), ("q", "T2. passage 2")]]
    assert r.passage_order() == [1, 0, 2, 3, 4]
    assert [p.score for p in r.passages_ranked] == pytest.approx([0.875, 0.5, 0.25, 0.0625, 0.0])
    assert [p.rank for p in r.passages_ranked] == [1, 2, 3, 4, 5]
    by_idx = {p.passage_idx: p for p in r.passages_ranked}
    assert by_idx[1].extra == pytest.approx(
        {
            "cross_encoder_score": 1.0,
            "cross_encoder_logit": 3.0,
            "pre_rerank_score": 0.8,
            "final_score": 0.875,
        }
    )
    assert by_idx[0].extra == pytest.approx(
        {
            "cross_encoder_score": 0.0,
            "cross_encoder_logit": 1.0,
            "pre_rerank_score": 0.9,
            "final_score": 0.5,
        }
    )
    assert by_idx[2].extra["cross_encoder_score"] == pytest.approx(0.5)
    assert by_idx[2].extra["final_score"] == pytest.approx(0.25)
    # Beyond top_n: first-pass score kept, no cross-encoder fields.
    assert by_idx[3].extra == pytest.approx({"pre_rerank_score": 0.3})
    assert r.ranker == "ce-stage"
    assert r.info["top_n"] == 3
    assert r.info["blend_weight"] == 0.5
    assert r.info["trained"] is True
    assert r.info["model_source"] == fresh_ce.source
    assert r.info["degraded"] is False
    assert r.info["reranked"] == 3
    assert r.info["first_pass"] == "fixed"
    assert not r.warnings
    assert {"first_pass", "cross_encoder"} <= set(r.timings)


def test_blend_weight_extremes(fresh_ce, monkeypatch):
    passages = [Passage(f"p{i}") for i in range(4)]
    first = FixedRanker([0.4, 0.3, 0.2, 0.1])
    monkeypatch.setattr(fresh_ce, "predict", fake_predict([0.0, 1.0, 2.0, 3.0]))
    # w = 1: the cross-encoder alone decides (reverse of the first pass).
    r = CrossEncoderStage(first, fresh_ce, top_n=4, blend_weight=1.0).rank("q", passages)
    assert r.passage_order() == [3, 2, 1, 0]
    # ce = [0, 1/3, 2/3, 1] exactly the final scores.
    assert [p.score for p in r.passages_ranked] == pytest.approx([1.0, 2 / 3, 1 / 3, 0.0])
    # w = 0: the first pass alone decides.
    r = CrossEncoderStage(first, fresh_ce, top_n=4, blend_weight=0.0).rank("q", passages)
    assert r.passage_order() == [0, 1, 2, 3]


def test_final_ties_keep_first_pass_order(fresh_ce, monkeypatch):
    passages = [Passage(f"p{i}") for i in range(3)]
    # ce = minmax([1, 0, 0.5]) = [1, 0, 0.5]; fp = minmax([3, 2, 1]) = [1, 0.5, 0]
    # final = 0.5 * ce + 0.5 * fp = [1.0, 0.25, 0.25]: p1 and p2 tie -> first-pass order.
    monkeypatch.setattr(fresh_ce, "predict", fake_predict([1.0, 0.0, 0.5]))
    r = CrossEncoderStage(FixedRanker([3.0, 2.0, 1.0]), fresh_ce, top_n=3).rank("q", passages)
    assert r.passage_order() == [0, 1, 2]
    assert [p.score for p in r.passages_ranked] == pytest.approx([1.0, 0.25, 0.25])


def test_top_n_cut_and_order_beyond(fresh_ce, monkeypatch):
    first = OverlapRanker().rank(QUERY, PASSAGES)
    calls: list = []
    # Reverse the top 3 of the first pass by the cross-encoder, with w = 0.9.
    monkeypatch.setattr(fresh_ce, "predict", fake_predict([0.0, 1.0, 2.0], calls))
    r = CrossEncoderStage(OverlapRanker(), fresh_ce, top_n=3, blend_weight=0.9).rank(
        QUERY, PASSAGES
    )
    fp_order = first.passage_order()
    assert len(calls) == 1 and len(calls[0]) == 3
    assert [t for _, t in calls[0]] == [pair_text(PASSAGES[i]) for i in fp_order[:3]]
    assert sorted(r.passage_order()[:3]) == sorted(fp_order[:3])
    assert r.passage_order()[3:] == fp_order[3:]
    assert sorted(r.passage_order()) == list(range(len(PASSAGES)))
    scores = [p.score for p in r.passages_ranked]
    assert all(a >= b for a, b in zip(scores, scores[1:]))
    for p in r.passages_ranked[:3]:
        assert {"cross_encoder_score", "cross_encoder_logit", "pre_rerank_score"} <= set(p.extra)
        assert p.extra["overlap"] == p.extra["pre_rerank_score"]  # first-pass extras kept
    for p in r.passages_ranked[3:]:
        assert "cross_encoder_score" not in p.extra
        assert "pre_rerank_score" in p.extra


def test_top_n_larger_than_list(tiny_ce):
    r = CrossEncoderStage(OverlapRanker(), tiny_ce, top_n=100).rank(QUERY, PASSAGES[:3])
    assert sorted(r.passage_order()) == [0, 1, 2]
    assert all("cross_encoder_score" in p.extra for p in r.passages_ranked)
    assert r.info["reranked"] == 3


def test_single_passage_is_not_zero(tiny_ce):
    r = CrossEncoderStage(OverlapRanker(), tiny_ce).rank(QUERY, [PASSAGES[0]])
    (p,) = r.passages_ranked
    # minmax of one value is 1.0 for both parts, so final = 0.5 * 1 + 0.5 * 1 = 1.
    assert p.score == 1.0
    assert p.extra["cross_encoder_score"] == 1.0
    assert p.extra["final_score"] == 1.0


def test_all_tied_is_not_zero(fresh_ce, monkeypatch):
    passages = [Passage(f"p{i}") for i in range(4)]
    monkeypatch.setattr(fresh_ce, "predict", fake_predict([0.3, 0.3, 0.3, 0.3]))
    r = CrossEncoderStage(FixedRanker([0.5] * 4), fresh_ce).rank("q", passages)
    # Tied CE and tied first pass both normalise to 1.0 -> final 1.0, input order kept.
    assert r.passage_order() == [0, 1, 2, 3]
    assert [p.score for p in r.passages_ranked] == [1.0] * 4
    assert all(p.extra["cross_encoder_score"] == 1.0 for p in r.passages_ranked)


def test_real_tiny_model_end_to_end(tiny_ce):
    r = CrossEncoderStage(OverlapRanker(), tiny_ce, top_n=5).rank(QUERY, PASSAGES)
    assert sorted(r.passage_order()) == list(range(len(PASSAGES)))
    scores = [p.score for p in r.passages_ranked]
    assert all(a >= b for a, b in zip(scores, scores[1:]))
    assert all(0.0 <= s <= 1.0 for s in scores)
    for p in r.passages_ranked[:5]:
        assert p.score == p.extra["final_score"]
    json.dumps(r.to_dict())
    assert not r.sentences  # the stage is passage level


def test_stage_with_raw_inputs_and_input_errors(tiny_ce):
    r = CrossEncoderStage(OverlapRanker(), tiny_ce).rank(
        QUERY, ["aspirin heart", {"title": "T", "text": "cats"}]
    )
    assert r.passages[1].title == "T"
    with pytest.raises(InputError):
        CrossEncoderStage(OverlapRanker(), tiny_ce).rank(QUERY, [])


def test_stage_parameter_validation(tiny_ce):
    with pytest.raises(ValueError):
        CrossEncoderStage(OverlapRanker(), tiny_ce, top_n=-1)
    with pytest.raises(ValueError):
        CrossEncoderStage(OverlapRanker(), tiny_ce, blend_weight=1.5)


# --------------------------------------------------------------------------------------
# CrossEncoderStage: degradation.


def _assert_passthrough(r: Ranking, reason: str) -> None:
    first = OverlapRanker().rank(QUERY, PASSAGES)
    assert r.passage_order() == first.passage_order()
    assert [p.score for p in r.passages_ranked] == [p.score for p in first.passages_ranked]
    assert r.info["degraded"] is True
    assert any(
        w.startswith("cross-encoder unavailable") and reason in w and "first-pass order" in w
        for w in r.warnings
    ), r.warnings
    assert all("cross_encoder_score" not in p.extra for p in r.passages_ranked)


def test_broken_path_passes_first_pass_through(tmp_path, tiny_ce_dir):
    broken = tmp_path / "ce"
    broken.mkdir()  # exists, but holds no model
    stage = CrossEncoderStage(OverlapRanker(), broken)
    assert stage._model is None  # lazy: nothing loaded at construction
    _assert_passthrough(stage.rank(QUERY, PASSAGES), "no config.json")
    assert stage.rank(QUERY, PASSAGES).info["model_source"] == str(broken)
    # The failure is remembered: a model appearing later is not picked up by this stage.
    shutil.copytree(tiny_ce_dir, broken, dirs_exist_ok=True)
    _assert_passthrough(stage.rank(QUERY, PASSAGES), "no config.json")
    # A fresh stage does load it.
    assert (
        CrossEncoderStage(OverlapRanker(), broken).rank(QUERY, PASSAGES).info["degraded"] is False
    )


def test_missing_path_passes_first_pass_through(tmp_path):
    stage = CrossEncoderStage(OverlapRanker(), str(tmp_path / "nope"))
    _assert_passthrough(stage.rank(QUERY, PASSAGES), "does not exist")


def test_scoring_error_passes_first_pass_through(fresh_ce, monkeypatch):
    def boom(pairs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(fresh_ce, "predict", boom)
    stage = CrossEncoderStage(OverlapRanker(), fresh_ce)
    _assert_passthrough(stage.rank(QUERY, PASSAGES), "out of memory")


def test_non_finite_scores_pass_first_pass_through(fresh_ce, monkeypatch):
    monkeypatch.setattr(fresh_ce, "predict", lambda pairs: [float("nan")] * len(pairs))
    stage = CrossEncoderStage(OverlapRanker(), fresh_ce)
    _assert_passthrough(stage.rank(QUERY, PASSAGES), "non-finite")


def test_disabled_stage_passes_through_without_loading(tmp_path):
    stage = CrossEncoderStage(OverlapRanker(), tmp_path / "nope", enabled=False)
    r = stage.rank(QUERY, PASSAGES)
    assert r.passage_order() == OverlapRanker().rank(QUERY, PASSAGES).passage_order()
    assert r.info["degraded"] is False and r.info["enabled"] is False
    assert not r.warnings
    assert stage._model is None and stage._load_error is None


def test_untrained_model_is_flagged(tmp_path, save_tiny_bert):
    save_tiny_bert(tmp_path, seed=None, max_positions=512)
    r = CrossEncoderStage(OverlapRanker(), tmp_path).rank(QUERY, PASSAGES)
    assert r.info["trained"] is False
    assert r.info["degraded"] is False
    assert any("UNTRAINED" in w for w in r.warnings)


# --------------------------------------------------------------------------------------
# CrossEncoderRanker.


def test_passage_level_ranker(fresh_ce, monkeypatch):
    calls: list = []
    logits = [0.5, -1.0, 2.0]
    monkeypatch.setattr(fresh_ce, "predict", fake_predict(logits, calls))
    ranker = CrossEncoderRanker(fresh_ce, level="passage", max_chars=10)
    assert isinstance(ranker, Ranker) and ranker.name == "cross-encoder"
    r = ranker.rank(QUERY, PASSAGES[:3])
    assert [t for _, t in calls[0]] == [pair_text(p, 10) for p in PASSAGES[:3]]
    assert r.passage_order() == [2, 0, 1]
    for p in r.passages_ranked:
        x = logits[p.passage_idx]
        assert p.extra["cross_encoder_logit"] == x
        assert p.score == pytest.approx(1 / (1 + math.exp(-x)))
    assert r.info["level"] == "passage" and r.info["trained"] is True


def test_sentence_level_ranker_covers_every_sentence_once(tiny_ce):
    r = CrossEncoderRanker(tiny_ce, level="sentence").rank(QUERY, PASSAGES)
    expected = [
        (i, j, s.text)
        for i, p in enumerate(PASSAGES)
        for j, s in enumerate(split_sentences(p.text))
    ]
    got = sorted((s.passage_idx, s.sent_idx, s.text) for s in r.sentences)
    assert got == sorted(expected)
    assert sorted(s.node for s in r.sentences) == list(range(len(expected)))
    assert [s.rank for s in r.sentences] == list(range(1, len(expected) + 1))
    for s in r.sentences:
        assert PASSAGES[s.passage_idx].text[s.start : s.end] == s.text
        assert s.score == pytest.approx(sigmoid(s.extra["cross_encoder_logit"]))
        assert 0.0 <= s.score <= 1.0
    # Passage order follows each passage's best sentence.
    best = r.sentence_by_node()
    for p in r.passages_ranked:
        mine = [s.score for s in r.sentences if s.passage_idx == p.passage_idx]
        assert p.score == max(mine) == best[p.best_node].score
        assert p.extra["cross_encoder_logit"] == best[p.best_node].extra["cross_encoder_logit"]
    # Sentence scores equal scoring each (query, sentence) pair directly.
    direct = tiny_ce.predict([(QUERY, s.text) for s in r.sentences])
    assert [s.extra["cross_encoder_logit"] for s in r.sentences] == pytest.approx(direct, abs=1e-5)


def test_sentence_level_whitespace_passage_ranks_last(tiny_ce):
    r = CrossEncoderRanker(tiny_ce, level="sentence").rank(QUERY, ["   ", "Aspirin works."])
    assert r.passage_order() == [1, 0]
    assert any("no text" in w for w in r.warnings)
    with pytest.raises(InputError):
        CrossEncoderRanker(tiny_ce, level="sentence").rank(QUERY, ["  ", "\n"])


def test_ranker_input_and_level_validation(tiny_ce, tmp_path):
    with pytest.raises(ValueError):
        CrossEncoderRanker(tiny_ce, level="token")
    with pytest.raises(InputError):
        CrossEncoderRanker(tiny_ce).rank("  ", PASSAGES)
    with pytest.raises(CrossEncoderError):  # no fallback order: load failures raise
        CrossEncoderRanker(tmp_path / "nope").rank(QUERY, PASSAGES)


def test_eval_memo_scores_each_pair_once_and_changes_nothing(tiny_ce_dir) -> None:
    """``Models(memo_cross_encoder=True)`` (used by ``logrerank eval``): the passage ranker, the
    stage and the evidence graph share scores, and every ranking equals the memo-free one."""
    from logrerank.rankers import Models, build_rankers

    names = ["cross-encoder", "ce-stage", "evidence-graph-ce", "cross-encoder-sent"]
    query = "does aspirin lower heart attack risk"
    passages = [
        "Aspirin reduces the risk of heart attack. It thins the blood.",
        "Statins lower cholesterol.",
        "The weather in Paris is mild in spring. Tourists come.",
    ]
    plain = build_rankers(names, Models(cross_encoder_path=str(tiny_ce_dir), device="cpu"))
    memo_models = Models(cross_encoder_path=str(tiny_ce_dir), device="cpu", memo_cross_encoder=True)
    memo = build_rankers(names, memo_models)
    scored: list[int] = []
    model = memo_models.cross_encoder
    real = type(model).__mro__[1].predict

    def counting(self, pairs):
        if self is model:
            scored.append(len(pairs))
        return real(self, pairs)

    type(model).__mro__[1].predict, restore = counting, real
    try:
        for n in names:
            a, b = plain[n].rank(query, passages), memo[n].rank(query, passages)
            assert a.passage_order() == b.passage_order(), n
            assert [p.score for p in a.passages_ranked] == pytest.approx(
                [p.score for p in b.passages_ranked], abs=1e-6
            ), n
    finally:
        type(model).__mro__[1].predict = restore
    # 3 passage pairs once (the stage and the evidence graph reuse them), then the 5 sentence
    # pairs less "Statins lower cholesterol.", which is also a (title-less) passage pair.
    assert scored == [3, 4], scored


def test_predict_trims_the_heap_at_the_end_and_when_over_budget(tiny_ce_dir, monkeypatch) -> None:
    from logrerank.local import memory

    calls = []
    monkeypatch.setattr(ce_mod, "trim_heap", lambda: calls.append("end") or True)
    monkeypatch.setattr(memory, "trim_heap", lambda: calls.append("batch") or True)
    ce = CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32", batch_size=2)
    pairs = [("q", t) for t in "abcde"]
    assert len(ce.predict(pairs)) == 5
    assert calls == ["end"]
    calls.clear()
    ce.trim_budget_mb = -1.0  # every batch is over the budget
    scores = ce.predict(pairs)
    assert all(math.isfinite(x) for x in scores)
    assert calls == ["batch", "batch", "batch", "end"]  # ceil(5 / 2) batches


def test_blend_is_the_stage_arithmetic_and_training_uses_it():
    import inspect

    from logrerank.baselines.cross_encoder_stage import blend
    from logrerank.training.cross_encoder import ce_eval as cross_encoder_eval

    ce, final, order = blend([1.0, 3.0, 2.0], [0.9, 0.5, 0.1], 0.5)
    assert ce == pytest.approx([0.0, 1.0, 0.5])
    assert final == pytest.approx([0.5, 0.75, 0.25])
    assert order == [1, 0, 2]
    _, final_tie, order_tie = blend([2.0, 2.0], [1.0, 1.0], 0.3)  # all tied: minmax gives 1.0
    assert final_tie == pytest.approx([1.0, 1.0]) and order_tie == [0, 1]
    # one implementation for stage and training (imported where it is used)
    src = inspect.getsource(cross_encoder_eval.evaluate_held_out)
    assert "from ...baselines.cross_encoder_stage import blend" in src
    assert "def blend" not in inspect.getsource(cross_encoder_eval)


def test_passages_without_text_rank_last_with_a_warning(tiny_ce_dir) -> None:
    """At passage and full level a passage with neither title nor text is not scored as if it
    were evidence: it ranks last and the ranking says so; all-empty input is refused."""
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker, sink
    from logrerank.types import InputError

    assert sink([3.0, 9.0, 1.0], [1]) == [3.0, 0.0, 1.0] and sink([2.0], []) == [2.0]
    model = CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32")
    passages = [{"text": ""}, {"text": "Insulin lowers glucose."}, {"text": "Ash clouds."}]
    for level in ("passage", "full"):
        r = CrossEncoderRanker(model, level=level).rank("insulin", passages)
        assert r.passage_order()[-1] == 0, level
        assert any("passage(s) [1] have no text" in w for w in r.warnings), r.warnings
        with pytest.raises(InputError, match="every passage is empty"):
            CrossEncoderRanker(model, level=level).rank("insulin", [{"text": " "}])
