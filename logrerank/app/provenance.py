"""Where a passage came from, in words: paper, section and page(s) of a PDF's passages.

:func:`passage_source` is the ranking table's ``from`` column, a line of the graph's node
tooltips and of the Explain view. Passages read from a PDF (:mod:`logrerank.pdf`) carry
``meta`` with ``paper``, ``section``, ``pages`` and ``kind``; any other passage shows its
source file when it has one, else nothing. Plain text: callers escape it where it is HTML.
"""

from __future__ import annotations

from typing import Any


def pages_text(pages: Any) -> str:
    """``p. 3`` / ``pp. 3-4`` / ``pp. 3, 5`` (empty for no pages)."""
    if not isinstance(pages, (list, tuple)) or not pages:
        return ""
    nums = sorted(
        {int(p) for p in pages if isinstance(p, (int, float)) and not isinstance(p, bool)}
    )
    if not nums:
        return ""
    if len(nums) == 1:
        return f"p. {nums[0]}"
    if nums == list(range(nums[0], nums[-1] + 1)):
        return f"pp. {nums[0]}-{nums[-1]}"
    return "pp. " + ", ".join(map(str, nums))


def passage_source(passage: Any) -> str:
    """``paper · section · p. N`` for a PDF's passage (``(caption)`` marks a caption), else
    its source file name, else ``""``."""
    meta = getattr(passage, "meta", None)
    if not isinstance(meta, dict):
        return ""
    parts = [
        str(meta[k]).strip()
        for k in ("paper", "section")
        if isinstance(meta.get(k), str) and str(meta[k]).strip()
    ]
    where = pages_text(meta.get("pages"))
    if where:
        parts.append(where)
    if not parts and isinstance(meta.get("source"), str):
        parts.append(meta["source"])
    text = " · ".join(parts)
    if text and meta.get("kind") == "caption":
        text += " (caption)"
    return text
