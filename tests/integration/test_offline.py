"""Offline guarantee: loading and reranking make no network call; the app has
analytics off and no share link.

Sockets are blocked with :mod:`logrerank.evaluation.netguard` (``socket.connect`` /
``create_connection`` / ``getaddrinfo`` patched, every attempt recorded). The strongest checks
run in a fresh subprocess, so that nothing is already imported or cached, with the
``HF_*_OFFLINE`` variables *removed*: the library itself must not try the network.
``python -m pytest -p tests.netguard`` runs the whole suite with outbound sockets blocked.
"""

from __future__ import annotations

import ast
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from logrerank.evaluation.netguard import NetworkBlocked, blocked_network

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "logrerank" / "app" / "main.py"  # the app's layout and launch (root app.py runs it)
Q = "Does aspirin reduce the risk of myocardial infarction?"
PASSAGES = [
    {"title": "Trial", "text": "Aspirin reduced myocardial infarction by 18%. Bleeding rose."},
    "Platelets are inhibited by aspirin. The effect lasts for the platelet's life.",
    "Unrelated: coral reefs host a quarter of marine species.",
]


def _offline_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("GRADIO_ANALYTICS_ENABLED", None)  # the app must turn analytics off itself
    return env


def _run_guarded(code: str, timeout: int = 600) -> dict:
    """Run ``code`` in a fresh interpreter with the guard installed first; its last stdout line
    must be a JSON object, to which the guard's ``attempts`` / ``local`` lists are added."""
    prelude = (
        "import json, sys\n"
        "import logrerank.evaluation.netguard as _g\n"
        "_guard = _g.install(allow_loopback=ALLOW)\n"
        "def _report(**kw):\n"
        "    kw.update(attempts=_guard.attempts, local=_guard.local)\n"
        "    print(json.dumps(kw, default=str))\n"
    )
    allow = "True" if "ALLOW_LOOPBACK" in code else "False"
    proc = subprocess.run(
        [sys.executable, "-c", prelude.replace("ALLOW", allow) + code],
        cwd=ROOT,
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------------------
# The guard itself


def test_guard_blocks_and_records_outbound_attempts() -> None:
    with blocked_network() as guard:
        with pytest.raises(NetworkBlocked):
            socket.create_connection(("203.0.113.7", 443), timeout=1)
        with pytest.raises(NetworkBlocked):
            socket.getaddrinfo("huggingface.co", 443)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            with pytest.raises(NetworkBlocked):
                s.connect(("198.51.100.1", 80))
            with pytest.raises(NetworkBlocked):
                s.connect_ex(("198.51.100.1", 80))
        finally:
            s.close()
        with pytest.raises(NetworkBlocked):  # loopback is blocked too unless allowed
            socket.create_connection(("127.0.0.1", 9), timeout=1)
    assert len(guard.attempts) == 5
    # restored afterwards
    assert socket.create_connection.__name__ == "create_connection"
    assert socket.socket.connect is not None


def test_guard_can_allow_loopback() -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    try:
        with blocked_network(allow_loopback=True) as guard:
            conn = socket.create_connection(server.getsockname(), timeout=5)
            conn.close()
            with pytest.raises(NetworkBlocked):
                socket.create_connection(("192.0.2.1", 80), timeout=1)
        assert guard.local and len(guard.attempts) == 1
    finally:
        server.close()


# --------------------------------------------------------------------------------------
# Library: load + rerank with sockets blocked


def test_tiny_model_load_and_rerank_in_process(tiny_model, tmp_path) -> None:
    from logrerank.local.backbone import load_tokenizer
    from logrerank.pipeline import LoGReranker

    ckpt = tiny_model.save_pretrained(tmp_path / "log")
    with blocked_network() as guard:
        tok = load_tokenizer(None)  # the packaged tokenizer
        model = LoGReranker.from_pretrained(ckpt)
        r = model.rerank(Q, PASSAGES)
        model.rank_encoded(model.encode(Q, PASSAGES), use_global=False)
    assert guard.attempts == [] and guard.local == []
    assert len(tok) > 1000 and len(r.sentences) == 5


def test_cold_process_load_and_rerank_make_no_network_call(tiny_model, tiny_dir, tmp_path) -> None:
    """Fresh interpreter, no HF_*_OFFLINE variables: import, load, rerank, save."""
    ckpt = tiny_model.save_pretrained(tmp_path / "log")
    code = f"""
from logrerank.local.backbone import load_tokenizer, load_encoder
from logrerank.pipeline import LoGReranker
from logrerank.rankers import Models, build_rankers
tok = load_tokenizer(None)
enc = load_encoder({str(tiny_dir)!r})
model = LoGReranker.from_pretrained({str(ckpt)!r})
r = model.rerank({Q!r}, {PASSAGES!r})
model.save_pretrained({str(tmp_path / "again")!r})
bm25 = build_rankers(["bm25", "evidence-graph"], Models())
base = [ranker.rank({Q!r}, {PASSAGES!r}).passage_order() for ranker in bm25.values()]
_report(n=len(r.sentences), warnings=r.warnings, baselines=base)
"""
    out = _run_guarded(code)
    assert out["attempts"] == [], out["attempts"]
    assert out["local"] == []
    assert out["n"] == 5
    assert all(sorted(order) == [0, 1, 2] for order in out["baselines"])


@pytest.mark.slow
def test_packaged_backbone_load_and_rerank_make_no_network_call() -> None:
    """The real default path: ``LoGReranker.from_pretrained()`` with the packaged backbone."""
    code = f"""
from logrerank.pipeline import LoGReranker
model = LoGReranker.from_pretrained(device="cpu")
r = model.rerank({Q!r}, {PASSAGES!r})
_report(n=len(r.sentences), source=model.source)
"""
    out = _run_guarded(code)
    assert out["attempts"] == [], out["attempts"]
    assert out["n"] == 5


# --------------------------------------------------------------------------------------
# App: analytics off, no share link, loopback only


def _app_tree() -> ast.Module:
    if not APP.exists():
        pytest.skip("logrerank/app/main.py not present")
    return ast.parse(APP.read_text(encoding="utf-8"))


def _calls(tree: ast.AST, attr: str) -> list[ast.Call]:
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and (
            (isinstance(n.func, ast.Attribute) and n.func.attr == attr)
            or (isinstance(n.func, ast.Name) and n.func.id == attr)
        )
    ]


