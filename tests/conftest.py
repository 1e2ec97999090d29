"""Shared fixtures: the packaged tokenizer and every tiny random model the tests build.

All tiny models are BERTs with hidden size 32, 2 attention heads and intermediate size 64 over
the real packaged tokenizer's vocabulary, so tokenisation and windowing are exercised for real
while a forward pass costs milliseconds. They are built here and nowhere else:

* ``tiny_dir`` / ``tiny_encoder`` / ``tiny_model`` / ``make_tiny_model``: the 1-layer encoder
  (seed 1234, 128 positions) as the "backbone" of a LoGReranker. Its weights and the tokenizer
  are saved to a session temp folder that ``config.backbone.name_or_path`` points to, so
  ``save_pretrained`` / ``from_pretrained`` (which reload the base encoder from that path) work
  without the packaged model; ``tiny_ckpt`` is that model saved as a checkpoint folder.
* ``tiny_ce_dir``: a 1-layer sequence-classification BERT (one label, seed 4321, 512 positions),
  the stand-in for a trained cross-encoder.
* ``tiny_base``: a 2-layer encoder (seed 7), the base that cross-encoder training fine-tunes.
* ``tiny3_dir``: a 3-layer encoder (seed 7), the role tagger's backbone.
* ``tiny_config``, ``make_tiny_encoder``, ``tiny_bert_config``, ``save_tiny_bert`` and
  ``save_isolated_checkpoint``: the builders themselves, for tests that need another size, seed
  or folder.

Test folders: ``unit/`` (pure functions and tiny models), ``integration/`` (the real packaged
backbone, bundled checkpoints, ../shared/data, subprocesses, the network guard) and
``browser/`` (the app in headless chromium). When the browser tests skip (no Playwright, no
Chromium binary), the end of the run says so in red with the reason and the fix
(``pytest_terminal_summary``); ``LOGRERANK_REQUIRE_BROWSER=1`` makes that a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TINY_SEED = 1234
CE_SEED = 4321


@pytest.fixture(scope="session")
def tokenizer():
    """The real packaged all-MiniLM-L6-v2 tokenizer (fast to load, no model weights)."""
    from logrerank.local.backbone import load_tokenizer

    return load_tokenizer(None)


# --------------------------------------------------------------------------------------
# Builders (plain functions, handed to tests by the fixtures of the same name below).


def _tiny_config(name_or_path: str | None, **top):
    """A LoGConfig sized for the tiny encoder (window 128 tokens, d_g = 32, 4 heads)."""
    from logrerank.config import (
        BackboneConfig,
        GlobalConfig,
        GraphConfig,
        LocalConfig,
        LoGConfig,
    )

    kwargs = {
        "backbone": BackboneConfig(name_or_path=name_or_path, max_length=128, max_query_tokens=32),
        "local": LocalConfig(head_hidden=32, role_proj_dim=8),
        "graph": GraphConfig(),
        "global_": GlobalConfig(hidden=32, heads=4, rel_emb_dim=8),
        "device": "cpu",
        "precision": "fp32",
    }
    kwargs.update(top)
    return LoGConfig(**kwargs)


def _tiny_bert_config(vocab_size: int, layers: int = 1, max_positions: int = 128, **extra):
    """The tiny BertConfig (hidden 32, 2 heads, intermediate 64); ``extra`` e.g. ``num_labels``."""
    from transformers import BertConfig

    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        **extra,
    )


def _make_tiny_encoder(vocab_size: int, seed: int = TINY_SEED, layers: int = 1):
    """A seeded random BERT (hidden 32, ``layers`` layers) with the packaged tokenizer's vocabulary."""
    from transformers import BertModel

    cfg = _tiny_bert_config(vocab_size, layers=layers)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertModel(cfg)
    return model.eval()


