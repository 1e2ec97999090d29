"""The shipped role-tagger checkpoint (``logrerank/checkpoints/role-tagger``): its size, and its
accuracy on the public CSAbstruct test split (``data`` and ``slow``; skipped when the checkpoint or
the data is absent). The tiny-model tests of the role tagger are in ``tests/unit/test_roles.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from logrerank.checkpoint import CONFIG_NAME, WEIGHTS_NAME
from logrerank.models.role_checkpoint import default_checkpoint_dir
from logrerank.models.role_tagger import RoleTagger
from logrerank.training.roles.tagger_eval import evaluate_roles


def _shipped() -> Path:
    path = default_checkpoint_dir()
    if not (path / WEIGHTS_NAME).is_file():
        pytest.skip(f"no shipped role-tagger checkpoint at {path}")
    return path


def test_shipped_checkpoint_is_small():
    path = _shipped()
    assert (path / WEIGHTS_NAME).stat().st_size < 20 * 2**20
    meta = json.loads((path / CONFIG_NAME).read_text())
    assert meta["tagger"]["trainable_layers"] == 2 and meta["tagger"]["backbone"] is None
    assert (path / "MODEL_CARD.md").is_file()


@pytest.mark.data
@pytest.mark.slow
def test_shipped_checkpoint_accuracy_on_csabstruct_test():
    from logrerank.data.common import default_data_root

    path = _shipped()
    root = default_data_root()
    if not (root / "csabstruct" / "test.jsonl").is_file():
        pytest.skip(f"public data not found at {root} (set LOGRERANK_DATA)")
    torch.set_num_threads(1)
    tagger = RoleTagger.from_pretrained(path)
    res = evaluate_roles(tagger, root, max_docs=20)
    cs = res["csabstruct/test"]
    assert cs["n_docs"] == 20 and cs["n"] > 80
    assert cs["accuracy"] > 0.60
