"""The app's server process for ``bench/load_test.py``: start the Gradio app in a child process on
loopback (outbound sockets blocked by ``logrerank.evaluation.netguard`` unless told not to), wait
until it answers, and sample its resident memory (RSS)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVE = """
import os, sys
sys.path.insert(0, {root!r})
os.chdir({root!r})
if {guard!r}:
    import logrerank.evaluation.netguard as g
    g.install(allow_loopback=True)
from logrerank.app.main import demo
demo.launch(server_name="127.0.0.1", server_port={port}, share=False, quiet=True)
"""


def start_server(port: int, guard: bool, log: Path) -> subprocess.Popen:
    env = dict(os.environ)
    env.update(GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    code = SERVE.format(root=str(ROOT), port=port, guard=guard)
    fh = log.open("w")
    return subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT
    )


def wait_ready(url: str, proc: subprocess.Popen, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url + "/config", timeout=5) as r:  # noqa: S310 (loopback)
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1.0)
    raise SystemExit(f"server not ready after {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def rss_bytes(pid: int) -> int:
    try:
        import psutil

        return int(psutil.Process(pid).memory_info().rss)
    except ImportError:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class RSSSampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.25) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int]] = []
        self._stop_event = threading.Event()

    def run(self) -> None:
        t0 = time.monotonic()
        while not self._stop_event.is_set():
            try:
                self.samples.append((time.monotonic() - t0, rss_bytes(self.pid)))
            except (OSError, ValueError):
                return
            self._stop_event.wait(self.every)

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
