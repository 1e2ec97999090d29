"""Tests for logrerank.config: JSON round trip, unknown fields and wrong types rejected; typed
``--set`` overrides; ``run_training`` refusals. The dry-run plans on the public data are in
``tests/integration/test_config.py``."""

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


# ----------------------------------------------------------------------------- overrides
# Every config class shares logrerank.jsonconfig.JsonConfig: ``override(["field=value"])``
# parses JSON values, refuses unknown fields and ill-typed or invalid values with a ConfigError
# that quotes the item (so the field and the bad value), and changes nothing when it refuses.


def _configs():
    from logrerank.models.role_tagger_config import RoleTaggerConfig
    from logrerank.training.cross_encoder.ce_config import CrossEncoderTrainConfig
    from logrerank.training.log.log_config import TrainConfig

    return {
        "log": LoGConfig,
        "train": TrainConfig,
        "crossencoder": CrossEncoderTrainConfig,
        "roles": RoleTaggerConfig,
    }


REFUSED = {
    "log": [
        "bogus=1",  # unknown field
        "graph.tau=0.5",  # unknown field of a section
        "nosuch.top_k=3",  # unknown section
        "graph.top_k=many",  # str for int
        "graph.top_k=2.5",  # float for int
        "use_global=1",  # int for bool
        "precision=fp16",  # not an allowed name
        "graph.tau_sim=3.0",  # out of range
        "global.heads=3",  # 256 not divisible by 3
        "score.head_weight=2",  # out of range
        "no_equals_sign",
    ],
    "train": [
        "pairs=aligend",  # the misspelt mode the CLI used to let through
        "stage=locale",
        'sources=["scifact", "sciface"]',
        'silver_roles=["results"]',
        "epochs=zero",
        "epochs=0",
        "lr=true",
        "max_queries=[1]",
        'max_queries={"scifact": "all"}',
        "unknown_field=3",
    ],
    "crossencoder": [
        "negatives=many",
        "negative_depth=1",  # < negatives
        'sources=["scifact-train"]',
        "device=tpu",
        "bf16=yes",
        "nagetives=3",
    ],
    "roles": [
        "class_weights=balance",
        'sources=["csabstruct", "pubmed"]',
        "sources=[]",
        "max_length=4",
        "dropout=1.5",
        "device=gpu",
        "epochs=2.0",
        "trainable_layer=2",
    ],
}


@pytest.mark.parametrize("kind,item", [(k, item) for k, items in REFUSED.items() for item in items])
def test_override_refuses_bad_items(kind, item) -> None:
    cfg = _configs()[kind]()
    before = cfg.to_dict()
    with pytest.raises(ConfigError) as info:
        cfg.override([item])
    message = str(info.value)
    assert item in message  # names the field and the bad value
    assert cfg.to_dict() == before  # nothing changed


def test_override_names_the_bad_value_in_the_check_message() -> None:
    from logrerank.training.log.log_config import TrainConfig

    with pytest.raises(ConfigError, match="got 'aligend'"):
        TrainConfig().override(["pairs=aligend"])
    with pytest.raises(ConfigError, match="'graph.top_k' must be int, got str 'many'"):
        LoGConfig().override(["graph.top_k=many"])


def test_override_applies_typed_values() -> None:
    from logrerank.models.role_tagger_config import RoleTaggerConfig
    from logrerank.training.cross_encoder.ce_config import CrossEncoderTrainConfig
    from logrerank.training.log.log_config import TrainConfig

    cfg = LoGConfig().override(["graph.tau_sim=1", "global.hidden=64", "device=cpu"])
    assert cfg.graph.tau_sim == 1.0 and isinstance(cfg.graph.tau_sim, float)
    assert cfg.global_.hidden == 64 and cfg.device == "cpu"
    assert LoGConfig().override(["global_.heads=8"]).global_.heads == 8  # the field name too
    t = TrainConfig().override(["pairs=aligned", "init=runs/x", 'max_queries={"citint": 3}'])
    assert (t.pairs, t.init, t.max_queries) == ("aligned", "runs/x", {"citint": 3})
    assert TrainConfig().override(["role_tagger=null"]).role_tagger is None
    assert CrossEncoderTrainConfig().override(["negatives=3"]).negatives == 3
    r = RoleTaggerConfig().override(['sources=["nicta"]', "class_weights=none"])
    assert r.sources == ["nicta"] and r.class_weights == "none"
    assert RoleTaggerConfig().override([]) == RoleTaggerConfig()


@pytest.mark.parametrize("kind", ["log", "train", "crossencoder", "roles"])
def test_every_config_round_trips_and_refuses_unknown_fields(kind, tmp_path) -> None:
    cls = _configs()[kind]
    cfg = cls()
    cfg.save(tmp_path / "c.json")
    assert cls.load(tmp_path / "c.json") == cfg
    with pytest.raises(ConfigError, match="unknown"):
        cls.from_dict({**cfg.to_dict(), "typo_field": 1})
    with pytest.raises(ConfigError):
        cls.from_dict([1])


