"""Tests for the sentence role tagger (background / method / result): model, checkpoint, training.

The tests use a tiny random 3-layer BERT with the real packaged tokenizer (``tiny3_dir`` of
conftest.py; the top layer is the "fine-tuned" part). The tests of the shipped checkpoint
(``logrerank/checkpoints/role-tagger``) are in ``tests/integration/test_roles.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from logrerank.checkpoint import CONFIG_NAME, WEIGHTS_NAME
from logrerank.config import ROLE_NAMES, ConfigError
from logrerank.models.role_checkpoint import RoleCheckpointError, default_checkpoint_dir
from logrerank.models.role_tagger import RoleTagger
from logrerank.models.role_tagger_config import RoleTaggerConfig
from logrerank.training.roles.tagger_data import IGNORE
from logrerank.training.roles.tagger_eval import evaluate_roles, role_metrics
from logrerank.training.roles.tagger_train import train_roles

DOCS = [
    [
        "Deep networks need large labelled corpora.",
        "We propose a semi-supervised method that uses unlabelled text.",
        "Our model improves accuracy by 4 points on three benchmarks.",
    ],
    ["A single sentence abstract."],
    [],
    ["Background sentence here.", "", "Results were significant (p < 0.05)."],
]


def _cfg(backbone: Path | str, **kw) -> RoleTaggerConfig:
    base = {
        "backbone": str(backbone),
        "trainable_layers": 1,
        "max_length": 64,
        "head_hidden": 16,
        "bf16": False,
        "device": "cpu",
    }
    base.update(kw)
    return RoleTaggerConfig(**base)


def _tagger(backbone: Path, seed: int = 0, **kw) -> RoleTagger:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return RoleTagger(_cfg(backbone, **kw))


# ------------------------------------------------------------------------------ config


def test_config_round_trip(tmp_path):
    cfg = RoleTaggerConfig(epochs=3, sources=["csabstruct", "nicta"], class_weights="balanced")
    cfg.save(tmp_path / "c.json")
    assert RoleTaggerConfig.load(tmp_path / "c.json") == cfg
    assert RoleTaggerConfig.from_dict(cfg.to_dict()) == cfg
    default = RoleTaggerConfig()
    assert (default.trainable_layers, default.max_length, default.head_hidden) == (2, 512, 256)
    assert (default.weight_decay, default.warmup, default.seed) == (0.01, 0.06, 13)


@pytest.mark.parametrize(
    "bad",
    [
        {"epoch": 3},  # unknown (typo)
        {"epochs": "3"},  # wrong type
        {"epochs": True},  # bool is not an int
        {"sources": ["csabstruct", "scifact"]},  # unknown source
        {"sources": "csabstruct"},  # not a list
        {"class_weights": "inverse"},
        {"trainable_layers": None},
        {"max_length": 0},
    ],
)
def test_config_rejects_bad_fields(bad):
    with pytest.raises(ConfigError):
        RoleTaggerConfig.from_dict(bad)


def test_config_load_errors(tmp_path):
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError):
        RoleTaggerConfig.load(tmp_path / "bad.json")
    with pytest.raises(ConfigError):
        RoleTaggerConfig.load(tmp_path / "absent.json")
    with pytest.raises(ConfigError):
        RoleTaggerConfig.from_dict([1, 2])


def test_shipped_run_config_is_valid():
    path = Path(__file__).resolve().parents[2] / "configs" / "roles.json"
    if not path.is_file():
        pytest.skip("configs/roles.json not written yet")
    cfg = RoleTaggerConfig.load(path)
    assert cfg.threads >= 1 and cfg.max_minutes > 0


def test_default_checkpoint_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LOGRERANK_CHECKPOINTS", str(tmp_path))
    assert default_checkpoint_dir() == tmp_path / "role-tagger"
    monkeypatch.delenv("LOGRERANK_CHECKPOINTS")
    assert default_checkpoint_dir().parts[-2:] == ("checkpoints", "role-tagger")


# ------------------------------------------------------------------------------ model


def test_predict_shapes_and_probabilities(tiny3_dir):
    tagger = _tagger(tiny3_dir)
    probs = tagger.predict(DOCS)
    assert [tuple(p.shape) for p in probs] == [(len(d), len(ROLE_NAMES)) for d in DOCS]
    for p in probs:
        assert p.dtype == torch.float32 and not p.is_inference()
        assert torch.all(p >= 0)
        assert torch.allclose(p.sum(-1), torch.ones(p.size(0)), atol=1e-5)
    assert tagger.predict([]) == []
    with pytest.raises(TypeError):
        tagger.predict(["a plain string, not a list of sentences"])


def test_predict_windows_long_abstract(tiny3_dir):
    """An abstract longer than max_length is split on sentence boundaries, all rows filled."""
    tagger = _tagger(tiny3_dir, max_length=32)
    doc = [f"Sentence number {i} talks about results and methods in detail." for i in range(12)]
    tk = tagger.tokenize_docs([doc])
    assert len(tk.windows) > 1 and not tk.truncated_nodes
    (p,) = tagger.predict([doc])
    assert p.shape == (12, 3) and torch.allclose(p.sum(-1), torch.ones(12), atol=1e-5)


def test_sentence_sees_context(tiny3_dir):
    """Joint encoding: a sentence's distribution depends on its neighbours."""
    tagger = _tagger(tiny3_dir)
    a = tagger.predict([["Shared sentence.", "Context one about methods."]])[0][0]
    b = tagger.predict([["Shared sentence.", "Totally different neighbour text!"]])[0][0]
    assert not torch.allclose(a, b)


