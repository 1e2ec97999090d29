"""A seed ensemble of multi-passage stages (``logrerank ensemble-stage``).

Stage-2 trainings that differ only in their seed share the local stage and differ in the
multi-passage stage. This module writes one checkpoint whose multi-passage stage is the
ensemble of theirs (:class:`~logrerank.graph.ensemble.GlobalEnsemble`: the mean of the members'
global logits): the first checkpoint as is, its ``global_model`` replaced by the ensemble.
Nothing is trained. The members are stored as float16 by default, which keeps a three-member
question ensemble plus a three-member citing ensemble (``logrerank citing-stage`` on two
ensembles) under 20 MB; the route cells are the first checkpoint's until ``tune-score
--paper-route`` chooses the ensemble's own.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ...log_checkpoint import read_meta
from .citing_stage import META_KEYS, check_compatible, load_frozen


def build_ensemble(
    checkpoints: list[str | Path],
    out: str | Path,
    command: str = "",
    store_half: bool = True,
) -> dict[str, Any]:
    """Write ``out``: ``checkpoints[0]`` with the ensemble of every checkpoint's multi-passage
    stage.

    Args:
        checkpoints: two or more LoG checkpoints trained on one local stage with the same
            multi-passage settings (e.g. the seeds of one ``train global --final``).
        out: output folder (created; may not be one of ``checkpoints``).
        command: the command line, recorded in ``training.ensemble``.
        store_half: store the multi-passage stages as float16 (``global.store_half``).

    Returns:
        The ``training.ensemble`` record written.

    Raises:
        ValueError: fewer than two checkpoints, a repeated one, ``out`` equal to one of them,
            or checkpoints that do not share their local stage and stage settings.
    """
    from ...graph.ensemble import GlobalEnsemble

    paths = [Path(p) for p in checkpoints]
    if len(paths) < 2:
        raise ValueError("an ensemble needs at least two checkpoints")
    if len({p.resolve() for p in paths}) < len(paths):
        raise ValueError("a checkpoint is given twice")
    if Path(out).resolve() in {p.resolve() for p in paths}:
        raise ValueError("--out must be a new folder, not one of the checkpoints")
    models = [load_frozen(p) for p in paths]
    base = models[0]
    if base.config.global_.members != 1 or any(m.config.global_.members != 1 for m in models):
        raise ValueError("a checkpoint is an ensemble already; give single-stage checkpoints")
    for other in models[1:]:
        check_compatible(base, other)
    base.global_model = GlobalEnsemble.of([m.global_model for m in models])
    cfg = dataclasses.replace(base.global_model.config, store_half=store_half)
    base.config = dataclasses.replace(base.config, global_=cfg)
    meta = read_meta(paths[0])
    extra = {k: v for k, v in meta.items() if k not in META_KEYS}
    seeds = []
    for p in paths:
        training = read_meta(p).get("training", {})
        seeds.append(training.get("seed"))
    record = {
        "members": [str(p) for p in paths],
        "seeds": seeds,
        "stored_half": store_half,
        "route": f"the route cells of {paths[0]} (tune the ensemble's own)",
        "command": command,
    }
    extra.setdefault("training", {})["ensemble"] = record
    base.save_pretrained(out, extra=extra)
    return record
