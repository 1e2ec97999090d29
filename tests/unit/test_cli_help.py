"""``logrerank --version`` and ``logrerank --help``: every command listed, each with one line."""

from __future__ import annotations

import argparse
import re

import pytest

import logrerank
from logrerank import cli


def _commands() -> dict[str, str]:
    """Command name -> its one-line help, from the parser itself."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    return {name: helps.get(name) for name in sub.choices}


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"logrerank {logrerank.__version__}"


def test_help_lists_every_command_with_a_line(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    commands = _commands()
    assert {"rerank", "rerank-batch", "eval", "train", "app", "tune-score"} <= set(commands)
    assert not {"citing-stage", "ensemble-stage"} & set(commands)  # removed with the routing
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    out = capsys.readouterr().out
    for name, line in commands.items():
        assert line, f"{name} has no help line"
        assert re.search(rf"^\s+{re.escape(name)}\s+{re.escape(line)}$", out, re.M), name
    assert "--version" in out and "COMMAND --help" in out
