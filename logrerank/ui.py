"""Handlers of the Gradio app: typed functions that call the library (no Gradio imports).

``app.py`` wires these to components; tests call them directly.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from .io import parse_passages_text, read_passages_file
from .types import InputError, Ranking

ASSETS = Path(__file__).resolve().parents[1] / "assets"
TABLE_COLUMNS = [
    "rank",
    "passage",
    "sentence",
    "role",
    "P(bg)",
    "P(mt)",
    "P(rs)",
    "local",
    "global",
    "text",
]


def list_examples() -> dict[str, Path]:
    """Built-in examples: display name -> JSON file under ``assets/examples``."""
    folder = ASSETS / "examples"
    return {p.stem.replace("_", " "): p for p in sorted(folder.glob("*.json"))}


def load_example(name: str) -> tuple[str, str]:
    """(question, passages as blank-line text with ``Title:`` lines) of a built-in example."""
    path = list_examples().get(name)
    if path is None:
        raise InputError(f"unknown example {name!r}")
    question, passages = read_passages_file(path)
    blocks = [(f"Title: {p.title}\n" if p.title else "") + p.text for p in passages]
    return question or "", "\n\n".join(blocks)


def ranking_table(ranking: Ranking) -> pd.DataFrame:
    """One row per sentence, in rank order (text is plain text, never HTML)."""
    rows = []
    for s in ranking.sentences:
        probs = s.role_probs or [float("nan")] * 3
        rows.append(
            [
                s.rank,
                s.passage_idx + 1,
                s.sent_idx + 1,
                s.role,
                round(probs[0], 3),
                round(probs[1], 3),
                round(probs[2], 3),
                round(s.local_score, 4) if s.local_score is not None else None,
                round(s.global_score, 4) if s.global_score is not None else None,
                s.text,
            ]
        )
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def status_markdown(info: dict[str, Any], warnings: list[str], timings: dict[str, float]) -> str:
    """Model status, device, timings and warnings as Markdown (user text escaped)."""
    lines = [
        f"**Model:** {html.escape(str(info.get('model', '?')))}  ",
        f"**Device:** {html.escape(str(info.get('device', '?')))} "
        f"({html.escape(str(info.get('precision', '?')))})  ",
    ]
    if timings:
        lines.append("**Stage timings:** " + ", ".join(f"{k} {v:.3f}s" for k, v in timings.items()))
    if "num_nodes" in info:
        counts = ", ".join(f"{k} {v}" for k, v in info.get("edge_counts", {}).items() if v)
        lines.append(f"\n**Graph:** {info['num_nodes']} sentences; edges: {counts or 'none'}")
    for w in warnings:
        lines.append(f"\n> ⚠️ {html.escape(w)}")
    return "\n".join(lines)


def parse_input(passages_text: str, upload: str | None) -> tuple[str | None, list]:
    """Passages from an uploaded file (if any) or from the text box."""
    if upload:
        return read_passages_file(upload)
    if not passages_text or not passages_text.strip():
        raise InputError("no passages: paste passages separated by blank lines, or upload a file")
    return None, parse_passages_text(passages_text)


def run_rerank(model, question: str, passages_text: str, upload: str | None = None):
    """Main handler: returns (status markdown, table, passage order text, context prompt, JSON).

    Bad input never raises: the status says what is wrong and the outputs are emptied.
    """
    try:
        file_question, passages = parse_input(passages_text, upload)
        question = (question or "").strip() or (file_question or "")
        ranking = model.rerank(question, passages)
    except InputError as exc:
        empty = pd.DataFrame(columns=TABLE_COLUMNS)
        return f"**Input error:** {html.escape(str(exc))}", empty, "", "", "{}"
    order = "\n".join(
        f"{p.rank}. passage {p.passage_idx + 1}"
        + (f" — {p.title}" if p.title else "")
        + f" (best sentence score {p.score:.3f})"
        for p in ranking.passages_ranked
    )
    ctx = ranking.context or {}
    return (
        status_markdown(ranking.info, ranking.warnings, ranking.timings),
        ranking_table(ranking),
        order,
        ctx.get("prompt", ""),
        json.dumps(ctx.get("units", []), indent=1),
    )
