"""Cross-encoder training (logrerank.training.cross_encoder.ce_train*): config, loss, tiny training, resume,
delta checkpoint (logrerank.models.delta_checkpoint). The shipped checkpoint's tests are in
``tests/integration/test_train_ce.py``."""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path

import pytest
import torch

from logrerank.data.schema import Doc, Example
from logrerank.models.delta_checkpoint import (
    DELTA_META,
    DELTA_WEIGHTS,
    DeltaCheckpointError,
    load_base_classifier,
    load_delta_checkpoint,
    save_delta_checkpoint,
)
from logrerank.models.pair_scoring import score_pairs
from logrerank.training.cross_encoder.ce_config import CrossEncoderTrainConfig
from logrerank.training.cross_encoder.ce_data import group_loss, query_group
from logrerank.training.cross_encoder.ce_train import main, mark_trainable, train
from logrerank.training.cross_encoder.teacher import (
    BiEncoderTeacher,
    distill_loss,
    teacher_negatives,
)
from logrerank.training.queries import held_out

REPO = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- config
def test_config_round_trip(tmp_path):
    cfg = CrossEncoderTrainConfig(negatives=3, negative_depth=9, max_queries={"scifact": 5})
    cfg.save(tmp_path / "c.json")
    again = CrossEncoderTrainConfig.load(tmp_path / "c.json")
    assert again == cfg
    assert again.fingerprint() == cfg.fingerprint()


def test_config_rejects_unknown_and_bad_fields(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"negatives": 3, "nagetives": 4}))
    with pytest.raises(ValueError, match="nagetives"):
        CrossEncoderTrainConfig.load(tmp_path / "c.json")
    with pytest.raises(ValueError, match="negative_depth"):
        CrossEncoderTrainConfig.from_dict({"negatives": 8, "negative_depth": 4})


def test_shipped_config_loads():
    cfg = CrossEncoderTrainConfig.load(REPO / "configs" / "crossencoder.json")
    assert cfg.sources == ["scifact", "citint"]
    assert cfg.dev_fraction > 0 and cfg.threads >= 1
    assert cfg.prior_scale > 0 and cfg.out == "runs/cross-encoder"
    plain = CrossEncoderTrainConfig.load(REPO / "configs" / "crossencoder-plain.json")
    assert plain.prior_scale == 0 and plain.out.startswith("runs/")


def test_fingerprint_ignores_run_only_fields():
    a = CrossEncoderTrainConfig()
    assert a.fingerprint() == CrossEncoderTrainConfig(max_minutes=3, eval_queries=2).fingerprint()
    assert a.fingerprint() != CrossEncoderTrainConfig(lr=1e-4).fingerprint()


def test_held_out_is_deterministic_and_about_the_fraction():
    keys = [f"scifact:{i}" for i in range(2000)]
    picked = [k for k in keys if held_out(k, 0.1)]
    assert picked == [k for k in keys if held_out(k, 0.1)]
    assert 150 < len(picked) < 250
    assert not any(held_out(k, 0.0) for k in keys)


# ----------------------------------------------------------------------------- data + loss
def _doc(i: int, text: str | None = None) -> Doc:
    return Doc(f"d{i}", f"Title {i}", [text or f"passage number {i} about topic {i % 3}."])


def test_query_group_golds_first_and_no_duplicate_gold_text():
    cands = [_doc(i) for i in range(10)]
    cands[4] = Doc("dup", cands[2].title, list(cands[2].sentences))  # same text as gold d2
    ex = Example("q", "topic", candidates=cands, gold_doc_ids=["d2", "d7"])
    texts, labels = query_group(ex, negatives=3, depth=5, max_chars=1000, rng=random.Random(0))
    assert labels == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert texts[0].startswith("Title 2.") and texts[1].startswith("Title 7.")
    allowed = {"Title 0.", "Title 1.", "Title 3.", "Title 5.", "Title 6."}  # top 5 non-gold
    assert {t.split(" passage")[0] for t in texts[2:]} <= allowed
    assert sum(t == texts[0] for t in texts) == 1  # the duplicate is never a negative