def test_only_top_layers_trainable(tiny3_dir):
    tagger = _tagger(tiny3_dir)
    names = tagger.trainable_encoder_names
    assert names and all(n.startswith("encoder.layer.2.") for n in names)
    assert not any(p.requires_grad for n, p in tagger.encoder.named_parameters() if n not in names)
    tagger.train()
    assert tagger.training and not tagger.encoder.embeddings.training
    assert not tagger.encoder.encoder.layer[0].training
    assert tagger.encoder.encoder.layer[2].training and tagger.head.training


def test_cached_lower_layers_equal_full_forward(tiny3_dir):
    from logrerank.local.tokenize import collate

    tagger = _tagger(tiny3_dir, max_length=32)
    docs = [d for d in DOCS if d] + [[f"Sentence {i} is here." for i in range(9)]]
    tk = tagger.tokenize_docs(docs)
    lower = tagger.lower_states(tk.windows)
    assert [s.shape[0] for s in lower] == [len(w.input_ids) for w in tk.windows]
    full = tagger._probs(tk.windows, tk.num_nodes)
    cached = tagger._probs(tk.windows, tk.num_nodes, lower)
    assert torch.allclose(full, cached, atol=1e-6)
    # gradients flow into the top layer and the head through the cached path
    tagger.train()
    batch = collate(tk.windows)
    logits = tagger(batch, tagger._pad_lower(lower))
    logits.sum().backward()
    top = tagger.encoder.encoder.layer[2].attention.self.query.weight
    assert top.grad is not None and top.grad.abs().sum() > 0
    assert tagger.encoder.encoder.layer[0].attention.self.query.weight.grad is None
    # the encoder is restored after the cached call
    assert len(tagger.encoder.encoder.layer) == 3
    assert type(tagger.encoder.embeddings).__name__ == "BertEmbeddings"


def _perturb(tagger: RoleTagger, seed: int = 3) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in tagger.parameters():
            if p.requires_grad:
                p.add_(torch.randn(p.shape, generator=g) * 0.05)


def test_save_load_round_trip(tiny3_dir, tmp_path):
    tagger = _tagger(tiny3_dir)
    _perturb(tagger)
    before = tagger.predict(DOCS)
    out = tagger.save_pretrained(tmp_path / "ckpt", extra={"note": "test"})
    stored = json.loads((out / CONFIG_NAME).read_text())
    assert stored["format"] == "logrerank-role-tagger" and stored["training"] == {"note": "test"}
    from safetensors.torch import load_file

    keys = set(load_file(str(out / WEIGHTS_NAME)))
    assert keys == {f"encoder.{n}" for n in tagger.trainable_encoder_names} | {
        f"head.{n}" for n, _ in tagger.head.named_parameters()
    }
    loaded = RoleTagger.from_pretrained(out)
    after = loaded.predict(DOCS)
    for a, b in zip(before, after):
        assert torch.equal(a, b)
    assert loaded.source == str(out)


def test_checkpoint_stores_only_top_layers_and_is_small(tiny3_dir, tmp_path):
    tagger = _tagger(tiny3_dir)
    out = tagger.save_pretrained(tmp_path / "ckpt")
    n_stored = sum(p.numel() for p in tagger.parameters() if p.requires_grad)
    n_total = sum(p.numel() for p in tagger.parameters())
    size = (out / WEIGHTS_NAME).stat().st_size
    assert n_stored < n_total / 2
    assert size < 4 * n_stored + 64_000  # float32 tensors + safetensors header


def test_from_pretrained_errors(tiny3_dir, tmp_path, save_tiny_bert):
    with pytest.raises(RoleCheckpointError, match="does not exist"):
        RoleTagger.from_pretrained(tmp_path / "nothing")
    out = _tagger(tiny3_dir).save_pretrained(tmp_path / "ckpt")
    # missing weights
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / CONFIG_NAME).write_text((out / CONFIG_NAME).read_text())
    with pytest.raises(RoleCheckpointError, match="missing model.safetensors"):
        RoleTagger.from_pretrained(broken)
    # invalid JSON / wrong format
    (broken / WEIGHTS_NAME).write_bytes((out / WEIGHTS_NAME).read_bytes())
    (broken / CONFIG_NAME).write_text("{oops")
    with pytest.raises(RoleCheckpointError, match="not valid JSON"):
        RoleTagger.from_pretrained(broken)
    (broken / CONFIG_NAME).write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(RoleCheckpointError, match="not a role-tagger"):
        RoleTagger.from_pretrained(broken)
    # truncated weights
    (broken / CONFIG_NAME).write_text((out / CONFIG_NAME).read_text())
    (broken / WEIGHTS_NAME).write_bytes((out / WEIGHTS_NAME).read_bytes()[:100])
    with pytest.raises(RoleCheckpointError, match="truncated"):
        RoleTagger.from_pretrained(broken)
    # config mismatch: different head width / trainable layers
    with pytest.raises(RoleCheckpointError, match="shape"):
        RoleTagger.from_pretrained(out, head_hidden=8)
    with pytest.raises(RoleCheckpointError, match="do not match"):
        RoleTagger.from_pretrained(out, trainable_layers=2)
    # unknown override field
    with pytest.raises(RoleCheckpointError, match="unknown"):
        RoleTagger.from_pretrained(out, colour="red")
    # a different base encoder (same shapes, other weights)
    other = save_tiny_bert(tmp_path / "other-base", layers=3, seed=8)
    with pytest.raises(RoleCheckpointError, match="fingerprint"):
        RoleTagger.from_pretrained(out, backbone=str(other))