def _kw(call: ast.Call, name: str):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def test_app_source_turns_analytics_off_and_never_shares() -> None:
    tree = _app_tree()
    source = APP.read_text(encoding="utf-8")
    # GRADIO_ANALYTICS_ENABLED=False is set before gradio is imported
    env_line = source.find("GRADIO_ANALYTICS_ENABLED")
    assert env_line >= 0, "logrerank/app/main.py must set GRADIO_ANALYTICS_ENABLED"
    assert env_line < source.find("import gradio"), "set it before importing gradio"
    set_calls = [
        c
        for c in _calls(tree, "setdefault") + _calls(tree, "__setitem__")
        if c.args
        and isinstance(c.args[0], ast.Constant)
        and c.args[0].value == "GRADIO_ANALYTICS_ENABLED"
    ]
    assigns = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and any(
            isinstance(t, ast.Subscript)
            and isinstance(t.slice, ast.Constant)
            and t.slice.value == "GRADIO_ANALYTICS_ENABLED"
            for t in n.targets
        )
    ]
    values = [c.args[1].value for c in set_calls if len(c.args) > 1] + [
        a.value.value for a in assigns if isinstance(a.value, ast.Constant)
    ]
    assert values and all(str(v).lower() in ("false", "0") for v in values), values
    # every Blocks / Interface is built with analytics_enabled=False
    blocks = _calls(tree, "Blocks") + _calls(tree, "Interface")
    assert blocks
    for b in blocks:
        v = _kw(b, "analytics_enabled")
        assert isinstance(v, ast.Constant) and v.value is False
    # every launch() says share=False and binds loopback (or leaves the default host)
    launches = _calls(tree, "launch")
    assert launches, "logrerank/app/main.py has no launch() call"
    for call in launches:
        share = _kw(call, "share")
        assert isinstance(share, ast.Constant) and share.value is False
        host = _kw(call, "server_name")
        if isinstance(host, ast.Constant):
            assert host.value in ("127.0.0.1", "localhost")
    assert "share=True" not in source.replace(" ", "")


@pytest.mark.slow
def test_app_import_and_launch_make_no_outbound_call() -> None:
    """Import app.py (loads the model, builds the UI) and launch it on loopback, guarded."""
    code = """
ALLOW_LOOPBACK = True
import os, socket
import app
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
app.demo.launch(server_name="127.0.0.1", server_port=port, share=False, prevent_thread_lock=True)
share_url = getattr(app.demo, "share_url", None)
analytics = app.demo.analytics_enabled
env = os.environ.get("GRADIO_ANALYTICS_ENABLED")
app.demo.close()
_report(share_url=share_url, analytics=analytics, env=env)
"""
    out = _run_guarded(code)
    assert out["attempts"] == [], out["attempts"]
    assert out["share_url"] in (None, "")
    assert out["analytics"] is False
    assert str(out["env"]).lower() == "false"