def test_query_group_takes_the_hard_picks_first():
    cands = [_doc(i) for i in range(10)]
    ex = Example("q", "topic", candidates=cands, gold_doc_ids=["d2"])
    seen = {}

    def pick(texts, k):
        seen["texts"], seen["k"] = list(texts), k
        return [4, 0]  # the 5th and the 1st of the depth-6 non-gold candidates

    texts, labels = query_group(ex, 3, 6, 1000, random.Random(0), pick_hard=pick, hard=2)
    assert seen["k"] == 2 and len(seen["texts"]) == 6
    assert texts[1:3] == [seen["texts"][4], seen["texts"][0]]
    assert texts[3] in seen["texts"] and texts[3] not in texts[1:3]
    assert labels == [1.0, 0.0, 0.0, 0.0]


def test_distill_loss_is_the_listwise_kl():
    s = torch.tensor([1.0, 0.0, -1.0])
    assert float(distill_loss(s, s)) == pytest.approx(0.0, abs=1e-6)
    t = torch.tensor([0.0, 2.0, 0.0])
    p = torch.softmax(t, 0)
    expected = float((p * (p.log() - torch.log_softmax(s, 0))).sum())
    assert float(distill_loss(s, t)) == pytest.approx(expected, rel=1e-5)
    # temperature: T^2 * KL of the softened distributions
    p2 = torch.softmax(t / 2, 0)
    kl2 = float((p2 * (p2.log() - torch.log_softmax(s / 2, 0))).sum())
    assert float(distill_loss(s, t, 2.0)) == pytest.approx(4 * kl2, rel=1e-5)


def test_teacher_scores_and_hard_negatives(tiny_base):
    teacher = BiEncoderTeacher(scale=10.0, model_name_or_path=str(tiny_base))
    texts = ["insulin and insulin", "graphene sheets", "insulin"]
    cos = teacher.cosines("insulin", texts)
    assert cos.shape == (3,) and float(cos[2]) == pytest.approx(1.0, abs=1e-5)
    assert torch.allclose(teacher.logits("insulin", texts), 10 * cos)
    assert teacher_negatives(teacher, "insulin", texts, 1) == [2]
    assert teacher_negatives(teacher, "insulin", texts, 0) == []


def test_bi_encoder_padding_to_a_multiple_changes_no_embedding(tiny_base):
    from logrerank.models.bi_encoder import BiEncoder

    texts = ["insulin", "graphene sheets " * 9, "a", "insulin resistance in muscle " * 20]
    exact = BiEncoder(str(tiny_base), device="cpu", precision="fp32", pad_multiple=0)
    padded = BiEncoder(str(tiny_base), device="cpu", precision="fp32", batch_size=2)
    assert padded.pad_multiple == 32
    assert torch.allclose(padded.embed(texts), exact.embed(texts), atol=1e-5)


def test_group_loss_listwise_uniform_over_golds():
    logits = torch.tensor([2.0, 2.0, -1.0, 0.0])
    labels = torch.tensor([1.0, 1.0, 0.0, 0.0])
    expected = -torch.log_softmax(logits, 0)[:2].mean()
    assert torch.allclose(group_loss(logits, labels, 0.0), expected)
    with_bce = group_loss(logits, labels, 0.5)
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
    assert torch.allclose(with_bce, expected + 0.5 * bce)


# ----------------------------------------------------------------------------- tiny model
# ``tiny_base`` (conftest.py): a seeded random 2-layer BERT encoder (no head) + the tokenizer.
def _toy_data() -> tuple[list[Example], list[Example]]:
    """Queries whose gold passage repeats the query's key word; the rest do not."""
    words = ["insulin", "malaria", "graphene", "neutrino", "protein", "vaccine", "enzyme"]
    exs = []
    for i, w in enumerate(words):
        cands = [Doc(f"{w}-g", f"On {w}", [f"This study of {w} shows a {w} effect."])]
        for j, o in enumerate(x for x in words if x != w):
            cands.append(Doc(f"{w}-n{j}", f"On {o}", [f"This study of {o} shows an effect."]))
        rng = random.Random(i)
        rng.shuffle(cands)
        exs.append(
            Example(str(i), f"what about {w}?", cands, [f"{w}-g"], meta={"source": "scifact"})
        )
    return exs[:5], exs[5:]


def _tiny_cfg(base: Path, tmp: Path, **kw) -> CrossEncoderTrainConfig:
    args = {
        "sources": ["scifact"],  # a known source name (checked); the data is the toy set
        "base": str(base),
        "trainable_layers": 1,
        "negatives": 3,
        "negative_depth": 6,
        "max_length": 64,
        "lr": 1e-3,
        "lr_head": 1e-2,
        "grad_accum": 2,
        "epochs": 2,
        "bf16": False,
        "threads": 0,
        "eval_queries": 0,
        "save_every": 1,
        "log_every": 1,
        "out": str(tmp / "ckpt"),
        "state_dir": str(tmp / "state"),
    }
    args.update(kw)
    return CrossEncoderTrainConfig(**args)


