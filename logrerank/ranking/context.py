"""Structured context for the generator (paper eqs. 17-18).

The top-K sentence nodes by global score (eq. 17) are each expanded into a unit with its
in-passage neighbours (the previous and next sentence, from the adjacency edges) and its most
similar cross-passage neighbours (from the similarity edges); units are ordered by global
score (eq. 18). Exported as JSON-ready dicts and as prompt text.

The top K are the first K of the ranking's sentence order: with the sentence selection of
:mod:`logrerank.ranking.selection` (``ScoreConfig.select_*``), complementary sentences across passages
rather than the K highest scores, so that one passage's weaker lines do not push another
passage's result out of the context; units then follow the selected order.

Budget (an adaptation, off by default): :func:`apply_budget` keeps each sentence once
(``dedupe``), drops units and neighbours scoring below ``min_score`` times the best unit's score
(a relative threshold: when every score is low, as on a pool whose scores are all small, the
units are still kept by rank; an absolute cut would drop all but the first) and stops adding text once
the prompt would exceed ``max_tokens`` tokens (counted by a given tokenizer, else estimated by
:func:`estimate_tokens`), so the context can be shorter than the passages it comes from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch

from ..config import ContextConfig
from ..graph.sentence_graph import ADJACENCY_RELATIONS, Relation
from ..types import Passage, ScoredSentence


def _ref(s: ScoredSentence, passages: list[Passage]) -> dict[str, Any]:
    p = passages[s.passage_idx]
    return {
        "node": s.node,
        "passage": s.passage_idx,
        "passage_id": p.pid,
        "title": p.title,
        "sentence": s.sent_idx,
        "role": s.role,
        "text": s.text,
        "score": s.score,
    }


def build_context(
    sentences: list[ScoredSentence],
    passages: list[Passage],
    edge_index: torch.Tensor,
    relation_type: torch.Tensor,
    edge_sim: torch.Tensor,
    config: ContextConfig | None = None,
) -> dict[str, Any]:
    """Build the structured context.

    Args:
        sentences: scored sentences in rank order (``score`` is the final score; the order is
            the ranking's, selected or by score).
        passages: the input passages.
        edge_index: ``[2, E]`` graph edges (u -> v).
        relation_type: ``[E]`` relation ids (true types, even under the untyped ablation).
        edge_sim: ``[E]`` cosine of similarity edges (NaN for adjacency).
        config: K and neighbour counts.

    Returns:
        ``{"units": [...], "prompt": str, "k": K}``; each unit has the sentence (node, passage
        index/id/title, role, text, local/global/final scores), ``before``/``after`` in-passage
        neighbours (or None) and ``similar``: cross-passage neighbours with their cosine.
    """
    config = config or ContextConfig()
    by_node = {s.node: s for s in sentences}
    src, dst = edge_index.cpu().tolist() if edge_index.numel() else ([], [])
    rel = relation_type.cpu().tolist()
    sim = edge_sim.cpu().tolist()
    prev: dict[int, int] = {}
    nxt: dict[int, int] = {}
    similar: dict[int, list[tuple[float, int]]] = {}
    for u, v, t, c in zip(src, dst, rel, sim):
        if t == Relation.SIMILAR:
            similar.setdefault(v, []).append((c, u))
        elif t in ADJACENCY_RELATIONS:
            prev[v], nxt[u] = u, v
    units = []
    for s in sentences[: config.top_k]:
        unit = _ref(s, passages)
        unit.update(rank=s.rank, local_score=s.local_score, global_score=s.global_score)
        before = prev.get(s.node) if config.in_passage >= 1 else None
        after = nxt.get(s.node) if config.in_passage >= 2 else None
        unit["before"] = _ref(by_node[before], passages) if before is not None else None
        unit["after"] = _ref(by_node[after], passages) if after is not None else None
        neigh = sorted(similar.get(s.node, []), key=lambda cu: (-cu[0], cu[1]))
        unit["similar"] = [
            {**_ref(by_node[u], passages), "similarity": c}
            for c, u in neigh[: config.cross_passage]
        ]
        units.append(unit)
    out = {"k": config.top_k, "units": units, "prompt": context_prompt(units)}
    if config.max_tokens or config.min_score or config.dedupe:
        out = apply_budget(out, config)
    return out


_TOKEN = re.compile(r"\w+|[^\w\s]")


def estimate_tokens(text: str) -> int:
    """Words and punctuation marks of ``text``: a lower bound of its WordPiece tokens."""
    return len(_TOKEN.findall(text))


def apply_budget(
    context: dict[str, Any],
    config: ContextConfig,
    count_tokens: Callable[[str], int] | None = None,
) -> dict[str, Any]:
    """The structured context cut to ``config``'s threshold, budget and dedupe settings.

    Units stay in rank order. The threshold is relative: ``min_score`` times the score of the
    best unit (``budget["threshold"]``). A unit whose sentence scores below it is left out, and
    so is a neighbour below it. With ``dedupe`` a neighbour
    that is a unit itself, or was already shown, is left out. With ``max_tokens`` text is added
    while the prompt stays within the budget: first the units' own sentences (best first; the
    first unit is always kept), then their neighbours unit by unit.

    Args:
        context: a :func:`build_context` result (not modified).
        config: ``min_score``, ``max_tokens`` and ``dedupe``.
        count_tokens: tokens of a text (default :func:`estimate_tokens`).

    Returns:
        ``{"k", "units", "prompt"}`` as :func:`build_context` and its ``"order"`` (``"selected"``
        or ``"score"``, as the pipeline set it), plus ``"budget"``: the settings,
        the tokens used and the units / neighbours left out.
    """
    count = count_tokens or estimate_tokens
    budget = config.max_tokens
    units_in = context.get("units", [])
    best = max((u["score"] for u in units_in), default=0.0)
    threshold = config.min_score * best if best > 0 else 0.0
    keep_units = [u for u in units_in if u["score"] >= threshold]
    if not keep_units and units_in:
        keep_units = units_in[:1]  # the best sentence, even below the threshold
    unit_nodes = {u["node"] for u in keep_units}
    sep = count("\n\n")

    def cost(unit: dict[str, Any]) -> int:
        return count(context_prompt([unit]))

    # pass 1: the units' own sentences, best first, while they fit (the first always)
    out_units: list[dict[str, Any]] = []
    used, dropped = 0, 0
    for u in keep_units:
        unit = {**u, "before": None, "after": None, "similar": []}
        extra = (sep if out_units else 0) + cost(unit)
        if budget and out_units and used + extra > budget:
            dropped += 1
            continue
        used += extra
        out_units.append(unit)
    # pass 2: their neighbours (before, after, the most similar), unit by unit, while they fit
    shown = {u["node"] for u in out_units}
    originals = {u["node"]: u for u in keep_units}
    for i, unit in enumerate(out_units):
        src = originals[unit["node"]]
        for slot, ref in [("before", src["before"]), ("after", src["after"])] + [
            ("similar", r) for r in src["similar"]
        ]:
            if ref is None or ref["score"] < threshold:
                continue
            if config.dedupe and (ref["node"] in unit_nodes or ref["node"] in shown):
                continue
            trial = {**unit, "similar": list(unit["similar"])}
            if slot == "similar":
                trial["similar"].append(ref)
            else:
                trial[slot] = ref
            grown = cost(trial) - cost(unit)
            if budget and used + grown > budget:
                continue
            unit, used = trial, used + grown
            shown.add(ref["node"])
        out_units[i] = unit
    return {
        "k": context.get("k", len(units_in)),
        "order": context.get("order", "score"),  # the sentence order the units were taken in
        "units": out_units,
        "prompt": context_prompt(out_units),
        "budget": {
            "max_tokens": budget,
            "min_score": config.min_score,
            "threshold": threshold,
            "dedupe": config.dedupe,
            "tokens": used,
            "units_below_threshold": len(units_in) - len(keep_units),
            "units_over_budget": dropped,
        },
    }


def _label(ref: dict[str, Any]) -> str:
    title = f' "{ref["title"]}"' if ref.get("title") else ""
    return f"passage {ref['passage'] + 1}{title}, sentence {ref['sentence'] + 1}, {ref['role']}"


def context_prompt(units: list[dict[str, Any]]) -> str:
    """Render units as plain prompt text for an LLM (one numbered block per unit)."""
    blocks = []
    for i, u in enumerate(units, 1):
        lines = [f"[{i}] ({_label(u)}; score {u['score']:.3f})", f"    {u['text']}"]
        if u["before"]:
            lines.append(f"    before: {u['before']['text']}")
        if u["after"]:
            lines.append(f"    after: {u['after']['text']}")
        for r in u["similar"]:
            lines.append(f"    related ({_label(r)}; cos {r['similarity']:.2f}): {r['text']}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
