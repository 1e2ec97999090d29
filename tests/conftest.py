"""Shared fixtures: the packaged tokenizer and a tiny random BERT wrapped in a LoGReranker.

The tiny model (1 layer, hidden 32) uses the real packaged tokenizer, so tokenisation and
windowing are exercised for real while a forward pass costs milliseconds. Its weights and the
tokenizer are saved to a session temp folder that ``config.backbone.name_or_path`` points to,
so ``save_pretrained`` / ``from_pretrained`` (which reload the base encoder from that path)
work without the packaged model.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TINY_SEED = 1234


@pytest.fixture(scope="session")
def tokenizer():
    """The real packaged all-MiniLM-L6-v2 tokenizer (fast to load, no model weights)."""
    from logrerank.backbone import load_tokenizer

    return load_tokenizer(None)


def tiny_config(name_or_path: str | None, **top):
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


def make_tiny_encoder(vocab_size: int, seed: int = TINY_SEED, layers: int = 1):
    """A seeded random BERT (hidden 32, ``layers`` layers) with the packaged tokenizer's vocabulary."""
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BertModel(cfg)
    return model.eval()


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory, tokenizer) -> Path:
    """Folder holding the tiny BERT (safetensors) and the tokenizer: the tiny 'backbone'."""
    from transformers.utils import logging as hf_logging

    path = tmp_path_factory.mktemp("tiny-bert")
    encoder = make_tiny_encoder(len(tokenizer))
    hf_logging.disable_progress_bar()
    encoder.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_encoder(tiny_dir):
    """The tiny encoder, loaded back through the library's own offline loader."""
    from logrerank.backbone import load_encoder

    return load_encoder(str(tiny_dir)).eval()


@pytest.fixture(scope="session")
def tiny_model(tiny_dir, tiny_encoder, tokenizer):
    """A LoGReranker on the tiny encoder, seeded heads, fp32 on CPU. Do not mutate it."""
    from logrerank.pipeline import LoGReranker

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(TINY_SEED)
        model = LoGReranker(tiny_config(str(tiny_dir)), encoder=tiny_encoder, tokenizer=tokenizer)
    return model


@pytest.fixture(scope="session")
def make_tiny_model(tiny_dir, tiny_encoder, tokenizer):
    """Factory for further tiny models (e.g. other configs), sharing the encoder weights' source."""
    from logrerank.backbone import load_encoder
    from logrerank.pipeline import LoGReranker

    def make(seed: int = TINY_SEED, **top):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return LoGReranker(
                tiny_config(str(tiny_dir), **top),
                encoder=load_encoder(str(tiny_dir)),
                tokenizer=tokenizer,
            )

    return make
