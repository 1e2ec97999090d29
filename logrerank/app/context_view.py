"""The structured-context tab of the app: units as JSON, the download file, token counts.

Passage and sentence numbers are 1-based here (``"passage": 1`` is the first passage), as
everywhere in the app; the library's context (:mod:`logrerank.ranking.context`) counts from 0.
"""

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


INDEX_NOTE = "passage and sentence numbers are 1-based, as in the app (P1·S1 = first sentence)"


def one_based(units: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Units with 1-based ``passage`` / ``sentence`` numbers and a ``ref`` like ``"P2·S3"``
    (the graph's internal node id is left out), neighbours too."""

    def ref(r: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in r.items() if k != "node"}
        p, s = int(r["passage"]) + 1, int(r["sentence"]) + 1
        out.update(ref=f"P{p}·S{s}", passage=p, sentence=s)
        return out

    result = []
    for u in units:
        v = ref(u)
        v["before"] = ref(u["before"]) if u.get("before") else None
        v["after"] = ref(u["after"]) if u.get("after") else None
        v["similar"] = [ref(r) for r in u.get("similar", [])]
        result.append(v)
    return result


def context_units_json(units: list[dict[str, Any]]) -> str:
    """Context units as pretty JSON text (1-based numbers, see :func:`one_based`)."""
    return json.dumps(one_based(units), indent=1, ensure_ascii=False, allow_nan=False, default=str)


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
            "budget": (ranking.context or {}).get("budget"),
            "index_base": INDEX_NOTE,
            "units": one_based(units),
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


def flat_text(ranking: Ranking, k: int) -> str:
    """The top-``k`` passages (LoG order) as one text: what a flat context would hold."""
    parts = []
    for p in ranking.passages_ranked[:k]:
        passage = ranking.passages[p.passage_idx]
        parts.append((passage.title + "\n" if passage.title else "") + passage.text)
    return "\n\n".join(parts)


def token_report(model: Any, ranking: Ranking, k: int = 10) -> str:
    """Markdown: tokens of the structured context vs the flat top-k passages (LoG order).

    ``k`` is the number of context units asked for; the flat context holds the top
    ``min(k, passages)`` passages and the line says so. Counts backbone WordPiece tokens;
    falls back to words when the tokenizer fails.
    """
    ctx = ranking.context or {}
    prompt = ctx.get("prompt", "")
    n_pass = len(ranking.passages_ranked)
    k_flat = max(0, min(int(k), n_pass))
    flat = flat_text(ranking, k_flat)
    try:
        a, b = count_tokens(model.tokenizer, prompt), count_tokens(model.tokenizer, flat)
    except Exception:
        a, b = len(prompt.split()), len(flat.split())
        unit = "words"
    else:
        unit = "tokens (backbone WordPiece)"
    ratio = f" (**{a / b:.0%}** of the flat context)" if b else ""
    units = ctx.get("units", [])
    n_from = len({u["passage"] for u in units})
    which = f"all {n_pass}" if k_flat == n_pass else f"top-{k_flat} of {n_pass}"
    line = (
        f"**Structured context:** {a:,} {unit} in {len(units)} units from {n_from} passages"
        f"{ratio} · **flat top-{k_flat} passages** ({which}, LoG order): {b:,} {unit}"
    )
    budget = ctx.get("budget") or {}
    cut = []
    if budget.get("max_tokens"):
        cut.append(f"budget {budget['max_tokens']:,} tokens")
    if budget.get("min_score"):
        cut.append(
            f"relevance threshold {budget['min_score']:.2f} x the best unit's score"
            + (f" (= {budget['threshold']:.3f})" if budget.get("threshold") is not None else "")
        )
    if budget.get("dedupe"):
        cut.append("each sentence once")
    left = budget.get("units_over_budget", 0) + budget.get("units_below_threshold", 0)
    if cut:
        line += "  \n" + "Settings: " + ", ".join(cut)
        if left:
            line += f"; {left} of the top-{ctx.get('k', len(units))} units left out"
    return line


__all__ = [
    "INDEX_NOTE",
    "OUT_DIR",
    "context_units_json",
    "count_tokens",
    "flat_text",
    "one_based",
    "token_report",
    "write_context_file",
]