def _save_tiny_bert(
    path: Path,
    tokenizer,
    *,
    layers: int = 1,
    seed: int | None = TINY_SEED,
    max_positions: int = 128,
    num_labels: int | None = None,
) -> Path:
    """Save a tiny BERT and the tokenizer to ``path``.

    Args:
        path: The folder to write (created if missing).
        tokenizer: The tokenizer to save beside the weights (its length is the vocabulary).
        layers: Number of transformer layers.
        seed: Torch seed for the random weights; ``None`` draws from the global generator.
        max_positions: ``max_position_embeddings``.
        num_labels: ``None`` saves a bare ``BertModel``; a number saves a
            ``BertForSequenceClassification`` with that many labels.

    Returns:
        ``path``.
    """
    from transformers import BertForSequenceClassification, BertModel
    from transformers.utils import logging as hf_logging

    extra = {} if num_labels is None else {"num_labels": num_labels}
    cfg = _tiny_bert_config(len(tokenizer), layers=layers, max_positions=max_positions, **extra)
    cls = BertModel if num_labels is None else BertForSequenceClassification
    hf_logging.disable_progress_bar()
    if seed is None:
        model = cls(cfg)
    else:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = cls(cfg)
    model.eval().save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return Path(path)


@pytest.fixture(scope="session")
def tiny_config():
    """``tiny_config(name_or_path, **top)``: a LoGConfig sized for the tiny encoder."""
    return _tiny_config


@pytest.fixture(scope="session")
def tiny_bert_config():
    """``tiny_bert_config(vocab_size, layers=1, max_positions=128, **extra)``: a BertConfig."""
    return _tiny_bert_config


@pytest.fixture(scope="session")
def make_tiny_encoder():
    """``make_tiny_encoder(vocab_size, seed=1234, layers=1)``: a seeded random tiny BertModel."""
    return _make_tiny_encoder


@pytest.fixture(scope="session")
def save_tiny_bert(tokenizer):
    """``save_tiny_bert(path, layers=1, seed=1234, max_positions=128, num_labels=None)``."""

    def save(path: Path, **kwargs) -> Path:
        return _save_tiny_bert(path, tokenizer, **kwargs)

    return save


# --------------------------------------------------------------------------------------
# Tiny model folders.


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory, save_tiny_bert) -> Path:
    """Folder holding the tiny BERT (safetensors) and the tokenizer: the tiny 'backbone'."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="session")
def tiny_ce_dir(tmp_path_factory, save_tiny_bert) -> Path:
    """A seeded random BertForSequenceClassification (1 label, 1 layer) + packaged tokenizer."""
    return save_tiny_bert(
        tmp_path_factory.mktemp("tiny-ce"), seed=CE_SEED, max_positions=512, num_labels=1
    )


@pytest.fixture(scope="session")
def tiny_base(tmp_path_factory, save_tiny_bert) -> Path:
    """A seeded random 2-layer BERT encoder (no head) + the packaged tokenizer."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-base"), layers=2, seed=7)


@pytest.fixture(scope="session")
def tiny3_dir(tmp_path_factory, save_tiny_bert) -> Path:
    """A tiny random 3-layer BERT (hidden 32, 128 positions) + the packaged tokenizer."""
    return save_tiny_bert(tmp_path_factory.mktemp("tiny3"), layers=3, seed=7)


# --------------------------------------------------------------------------------------
# Tiny LoG models.


@pytest.fixture(scope="session")
def tiny_encoder(tiny_dir):
    """The tiny encoder, loaded back through the library's own offline loader."""
    from logrerank.local.backbone import load_encoder

    return load_encoder(str(tiny_dir)).eval()


@pytest.fixture(scope="session")
def tiny_model(tiny_dir, tiny_encoder, tokenizer):
    """A LoGReranker on the tiny encoder, seeded heads, fp32 on CPU. Do not mutate it."""
    from logrerank.pipeline import LoGReranker

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(TINY_SEED)
        model = LoGReranker(_tiny_config(str(tiny_dir)), encoder=tiny_encoder, tokenizer=tokenizer)
    return model


@pytest.fixture(scope="session")
def make_tiny_model(tiny_dir, tiny_encoder, tokenizer):
    """Factory for further tiny models (e.g. other configs), sharing the encoder weights' source."""
    from logrerank.local.backbone import load_encoder
    from logrerank.pipeline import LoGReranker

    def make(seed: int = TINY_SEED, **top):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return LoGReranker(
                _tiny_config(str(tiny_dir), **top),
                encoder=load_encoder(str(tiny_dir)),
                tokenizer=tokenizer,
            )

    return make


