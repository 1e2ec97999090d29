"""The sentence roles a ranking shows: the role tagger's, with the LoG role head's reading kept.

A LoG ranking's ``ScoredSentence.role`` / ``role_probs`` come from the local scorer's role head
(eq. 3), which feeds the local score and is often wrong as a label (sentence accuracy on the test
splits CSAbstruct 57.0 %, NICTA-PIBOSO 66.0 %, PubMedQA section labels 72.7 %). The separately
trained role tagger (:mod:`logrerank.models.role_tagger`) gets 78.3 / 81.3 / 89.0 %
(``logrerank/checkpoints/role-tagger/MODEL_CARD.md``). :func:`with_tagger_roles` returns a copy of
a ranking whose sentences carry the tagger's roles; the scores are left as they are (LoG computed
them with its head's roles), and the head's own reading is kept in ``info``::

    shown = with_tagger_roles(ranking)          # the bundled tagger, loaded once per process
    shown.info["role_source"]                   # "role tagger"
    log_head_reading(shown, node)               # {"role": "result", "probs": [...]} or None
"""

from __future__ import annotations

import copy
import dataclasses
import time
from typing import Any

import torch

from ..checkpoint import CheckpointError
from ..config import ROLE_NAMES, ConfigError
from ..types import Ranking, ScoredSentence
from .context import context_prompt

ROLE_SOURCE_KEY = "role_source"
"""``Ranking.info`` key naming where the shown roles come from."""

TAGGER_SOURCE = "role tagger"
"""``info["role_source"]`` of a ranking whose roles are the role tagger's."""

LOG_HEAD_SOURCE = "LoG role head"
"""Where a ranking's roles come from when :func:`with_tagger_roles` did not replace them."""

LOG_HEAD_KEY = "log_role_head"
"""``Ranking.info`` key of the LoG role head's reading: ``{str(node): {"role", "probs"}}``."""

TIMING_KEY = "role tagger"
"""``Ranking.timings`` key of the tagger's wall time (seconds)."""

RoleCache = dict[tuple[str, ...], list[list[float]]]
"""Tagger probabilities per passage (its sentence texts in order), reusable across calls."""


def role_source(ranking: Ranking) -> str:
    """Where the ranking's shown roles come from: :data:`TAGGER_SOURCE` or
    :data:`LOG_HEAD_SOURCE` (a ranking :func:`with_tagger_roles` did not retag)."""
    return str(ranking.info.get(ROLE_SOURCE_KEY) or LOG_HEAD_SOURCE)


def log_head_reading(ranking: Ranking, node: int) -> dict[str, Any] | None:
    """The LoG role head's ``{"role", "probs"}`` for sentence ``node`` of a retagged ranking,
    or None (not retagged, or the sentence had no role)."""
    readings = ranking.info.get(LOG_HEAD_KEY) or {}
    return readings.get(str(node))


def passage_groups(ranking: Ranking) -> list[list[ScoredSentence]]:
    """The ranking's sentences grouped by passage (passages in index order), each group in
    sentence order: the documents the tagger reads."""
    by_passage: dict[int, list[ScoredSentence]] = {}
    for s in ranking.sentences:
        by_passage.setdefault(s.passage_idx, []).append(s)
    return [sorted(by_passage[i], key=lambda s: s.sent_idx) for i in sorted(by_passage)]