def _trainable(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def test_tiny_training_resume_and_delta(tiny_base, tmp_path):
    data = _toy_data()
    log = io.StringIO()
    cfg = _tiny_cfg(tiny_base, tmp_path / "a")
    full = train(cfg, log=log, data=data, max_steps=3, evaluate=False)
    assert full["step"] == 3 and full["pairs_seen"] > 0
    assert "training pairs seen" in log.getvalue()
    losses = [
        float(line.split("loss ")[1].split()[0])
        for line in log.getvalue().splitlines()
        if line.startswith("step ")
    ]
    assert losses and all(torch.isfinite(torch.tensor(losses)))

    # Interrupted run: 2 steps, then resume to 3 from the saved state.
    cfg_b = _tiny_cfg(tiny_base, tmp_path / "b")
    train(cfg_b, log=io.StringIO(), data=data, max_steps=2, evaluate=False)
    state = json.loads((tmp_path / "b" / "state" / "state.json").read_text())
    assert state["step"] == 2
    log_b = io.StringIO()
    resumed = train(cfg_b, log=log_b, data=data, max_steps=3, evaluate=False)
    assert "resumed at step 2" in log_b.getvalue()
    assert resumed["step"] == 3 and resumed["pairs_seen"] == full["pairs_seen"]
    a = load_delta_checkpoint(tmp_path / "a" / "ckpt")
    b = load_delta_checkpoint(tmp_path / "b" / "ckpt")
    for (n, pa), pb in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.allclose(pa, pb, atol=1e-6), n

    # A changed config refuses to resume from another run's state.
    with pytest.raises(RuntimeError, match="different run"):
        train(_tiny_cfg(tiny_base, tmp_path / "b", lr=5e-4), data=data, evaluate=False)


def test_tiny_training_lowers_loss(tiny_base, tmp_path):
    data = _toy_data()
    log = io.StringIO()
    cfg = _tiny_cfg(
        tiny_base, tmp_path, epochs=12, trainable_layers=2, lr=3e-3, lr_head=3e-2, eval_queries=0
    )
    summary = train(cfg, log=log, data=data)
    losses = [
        float(line.split("loss ")[1].split()[0])
        for line in log.getvalue().splitlines()
        if line.startswith("step ")
    ]
    assert summary["step"] == summary["total_steps"] == 30
    assert sum(losses[-5:]) < sum(losses[:5])
    held = summary["held_out"]
    assert held["queries"] == {"scifact": 2}
    # the zero-shot teacher (the base read as a bi-encoder) is scored on the same texts
    assert set(held["all"]) == {"first-pass", "cross-encoder", "ce-stage", "bi-encoder-passage"}


def test_distilled_training_records_a_curve(tiny_base, tmp_path):
    data = _toy_data()
    log = io.StringIO()
    cfg = _tiny_cfg(
        tiny_base, tmp_path, distill_weight=1.0, teacher_negatives=2, eval_every=2,
        eval_queries=0, epochs=1,
    )  # fmt: skip
    summary = train(cfg, log=log, data=data, evaluate=False)
    assert "teacher: the base read as a bi-encoder" in log.getvalue()
    steps = [p["step"] for p in summary["curve"]]
    assert steps == [2, 3]  # every eval_every steps and at the end
    assert all("scifact/cross-encoder" in p and "scifact/ce-stage" in p for p in summary["curve"])
    state = json.loads((tmp_path / "state" / "state.json").read_text())
    assert [p["step"] for p in state["curve"]] == steps  # kept for a resumed run


def test_delta_round_trip_identical_logits(tiny_base, tmp_path, tokenizer):
    model, _ = load_base_classifier(str(tiny_base), seed=3)
    names = mark_trainable(model, 1)
    assert any(".layer.1." in n for n in names) and not any(".layer.0." in n for n in names)
    assert not any("embeddings" in n for n in names) and "classifier.weight" in names
    with torch.no_grad():  # make the trained part differ from the base
        for p in model.parameters():
            if p.requires_grad:
                p.add_(0.05 * torch.randn_like(p))
    model.eval()
    out = save_delta_checkpoint(model, tokenizer, tmp_path / "delta", str(tiny_base), names)
    meta = json.loads((out / DELTA_META).read_text())
    assert meta["tensors"] == sorted(names) and meta["base_sha256"]
    assert (out / "config.json").is_file() and (out / "tokenizer.json").is_file()
    again = load_delta_checkpoint(out)
    texts = ["insulin lowers glucose.", "graphene conducts.", "a third passage"]
    x = score_pairs(model, tokenizer, "what about insulin?", texts, 64, bf16=False)
    y = score_pairs(again, tokenizer, "what about insulin?", texts, 64, bf16=False)
    assert x == y


def test_delta_rejects_other_base(tiny_base, tmp_path, tokenizer):
    model, _ = load_base_classifier(str(tiny_base), seed=3)
    names = mark_trainable(model, 1)
    out = save_delta_checkpoint(model, tokenizer, tmp_path / "delta", str(tiny_base), names)
    meta = json.loads((out / DELTA_META).read_text())
    meta["base_sha256"] = "0" * 64
    (out / DELTA_META).write_text(json.dumps(meta))
    with pytest.raises(DeltaCheckpointError, match="differs"):
        load_delta_checkpoint(out)
    (out / DELTA_WEIGHTS).unlink()
    with pytest.raises(DeltaCheckpointError):
        load_delta_checkpoint(out)


def test_main_runs_from_config(tiny_base, tmp_path, monkeypatch, capsys):
    import logrerank.training.cross_encoder.ce_train as tce

    data = _toy_data()
    monkeypatch.setattr(tce, "load_train_queries", lambda cfg, **kw: data)
    cfg = _tiny_cfg(tiny_base, tmp_path, epochs=1, eval_queries=1)
    cfg.save(tmp_path / "c.json")
    assert main(["--config", str(tmp_path / "c.json"), "--summary", str(tmp_path / "s.json")]) == 0
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["step"] == 3 and (tmp_path / "ckpt" / DELTA_WEIGHTS).is_file()


# ----------------------------------------------------------------------------- prior-anchored
def test_prior_anchored_starts_as_its_prior_and_reloads_with_it(tiny_base, tmp_path):
    """Zero steps of a prior-anchored run = the bi-encoder: the saved model's logits are
    ``0 + scale * cos`` (zero head), and CrossEncoder adds the prior when it loads the folder."""
    from logrerank.models.ce_prior import read_prior_config
    from logrerank.models.cross_encoder import CrossEncoder

    data = _toy_data()
    cfg = _tiny_cfg(tiny_base, tmp_path, prior_scale=10.0, epochs=1)
    log = io.StringIO()
    train(cfg, log=log, data=data, max_steps=0, evaluate=False)
    assert "prior-anchored" in log.getvalue()
    assert read_prior_config(cfg.out).scale == 10.0
    ce = CrossEncoder(cfg.out, device="cpu", precision="fp32")
    assert ce.prior is not None
    teacher = BiEncoderTeacher(10.0, "cpu", str(tiny_base))
    q, texts = "what about insulin?", ["On insulin. insulin effect.", "On malaria. no effect."]
    expect = teacher.logits(q, texts).tolist()
    got = ce.predict([(q, t) for t in texts])
    assert got == pytest.approx(expect, abs=1e-4)
    # after training steps the head is no longer zero: the logit moves off the prior
    cfg2 = _tiny_cfg(tiny_base, tmp_path / "t", prior_scale=10.0, epochs=2, lr_head=5e-2)
    train(cfg2, log=io.StringIO(), data=data, evaluate=False)
    moved = CrossEncoder(cfg2.out, device="cpu", precision="fp32").predict([(q, t) for t in texts])
    assert moved != pytest.approx(expect, abs=1e-4)


def test_a_plain_checkpoint_has_no_prior(tiny_base, tmp_path):
    from logrerank.models.cross_encoder import CrossEncoder

    cfg = _tiny_cfg(tiny_base, tmp_path)
    train(cfg, log=io.StringIO(), data=_toy_data(), max_steps=1, evaluate=False)
    assert CrossEncoder(cfg.out, device="cpu", precision="fp32").prior is None


def test_split_cv_leaves_one_fold_out_and_keeps_shared_golds_together():
    from logrerank.training.cross_encoder.ce_data import split_cv

    def ex(src, i, gold):
        return Example(f"q{i}", "q", [_doc(i)], [gold], meta={"source": src})

    multi = [ex("hotpotqa", i, f"g{i}") for i in range(30)]
    multi += [ex("hotpotqa", 100, "g0")]  # shares q0's gold: same fold as q0
    sf = [ex("scifact", i, f"s{i}") for i in range(5)]
    held = [ex("scifact", 9, "s9"), multi.pop(3)]  # a multi-hop query hash-held-out earlier
    base = CrossEncoderTrainConfig(sources=["scifact", "hotpotqa"], cv_sources=["hotpotqa"])
    tr, dv, oof = split_cv(sf + multi, held, base)
    assert len(tr) == 5 + 31 and [e.qid for e in dv] == ["q9"] and oof == []
    seen = []
    for k in range(3):
        cfg = CrossEncoderTrainConfig(
            sources=["scifact", "hotpotqa"], cv_sources=["hotpotqa"], cv_folds=3, cv_fold=k
        )
        tr, dv, oof = split_cv(sf + multi, held, cfg)
        assert all(e.meta["source"] == "hotpotqa" for e in oof)
        assert len(tr) + len(oof) == 5 + 31 and [e.qid for e in dv] == ["q9"]
        ids = {e.qid for e in oof}
        assert ("q0" in ids) == ("q100" in ids)
        seen += sorted(ids)
    assert sorted(seen) == sorted(e.qid for e in multi + held[1:])


# ----------------------------------------------------------------------------- lexical prior
def test_lexical_grid_and_choice_hand_computed():
    from logrerank.training.cross_encoder.lexical_prior import choose, grid_table

    # one pool: the model puts the gold second; BM25 puts it first
    rows = [
        {"source": "s", "ids": ["a", "g"], "gold": ["g"], "logits": [1.0, 0.5], "lex": [0.0, 1.0]}
    ]
    table = grid_table(rows, grid=(0.0, 0.4, 1.0))
    # w = 0: gold at rank 2 -> nDCG = 1 / log2(3); w = 0.4: 1.0 vs 0.9, still second;
    # w = 1: 1.0 vs 1.5 -> gold first -> 1
    assert table["0"]["s"] == pytest.approx(100 / __import__("math").log2(3), abs=0.01)
    assert table["0.4"]["s"] == table["0"]["s"] and table["1"]["s"] == 100.0
    assert choose(table) == 1.0
    assert choose({"0": {"mean": 5.0}, "2": {"mean": 5.0}}) == 0.0  # ties: the smaller weight


def test_lexical_weight_recorded_loaded_and_applied(tiny_base, tmp_path):
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker, add_lexical
    from logrerank.models.cross_encoder import CrossEncoder
    from logrerank.text.bm25 import bm25_scores, minmax
    from logrerank.training.cross_encoder.lexical_prior import record

    cfg = _tiny_cfg(tiny_base, tmp_path, prior_scale=10.0)
    train(cfg, log=io.StringIO(), data=_toy_data(), max_steps=0, evaluate=False)
    assert CrossEncoder(cfg.out, device="cpu").lexical_weight == 0.0
    record(cfg.out, 3.0, {"3": {"mean": 1.0}}, {"scifact": 1})
    ce = CrossEncoder(cfg.out, device="cpu", precision="fp32")
    assert ce.lexical_weight == 3.0
    q = "insulin dosage"
    texts = ["insulin dosage in trials", "malaria in children", "dosage"]
    base = ce.predict([(q, t) for t in texts])
    got, lex = add_lexical(ce, q, texts, base)
    assert lex == pytest.approx(minmax(bm25_scores(q, texts)))
    assert got == pytest.approx([b + 3.0 * v for b, v in zip(base, lex)])
    passages = [{"text": t} for t in texts]
    r = CrossEncoderRanker(ce).rank(q, passages)
    nolex = CrossEncoderRanker(ce, lexical=False).rank(q, passages)
    assert r.info["lexical_weight"] == 3.0 and nolex.info["lexical_weight"] == 0.0
    assert nolex.ranker == "cross-encoder-nolex"
    logit = {p.passage_idx: p.extra["cross_encoder_logit"] for p in r.passages_ranked}
    assert [logit[i] for i in range(3)] == pytest.approx(got, abs=1e-5)
    plain = {p.passage_idx: p.extra["cross_encoder_logit"] for p in nolex.passages_ranked}
    assert [plain[i] for i in range(3)] == pytest.approx(base, abs=1e-5)


# ----------------------------------------------------------------------------- calibration
def test_fit_platt_hand_computed_constant_logits():
    from logrerank.models.ce_prior import fit_platt

    # constant logits carry no signal: the slope is 0 (ridge) and sigmoid(b) = the base rate,
    # here 1 of 4 -> b = log(1/3)
    a, b = fit_platt([5.0, 5.0, 5.0, 5.0], [1, 0, 0, 0])
    assert a == pytest.approx(0.0, abs=1e-6)
    assert b == pytest.approx(math.log(1 / 3), abs=1e-5)


def test_fit_platt_recovers_a_known_logistic_and_any_offset():
    from logrerank.models.ce_prior import fit_platt

    rng = random.Random(0)
    xs = [rng.uniform(10.0, 20.0) for _ in range(4000)]  # prior-anchored logit range
    ys = [int(rng.random() < 1 / (1 + math.exp(-(1.5 * x - 24.0)))) for x in xs]
    a, b = fit_platt(xs, ys, l2=0.0)
    assert a == pytest.approx(1.5, rel=0.15) and b == pytest.approx(-24.0, rel=0.15)
    with pytest.raises(ValueError, match="both positive and negative"):
        fit_platt([1.0, 2.0], [1, 1])
    with pytest.raises(ValueError, match="two or more"):
        fit_platt([1.0], [1])


def test_calibration_from_meta_defaults_and_rejects_bad_entries():
    from logrerank.models.ce_prior import calibration_from_meta

    assert calibration_from_meta({}) == (1.0, 0.0)
    assert calibration_from_meta({"calibration": {"a": 0.5, "b": -7}}) == (0.5, -7.0)
    for bad in ({"a": -1, "b": 0}, {"a": "x"}, {"a": float("nan")}, [1, 2], "no"):
        assert calibration_from_meta({"calibration": bad}) == (1.0, 0.0)


def test_calibration_recorded_loaded_and_spreads_the_scores(tiny_base, tmp_path):
    """A prior-anchored model's logits sit far above 0: the plain sigmoid reads ~1 for every
    candidate; the recorded calibration gives scores that differ, in the same order."""
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
    from logrerank.models.cross_encoder import CrossEncoder, sigmoid
    from logrerank.training.cross_encoder.lexical_prior import calibrate, record_calibration

    cfg = _tiny_cfg(tiny_base, tmp_path, prior_scale=10.0)
    train(cfg, log=io.StringIO(), data=_toy_data(), max_steps=0, evaluate=False)
    q = "insulin dosage"
    texts = ["insulin dosage in trials", "malaria in children", "dosage", "ash clouds"]
    ce = CrossEncoder(cfg.out, device="cpu", precision="fp32")
    assert ce.calibration == (1.0, 0.0)
    logits = [x + 20.0 for x in ce.predict([(q, t) for t in texts])]  # push into saturation
    top = "abcd"[logits.index(max(logits))]
    second = "abcd"[sorted(range(4), key=lambda i: -logits[i])[1]]
    rows = [  # golds: the best candidate, then the second best (not separable)
        {"ids": list("abcd"), "gold": [top], "logits": logits, "lex": [0.0] * 4},
        {"ids": list("abcd"), "gold": [top, second], "logits": logits, "lex": [0.0] * 4},
    ]
    fit = calibrate(rows, weight=0.0)
    assert fit["pairs"] == 8 and fit["positives"] == 3 and fit["a"] > 0
    record_calibration(cfg.out, fit)
    ce = CrossEncoder(cfg.out, device="cpu", precision="fp32")
    assert ce.calibration == (fit["a"], fit["b"])
    assert ce.probability(logits[0]) == pytest.approx(sigmoid(fit["a"] * logits[0] + fit["b"]))
    plain = [sigmoid(x) for x in logits]
    calibrated = [ce.probability(x) for x in logits]
    assert max(plain) - min(plain) < 1e-4  # saturated
    assert max(calibrated) - min(calibrated) > 0.05
    r = CrossEncoderRanker(ce).rank(q, [{"text": t} for t in texts])
    for p in r.passages_ranked:  # the ranker reports the calibrated probability
        assert p.score == pytest.approx(ce.probability(p.extra["cross_encoder_logit"]))
    logit = [p.extra["cross_encoder_logit"] for p in r.passages_ranked]
    assert logit == sorted(logit, reverse=True)  # calibration is monotone: same order
