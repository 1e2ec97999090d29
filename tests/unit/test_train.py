"""Two-stage training loop on a tiny model and synthetic data (no shared data needed)."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest
import torch

from logrerank.data.schema import Doc, Example
from logrerank.log_checkpoint import read_meta
from logrerank.training import queries as td
from logrerank.training.log import global_stage as gs
from logrerank.training.log import local_stage as ls
from logrerank.training.log import log_config as tc


def _examples(n: int = 6) -> list[Example]:
    out = []
    for q in range(n):
        docs = [
            Doc(
                f"q{q}d{i}",
                f"Title {i}",
                [f"Sentence {j} about topic {i} and {q}." for j in range(3)],
            )
            for i in range(6)
        ]
        gold = f"q{q}d{q % 6}"
        gs = {gold: [1]} if q % 2 == 0 else {}  # half the queries with sentence labels
        out.append(Example(f"{q}", f"topic {q % 6} question {q}", docs, [gold], gs, {}, {}))
    return out


@pytest.fixture
def cfg(tmp_path, tiny_dir, monkeypatch, tiny_config):
    exs = _examples()
    for stage in (ls, gs):
        monkeypatch.setattr(stage, "load_train_queries", lambda c, log=None: (exs[:4], exs[4:]))
    model = dataclasses.asdict(tiny_config(str(tiny_dir)))
    model["global"] = model.pop("global_")
    return tc.TrainConfig(
        negatives=2,
        epochs=1,
        grad_accum=2,
        role_tagger=None,
        out=str(tmp_path / "ckpt"),
        state_dir=str(tmp_path / "state"),
        model=model,
        bf16=False,
    )


def test_config_rejects_unknown_field(tmp_path):
    p = tmp_path / "c.json"
    p.write_text(json.dumps({"stage": "local", "nope": 1}))
    with pytest.raises(ValueError, match="unknown"):
        tc.TrainConfig.load(p)


def test_held_out_split_is_deterministic():
    ids = [f"scifact:{i}" for i in range(1000)]
    a = [td.held_out(i, 0.1) for i in ids]
    assert a == [td.held_out(i, 0.1) for i in ids]
    assert 50 < sum(a) < 150


def test_sample_passages_keeps_gold():
    import random

    ex = _examples()[3]
    idx = ls.sample_passages(ex, 2, random.Random(0))
    assert 3 in idx and len(idx) == 3


def test_local_loss_finite_and_has_gradient(cfg):
    from logrerank.config import LoGConfig
    from logrerank.pipeline import LoGReranker

    model = LoGReranker(LoGConfig.from_dict(cfg.model))
    model.train()
    for ex in _examples()[:2]:  # one with sentence labels, one passage-level only
        loss = ls.local_step_loss(model, ex, [0, 1, 2], ls.RoleTargets(None), cfg)
        assert torch.isfinite(loss)
        loss.backward()
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.local.head_parameters())


def test_train_local_then_global_saves_loadable_checkpoints(cfg, tmp_path):
    from logrerank.pipeline import LoGReranker

    s1 = ls.train_local(cfg)
    assert s1["steps"] == 2 and (tmp_path / "ckpt" / "model.safetensors").exists()
    m = LoGReranker.from_pretrained(tmp_path / "ckpt")
    assert m.config.trained is True
    g = dataclasses.replace(
        cfg, stage="global", init=str(tmp_path / "ckpt"), out=str(tmp_path / "g"), model={}
    )
    s2 = gs.train_global(g)
    assert s2["steps"] == 2
    m2 = LoGReranker.from_pretrained(tmp_path / "g")
    # stage 2 must not change the local model
    ex = _examples()[0]
    passages = [{"title": d.title, "text": d.text} for d in ex.candidates]
    a, b = m.encode(ex.query, passages), m2.encode(ex.query, passages)
    assert torch.allclose(a.local_logits, b.local_logits)
    meta = read_meta(tmp_path / "g")
    assert meta["training"]["stage"] == "global" and meta["training_local"]["stage"] == "local"


def test_train_local_warm_start_continues_from_init(cfg, tmp_path):
    """Stage 1 with ``init``: starts from that checkpoint's weights (the graph stage it carries
    is kept untouched) and trains its local part further."""
    from logrerank.pipeline import LoGReranker

    ls.train_local(cfg)
    first = LoGReranker.from_pretrained(tmp_path / "ckpt")
    warm = dataclasses.replace(
        cfg,
        init=str(tmp_path / "ckpt"),
        out=str(tmp_path / "warm"),
        state_dir=str(tmp_path / "state-warm"),
        model={},
    )
    assert ls.train_local(warm)["steps"] == 2
    second = LoGReranker.from_pretrained(tmp_path / "warm")
    g1, g2 = first.global_model.state_dict(), second.global_model.state_dict()
    assert all(torch.equal(g1[k], g2[k]) for k in g1)  # carried over, not re-initialised
    l1, l2 = first.local.state_dict(), second.local.state_dict()
    assert any(not torch.equal(l1[k], l2[k]) for k in l1)  # the local part trained on


def test_scientific_sources_are_training_sources():
    c = tc.TrainConfig(sources=["scifact", "evinf", "scisumm"])
    assert c.sources == ["scifact", "evinf", "scisumm"]
    with pytest.raises(ValueError, match="sources"):
        tc.TrainConfig(sources=["scholarqabench"])


def test_pool_targets_and_pairs():
    from logrerank.ranking.losses import preference_pairs
    from logrerank.ranking.results import Encoded
    from logrerank.types import ScoredSentence

    ex = _examples()[0]  # gold q0d0 with rationale sentence 1
    sents = [ScoredSentence(3 * p + j, p, j, "x", 0, 1, 0.0) for p in range(6) for j in range(3)]
    enc = Encoded(
        "q", [], sents, torch.tensor([s.passage_idx for s in sents]), None, None, None, None
    )
    prank, srank = gs.pool_targets(ex, enc)
    assert prank.tolist() == [1, 2, 2, 2, 2, 2]
    assert srank[:3].tolist() == [2, 1, 2]
    pairs = preference_pairs(prank, srank, enc.passage_of)
    # the rationale (node 1) is preferred over all 15 sentences of the 5 non-cited passages
    assert pairs.size(1) == 15 and set(pairs[0].tolist()) == {1}


@pytest.mark.parametrize("mode", tc.PAIR_MODES)
def test_global_pool_loss_every_mode_trains_the_graph(make_tiny_model, mode):
    """Each stage-2 objective gives a finite loss whose gradient reaches the graph model, and
    no loss for a pool without a cited passage."""
    from logrerank.graph.sentence_graph import build_graph

    model = make_tiny_model()
    ex = _examples()[0]  # gold q0d0 with rationale sentence 1
    enc = model.encode(ex.query, [{"title": d.title, "text": d.text} for d in ex.candidates])
    for name in ("h", "role_probs", "local_logits", "passage_of"):
        setattr(enc, name, getattr(enc, name).clone())
    data = build_graph(
        enc.h, enc.role_probs, torch.sigmoid(enc.local_logits), enc.passage_of, model.config.graph
    )
    cfg = tc.TrainConfig(pairs=mode, dedupe_pairs=True)
    model.global_model.train()
    loss = gs.global_pool_loss(model, cfg, ex, enc, data)
    assert loss is not None and torch.isfinite(loss)
    loss.backward()
    grads = [p.grad for p in model.global_model.parameters() if p.grad is not None]
    assert grads and any(float(g.abs().sum()) > 0 for g in grads)
    uncited = dataclasses.replace(ex, gold_doc_ids=["not-in-the-pool"], gold_sentences={})
    assert gs.global_pool_loss(model, cfg, uncited, enc, data) is None


def test_training_records_follow_the_stages_a_checkpoint_carries(tmp_path):
    """A warm-started stage 1 keeps the init's record of the global stage it carries, and a
    final checkpoint built on that finds stage 1's record under ``training``."""
    from logrerank.training.log.graph_cv import _provenance
    from logrerank.training.log.graph_cv_config import GraphCVConfig

    def write(folder, **records):
        folder.mkdir()
        meta = {"format": "logrerank", "format_version": 1, "model": {}} | records
        (folder / "config.json").write_text(json.dumps(meta))
        (folder / "model.safetensors").write_bytes(b"")  # only config.json is read here
        return str(folder)

    multi, local = {"stage": "global", "n": 2}, {"stage": "local"}
    bundled = write(tmp_path / "bundled", training=multi, training_local=local)
    assert ls._carried_records(bundled) == {"training_global": multi}
    assert ls._carried_records(None) == {}
    warm = write(tmp_path / "warm", training={"stage": "local", "n": 3})
    assert _provenance(GraphCVConfig(init=warm)) == {"training_local": {"stage": "local", "n": 3}}
    assert _provenance(GraphCVConfig(init=bundled)) == {"training_local": local}


