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
