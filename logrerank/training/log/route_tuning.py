"""Choosing the paper-pool route of a LoG checkpoint (:mod:`logrerank.ranking.routing`).

Paper pools (passages titled by long paper titles) rank by

    f = a * final(with the graph stage) + (1 - a) * final(local only)

(:func:`logrerank.ranking.results.routed_logits`). ``a`` is chosen here on scientific *training* pools
(never a reported split): for every cached encoded pool of the given specs (``runs/enc``, encoded
by :func:`logrerank.training.log.encode_cache.encode_cached` when missing) the frozen model's final
logits are computed once with and once without its graph stage, every ``a`` of :data:`GRID` is
scored by passage nDCG@10 of the model's own passage score (its passage head when it has one,
else the best sentence), and the ``a`` with the best macro mean over the specs is written to
``model.score.paper_global_weight`` with ``score.paper_title_words`` (the title length that marks
a paper pool) and how it was chosen (``training.paper_route``).

``logrerank tune-score --checkpoint DIR --paper-route``.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import torch

from ...evaluation.metrics import ndcg_at_k
from ...graph.inputs import SINGLE, global_scores, graph_inputs, stage_graph
from ...ranking.results import final_logits, passage_logits
from ...ranking.routing import mean_title_words, pool_route
from .encode_cache import encode_cached
from .passage_stage import parse_spec

GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Candidate weights ``a`` of the graph stage in paper pools (1 = the graph alone)."""

SPECS = ("evinf:train:80", "evinf:validation:60", "scifact:train:40", "scisumm:train:30:0")
"""Training pools the weight is chosen on (source:split:limit[:offset]); macro over them."""

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


def pool_rows(model, exs, encs, grid=GRID) -> list[dict[str, float]]:
    """Passage nDCG@10 (percent) of every ``a`` in ``grid`` for each paper pool with gold."""
    cfg = model.config
    rows = []
    for ex, enc in zip(exs, encs):
        if not ex.gold_doc_ids or mean_title_words(enc.passages) < TITLE_WORDS:
            continue
        route = pool_route(cfg, enc.passages)
        gcfg, stage_cfg = stage_graph(cfg, route.stage, None)
        data, lex = graph_inputs(cfg, enc, gcfg, True, stage_cfg)
        gm = model.global_single if route.stage == SINGLE else model.global_model
        with torch.no_grad():
            _, l_global, _ = global_scores(gm, enc, data, lex, model.device_)
        graph = final_logits(enc, l_global, cfg.score, route.lexical_weight).float()
        local = final_logits(enc, None, cfg.score, route.lexical_weight).float()
        ids = [c.doc_id for c in ex.candidates]
        row = {}
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
    per: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
    for spec in specs:
        src, split, limit, offset = parse_spec(spec)
        exs, encs = encode_cached(model, src, split, limit or None, cache_dir, log, offset=offset)
        rows = pool_rows(model, exs, encs)
        sizes[spec] = len(rows)
        if rows:
            per[spec] = {str(a): statistics.fmean(r[str(a)] for r in rows) for a in GRID}
    if not per:
        raise ValueError("no paper pool with gold in the selection specs")
    macro = {str(a): statistics.fmean(p[str(a)] for p in per.values()) for a in GRID}
    best = max(GRID, key=lambda a: (round(macro[str(a)], 6), a))  # ties: more graph
    result = {
        "chosen": {"paper_title_words": TITLE_WORDS, "paper_global_weight": best},
        "objective": "macro passage nDCG@10 over the specs' paper pools",
        "macro": {a: round(v, 2) for a, v in macro.items()},
        "per_spec": {s: {a: round(v, 2) for a, v in p.items()} for s, p in per.items()},
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
