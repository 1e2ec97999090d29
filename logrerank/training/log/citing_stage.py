"""A multi-passage stage of its own for citing queries (``logrerank citing-stage``).

Two stage-2 trainings that share one local stage can differ in what their multi-passage stage
serves best: in the bundled model, the stage trained on top of the paper-pool priors of question
pools (``configs/global-evinf-priors-questions.json``) ranks question pools, and the stage trained
without them (``configs/global-evinf.json``) ranks citing queries in paper pools
(docs/studies.md, "One stage for questions, one for citing sentences"). This module writes such
a model: the ``base`` checkpoint as is, plus the ``citing`` checkpoint's multi-passage stage as
``global_citing`` with the citing-query cells its own ``tune-score --paper-route`` chose
(``score.citance_*``), and ``score.citance_stage`` on (:data:`logrerank.ranking.routing.CITING`).

Nothing is trained here: both stages come from their own trainings, and the tuned routes come
from their own checkpoints' ``training.paper_route`` records, which are kept in the result. With
``citing_tunes`` (the ``tune-score --paper-route`` results of every seed of the donor's recipe)
the citing cells are instead the best cell of those seeds' pooled table
(:func:`~logrerank.training.log.route_tuning.pooled_macro`), one route for every seed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from ...log_checkpoint import read_meta

CITANCE_FIELDS = (
    "citance_global_weight",
    "citance_lexical_weight",
    "citance_dense_weight",
    "citance_sentence_weight",
)
"""The citing-query cells taken from the ``citing`` checkpoint (with ``citance_route`` on)."""

SHARED_PREFIXES = ("local.", "passage_head.", "global_single.")
"""Tensors the two checkpoints must hold equal: the stages both routes read."""

META_KEYS = ("format", "format_version", "model", "backbone_tensors_stored")


def _route_summary(route: dict | None) -> dict | None:
    """A ``training.paper_route`` record without its grid tables: what was chosen, on which
    pools, by which command, and the citing-query macro of the chosen cell."""
    if not route:
        return None
    keep = {k: route.get(k) for k in ("chosen", "objective", "pools", "command")}
    ch = route.get("chosen", {})
    key = "|".join(f"{ch.get(k, 0):g}" for k in CITANCE_FIELDS)
    keep["citing_macro"] = route.get("macro", {}).get("citance", {}).get(key)
    return keep


def pooled_citing_cells(paths: list[str | Path]) -> tuple[dict[str, float], dict[str, Any]]:
    """``(cells, record)``: the citing-query cells (a, w, v, u) with the best mean citing macro
    over the tune results in ``paths`` (JSON files of ``tune-score --paper-route``), and what
    to record of them.

    Raises:
        ValueError: a file that is missing or not JSON, or results that cannot be pooled.
    """
    from .route_tuning import best_cell, cell, pooled_macro

    tunes = []
    for path in paths:
        try:
            tunes.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read the tune result {path}: {exc}") from exc
    pooled = pooled_macro(tunes, "citance")
    try:
        best = best_cell(pooled)
    except KeyError as exc:
        raise ValueError(f"the tune results do not cover the current grid (no cell {exc})") from exc
    record = {
        "tunes": [str(p) for p in paths],
        "rule": "the cell with the best mean citing macro over these seeds' tunes",
        "pooled_macro": round(pooled[cell(*best)], 4),
        "own_cells": [{k: t.get("chosen", {}).get(k) for k in CITANCE_FIELDS} for t in tunes],
    }
    return dict(zip(CITANCE_FIELDS, best, strict=True)), record


def load_frozen(path: str | Path):
    """The LoG model of a checkpoint folder, on CPU, in eval mode."""
    from ...pipeline import LoGReranker

    return LoGReranker.from_pretrained(str(path), device="cpu").eval()


def check_compatible(base, citing) -> None:
    """Raise ``ValueError`` unless the two models share their local (and single-passage) stage
    tensor for tensor and their multi-passage stage settings, and neither has a citing stage."""
    plain = {"members": 1, "citing_members": 1, "store_half": False}  # seed ensembles may differ
    if replace(base.config.global_, **plain) != replace(citing.config.global_, **plain):
        raise ValueError("the two checkpoints' multi-passage stages have different settings")
    if base.global_citing is not None or citing.global_citing is not None:
        raise ValueError("a checkpoint already has a citing stage; give two plain checkpoints")
    own, other = base.state_dict(), citing.state_dict()
    differ = [
        k
        for k in own
        if k.startswith(SHARED_PREFIXES)
        and (k not in other or other[k].shape != own[k].shape or not torch.equal(own[k], other[k]))
    ]
    if differ:
        raise ValueError(
            f"the two checkpoints do not share their local stage ({len(differ)} tensors differ, "
            f"e.g. {differ[0]}): both stages must be trained on the same local stage"
        )


def add_citing_stage(
    base: str | Path,
    citing: str | Path,
    out: str | Path,
    command: str = "",
    store_half: bool = True,
    citing_tunes: list[str | Path] | None = None,
) -> dict[str, Any]:
    """Write ``out``: ``base`` with ``citing``'s multi-passage stage for citing queries.

    Args:
        base: checkpoint whose stages and question route are kept.
        citing: checkpoint (same local stage) whose multi-passage stage and citing-query cells
            serve citing queries in paper pools.
        out: output folder (created; may not be ``base`` or ``citing``).
        command: the command line, recorded in ``training.citing_stage``.
        store_half: store the single-passage stage as float16 (``single.store_half``), for
            models whose untitled route gives it weight 0; refused otherwise.
        citing_tunes: tune results of every seed of the donor's recipe; the citing cells are
            then chosen on their pooled table (:func:`pooled_citing_cells`), not the donor's.

    Returns:
        The ``training.citing_stage`` record written.

    Raises:
        ValueError: incompatible checkpoints, ``out`` equal to an input, or ``store_half`` on a
            model that ranks with its single-passage stage.
    """
    out = Path(out)
    if out.resolve() in (Path(base).resolve(), Path(citing).resolve()):
        raise ValueError("--out must be a new folder, not one of the two checkpoints")
    pooled = pooled_citing_cells(citing_tunes) if citing_tunes else None  # bad files: fail fast
    b, c = load_frozen(base), load_frozen(citing)
    check_compatible(b, c)
    if store_half and b.config.single.min_titled > 0 and b.config.score.untitled_global_weight > 0:
        raise ValueError("the single-passage stage ranks untitled pools; keep it in float32")
    cells = {k: getattr(c.config.score, k) for k in CITANCE_FIELDS}
    if pooled:
        cells, pooled = pooled
    score = replace(b.config.score, citance_route=True, citance_stage=True, **cells)
    single = replace(b.config.single, store_half=store_half)
    glob = replace(b.config.global_, citing_members=c.config.global_.members)
    b.config = replace(b.config, score=score, single=single, global_=glob)
    b.global_citing = c.global_model  # the base keeps its stages; the donor's joins them
    meta = read_meta(Path(base))
    cmeta = read_meta(Path(citing))
    extra = {k: v for k, v in meta.items() if k not in META_KEYS}
    record = {
        "base": str(base),
        "citing": str(citing),
        "citing_cells": cells,
        "citing_cells_pooled": pooled,
        "citing_training": {k: cmeta.get("training", {}).get(k) for k in ("config", "seed")},
        "citing_paper_route": _route_summary(cmeta.get("training", {}).get("paper_route")),
        "single_stored_half": store_half,
        "command": command,
    }
    extra.setdefault("training", {})["citing_stage"] = record
    b.save_pretrained(out, extra=extra)
    return record
