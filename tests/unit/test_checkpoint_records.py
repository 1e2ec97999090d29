"""A LoG checkpoint's config.json holds the model; its training records sit in training.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank.checkpoint import CheckpointError
from logrerank.log_checkpoint import RECORDS_NAME, is_record, read_meta, write_meta
from logrerank.resources import checkpoint_dir


def test_split_and_merge(tmp_path: Path) -> None:
    meta = {
        "format": "logrerank",
        "format_version": 1,
        "model": {"score": {"head_weight": 0.5}},
        "training": {"seed": 13, "table": list(range(50))},
        "training_local": {"stage": "local"},
    }
    write_meta(tmp_path, meta)
    config = json.loads((tmp_path / "config.json").read_text())
    assert set(config) == {"format", "format_version", "model"}
    assert set(json.loads((tmp_path / RECORDS_NAME).read_text())) == {"training", "training_local"}
    (tmp_path / "model.safetensors").write_bytes(b"")  # read_config checks the folder's files
    assert read_meta(tmp_path) == meta
    # a folder written before the split (records inside config.json) still reads
    (tmp_path / RECORDS_NAME).unlink()
    (tmp_path / "config.json").write_text(json.dumps(meta))
    assert read_meta(tmp_path) == meta
    assert is_record("training") and is_record("training_single") and not is_record("trainingx")
    with pytest.raises(CheckpointError):
        read_meta(tmp_path / "missing")


@pytest.mark.parametrize("name", ["log-reranker", "cross-encoder-twin"])
def test_bundled_configs_hold_only_the_model(name: str) -> None:
    folder = checkpoint_dir(name)
    assert (folder / "config.json").stat().st_size < 20_000
    config = json.loads((folder / "config.json").read_text())
    assert not any(is_record(k) for k in config)
    assert "training" in read_meta(folder)
