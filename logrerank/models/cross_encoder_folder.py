"""What a cross-encoder folder says about its pair length (:class:`~logrerank.models.cross_encoder.
CrossEncoder`): the sentence-transformers files beside the Hugging Face ones, read as JSON only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

ST_CONFIGS = ("sentence_bert_config.json", "config_sentence_transformers.json")
"""sentence-transformers files that may declare the pair length (``max_length`` /
``max_seq_length``) of a cross-encoder folder."""


def read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path`` ({} when missing or not an object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cap_length(
    max_length: int, tokenizer: Any, model: torch.nn.Module, folder: Path | None = None
) -> int:
    """``max_length`` capped by the tokenizer's limit, the model's position table and the
    ``max_length`` / ``max_seq_length`` of a sentence-transformers file in ``folder``
    (:data:`ST_CONFIGS`)."""
    caps = [max_length]
    for name in ST_CONFIGS if folder is not None and folder.is_dir() else ():
        cfg = read_json(folder / name)
        for key in ("max_length", "max_seq_length"):
            if isinstance(cfg.get(key), int) and cfg[key] > 0:
                caps.append(cfg[key])
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 100_000:
        caps.append(tok_max)
    pos = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(pos, int) and pos > 0:
        caps.append(pos)
    return min(caps)
