"""Structured context for the generator (paper eqs. 17-18).

The top-K sentence nodes by global score (eq. 17) are each expanded into a unit with its
in-passage neighbours (the previous and next sentence, from the adjacency edges) and its most
similar cross-passage neighbours (from the similarity edges); units are ordered by global
score (eq. 18). Exported as JSON-ready dicts and as prompt text.
"""

from __future__ import annotations

from typing import Any

import torch

from .config import ContextConfig
from .graph import Relation
from .types import Passage, ScoredSentence


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
        sentences: scored sentences in rank order (``score`` is the final score).
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
        else:
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
    return {"k": config.top_k, "units": units, "prompt": context_prompt(units)}


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
