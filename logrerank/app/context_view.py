"""The structured-context tab of the app: units as JSON, the download file, token counts."""

from __future__ import annotations

import json
import logging
import tempfile
import uuid
from pathlib import Path
from typing import Any

from ..types import Ranking, json_safe

log = logging.getLogger(__name__)

OUT_DIR = Path(tempfile.gettempdir()) / "logrerank-app"
"""Where the downloadable context files are written."""


def context_units_json(units: list[dict[str, Any]]) -> str:
    """Context units as pretty JSON text."""
    return json.dumps(units, indent=1, ensure_ascii=False, allow_nan=False, default=str)


def write_context_file(ranking: Ranking, units: list[dict[str, Any]]) -> str | None:
    """The structured context as a JSON file for download."""
    try:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        path = OUT_DIR / f"logrerank-context-{uuid.uuid4().hex[:12]}.json"
        payload = {
            "question": ranking.query,
            "model": ranking.info.get("model"),
            "trained": ranking.info.get("trained"),
            "k": (ranking.context or {}).get("k"),
            "units": units,
            "prompt": (ranking.context or {}).get("prompt", ""),
        }
        path.write_text(
            json.dumps(json_safe(payload), indent=1, ensure_ascii=False), encoding="utf-8"
        )
        return str(path)
    except OSError:
        log.exception("cannot write the context file")
        return None


def count_tokens(tokenizer: Any, text: str) -> int:
    """WordPiece tokens of ``text`` (no special tokens)."""
    if not text:
        return 0
    return len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])


def token_report(model: Any, ranking: Ranking) -> str:
    """Markdown line: tokens of the structured context vs the flat top-10 passages (LoG order).

    Counts backbone WordPiece tokens; falls back to words when the tokenizer fails.
    """
    prompt = (ranking.context or {}).get("prompt", "")
    top = ranking.passages_ranked[:10]
    flat = "\n\n".join(
        (
            ranking.passages[p.passage_idx].title + "\n"
            if ranking.passages[p.passage_idx].title
            else ""
        )
        + ranking.passages[p.passage_idx].text
        for p in top
    )
    try:
        a, b = count_tokens(model.tokenizer, prompt), count_tokens(model.tokenizer, flat)
    except Exception:
        a, b = len(prompt.split()), len(flat.split())
        unit = "words"
    else:
        unit = "tokens (backbone WordPiece)"
    ratio = f" ({a / b:.0%} of the flat context)" if b else ""
    n_units = len((ranking.context or {}).get("units", []))
    return (
        f"**Structured context:** {a:,} {unit} in {n_units} units{ratio} · "
        f"**flat top-{len(top)} passages (LoG order):** {b:,} {unit}"
    )


__all__ = ["OUT_DIR", "context_units_json", "count_tokens", "token_report", "write_context_file"]
