"""The cross-encoder twin: LoG's local scorer on whole passages (the ``cross-encoder-twin`` row).

The LoG-Reranker paper asks what sentence granularity and the graph add over a passage model
trained the same way. The twin answers the "trained the same way" part: a LoG checkpoint whose
nodes are passage units (``LocalConfig.unit = "passage"``, :mod:`logrerank.local.units`) with
the same frozen layers, bi-encoder prior, joint layer, heads and score adjustments, trained by
``logrerank train local --config configs/twin.json`` (:mod:`logrerank.training.log.unit_loss`), and
ranked local only. A passage scores as its best unit; the result is passage level (its units are
not the dataset's sentences), with the best unit's offsets in each passage's ``extra``.

The checkpoint is ``logrerank/checkpoints/cross-encoder-twin/`` (``$LOGRERANK_CHECKPOINTS``
overrides) or a folder given explicitly (``logrerank eval --twin DIR``). There is no fallback:
without one the ranker raises :class:`TwinUnavailableError`, whose message says how to get one.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import CONFIG_NAME, CheckpointError
from ..models.cross_encoder import CrossEncoder
from ..ranking.results import final_logits
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


class TwinCrossEncoder(CrossEncoder):
    """The twin behind the cross-encoder interface (``predict`` on ``(query, text)`` pairs).

    What the app's comparison and the cross-encoder rankers need of a cross-encoder, so the
    twin can be picked as the comparison's cross-encoder: each text is one passage (no title);
    the pairs of one query are ranked together, local only, and a text's logit is its best
    unit's final logit (the twin's score adjustments, its lexical prior over that query's texts
    included). The pool-relative terms make a text's logit depend on the other texts of its
    query, as the bundled cross-encoder's lexical prior does. Empty texts score below the rest.

    Args:
        model: a loaded twin (:func:`load_twin`).
    """

    def __init__(self, model: Any) -> None:  # noqa: D107 - documented on the class
        # no super().__init__: the attributes of a CrossEncoder are set from the twin
        self.model = model  # the twin (a LoGReranker with passage units)
        self.path = str(model.source)
        self.source = f"{TWIN_NAME} {model.source}"
        self.trained = bool(model.config.trained)
        self.device = model.device_
        self.autocast = model.autocast_dtype
        self.precision = "auto"
        self.batch_size = 32
        self.max_length = int(model.config.local.unit_tokens)
        self.positive = None
        self.tokenizer = model.tokenizer
        self.runtime_backend, self.runtime_warning = None, None
        self.prior = None
        self.lexical_weight = 0.0  # the twin adds its own (score.lexical_weight)
        self.calibration = (1.0, 0.0)

    @torch.inference_mode()
    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Final logits, one per ``(query, text)`` pair, in input order."""
        out = [0.0] * len(pairs)
        groups: dict[str, list[int]] = {}
        for i, (q, _) in enumerate(pairs):
            groups.setdefault(str(q), []).append(i)
        cap = max(1, self.model.limits.max_passages)
        for q, idx in groups.items():
            full = [i for i in idx if str(pairs[i][1]).strip()]
            for c in range(0, len(full), cap):
                part = full[c : c + cap]
                for i, x in zip(part, self._logits(q, [str(pairs[i][1]) for i in part])):
                    out[i] = x
            if len(full) < len(idx):
                floor = min((out[i] for i in full), default=0.0) - 1.0
                for i in set(idx) - set(full):
                    out[i] = floor
        return out

    def _logits(self, query: str, texts: list[str]) -> list[float]:
        """Best-unit final logit of each text, ranked as one pool."""
        enc = self.model.encode(query, texts)
        cfg = self.model.config  # its own score adjustments and lexical prior
        logits = final_logits(enc, None, cfg.score, cfg.score.lexical_weight)
        best = torch.full((len(enc.passages),), float("-inf"))
        best = best.scatter_reduce(0, enc.passage_of, logits.float().cpu(), "amax")
        floor = float(logits.min()) - 1.0 if logits.numel() else 0.0
        return [float(x) if math.isfinite(float(x)) else floor for x in best.tolist()]


def load_twin_cross_encoder(path: str | os.PathLike[str] | None = None) -> TwinCrossEncoder:
    """:func:`load_twin` wrapped as a cross-encoder (raises as :func:`load_twin` does)."""
    return TwinCrossEncoder(load_twin(path))
