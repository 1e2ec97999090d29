"""Choosing the paper-pool route of a LoG checkpoint (:mod:`logrerank.ranking.routing`).

Paper pools (passages titled by long paper titles) rank by

    f = a * final(with the graph stage) + (1 - a) * final(local only) + w * passage_bm25
        + v * 10 * cos(e_q, e_p) + u * 10 * cos(e_q, e_{title. s})

(:func:`logrerank.ranking.results.routed_logits`; ``passage_bm25`` is the lexical prior,
:func:`logrerank.text.lexical.pool_lexical`; the cosines are the dense passage prior and the
titled-sentence prior, :mod:`logrerank.ranking.dense_prior`), with one ``(a, w, v, u)`` for
questions and one for citing queries (a citation marker in the query, :func:`logrerank.text.citations.has_citation_marker`).
Both are chosen here on scientific *training* pools (never a reported split): for every cached
encoded pool of the given specs (encoded by
:func:`logrerank.training.log.encode_cache.encode_cached` when missing) the frozen model's final
logits are computed once with and once without its graph stage, every ``(a, w, v, u)`` of
:data:`GRID` x :data:`LEXICAL_GRID` x :data:`DENSE_GRID` x :data:`SENTENCE_GRID` is scored by
passage nDCG@10 of the model's own passage score (its passage head when it has one, else the
best sentence), and per query kind the cell with the best macro mean over the specs that hold
at least :data:`MIN_POOLS` pools of that kind (ties: the smaller ``u``, then the smaller ``v``,
then the smaller ``w``, then the larger ``a``) is written to ``model.score.paper_global_weight``
/ ``paper_lexical_weight`` / ``paper_dense_weight`` / ``paper_sentence_weight`` and the
``citance_*`` four (``citance_route`` on when the specs hold citing queries and their cell
differs from the questions'), with ``score.paper_title_words``
(the title length that marks a paper pool) and how it was chosen (``training.paper_route``).

``logrerank tune-score --checkpoint DIR --paper-route``.
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

import torch

from ...evaluation.metrics import ndcg_at_k
from ...log_checkpoint import read_meta, write_meta
from ...ranking.dense_prior import (
    DENSE_SCALE,
    load_kept,
    passage_cosines,
    save_kept,
    sentence_cosines,
)
from ...ranking.results import dense_term, final_logits, passage_logits
from ...ranking.routing import lexical_weight_for, mean_title_words, pool_route
from ...text.citations import has_citation_marker
from ...text.lexical import pool_lexical
from .encode_cache import encode_cached
from .passage_stage import parse_spec, stage_logits

GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Candidate weights ``a`` of the graph stage in paper pools (1 = the graph alone)."""

LEXICAL_GRID = (0.0, 0.25, 0.5, 1.0)
"""Candidate weights ``w`` of the lexical prior in paper pools (0 = none)."""

DENSE_GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 1.0)
"""Candidate weights ``v`` of the dense passage prior in paper pools (0 = none)."""

SENTENCE_GRID = (0.0, 0.25, 0.5, 1.0, 2.0)
"""Candidate weights ``u`` of the titled-sentence prior in paper pools (0 = none)."""

SPECS = (
    "evinf:validation:60",
    "evinf:validation:60:60",
    "scifact:train:30:440",
    "scifact:train:100:200",
    "scisumm:train:20:3000",
    "scisumm:train:30:6000",
    "scisumm:train:30:12000",
)
"""Training pools the weights are chosen on (source:split:limit[:offset]); macro over them per
query kind. The bundled LoG's: none is in the training part of its multi-passage stage
(``configs/global-evinf.json``)."""

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
    """``(example, encoding, graph, local, dense, titled)`` for each paper pool with gold: the
    frozen model's ``[N]`` final logits with its graph stage and local only (the two ends of the
    blend), without any paper-pool lexical or dense prior (those the checkpoint may already
    carry), the pool's ``[P]`` dense passage prior ``cos(e_q, e_p)`` and its ``[N]``
    titled-sentence prior ``cos(e_q, e_{title. s})``."""
    cfg = model.config
    for ex, enc in zip(exs, encs):
        if not ex.gold_doc_ids or mean_title_words(enc.passages) < TITLE_WORDS:
            continue
        route = pool_route(cfg, enc.passages, enc.query)
        lex = lexical_weight_for(cfg.score, route.titled_fraction)  # the untitled prior only
        l_global = stage_logits(model, enc, route.stage)
        graph = final_logits(enc, l_global, cfg.score, lex, route.head_weight).float()
        local = final_logits(enc, None, cfg.score, lex, route.head_weight).float()
        yield ex, enc, graph, local, passage_cosines(model, enc), sentence_cosines(model, enc)


