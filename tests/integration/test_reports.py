"""``logrerank train global --sweep --dry-run`` on the public data (``data``; skipped without
../shared/data), initialised from the tiny isolated-mode checkpoint of conftest.py. The report and
CLI tests on hand-written files are in ``tests/unit/test_reports.py``."""

from __future__ import annotations

import json

import pytest

from logrerank.cli import main
from logrerank.data.common import default_data_root


@pytest.mark.data
@pytest.mark.skipif(not default_data_root().is_dir(), reason="public data not found")
def test_cli_train_sweep_dry_run_plans(save_isolated_checkpoint, tmp_path, capsys):
    init = save_isolated_checkpoint(tmp_path)
    argv = ["train", "global", "--config", "configs/global.json", "--sweep", "--dry-run"]
    argv += ["--settings", "paper-lr1e-4-ep2", "--set", "seed=17", "--set", f"init={init}"]
    assert main(argv) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["sweep"] == {"paper-lr1e-4-ep2": {"pairs": "paper", "lr": 1e-4, "epochs": 2}}
    assert plan["config"]["seed"] == 17 and plan["dry_run"] is True
    assert main([*argv[:-2], "--set", f"init={tmp_path / 'none'}"]) == 2
    assert "not a checkpoint folder" in capsys.readouterr().err
