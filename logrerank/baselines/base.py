"""The small protocol every ranker follows, and shared helpers."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..types import Passage, Ranking


@runtime_checkable
class Ranker(Protocol):
    """Anything that ranks passages (and possibly sentences) for a query.

    Attributes:
        name: registry name recorded in ``Ranking.ranker``.
        level: ``"passage"`` (fills ``passages_ranked`` only) or ``"sentence"`` (fills
            ``sentences`` and derives the passage order from each passage's best sentence).
    """

    name: str
    level: str

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        """Rank ``passages`` (strings, dicts or :class:`Passage`) for ``query``."""
        ...


def passage_text(p: Passage, max_chars: int | None = None) -> str:
    """``title + ". " + text`` (title omitted when empty), optionally cut to ``max_chars``."""
    text = f"{p.title}. {p.text}" if p.title else p.text
    return text[:max_chars] if max_chars else text
