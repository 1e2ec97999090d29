"""Choosing the paper-pool route of a LoG checkpoint (:mod:`logrerank.ranking.routing`).

Paper pools (passages titled by long paper titles) rank by

    f = a * final(with the graph stage) + (1 - a) * final(local only)

(:func:`logrerank.ranking.results.routed_logits`), with one ``a`` for questions and one for citing
queries (a citation marker in the query, :func:`logrerank.text.citations.has_citation_marker`).
Both are chosen here on scientific *training* pools (never a reported split): for every cached
encoded pool of the given specs (``runs/enc``, encoded by
:func:`logrerank.training.log.encode_cache.encode_cached` when missing) the frozen model's final
logits are computed once with and once without its graph stage, every ``a`` of :data:`GRID` is
scored by passage nDCG@10 of the model's own passage score (its passage head when it has one,
else the best sentence), and per query kind the ``a`` with the best macro mean over the specs
that hold at least :data:`MIN_POOLS` pools of that kind is written to
``model.score.paper_global_weight`` / ``citance_global_weight`` (``citance_route`` on when the
specs hold citing queries and their weight differs from the questions'), with ``score.paper_title_words`` (the title length that marks a
paper pool) and how it was chosen (``training.paper_route``).

``logrerank tune-score --checkpoint DIR --paper-route``.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import torch

from ...evaluation.metrics import ndcg_at_k
from ...ranking.results import final_logits, passage_logits
from ...ranking.routing import mean_title_words, pool_route
from ...text.citations import has_citation_marker
from .encode_cache import encode_cached
from .passage_stage import parse_spec, stage_logits

GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Candidate weights ``a`` of the graph stage in paper pools (1 = the graph alone)."""

SPECS = ("evinf:train:80", "evinf:validation:60", "scifact:train:40", "scisumm:train:30:0")
"""Training pools the weight is chosen on (source:split:limit[:offset]); macro over them."""

MIN_POOLS = 5
"""A spec counts toward a query kind's macro mean when it holds at least this many such pools."""

KINDS = ("question", "citance")
"""Query kinds with their own weight: questions / claims / prompts, and citing sentences."""

TITLE_WORDS = 7.0
"""Mean title length (words) from which a pool is a paper pool: the entity titles of the
multi-hop pools average 1.3-5.7 words per pool, the paper titles of SciFact, CL-SciSumm and
Evidence Inference 8.8-30 (40 pools each, docs/method.md "Paper pools")."""


def passage_order(model, enc, logits: torch.Tensor) -> list[int]:
    """Passage indices by the model's passage score (its head, else the best sentence)."""
    out = passage_logits(getattr(model, "passage_head", None), enc, logits)
    if out is not None:
        s = out[0]
    else:
        s = torch.full((len(enc.passages),), float("-inf")).scatter_reduce(
            0, enc.passage_of, logits, reduce="amax", include_self=True
        )
    return sorted(range(len(s)), key=lambda i: (-float(s[i]), i))


def paper_pool_logits(model, exs, encs):
    """``(example, encoding, graph, local)`` for each paper pool with gold: the frozen model's
    ``[N]`` final logits with its graph stage and local only (the two ends of the blend)."""
    cfg = model.config
    for ex, enc in zip(exs, encs):
        if not ex.gold_doc_ids or mean_title_words(enc.passages) < TITLE_WORDS:
            continue
        route = pool_route(cfg, enc.passages, enc.query)
        l_global = stage_logits(model, enc, route.stage)
        graph = final_logits(enc, l_global, cfg.score, route.lexical_weight).float()
        local = final_logits(enc, None, cfg.score, route.lexical_weight).float()
        yield ex, enc, graph, local


def pool_rows(model, exs, encs, grid=GRID) -> list[dict[str, float]]:
    """Passage nDCG@10 (percent) of every ``a`` in ``grid`` for each paper pool with gold, and
    its query kind (``"kind"``: one of :data:`KINDS`)."""
    rows = []
    for ex, enc, graph, local in paper_pool_logits(model, exs, encs):
        ids = [c.doc_id for c in ex.candidates]
        row = {"kind": "citance" if has_citation_marker(ex.query) else "question"}
        for a in grid:
            order = passage_order(model, enc, a * graph + (1 - a) * local)
            row[str(a)] = 100 * ndcg_at_k([ids[i] for i in order], set(ex.gold_doc_ids), 10)
        rows.append(row)
    return rows


def tune_paper_route(
    checkpoint: str | Path,
    specs=SPECS,
    cache_dir: str = "runs/enc",
    write: bool = True,
    command: str = "",
    log=sys.stderr,
) -> dict:
    """Choose ``score.paper_global_weight`` on ``specs`` (module docstring) and (``write``) store
    it with ``score.paper_title_words`` in ``checkpoint/config.json``."""
    from ...pipeline import LoGReranker

    torch.set_num_threads(1)
    model = LoGReranker.from_pretrained(str(checkpoint), device="cpu").eval()
    per: dict[str, dict[str, dict[str, float]]] = {k: {} for k in KINDS}
    sizes: dict[str, dict[str, int]] = {}
    for spec in specs:
        src, split, limit, offset = parse_spec(spec)
        exs, encs = encode_cached(model, src, split, limit or None, cache_dir, log, offset=offset)
        rows = pool_rows(model, exs, encs)
        sizes[spec] = {k: sum(r["kind"] == k for r in rows) for k in KINDS}
        for k in KINDS:
            sub = [r for r in rows if r["kind"] == k]
            if len(sub) >= MIN_POOLS:
                per[k][spec] = {str(a): statistics.fmean(r[str(a)] for r in sub) for a in GRID}
    if not per["question"]:
        raise ValueError(f"fewer than {MIN_POOLS} question paper pools with gold in every spec")
    macro = {
        k: {str(a): statistics.fmean(p[str(a)] for p in per[k].values()) for a in GRID}
        for k in KINDS
        if per[k]
    }
    best = {k: max(GRID, key=lambda a: (round(m[str(a)], 6), a)) for k, m in macro.items()}
    chosen = {"paper_title_words": TITLE_WORDS, "paper_global_weight": best["question"]}
    # a route of its own only where citing queries are better served by another weight
    chosen["citance_route"] = best.get("citance", best["question"]) != best["question"]
    chosen["citance_global_weight"] = best.get("citance", 1.0)
    result = {
        "chosen": chosen,
        "objective": "per query kind, macro passage nDCG@10 over the specs' paper pools",
        "macro": {k: {a: round(v, 2) for a, v in m.items()} for k, m in macro.items()},
        "per_spec": {
            k: {s: {a: round(v, 2) for a, v in p.items()} for s, p in per[k].items()} for k in KINDS
        },
        "pools": sizes,
        "command": command,
    }
    if write:
        path = Path(checkpoint) / "config.json"
        meta = json.loads(path.read_text())
        meta["model"]["score"].update(result["chosen"])
        meta.setdefault("training", {})["paper_route"] = result
        path.write_text(json.dumps(meta, indent=2) + "\n")
    return result | {"written": str(Path(checkpoint) / "config.json") if write else None}
