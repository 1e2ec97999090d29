"""How a pool was treated, said in one place: the headline of the app, the API and the CLI.

LoG ranks every pool with one global stage whose learned gate (``global.pool_gate``;
:mod:`logrerank.graph.pool_features`) says how much the graph's correction counts for that pool:
the *graph share* ``g`` in [0, 1], recorded as ``Ranking.info["graph_gate"]`` by
:func:`logrerank.ranking.results.call_info` (None for a stage without a gate, which counts the
graph fully). An ablation can also switch the graph stage off. :func:`pool_treatment` reads what
happened from ``Ranking.info`` and, given the local-only order of the same pool, whether the
graph moved any sentence; :func:`headline` says it in one line, so a ranking where the graph
changed nothing is never called "LoG" without saying so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..types import Ranking

GRAPH_OFF, GRAPH_SHARE_ZERO, GRAPH_NO_CHANGE, GRAPH_CHANGED = (
    "switched off",
    "graph share ~0",
    "no change",
    "changed order",
)
"""Values of ``graph_effect``: what the graph stage did to the order (:data:`GRAPH_SHARE_ZERO`:
the learned gate gave the graph a share under :data:`SHARE_ZERO`, so local scores decide)."""

SHARE_ZERO = 0.05
"""A graph share below this counts as none (:data:`GRAPH_SHARE_ZERO`)."""


def _priors(info: dict[str, Any]) -> list[str]:
    """The prior terms added to the final logits (``lexical prior w 1``), none when off."""
    w = float((info.get("score") or {}).get("lexical_weight", 0.0) or 0.0)
    return [f"lexical prior w {w:g}"] if w > 0 else []


def pool_treatment(ranking: Ranking, local_order: Iterable[int] | None = None) -> dict[str, Any]:
    """How ``ranking``'s pool was treated, as plain JSON-ready fields.

    Args:
        ranking: a LoG ranking (its ``info`` holds the gate; other rankers give empty fields).
        local_order: the sentence nodes of the same pool in local-only rank order (None = not
            known: ``graph_moved`` is then None).

    Returns:
        ``global_stage`` (``"global"``, None when the graph stage was off), ``graph_weight``
        (the graph's share of the final logits: the learned gate, 1.0 for a stage without a
        gate, 0.0 when the graph is off), ``graph_gate`` (the gate as recorded, None without
        one), ``titled_fraction``, ``priors`` (the prior terms added, e.g. ``lexical prior w
        1``), ``graph_moved`` (sentences whose rank differs from the local-only order) and
        ``graph_effect`` (one of :data:`GRAPH_OFF`, :data:`GRAPH_SHARE_ZERO`,
        :data:`GRAPH_NO_CHANGE`, :data:`GRAPH_CHANGED`).
    """
    info = ranking.info or {}
    used = bool(info.get("use_global", False))
    gate = info.get("graph_gate") if used else None
    weight = (1.0 if gate is None else float(gate)) if used else 0.0
    moved = None
    if local_order is not None:
        final = [s.node for s in ranking.sentences]
        moved = sum(1 for a, b in zip(final, list(local_order)) if a != b)
    if not used:
        effect = GRAPH_OFF
    elif weight < SHARE_ZERO:
        effect = GRAPH_SHARE_ZERO
    elif moved == 0:
        effect = GRAPH_NO_CHANGE
    else:
        effect = GRAPH_CHANGED
    return {
        "global_stage": info.get("global_stage") if used else None,
        "graph_weight": weight,
        "graph_gate": None if gate is None else float(gate),
        "titled_fraction": float(info.get("titled_fraction", 0.0)),
        "priors": _priors(info),
        "graph_moved": moved,
        "graph_effect": effect,
    }


def _share(treatment: dict[str, Any], learned: bool = True) -> str:
    """``graph share 0.62[, learned from the pool]``, or ``graph share 1, no gate`` for a stage
    without a gate."""
    if treatment.get("graph_gate") is None:
        return "graph share 1, no gate"
    how = ", learned from the pool" if learned else ""
    return f"graph share {treatment['graph_weight']:.2f}{how}"


def headline(treatment: dict[str, Any], name: str = "LoG", n_sentences: int | None = None) -> str:
    """The one-line "what ranked" of a :func:`pool_treatment`, e.g. ``Ranking: LoG (graph share
    0.62, learned from the pool; the graph moved 12 of 30 sentences)`` or ``Ranking: local
    scores only (LoG: the graph stage is switched off)``.

    Args:
        treatment: what :func:`pool_treatment` returned.
        name: the ranker's name with its ablations (``LoG``, ``LoG without typed relations``).
        n_sentences: the pool's sentence count (for "moved k of n").
    """
    priors = treatment["priors"]
    plus = (" + " + ", ".join(priors)) if priors else ""
    extra = f"; {', '.join(priors)}" if priors else ""
    effect = treatment["graph_effect"]
    if effect == GRAPH_OFF:
        return f"Ranking: local scores only{plus} ({name}: the graph stage is switched off)"
    if effect == GRAPH_SHARE_ZERO:
        named = f"{name}; " if name != "LoG" else ""  # an ablation is still named
        return f"Ranking: local scores only{plus} ({named}{_share(treatment)}: local scores decide)"
    if effect == GRAPH_NO_CHANGE:
        return (
            f"Ranking: {name}, the same order as local scores only{plus} "
            f"({_share(treatment, False)}: the graph moved no sentence)"
        )
    moved = treatment["graph_moved"]
    if moved is None:
        return f"Ranking: {name} ({_share(treatment)}{extra})"
    of = f" of {n_sentences}" if n_sentences is not None else ""
    return f"Ranking: {name} ({_share(treatment)}; the graph moved {moved}{of} sentences{extra})"


__all__ = [
    "GRAPH_CHANGED",
    "GRAPH_NO_CHANGE",
    "GRAPH_OFF",
    "GRAPH_SHARE_ZERO",
    "SHARE_ZERO",
    "headline",
    "pool_treatment",
]