def cell(a: float, w: float, v: float = 0.0, u: float = 0.0) -> str:
    """The key of ``(a, w, v, u)`` in :func:`pool_rows` rows and the result tables:
    ``"a|w|v|u"``."""
    return f"{a:g}|{w:g}|{v:g}|{u:g}"


def pool_rows(
    model,
    exs,
    encs,
    grid=GRID,
    lexical_grid=LEXICAL_GRID,
    dense_grid=DENSE_GRID,
    sentence_grid=SENTENCE_GRID,
) -> list[dict[str, float]]:
    """Passage nDCG@10 (percent) of every ``(a, w, v, u)`` of the four grids (key :func:`cell`)
    for each paper pool with gold, and its query kind (``"kind"``: one of :data:`KINDS`)."""
    rows = []
    for ex, enc, graph, local, cos, titled in paper_pool_logits(model, exs, encs):
        ids, gold = [c.doc_id for c in ex.candidates], set(ex.gold_doc_ids)
        bm25 = pool_lexical(enc)[:, 1].float()
        row = {"kind": "citance" if has_citation_marker(ex.query) else "question"}
        for a in grid:
            for w in lexical_grid:
                base = a * graph + (1 - a) * local + w * bm25
                for v in dense_grid:
                    with_v = base + dense_term(enc, v, cos)
                    for u in sentence_grid:
                        order = passage_order(model, enc, with_v + u * DENSE_SCALE * titled)
                        ndcg = ndcg_at_k([ids[i] for i in order], gold, 10)
                        row[cell(a, w, v, u)] = 100 * ndcg
        rows.append(row)
    return rows


def candidates() -> list[tuple[float, float, float, float]]:
    """Every ``(a, w, v, u)`` of the grids."""
    return [
        (a, w, v, u) for a in GRID for w in LEXICAL_GRID for v in DENSE_GRID for u in SENTENCE_GRID
    ]


def best_cell(macro: dict[str, float]) -> tuple[float, float, float, float]:
    """The ``(a, w, v, u)`` with the best macro nDCG@10 (rounded to 1e-6); ties: the smaller
    ``u`` (less titled-sentence prior), then the smaller ``v`` (less dense passage prior), then
    the smaller ``w`` (less lexical prior), then the larger ``a`` (more graph)."""
    return max(candidates(), key=lambda p: (round(macro[cell(*p)], 6), -p[3], -p[2], -p[1], p[0]))


def pooled_macro(tunes: list[dict], kind: str) -> dict[str, float]:
    """Mean over runs (seeds of one training recipe) of each cell's macro for ``kind``.

    ``pooled[c] = (1 / S) * sum_s macro_s[c]`` over the ``S`` tune results (the JSON that
    ``tune-score --paper-route`` prints). Choosing on the pooled table gives every seed of a
    recipe one route (docs/studies.md, "Seed-pooled citing cells").

    Raises:
        ValueError: fewer than one result, a result without ``macro[kind]``, or results over
            different cells.
    """
    tables = []
    for i, tune in enumerate(tunes):
        table = tune.get("macro", {}).get(kind) if isinstance(tune, dict) else None
        if not table:
            raise ValueError(f"tune result {i + 1} has no '{kind}' macro table")
        tables.append(table)
    if not tables:
        raise ValueError("no tune results to pool")
    if any(set(t) != set(tables[0]) for t in tables):
        raise ValueError("the tune results cover different cells; tune every seed on one grid")
    return mean_table(tables)


def mean_table(tables: list[dict[str, float]]) -> dict[str, float]:
    """``{cell: mean over tables}`` of tables over the same cells."""
    return {c: sum(t[c] for t in tables) / len(tables) for c in tables[0]}