def test_role_metrics():
    gold = [0, 0, 1, 2, 2, IGNORE]
    pred = [0, 1, 1, 2, 0, 2]
    m = role_metrics(pred, gold)
    assert m["n"] == 5 and m["accuracy"] == pytest.approx(3 / 5)
    assert m["per_class"]["background"]["f1"] == pytest.approx(0.5)
    assert m["per_class"]["method"]["f1"] == pytest.approx(2 / 3)
    assert m["per_class"]["result"]["f1"] == pytest.approx(2 / 3)
    assert m["macro_f1"] == pytest.approx((0.5 + 2 / 3 + 2 / 3) / 3)
    assert m["confusion_gold_by_pred"][2] == [1, 0, 1]


# ------------------------------------------------------------------------------ training


def _write_tiny_data(root: Path) -> None:
    """Synthetic CSAbstruct / NICTA files: role signalled by obvious words."""
    words = {
        "background": "Prior work is limited and the problem matters.",
        "method": "We propose a new model and train it with data.",
        "result": "Results show accuracy improves by ten points.",
    }
    (root / "csabstruct").mkdir(parents=True)
    (root / "nicta_piboso").mkdir(parents=True)
    for split, n in (("train", 24), ("dev", 6), ("test", 6)):
        with open(root / "csabstruct" / f"{split}.jsonl", "w", encoding="utf-8") as f:
            for _ in range(n):
                labels = ["background", "objective", "method", "result", "other"]
                sents = [
                    words[{"objective": "background"}.get(x, x)] if x != "other" else "Code online."
                    for x in labels
                ]
                f.write(json.dumps({"abstract_id": 0, "sentences": sents, "labels": labels}) + "\n")
        with open(root / "nicta_piboso" / f"{split}_clean.txt", "w", encoding="utf-8") as f:
            for i in range(n):
                f.write(f"###{1000 + i}\n")
                for lab, text in (
                    ("background", words["background"]),
                    ("population", words["method"]),
                    ("outcome", words["result"]),
                    ("other", "Funding statement ."),
                ):
                    f.write(f"{lab}\t{text}\n")
                f.write("\n")


def test_train_roles_end_to_end_and_resume(tiny3_dir, tmp_path, capsys):
    data = tmp_path / "data"
    _write_tiny_data(data)
    cfg = _cfg(
        tiny3_dir,
        epochs=2,
        batch_windows=8,
        lr=1e-3,
        head_lr=1e-2,
        sources=["csabstruct", "nicta"],
        class_weights="both",
        data_root=str(data),
        run_dir=str(tmp_path / "run"),
        out_dir=str(tmp_path / "out"),
        save_every=2,
        max_minutes=5.0,
    )
    cfg.save(tmp_path / "roles.json")
    summary = train_roles(tmp_path / "roles.json")
    assert summary["selected"]["class_weights"] in ("none", "balanced")
    assert set(summary["test"]) == {"csabstruct/test", "nicta/test"}  # no PubMedQA file here
    assert set(summary["dev"]) == {"csabstruct/dev", "nicta/dev"}
    for v in summary["variants"].values():
        assert [h["epoch"] for h in v["history"]] == [1, 2]
    assert (tmp_path / "run" / "metrics.json").is_file()
    tagger = RoleTagger.from_pretrained(tmp_path / "out")
    meta = json.loads((tmp_path / "out" / CONFIG_NAME).read_text())
    assert meta["training"]["selected"] == summary["selected"]
    res = evaluate_roles(tagger, data, splits=("test", "dev"))
    assert res["csabstruct/test"]["n"] == 6 * 4  # "other" ignored
    # the selected checkpoint reproduces its reported test numbers
    assert res["nicta/test"]["accuracy"] == pytest.approx(summary["test"]["nicta/test"]["accuracy"])
    # rerunning resumes: finished variants are skipped, the same checkpoint comes out
    capsys.readouterr()
    again = train_roles(tmp_path / "roles.json")
    assert "already done" in capsys.readouterr().out
    assert again["selected"] == summary["selected"]