def test_shipped_run_configs_load() -> None:
    from pathlib import Path

    from logrerank.models.role_tagger_config import RoleTaggerConfig
    from logrerank.training.cross_encoder.ce_config import CrossEncoderTrainConfig
    from logrerank.training.log.log_config import TrainConfig

    configs = Path(__file__).resolve().parents[2] / "configs"
    for path in sorted(configs.glob("*.json")):
        if path.name.startswith("crossencoder"):
            CrossEncoderTrainConfig.load(path)
        elif path.name == "roles.json":
            RoleTaggerConfig.load(path)
        elif path.name == "intent.json":
            from logrerank.training.intent.intent_train import IntentTrainConfig

            IntentTrainConfig.load(path)
        elif path.name == "passage.json":
            from logrerank.training.log.passage_stage import PassageTrainConfig

            PassageTrainConfig.load(path)
        elif json.loads(path.read_text()).get("stage") == "global-multihop":
            from logrerank.config import LoGConfig
            from logrerank.training.log.graph_cv_config import GraphCVConfig

            cv = GraphCVConfig.load(path)
            base = LoGConfig().to_dict()
            for section, values in cv.model.items():  # as graph_cv.with_new_graph merges them
                base[section] = {**base[section], **values}
            LoGConfig.from_dict(base)
        else:
            TrainConfig.load(path)


def test_training_outputs_default_under_runs() -> None:
    """No shipped run config and no config default writes over a bundled checkpoint."""
    from pathlib import Path

    from logrerank.models.role_tagger_config import RoleTaggerConfig
    from logrerank.training.cross_encoder.ce_config import CrossEncoderTrainConfig
    from logrerank.training.log.graph_cv_config import GraphCVConfig
    from logrerank.training.log.log_config import TrainConfig

    outs = [TrainConfig().out, CrossEncoderTrainConfig().out, GraphCVConfig().out]
    outs.append(RoleTaggerConfig().out_dir)
    configs = Path(__file__).resolve().parents[2] / "configs"
    for path in sorted(configs.glob("*.json")):
        raw = json.loads(path.read_text(encoding="utf-8"))
        outs += [raw[k] for k in ("out", "out_dir") if raw.get(k)]
    assert outs and all(str(o).startswith("runs/") for o in outs), outs


def test_benchmark_sources_match_the_pools() -> None:
    """Stage-1 sources are exactly the benchmarks with a train split (Evidence Inference and
    ScisummNet included), and each names the data files it reads."""
    from logrerank.data.pools import BENCHMARKS
    from logrerank.training.log.log_config import BENCHMARK_SOURCES
    from logrerank.training.queries import TRAIN_FILES

    with_train = {n for n, (_, splits) in BENCHMARKS.items() if "train" in splits}
    assert set(BENCHMARK_SOURCES) == with_train
    assert all(TRAIN_FILES.get(s) for s in BENCHMARK_SOURCES)


# ----------------------------------------------------------------------------- run_training
TASK_CONFIGS = {
    "local": "local.json",
    "global": "global.json",
    "crossencoder": "crossencoder.json",
    "roles": "roles.json",
}
BAD_OVERRIDE = {
    "local": "pairs=aligend",
    "global": "pairs=aligend",
    "crossencoder": "negatives=lots",
    "roles": "class_weights=balance",
}


def _config_file(task: str):
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "configs" / TASK_CONFIGS[task]


@pytest.mark.parametrize("task", list(TASK_CONFIGS))
def test_run_training_dry_run_refuses_a_bad_override(task) -> None:
    from logrerank.training.run import run_training

    bad = BAD_OVERRIDE[task]
    with pytest.raises(ConfigError, match=bad.split("=")[1]):
        run_training(task, _config_file(task), [bad], dry_run=True)


def test_run_training_refuses_a_config_of_the_other_stage_and_unknown_tasks() -> None:
    from logrerank.training.run import run_training

    with pytest.raises(ConfigError, match="'local' config, not 'global'"):
        run_training("global", _config_file("local"), [], dry_run=True)
    with pytest.raises(ConfigError, match="unknown training task"):
        run_training("rerank", _config_file("local"), [], dry_run=True)


def test_run_training_names_a_missing_data_file(tmp_path, monkeypatch) -> None:
    from logrerank.training.run import MissingTrainingInputError, run_training

    (tmp_path / "scifact").mkdir()
    monkeypatch.setenv("LOGRERANK_DATA", str(tmp_path))
    with pytest.raises(MissingTrainingInputError, match="claims_train.jsonl"):
        run_training("crossencoder", _config_file("crossencoder"), [], dry_run=True)
    monkeypatch.setenv("LOGRERANK_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(MissingTrainingInputError, match="nowhere"):
        run_training("roles", _config_file("roles"), [], dry_run=True)


def test_run_training_names_a_missing_init_checkpoint(tmp_path) -> None:
    from logrerank.training.run import MissingTrainingInputError, run_training

    missing = tmp_path / "no-stage-1"
    with pytest.raises(MissingTrainingInputError, match="no-stage-1"):
        run_training("global", _config_file("global"), [f"init={missing}"], dry_run=True)