def _frozen_model(checkpoint: str | Path, threads: int = 1):
    """The checkpoint's LoG model on CPU, ``threads`` torch threads, in eval mode (the tunings'
    frozen model)."""
    from ...pipeline import LoGReranker

    torch.set_num_threads(max(1, threads))
    return LoGReranker.from_pretrained(str(checkpoint), device="cpu").eval()


def _spec_pools(model, specs, cache_dir: str, log):
    """``(spec, examples, encodings)`` of each spec, encoded by
    :func:`~logrerank.training.log.encode_cache.encode_cached` (cached under ``cache_dir``)."""
    for spec in specs:
        src, split, limit, offset = parse_spec(spec)
        exs, encs = encode_cached(model, src, split, limit or None, cache_dir, log, offset=offset)
        yield spec, exs, encs


def _write_choice(checkpoint: str | Path, key: str, result: dict, write: bool) -> dict:
    """With ``write``, merge ``result["chosen"]`` into the checkpoint's ``model.score`` and keep
    ``result`` as ``training.<key>`` in its ``config.json``; return ``result`` with ``written``."""
    path = Path(checkpoint) / "config.json"
    if write:
        meta = read_meta(Path(checkpoint))
        meta["model"]["score"].update(result["chosen"])
        meta.setdefault("training", {})[key] = result
        write_meta(Path(checkpoint), meta)
    return result | {"written": str(path) if write else None}


def tune_paper_route(
    checkpoint: str | Path,
    specs=SPECS,
    cache_dir: str = "runs/enc",
    write: bool = True,
    command: str = "",
    log=sys.stderr,
    threads: int = 1,
) -> dict:
    """Choose ``score.paper_global_weight`` on ``specs`` (module docstring) and (``write``) store
    it with ``score.paper_title_words`` in ``checkpoint/config.json``."""
    model = _frozen_model(checkpoint, threads)
    per: dict[str, dict[str, dict[str, float]]] = {k: {} for k in KINDS}
    cells = [cell(*p) for p in candidates()]
    sizes: dict[str, dict[str, int]] = {}
    print(
        f"dense-prior embeddings: {load_kept(model, cache_dir, log)} read from {cache_dir}",
        file=log,
    )
    for spec, exs, encs in _spec_pools(model, specs, cache_dir, log):
        rows = pool_rows(model, exs, encs)
        save_kept(model, cache_dir)  # the next tuning embeds none of these texts again
        sizes[spec] = {k: sum(r["kind"] == k for r in rows) for k in KINDS}
        for k in KINDS:
            sub = [r for r in rows if r["kind"] == k]
            if len(sub) >= MIN_POOLS:
                per[k][spec] = {c: statistics.fmean(r[c] for r in sub) for c in cells}
    if not per["question"]:
        raise ValueError(f"fewer than {MIN_POOLS} question paper pools with gold in every spec")
    macro = {
        k: {c: statistics.fmean(p[c] for p in per[k].values()) for c in cells}
        for k in KINDS
        if per[k]
    }
    best = {k: best_cell(m) for k, m in macro.items()}
    (qa, qw, qv, qu), (ca, cw, cv, cu) = best["question"], best.get("citance", (1, 0, 0, 0))
    chosen = {
        "paper_title_words": TITLE_WORDS,
        "paper_global_weight": qa,
        "paper_lexical_weight": qw,
        "paper_dense_weight": qv,
        "paper_sentence_weight": qu,
        # a route of its own only where citing queries are better served by another cell
        "citance_route": "citance" in best and best["citance"] != best["question"],
        "citance_global_weight": ca,
        "citance_lexical_weight": cw,
        "citance_dense_weight": cv,
        "citance_sentence_weight": cu,
    }
    result = {
        "chosen": chosen,
        "objective": "per query kind, macro passage nDCG@10 over the specs' paper pools; "
        "cells a|w|v|u (graph weight | lexical prior weight | dense passage prior weight | "
        "titled-sentence prior weight)",
        "macro": {k: {a: round(v, 2) for a, v in m.items()} for k, m in macro.items()},
        "per_spec": {
            k: {s: {a: round(v, 2) for a, v in p.items()} for s, p in per[k].items()} for k in KINDS
        },
        "pools": sizes,
        "command": command,
    }
    return _write_choice(checkpoint, "paper_route", result, write)


