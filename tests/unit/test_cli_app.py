"""``python app.py`` / ``logrerank app`` on a busy port: one line, exit status 2, no traceback,
before the app module (models, Gradio) loads."""

from __future__ import annotations

import socket
import subprocess
import sys
import types
from pathlib import Path

import pytest

from logrerank import cli
from logrerank.cli import app as cli_app
from logrerank.types import InputError

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture()
def busy_port():
    """A port on 127.0.0.1 with a listening socket (released after the test)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_app_script_on_a_busy_port_is_one_line(busy_port) -> None:
    proc = subprocess.run(
        [sys.executable, "app.py", "--port", str(busy_port)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        f"logrerank: error: port {busy_port} on 127.0.0.1 is in use (another app running?); "
        "choose another with --port N or GRADIO_SERVER_PORT=N\n"
    )


def test_app_script_reads_the_gradio_port_variable(busy_port, monkeypatch, capsys) -> None:
    monkeypatch.setenv("GRADIO_SERVER_PORT", str(busy_port))
    monkeypatch.delenv("GRADIO_SERVER_NAME", raising=False)
    assert cli_app.run_app_script([]) == 2
    err = capsys.readouterr().err
    assert f"port {busy_port} on 127.0.0.1 is in use" in err and err.count("\n") == 1


def test_cli_app_on_a_busy_port_fails_before_the_app_loads(busy_port, monkeypatch, capsys):
    fake = types.ModuleType("logrerank.app.main")
    fake.main = lambda argv: pytest.fail("the app must not load on a busy port")
    monkeypatch.setitem(sys.modules, "logrerank.app.main", fake)
    assert cli.main(["app", "--port", str(busy_port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("logrerank: error: port ") and err.count("\n") == 1


def test_a_port_taken_during_launch_is_one_line(monkeypatch, capsys) -> None:
    """Gradio's own OSError (the port taken after the check) becomes the same one line."""
    fake = types.ModuleType("logrerank.app.main")

    def launch(argv):
        raise OSError("Cannot find empty port in range: 7999-7999.")

    fake.main = launch
    monkeypatch.setitem(sys.modules, "logrerank.app.main", fake)
    monkeypatch.setattr(cli_app, "check_port_free", lambda host, port: None)
    assert cli_app.run_app_script(["--port", "7999"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("logrerank: error: cannot serve on 127.0.0.1:7999: Cannot find")


def test_check_port_free() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cli_app.check_port_free("127.0.0.1", port)  # released: free again
    with pytest.raises(InputError, match="between 1 and 65535"):
        cli_app.check_port_free("127.0.0.1", 70000)
