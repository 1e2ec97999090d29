"""How a pool was treated, said in one place: the headline of the app, the API and the CLI.

A routed LoG model does not always let its graph stage shape the order: an untitled pool ranks
by its local scores alone when ``score.untitled_global_weight`` is 0 (the bundled model), and an
ablation can switch the graph stage off. :func:`pool_treatment` reads what happened from
``Ranking.info`` (the route of :mod:`logrerank.ranking.routing`, recorded by
:func:`logrerank.ranking.results.call_info`) and, given the local-only order of the same pool,
whether the graph stage moved any sentence; :func:`headline` says it in one line, so a
ranking where the graph changed nothing is never called "LoG" without saying so.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..types import Ranking

GRAPH_OFF, GRAPH_WEIGHT_ZERO, GRAPH_NO_CHANGE, GRAPH_CHANGED = (
    "switched off",
    "weight 0",
    "no change",
    "changed order",
)
"""Values of ``graph_effect``: what the graph stage did to the order."""


def _pool_kind(route: dict[str, Any]) -> str:
    """What kind of pool the route's graph weight is set for (``untitled pools``, ...)."""
    if route.get("titled_fraction", 1.0) < route.get("lexical_max_titled", 0.0):
        return "untitled pools"
    if route.get("paper"):
        return "paper pools with a citing query" if route.get("citance") else "paper pools"
    return "titled pools"


def _priors(route: dict[str, Any]) -> list[str]:
    names = {
        "lexical_weight": "lexical prior w",
        "dense_weight": "dense passage prior v",
        "sentence_weight": "titled-sentence prior u",
    }
    return [f"{label} {route[key]:g}" for key, label in names.items() if route.get(key)]


def pool_treatment(ranking: Ranking, local_order: Iterable[int] | None = None) -> dict[str, Any]:
    """How ``ranking``'s pool was treated, as plain JSON-ready fields.

    Args:
        ranking: a LoG ranking (its ``info`` holds the route; other rankers give empty fields).
        local_order: the sentence nodes of the same pool in local-only rank order (None = not
            known: ``graph_moved`` is then None).

    Returns:
        ``global_stage`` (the stage that ran, None when the graph stage was off),
        ``graph_weight`` (a: the graph stage's share of the final logits, 0 when off),
        ``pool_kind`` (the pools that weight is set for), ``titled_fraction``, ``priors``
        (the prior terms added, e.g. ``lexical prior w 0.3``), ``graph_moved`` (sentences
        whose rank differs from the local-only order), ``graph_effect`` (one of
        :data:`GRAPH_OFF`, :data:`GRAPH_WEIGHT_ZERO`, :data:`GRAPH_NO_CHANGE`,
        :data:`GRAPH_CHANGED`) and ``route`` (the route in words).
    """
    info = ranking.info or {}
    route = info.get("route") or {}
    used = bool(info.get("use_global", bool(route)))
    weight = float(route.get("global_weight", 1.0)) if used else 0.0
    moved = None
    if local_order is not None:
        final = [s.node for s in ranking.sentences]
        moved = sum(1 for a, b in zip(final, list(local_order)) if a != b)
    if not used:
        effect = GRAPH_OFF
    elif weight <= 0.0:
        effect = GRAPH_WEIGHT_ZERO
    elif moved == 0:
        effect = GRAPH_NO_CHANGE
    else:
        effect = GRAPH_CHANGED
    return {
        "global_stage": info.get("global_stage") if used else None,
        "graph_weight": weight,
        "pool_kind": _pool_kind(route),
        "titled_fraction": float(route.get("titled_fraction", info.get("titled_fraction", 0.0))),
        "priors": _priors(route),
        "graph_moved": moved,
        "graph_effect": effect,
        "route": route.get("describe", ""),
    }


def headline(treatment: dict[str, Any], name: str = "LoG", n_sentences: int | None = None) -> str:
    """The one-line "what ranked" of a :func:`pool_treatment`, e.g. ``Ranking: local scores only
    (graph weight 0 for untitled pools)`` or ``Ranking: LoG (single-passage global stage,
    graph weight 1; the graph stage moved 12 of 30 sentences)``.

    Args:
        treatment: what :func:`pool_treatment` returned.
        name: the ranker's name with its ablations (``LoG``, ``LoG without typed relations``).
        n_sentences: the pool's sentence count (for "moved k of n").
    """
    priors = treatment["priors"]
    plus = (" + " + ", ".join(priors)) if priors else ""
    effect = treatment["graph_effect"]
    if effect == GRAPH_OFF:
        return f"Ranking: local scores only{plus} ({name}: the graph stage is switched off)"
    if effect == GRAPH_WEIGHT_ZERO:
        named = f"{name}; " if name != "LoG" else ""  # an ablation is still named
        return (
            f"Ranking: local scores only{plus} ({named}graph weight 0 for "
            f"{treatment['pool_kind']}: the graph stage ran but does not count)"
        )
    stage = treatment["global_stage"] or "global"
    weight = f"{stage} global stage, graph weight {treatment['graph_weight']:g}"
    if effect == GRAPH_NO_CHANGE:
        return (
            f"Ranking: {name}, the same order as local scores only{plus} ({weight}: the graph "
            "stage moved no sentence)"
        )
    moved, extra = treatment["graph_moved"], (f"; {', '.join(priors)}" if priors else "")
    if moved is None:
        return f"Ranking: {name} ({weight}{extra})"
    of = f" of {n_sentences}" if n_sentences is not None else ""
    return f"Ranking: {name} ({weight}; the graph stage moved {moved}{of} sentences{extra})"


__all__ = [
    "GRAPH_CHANGED",
    "GRAPH_NO_CHANGE",
    "GRAPH_OFF",
    "GRAPH_WEIGHT_ZERO",
    "headline",
    "pool_treatment",
]
