"""Tests for logrerank.config: JSON round trip, unknown fields and wrong types rejected."""

from __future__ import annotations

import dataclasses
import json

import pytest

from logrerank.config import (
    BackboneConfig,
    ConfigError,
    ContextConfig,
    GlobalConfig,
    GraphConfig,
    LocalConfig,
    LoGConfig,
)


def custom() -> LoGConfig:
    return LoGConfig(
        backbone=BackboneConfig(name_or_path="/some/folder", max_length=256, max_query_tokens=16),
        local=LocalConfig(head_hidden=64, dropout=0.2),
        graph=GraphConfig(tau_sim=0.6, delta=0.1, top_k=3, cross_passage=False, typed=False),
        global_=GlobalConfig(hidden=64, heads=2, layers=1, residual_local_logit=False),
        context=ContextConfig(top_k=5, cross_passage=1),
        use_global=False,
        device="cpu",
        precision="fp32",
        trained=True,
    )


@pytest.mark.parametrize("config", [LoGConfig(), custom()], ids=["default", "custom"])
def test_dict_round_trip(config: LoGConfig) -> None:
    d = config.to_dict()
    assert "global" in d and "global_" not in d
    json.dumps(d)  # serialisable
    back = LoGConfig.from_dict(json.loads(json.dumps(d)))
    assert back == config
    assert isinstance(back.graph, GraphConfig) and isinstance(back.global_, GlobalConfig)


def test_file_round_trip(tmp_path) -> None:
    path = tmp_path / "config.json"
    custom().save(path)
    assert LoGConfig.load(path) == custom()


def test_partial_dict_uses_defaults() -> None:
    cfg = LoGConfig.from_dict({"graph": {"top_k": 4}, "use_global": False})
    assert cfg.graph == GraphConfig(top_k=4)
    assert cfg.use_global is False
    assert cfg.backbone == BackboneConfig() and cfg.global_ == GlobalConfig()
    # "global_" (the attribute name) is accepted too.
    assert LoGConfig.from_dict({"global_": {"hidden": 8, "heads": 2}}).global_.hidden == 8


def test_int_accepted_for_float_and_converted() -> None:
    cfg = LoGConfig.from_dict({"graph": {"tau_sim": 1, "delta": 0}})
    assert cfg.graph.tau_sim == 1.0 and isinstance(cfg.graph.tau_sim, float)
    assert isinstance(cfg.graph.delta, float)


@pytest.mark.parametrize(
    "bad",
    [
        {"bogus": 1},
        {"graph": {"tau": 0.5}},
        {"global": {"hiddden": 8}},
        {"backbone": {"name": "x"}},
        {"context": {"top_k": 3, "extra": True}},
    ],
)
def test_unknown_field_rejected(bad) -> None:
    with pytest.raises(ConfigError, match="unknown"):
        LoGConfig.from_dict(bad)


@pytest.mark.parametrize(
    "bad",
    [
        {"graph": {"top_k": "8"}},  # str for int
        {"graph": {"top_k": 8.5}},  # float for int
        {"graph": {"top_k": True}},  # bool for int
        {"graph": {"tau_sim": "0.75"}},  # str for float
        {"graph": {"tau_sim": False}},  # bool for float
        {"graph": {"typed": 1}},  # int for bool
        {"graph": {"top_k": None}},  # null for a non-optional field
        {"use_global": "yes"},
        {"device": 0},
        {"backbone": {"name_or_path": 3}},
        {"graph": [1, 2]},  # a section that is not an object
        {"local": None},
    ],
)
def test_wrong_type_rejected(bad) -> None:
    with pytest.raises(ConfigError):
        LoGConfig.from_dict(bad)


def test_optional_field_accepts_null() -> None:
    assert LoGConfig.from_dict({"backbone": {"name_or_path": None}}).backbone.name_or_path is None


def test_not_an_object_rejected() -> None:
    with pytest.raises(ConfigError):
        LoGConfig.from_dict([1, 2])  # type: ignore[arg-type]


def test_load_bad_file(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError):
        LoGConfig.load(bad)
    with pytest.raises(ConfigError):
        LoGConfig.load(tmp_path / "missing.json")


def test_every_field_has_a_default_and_is_serialisable() -> None:
    # Every section is a dataclass with defaults, so LoGConfig() is the paper's settings.
    cfg = LoGConfig()
    assert cfg.graph.tau_sim == 0.75 and cfg.graph.delta == 0.25 and cfg.graph.top_k == 8
    assert cfg.global_.hidden == 256 and cfg.global_.heads == 4 and cfg.global_.layers == 2
    for section in ("backbone", "local", "graph", "global_", "context"):
        assert dataclasses.is_dataclass(getattr(cfg, section))