UNTITLED_SPECS = ("citint:train:200:400", "citint:train:100:300")
"""Training pools ``score.untitled_global_weight`` is chosen on: Citation-Integrity train claims
400-599 (no stage of the bundled LoG and none of its tuning used them) and 300-399
(``select-citint``, where the untitled lexical prior and head weight were chosen)."""

UNTITLED_MARGIN = 0.5
"""How much (macro passage nDCG@10, points) the best ``a > 0`` must beat ``a = 0`` (local only)
by for the graph stage to be kept on untitled pools."""


def untitled_pool_logits(model, exs, encs):
    """``(example, encoding, graph, local)`` for each untitled pool with gold (titled share under
    ``score.lexical_max_titled``): the frozen model's ``[N]`` final logits with its graph stage
    and local only, each with the pool's lexical prior and head weight."""
    cfg = model.config
    for ex, enc in zip(exs, encs):
        route = pool_route(cfg, enc.passages, enc.query)
        if not ex.gold_doc_ids or route.titled_fraction >= cfg.score.lexical_max_titled:
            continue
        l_global = stage_logits(model, enc, route.stage)
        lex, hw = route.lexical_weight, route.head_weight
        graph = final_logits(enc, l_global, cfg.score, lex, hw).float()
        local = final_logits(enc, None, cfg.score, lex, hw).float()
        yield ex, enc, graph, local


def untitled_rows(model, exs, encs, grid=GRID) -> list[dict[str, float]]:
    """Passage nDCG@10 (percent) of every ``a`` in ``grid`` (key ``f"{a:g}"``) for each untitled
    pool with gold."""
    rows = []
    for ex, enc, graph, local in untitled_pool_logits(model, exs, encs):
        ids, gold = [c.doc_id for c in ex.candidates], set(ex.gold_doc_ids)
        row = {}
        for a in grid:
            order = passage_order(model, enc, a * graph + (1 - a) * local)
            row[f"{a:g}"] = 100 * ndcg_at_k([ids[i] for i in order], gold, 10)
        rows.append(row)
    return rows


def choose_untitled_weight(macro: dict[str, float], margin: float = UNTITLED_MARGIN) -> float:
    """``a`` from the macro table (key ``f"{a:g}"``): the best ``a > 0`` (ties: the larger ``a``)
    when it beats ``a = 0`` (local only) by at least ``margin``, else 0."""
    best = max((a for a in GRID if a > 0), key=lambda a: (round(macro[f"{a:g}"], 6), a))
    return best if macro[f"{best:g}"] >= macro["0"] + margin else 0.0


def tune_untitled_route(
    checkpoint: str | Path,
    specs=UNTITLED_SPECS,
    cache_dir: str = "runs/enc",
    write: bool = True,
    command: str = "",
    log=sys.stderr,
    threads: int = 1,
) -> dict:
    """Choose ``score.untitled_global_weight`` (the graph stage's weight on untitled pools) on
    ``specs`` by :func:`choose_untitled_weight` over the macro mean of each spec's mean passage
    nDCG@10, and (``write``) store it in ``checkpoint/config.json`` with how it was chosen
    (``training.untitled_route``)."""
    model = _frozen_model(checkpoint, threads)
    keys = [f"{a:g}" for a in GRID]
    per: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
    for spec, exs, encs in _spec_pools(model, specs, cache_dir, log):
        rows = untitled_rows(model, exs, encs)
        sizes[spec] = len(rows)
        if len(rows) >= MIN_POOLS:
            per[spec] = {k: statistics.fmean(r[k] for r in rows) for k in keys}
    if not per:
        raise ValueError(f"fewer than {MIN_POOLS} untitled pools with gold in every spec")
    macro = {k: statistics.fmean(p[k] for p in per.values()) for k in keys}
    chosen = choose_untitled_weight(macro)
    result = {
        "chosen": {"untitled_global_weight": chosen},
        "objective": "macro passage nDCG@10 over the specs' untitled pools; keys a (graph "
        f"weight); a > 0 only when it beats a = 0 (local only) by >= {UNTITLED_MARGIN:g}",
        "macro": {k: round(v, 2) for k, v in macro.items()},
        "per_spec": {s: {k: round(v, 2) for k, v in p.items()} for s, p in per.items()},
        "pools": sizes,
        "command": command,
    }
    return _write_choice(checkpoint, "untitled_route", result, write)