@pytest.fixture(scope="session")
def tiny_ckpt(make_tiny_model, tmp_path_factory) -> Path:
    """The tiny LoG model saved as a checkpoint folder (for the scripts' --checkpoint)."""
    return make_tiny_model().save_pretrained(tmp_path_factory.mktemp("tiny-log"))


@pytest.fixture(scope="session")
def save_isolated_checkpoint(tokenizer):
    """``save_isolated_checkpoint(folder)``: a tiny two-layer LoG model in isolated mode (it has
    the bi-encoder prior), saved to ``folder / "log"`` with its backbone in ``folder / "bert"``."""

    def save(folder: Path) -> Path:
        from logrerank.config import LocalConfig
        from logrerank.local.backbone import load_encoder
        from logrerank.pipeline import LoGReranker

        backbone = folder / "bert"
        _make_tiny_encoder(len(tokenizer), layers=2).save_pretrained(
            backbone, safe_serialization=True
        )
        tokenizer.save_pretrained(backbone)
        local = LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1)
        cfg = _tiny_config(str(backbone), local=local)
        model = LoGReranker(cfg, encoder=load_encoder(str(backbone)), tokenizer=tokenizer)
        return Path(model.save_pretrained(folder / "log"))

    return save


# --------------------------------------------------------------------------------------
# Browser tests that skipped: said loudly at the end of the run, with the reason and the fix.

BROWSER_DIR = "tests/browser/"
BROWSER_FIXES = {
    "chromium": "install Debian chromium (sudo apt-get install chromium; .ci/run does this) or "
    "point LOGRERANK_CHROMIUM at a Chromium binary",
    "playwright": "install the test requirements (pip install -r requirements-dev.txt)",
}
"""A word of the skip reason -> how to get the browser tests to run."""


def browser_skip_reasons(reports) -> list[str]:
    """The distinct reasons of the skipped reports that belong to ``tests/browser/``, in order.

    Args:
        reports: pytest's skipped reports (collection reports for a module-level skip, test
            reports for a test that skipped).

    Returns:
        Each reason once, without pytest's ``Skipped:`` prefix.
    """
    reasons: list[str] = []
    for rep in reports:
        nodeid = getattr(rep, "nodeid", "").replace("\\", "/")
        if not nodeid.startswith(BROWSER_DIR):
            continue
        longrepr = rep.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ").strip()
        if reason not in reasons:
            reasons.append(reason)
    return reasons


def browser_skip_line(reasons: list[str]) -> str:
    """The summary line for the skip ``reasons`` ("" when the browser tests did not skip)."""
    if not reasons:
        return ""
    fixes = [fix for word, fix in BROWSER_FIXES.items() if any(word in r.lower() for r in reasons)]
    line = "BROWSER TESTS SKIPPED: " + "; ".join(reasons)
    return line + (" -- " + "; ".join(fixes) if fixes else "")


def _browser_deselected(config) -> bool:
    """Whether ``-m`` leaves the browser tests out on purpose (``not browser`` / ``not slow``)."""
    markexpr = " ".join((config.getoption("markexpr", "") or "").split())
    return "not browser" in markexpr or "not slow" in markexpr


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Say at the end of the run, in red, that the browser tests skipped, why, and the fix."""
    if _browser_deselected(config):
        return
    line = browser_skip_line(browser_skip_reasons(terminalreporter.stats.get("skipped", [])))
    if line:
        terminalreporter.write_sep("!", "browser tests did not run", red=True, bold=True)
        terminalreporter.write_line(line, red=True, bold=True)
        if os.environ.get("LOGRERANK_REQUIRE_BROWSER") == "1":
            terminalreporter.write_line("LOGRERANK_REQUIRE_BROWSER=1: the run fails", red=True)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    """With ``LOGRERANK_REQUIRE_BROWSER=1``, skipped browser tests fail the run (exit status 1)."""
    if os.environ.get("LOGRERANK_REQUIRE_BROWSER") != "1" or _browser_deselected(session.config):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if browser_skip_reasons(skipped) and session.exitstatus == 0:
        session.exitstatus = 1