def with_tagger_roles(
    ranking: Ranking, tagger: Any = None, *, cache: RoleCache | None = None
) -> Ranking:
    """A copy of ``ranking`` whose sentences carry the role tagger's roles.

    The tagger reads each passage as one document (its sentences in order), in one
    :meth:`~logrerank.models.role_tagger.RoleTagger.predict` call. The copy's sentences get the
    tagger's ``role_probs`` and their argmax as ``role``; its ``info`` gets
    ``"role_source": "role tagger"``, ``"role_tagger"`` (the checkpoint folder) and
    ``"log_role_head"``: the LoG role head's reading per sentence,
    ``{str(node): {"role": ..., "probs": [...]}}`` (JSON-serialisable); its structured context
    names the new roles. Scores and order are unchanged. The input is not modified (the copy
    shares its passages, passage order and edges).

    Args:
        ranking: a ranking (any ranker; sentence rankers have sentences to tag).
        tagger: an object with ``predict(docs: list[list[str]]) -> list[Tensor [m, 3]]`` over
            :data:`~logrerank.config.ROLE_NAMES`; None = the bundled role tagger
            (:func:`~logrerank.models.role_tagger.load_default`, loaded once per process).
        cache: optional dict kept by the caller: passages already tagged are read from it and
            new ones written to it (the app keeps one per input, so a knob change re-tags
            nothing).

    Returns:
        The retagged copy; ``ranking`` itself when it has no sentences. When the bundled tagger
        cannot be loaded, a copy with the roles unchanged, a warning in ``warnings`` and
        ``info["role_tagger_error"]``.

    Raises:
        ValueError: the tagger returned the wrong number of documents or of rows.
    """
    if not ranking.sentences:
        return ranking
    if tagger is None:
        from ..models.role_tagger import load_default

        try:
            tagger = load_default()
        except (CheckpointError, ConfigError, OSError) as exc:
            return _unavailable(ranking, str(exc))
    groups = passage_groups(ranking)
    t0 = time.perf_counter()
    probs = _tag(tagger, [tuple(s.text for s in g) for g in groups], cache)
    elapsed = time.perf_counter() - t0
    tagged: dict[int, list[float]] = {}
    for g, rows in zip(groups, probs):
        for s, row in zip(g, rows):
            tagged[s.node] = row
    roles = {
        node: ROLE_NAMES[max(range(len(row)), key=row.__getitem__)] for node, row in tagged.items()
    }
    sentences = [
        dataclasses.replace(s, role=roles[s.node], role_probs=list(tagged[s.node]))
        for s in ranking.sentences
    ]
    info = dict(ranking.info)
    if info.get(ROLE_SOURCE_KEY) != TAGGER_SOURCE:  # retagging twice keeps the head's reading
        info[LOG_HEAD_KEY] = {
            str(s.node): {"role": s.role, "probs": list(s.role_probs) if s.role_probs else None}
            for s in ranking.sentences
            if s.role is not None or s.role_probs is not None
        }
    info[ROLE_SOURCE_KEY] = TAGGER_SOURCE
    info["role_tagger"] = str(getattr(tagger, "source", None) or type(tagger).__name__)
    info.pop("role_tagger_error", None)
    return dataclasses.replace(
        ranking,
        sentences=sentences,
        context=_retag_context(ranking.context, roles),
        timings={**ranking.timings, TIMING_KEY: elapsed},
        warnings=list(ranking.warnings),
        info=info,
    )


def _tag(
    tagger: Any, docs: list[tuple[str, ...]], cache: RoleCache | None
) -> list[list[list[float]]]:
    """Tagger probabilities per doc (rows of 3 floats), predicting only docs not in ``cache``."""
    cache = {} if cache is None else cache
    todo = list(dict.fromkeys(d for d in docs if d not in cache))
    if todo:
        with torch.inference_mode():
            out = tagger.predict([list(d) for d in todo])
        if len(out) != len(todo):
            raise ValueError(f"the role tagger returned {len(out)} documents for {len(todo)}")
        for d, t in zip(todo, out):
            rows = torch.as_tensor(t, dtype=torch.float64).tolist()
            if len(rows) != len(d) or any(len(r) != len(ROLE_NAMES) for r in rows):
                raise ValueError(
                    f"the role tagger returned {len(rows)} rows for a {len(d)}-sentence document "
                    f"(expected [m, {len(ROLE_NAMES)}])"
                )
            cache[d] = rows
    return [cache[d] for d in docs]


def _retag_context(context: dict[str, Any] | None, roles: dict[int, str]) -> dict[str, Any] | None:
    """A copy of a structured context (:mod:`logrerank.ranking.context`) whose units and
    neighbours name ``roles`` (by node), with its prompt rendered again."""
    if not context or not context.get("units"):
        return context
    out = copy.deepcopy(context)

    def retag(ref: dict[str, Any] | None) -> None:
        if ref is not None and ref.get("node") in roles:
            ref["role"] = roles[ref["node"]]

    for unit in out["units"]:
        retag(unit)
        retag(unit.get("before"))
        retag(unit.get("after"))
        for ref in unit.get("similar") or []:
            retag(ref)
    out["prompt"] = context_prompt(out["units"])
    return out


def _unavailable(ranking: Ranking, error: str) -> Ranking:
    """A copy of ``ranking`` with its roles unchanged and a warning that the tagger is missing."""
    warning = f"role tagger unavailable ({error}); the roles shown are the LoG role head's (eq. 3)"
    source = ranking.info.get(ROLE_SOURCE_KEY) or LOG_HEAD_SOURCE  # an earlier retag stays
    info = {**ranking.info, ROLE_SOURCE_KEY: source, "role_tagger_error": error}
    warnings = list(ranking.warnings) + ([warning] if warning not in ranking.warnings else [])
    return dataclasses.replace(ranking, warnings=warnings, info=info)


__all__ = [
    "LOG_HEAD_KEY",
    "LOG_HEAD_SOURCE",
    "ROLE_SOURCE_KEY",
    "TAGGER_SOURCE",
    "TIMING_KEY",
    "RoleCache",
    "log_head_reading",
    "passage_groups",
    "role_source",
    "with_tagger_roles",
]
