"""``run_training(..., dry_run=True)`` on the shipped run configs (``configs/``) and the public
data (``data``; skipped without ../shared/data): the plan names the data, output and state, and
writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

TASK_CONFIGS = {
    "local": "local.json",
    "global": "global.json",
    "crossencoder": "crossencoder.json",
    "roles": "roles.json",
}


def _config_file(task: str) -> Path:
    return Path(__file__).resolve().parents[2] / "configs" / TASK_CONFIGS[task]


@pytest.mark.data
@pytest.mark.parametrize("task", list(TASK_CONFIGS))
def test_run_training_dry_run_returns_the_plan(task, tmp_path) -> None:
    from logrerank.data.common import default_data_root
    from logrerank.resources import checkpoint_dir
    from logrerank.training.run import run_training

    if not default_data_root().is_dir():
        pytest.skip(f"public data not found at {default_data_root()} (set LOGRERANK_DATA)")
    overrides = [f"state_dir={tmp_path / 'state'}"] if task != "roles" else []
    if task == "global":  # the stage-1 checkpoint the config names is a run output
        overrides.append(f"init={checkpoint_dir('log-reranker')}")
    if task in ("local", "global"):
        overrides.append("seed=17")
    plan = run_training(task, _config_file(task), overrides, dry_run=True)
    assert plan["dry_run"] is True and plan["task"] == task
    assert plan["data"] and all(p.startswith(plan["data_root"]) for p in plan["data"])
    assert plan["output"] and plan["state_dir"]
    if task in ("local", "global"):
        assert plan["config"]["seed"] == 17
    assert not (tmp_path / "state").exists()  # a dry run writes nothing
