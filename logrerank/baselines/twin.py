"""The cross-encoder twin: LoG's local scorer on whole passages (the ``cross-encoder-twin`` row).

The LoG-Reranker paper asks what sentence granularity and the graph add over a passage model
trained the same way. The twin answers the "trained the same way" part: a LoG checkpoint whose
nodes are passage units (``LocalConfig.unit = "passage"``, :mod:`logrerank.passage_units`) with
the same frozen layers, bi-encoder prior, joint layer, heads and score adjustments, trained by
``logrerank train local --config configs/twin.json`` (:mod:`logrerank.training.unit_loss`), and
ranked local only. A passage scores as its best unit; the result is passage level (its units are
not the dataset's sentences), with the best unit's offsets in each passage's ``extra``.

The checkpoint is ``logrerank/checkpoints/cross-encoder-twin/`` (``$LOGRERANK_CHECKPOINTS``
overrides) or a folder given explicitly (``logrerank eval --twin DIR``). There is no fallback:
without one the ranker raises :class:`TwinUnavailableError`, whose message says how to get one.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from ..checkpoint import CONFIG_NAME, CheckpointError
from ..resources import checkpoint_dir
from ..types import Ranking

TWIN_NAME = "cross-encoder-twin"
"""Registry name of the twin, and the name of its bundled checkpoint folder."""


class TwinUnavailableError(CheckpointError):
    """No twin checkpoint where one was looked for, or the folder is not a twin."""


def twin_checkpoint_dir() -> Path:
    """Where the bundled twin lives (whether or not it exists)."""
    return checkpoint_dir(TWIN_NAME)


def load_twin(path: str | os.PathLike[str] | None = None, device: str = "auto") -> Any:
    """Load the twin (a :class:`~logrerank.pipeline.LoGReranker` with passage units).

    Args:
        path: the checkpoint folder; None = :func:`twin_checkpoint_dir`.
        device: where it runs.

    Raises:
        TwinUnavailableError: no checkpoint there, or one whose nodes are not passage units.
        CheckpointError: a damaged checkpoint.
    """
    from ..pipeline import LoGReranker

    folder = Path(path) if path else twin_checkpoint_dir()
    if not (folder / CONFIG_NAME).is_file():
        raise TwinUnavailableError(
            f"{TWIN_NAME} unavailable: no checkpoint in {folder}. Train one with "
            "`logrerank train local --config configs/twin.json` and pass its folder "
            f"(`logrerank eval --twin runs/twin`) or copy it to {twin_checkpoint_dir()}"
        )
    model = LoGReranker.from_pretrained(folder, device=device)
    if model.config.local.unit != "passage":
        raise TwinUnavailableError(
            f"{folder} is not a {TWIN_NAME} checkpoint: its local.unit is "
            f"{model.config.local.unit!r}, not 'passage' (a LoG checkpoint goes to --checkpoint)"
        )
    return model


class TwinRanker:
    """The twin as a registry ranker: local only, passage level, a passage = its best unit.

    Args:
        model: a loaded twin, or a zero-argument callable returning one (called on first use,
            so a missing checkpoint raises at :meth:`rank`, as the cross-encoder rankers do).
    """

    name, level = TWIN_NAME, "passage"

    def __init__(self, model: Any):
        loaded = hasattr(model, "rerank")
        self._model = model if loaded else None
        self._load = None if loaded else model

    @property
    def model(self) -> Any:
        """The twin, loaded on first access."""
        if self._model is None:
            self._model = self._load()
        return self._model

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        """Rank ``passages`` for ``query`` by their best unit.

        Raises:
            InputError: invalid input.
            TwinUnavailableError: no twin checkpoint.
        """
        r = self.model.rerank(query, passages, use_global=False, ranker=self.name)
        units = r.sentence_by_node()
        counts: dict[int, int] = {}
        for s in r.sentences:
            counts[s.passage_idx] = counts.get(s.passage_idx, 0) + 1
        ranked = []
        for sp in r.passages_ranked:
            best = units.get(sp.best_node) if sp.best_node is not None else None
            extra = {"units": counts.get(sp.passage_idx, 0)}
            if best is not None:
                extra |= {"best_unit_start": best.start, "best_unit_end": best.end}
            ranked.append(dataclasses.replace(sp, best_node=None, extra=extra))
        info = dict(r.info) | {
            "level": "passage",
            "unit_tokens": self.model.config.local.unit_tokens,
        }
        return Ranking(
            r.query,
            r.passages,
            self.name,
            passages_ranked=ranked,
            timings=r.timings,
            warnings=r.warnings,
            info=info,
        )
