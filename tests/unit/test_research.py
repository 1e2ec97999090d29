"""The drivers kept in ``research/`` stay runnable: the shell scripts parse, every ``logrerank``
command in them names a real subcommand, options it has and config files that exist, and the
Python scripts import and answer ``--help`` (research/README.md). Running them needs the data
and hours of CPU; this checks what drifts when the CLI changes."""

from __future__ import annotations

import argparse
import re
import runpy
import shutil
import subprocess
import sys

import pytest

from logrerank.cli import build_parser
from tests.helpers import REPO_ROOT

SHELL = ["eval_all.sh", "seeds.sh", "train_log.sh", "ce/eval_ce.sh", "ce/eval_twin.sh"]
PYTHON = ["diagnose.py", "ce/twin_selection.py"]


def _commands(text: str) -> list[str]:
    """The ``logrerank ...`` command lines of a shell script, continuation lines joined."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    joined = re.sub(r"\\\n\s*", " ", code)
    return [m.group(0) for m in re.finditer(r"logrerank [a-z-]+[^\n;>|]*", joined)]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


@pytest.mark.parametrize("name", SHELL)
def test_shell_driver_parses_and_calls_real_options(name: str) -> None:
    path = REPO_ROOT / "research" / name
    bash = shutil.which("bash")
    if bash:
        assert subprocess.run([bash, "-n", str(path)], capture_output=True).returncode == 0
    commands = _commands(path.read_text(encoding="utf-8"))
    assert commands, name
    subs = _subparsers()
    for line in commands:
        sub = line.split()[1]
        assert sub in subs, f"{name}: logrerank {sub} is not a subcommand"
        known = {o for a in subs[sub]._actions for o in a.option_strings}
        for flag in re.findall(r"(?<![\w-])(--[a-z][\w-]*)", line):
            assert flag in known, f"{name}: logrerank {sub} has no {flag}"
        for config in re.findall(r"configs/[\w.-]+\.json", line):
            assert (REPO_ROOT / config).is_file(), f"{name}: {config} does not exist"


@pytest.mark.parametrize("name", PYTHON)
def test_python_driver_imports(name: str, monkeypatch, capsys) -> None:
    path = REPO_ROOT / "research" / name
    if name == "diagnose.py":
        monkeypatch.setattr(sys, "argv", [str(path), "--help"])
        with pytest.raises(SystemExit) as exc:
            runpy.run_path(str(path), run_name="__main__")
        assert exc.value.code == 0 and "--benchmark" in capsys.readouterr().out
    else:
        module = runpy.run_path(str(path), run_name="research_driver")  # imports resolve
        assert callable(module["main"])


def test_loss_breakdown_by_type_by_hand(tmp_path) -> None:
    """research/loss_breakdown.py: per-type mean differences and wins, computed by hand."""
    import json

    module = runpy.run_path(str(REPO_ROOT / "research" / "loss_breakdown.py"), run_name="x")
    rows = {
        "a": [
            {"qid": q, "passage": {"ndcg@10": v}} for q, v in (("1", 0.5), ("2", 1.0), ("3", 0.2))
        ],
        "b": [
            {"qid": q, "passage": {"ndcg@10": v}} for q, v in (("1", 0.3), ("2", 1.0), ("3", 0.6))
        ],
    }
    (tmp_path / "results.json").write_text(json.dumps({"per_query": rows}))
    a = module["per_query"](f"{tmp_path}:a", "passage", "ndcg@10")
    b = module["per_query"](f"{tmp_path}:b", "passage", "ndcg@10")
    assert a == pytest.approx({"1": 50.0, "2": 100.0, "3": 20.0})
    out = module["breakdown"](a, b, {"1": ["Method"], "2": ["Method"], "3": ["Aim"]})
    # (all): (+20 + 0 - 40) / 3; Method: (+20 + 0) / 2; Aim: -40
    assert [(t, n, w, lo) for t, n, _, w, lo in out] == [
        ("(all)", 3, 1, 1),
        ("Method", 2, 1, 0),
        ("Aim", 1, 0, 1),
    ]
    assert [m for _, _, m, _, _ in out] == pytest.approx([-20 / 3, 10.0, -40.0])