def test_global_stage_reuses_cached_pool_encodings(make_tiny_model, tmp_path, monkeypatch):
    """With cache_dir, the stage-2 pools are encoded once: a second run on the same queries and
    stage 1 loads them (same tensors); other queries or another stage 1 encode again."""
    model = make_tiny_model()
    exs = _examples(3)
    calls = []
    real = gs.encode_pools
    monkeypatch.setattr(gs, "encode_pools", lambda m, e, *a: calls.append(len(e)) or real(m, e))
    first = gs.encode_pools_cached(model, exs, str(tmp_path), io.StringIO())
    log = io.StringIO()
    again = gs.encode_pools_cached(model, exs, str(tmp_path), log)
    assert calls == [3] and "3 cached pools" in log.getvalue()
    for a, b in zip(first, again):
        assert torch.equal(a.local_logits, b.local_logits) and torch.equal(a.h, b.h)
        assert [s.text for s in a.sentences] == [s.text for s in b.sentences]
    gs.encode_pools_cached(model, exs[:2], str(tmp_path), io.StringIO())  # other queries
    with torch.no_grad():
        next(model.local.parameters()).add_(0.01)  # another stage 1
    gs.encode_pools_cached(model, exs, str(tmp_path), io.StringIO())
    assert calls == [3, 2, 3]
    gs.encode_pools_cached(model, exs, "", io.StringIO())  # no cache folder: always encode
    assert calls == [3, 2, 3, 3]
