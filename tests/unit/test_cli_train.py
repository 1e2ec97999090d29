"""``logrerank train --dry-run`` and ``--set``: the help's examples work, dotted overrides reach
inside a run config's ``model`` override, and a missing data folder, data file, stage-1
checkpoint or encoding cache is one clear line (exit status 2) for every task."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank import cli
from logrerank.jsonconfig import ConfigError, deep_merge
from logrerank.training.log.graph_cv_config import GraphCVConfig
from logrerank.training.log.log_config import TrainConfig
from logrerank.training.queries import TRAIN_FILES

ROOT = Path(__file__).resolve().parents[2]
LOCAL = str(ROOT / "configs" / "local.json")
MULTIHOP = str(ROOT / "configs" / "global-multihop.json")


@pytest.fixture()
def data_root(tmp_path, monkeypatch) -> Path:
    """A data folder holding (empty) every training file the configs name."""
    root = tmp_path / "data"
    for files in TRAIN_FILES.values():
        for rel in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).touch()
    monkeypatch.setenv("LOGRERANK_DATA", str(root))
    return root


def _plan(capsys) -> dict:
    return json.loads(capsys.readouterr().out)


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("logrerank: error: ") and err.count("\n") == 1, err
    return err


def test_the_help_examples_work(data_root, capsys) -> None:
    argv = ["train", "local", "--config", LOCAL, "--dry-run", "--set", "seed=17"]
    assert cli.main(argv + ["--set", "model.graph.tau_sim=0.8"]) == 0
    plan = _plan(capsys)
    assert plan["config"]["seed"] == 17
    assert plan["config"]["model"] == {"local": {"isolated_layers": 5}, "graph": {"tau_sim": 0.8}}
    assert plan["data_root"] == str(data_root)


def test_dotted_overrides_are_checked() -> None:
    cfg = TrainConfig.load(LOCAL).override(["model.global.hidden=64", "model.graph.top_k=3"])
    assert cfg.model["global"] == {"hidden": 64} and cfg.model["graph"] == {"top_k": 3}
    with pytest.raises(ConfigError, match="unknown config field 'tau'.*tau_sim"):
        TrainConfig.load(LOCAL).override(["model.graph.tau=0.8"])
    with pytest.raises(ConfigError, match="must be float"):
        TrainConfig.load(LOCAL).override(["model.graph.tau_sim=high"])
    with pytest.raises(ConfigError, match="'nope' is not a config section"):
        TrainConfig.load(LOCAL).override(["model.nope.x=1"])
    with pytest.raises(ConfigError, match="model.graph"):  # a config file is checked the same way
        TrainConfig.from_dict({"stage": "local", "model": {"graph": {"tau": 1}}})


def test_dotted_override_keeps_the_other_model_entries() -> None:
    cfg = GraphCVConfig.load(MULTIHOP).override(["model.graph.tau_sim=0.8"])
    raw = json.loads(Path(MULTIHOP).read_text())["model"]
    assert cfg.model["graph"] == {**raw["graph"], "tau_sim": 0.8}
    assert cfg.model["global"] == raw["global"]


def test_a_close_field_name_is_suggested() -> None:
    with pytest.raises(ConfigError, match=r"did you mean 'seeds' or 'cv_seed'"):
        GraphCVConfig.load(MULTIHOP).override(["seed=17"])


def test_deep_merge_keeps_the_base_fields_of_a_section() -> None:
    base = {"graph": {"tau_sim": 0.6, "top_k": 4}, "use_global": True}
    assert deep_merge(base, {"graph": {"tau_sim": 0.8}}) == {
        "graph": {"tau_sim": 0.8, "top_k": 4},
        "use_global": True,
    }
    assert base["graph"]["tau_sim"] == 0.6  # a copy


@pytest.mark.parametrize("task", ["local", "crossencoder"])
def test_dry_run_without_data_is_one_clear_line(task, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LOGRERANK_DATA", str(tmp_path / "none"))
    config = str(ROOT / "configs" / f"{task}.json")
    assert cli.main(["train", task, "--config", config, "--dry-run"]) == 2
    err = _one_line_error(capsys)
    assert "does not exist" in err and "LOGRERANK_DATA" in err


def test_dry_run_names_a_missing_file(data_root, capsys) -> None:
    (data_root / TRAIN_FILES["citint"][0]).unlink()
    assert cli.main(["train", "local", "--config", LOCAL, "--dry-run"]) == 2
    err = _one_line_error(capsys)
    assert TRAIN_FILES["citint"][0] in err and "LOGRERANK_DATA" in err


def test_global_dry_run_checks_init(data_root, tmp_path, capsys) -> None:
    config = str(ROOT / "configs" / "global.json")
    argv = ["train", "global", "--config", config, "--dry-run"]
    assert cli.main(argv + ["--set", f"init={tmp_path / 'no-stage1'}"]) == 2
    assert "logrerank train local" in _one_line_error(capsys)


def test_multihop_dry_run_checks_data_and_encodings(data_root, tmp_path, monkeypatch, capsys):
    argv = ["train", "global", "--config", MULTIHOP, "--dry-run"]
    argv += ["--set", f"cache_dir={tmp_path / 'enc'}"]
    assert cli.main(argv) == 2  # nothing encoded in that cache folder
    err = _one_line_error(capsys)
    assert "not encoded yet" in err and "encode=true" in err
    assert cli.main(argv + ["--set", "encode=true"]) == 0
    assert _plan(capsys)["dry_run"] is True
    (data_root / TRAIN_FILES["musique"][0]).unlink()
    assert cli.main(argv + ["--set", "encode=true"]) == 2
    assert TRAIN_FILES["musique"][0] in _one_line_error(capsys)
    monkeypatch.setenv("LOGRERANK_DATA", str(tmp_path / "none"))
    assert cli.main(argv + ["--set", "encode=true"]) == 2
    assert "LOGRERANK_DATA" in _one_line_error(capsys)


def test_tune_ce_prior_is_a_logrerank_subcommand(capsys):
    """The cross-encoder's lexical-prior tuning runs as `logrerank tune-ce-prior` with the tuning
    script's own options; a missing config is one clear error line."""
    with pytest.raises(SystemExit) as exc:
        cli.main(["tune-ce-prior", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: logrerank tune-ce-prior") and "--calibrate-only" in out
    assert cli.main(["tune-ce-prior", "--config", "no/such/config.json"]) == 2
    assert "cannot read cross-encoder training config" in capsys.readouterr().err


def test_tune_score_lexical_and_no_route_flags(monkeypatch, tmp_path, capsys):
    """--lexical asks tune_lexical; the route flags are gone with the routing."""
    from logrerank.training.log import score_tuning

    seen = []

    def fake(checkpoint, citint_train, cache, write=True, command="", **kw):
        seen.append(kw)
        return {"chosen": 1.0}

    monkeypatch.setattr(score_tuning, "tune_lexical", fake)
    (tmp_path / "config.json").write_text("{}")
    argv = ["tune-score", "--checkpoint", str(tmp_path), "--dry-run"]
    assert cli.main(argv + ["--lexical"]) == 0
    assert seen == [{}]
    for gone in ("--paper-route", "--untitled-route", "--untitled-head"):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv + [gone])
        assert exc.value.code == 2 and gone in capsys.readouterr().err
