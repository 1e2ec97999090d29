"""The cross-encoder rerank stage: a first pass over everything, the cross-encoder over its top.

:class:`CrossEncoderStage` runs a first-pass ranker over every candidate, the cross-encoder
(:class:`~logrerank.models.cross_encoder.CrossEncoder`) over its top ``top_n`` only, min-max
normalises both and blends ``final = w * ce + (1 - w) * first_pass`` (:func:`blend`, also what
cross-encoder training reports on held-out queries). It never raises for model failures: a
missing or broken model, or a scoring error, passes the first-pass order through with a warning
and ``Ranking.info["degraded"] = True``.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from typing import Any

from ..inputs.passages import normalize_passages
from ..models.cross_encoder import DEFAULT_MAX_CHARS, CrossEncoder, pair_text
from ..text.bm25 import minmax
from ..types import InputError, Ranking, ScoredPassage
from .base import Ranker
from .cross_encoder_ranker import (
    add_lexical,
    as_cross_encoder,
    lexical_text,
    spec_name,
    untrained_warning,
)


def blend(
    logits: Sequence[float], first_scores: Sequence[float], weight: float
) -> tuple[list[float], list[float], list[int]]:
    """The stage's blend of the reranked top: ``final = w * minmax(ce) + (1 - w) * minmax(fp)``.

    Args:
        logits: cross-encoder logits of the top passages, in first-pass order.
        first_scores: their first-pass scores.
        weight: the cross-encoder share ``w`` in [0, 1].

    Returns:
        ``(ce, final, order)``: the normalised cross-encoder scores, the blended scores and the
        top's new order (indices into the top, by ``final`` descending, ties in first-pass
        order).
    """
    ce = minmax(list(logits))
    fp = minmax(list(first_scores))
    final = [weight * c + (1.0 - weight) * f for c, f in zip(ce, fp)]
    order = sorted(range(len(final)), key=lambda i: (-final[i], i))
    return ce, final, order


class CrossEncoderStage:
    """First pass over everything, cross-encoder over its top ``top_n``.

    For the top ``top_n`` passages of the first pass::

        ce    = minmax(cross-encoder logits of the top_n)
        fp    = minmax(first-pass scores of the top_n)
        final = blend_weight * ce + (1 - blend_weight) * fp

    (``minmax`` maps a single or all-tied list to 1.0, never 0.) The top_n are reordered by
    ``final`` (ties keep first-pass order) and ``ScoredPassage.score = final``. Passages beyond
    ``top_n`` follow in first-pass order with ``score = min(final) * s'`` where ``s'`` is their
    first-pass score min-max scaled over the whole first-pass list (clamped to be
    non-increasing), so the score never increases along the ranking (beyond items can tie
    with the last reranked one at 0, but never outrank it).

    Every reranked passage records ``extra["cross_encoder_score"]`` (normalised),
    ``extra["cross_encoder_logit"]``, ``extra["pre_rerank_score"]`` (raw first-pass score) and
    ``extra["final_score"]``; all passages keep the first pass's own ``extra`` entries and get
    ``pre_rerank_score``.

    The stage is passage level: with a sentence-level first pass only its passage order and
    passage scores are used, and the result carries no sentences.

    Failure behaviour: the model is loaded lazily on first use; if it cannot be loaded the
    error is remembered (not retried per query), and every call — like any call whose scoring
    raises or returns non-finite logits — returns the first-pass order unchanged with a warning
    ``"cross-encoder unavailable (...); showing first-pass order"`` and
    ``info["degraded"] = True``. Only invalid input (:class:`~logrerank.types.InputError` from
    the first pass) raises.
    """

    name = "ce-stage"
    level = "passage"

    def __init__(
        self,
        first_pass: Ranker,
        cross_encoder: CrossEncoder | str | os.PathLike[str] | None = None,
        top_n: int = 25,
        blend_weight: float = 0.5,
        enabled: bool = True,
        max_chars: int = DEFAULT_MAX_CHARS,
    ) -> None:
        """Configure the stage.

        Args:
            first_pass: the fast ranker over the whole candidate list.
            cross_encoder: a loaded :class:`CrossEncoder`, a checkpoint path, or None for the
                default (see :class:`CrossEncoder`); paths are loaded on first use.
            top_n: passages scored by the cross-encoder (0 = none).
            blend_weight: cross-encoder share ``w`` of the final score, in [0, 1].
            enabled: False passes the first-pass order through (no model is loaded).
            max_chars: passage body characters shown to the cross-encoder.

        Raises:
            ValueError: ``top_n < 0`` or ``blend_weight`` outside [0, 1].
        """
        if top_n < 0:
            raise ValueError(f"top_n must be >= 0, got {top_n}")
        if not 0.0 <= blend_weight <= 1.0:
            raise ValueError(f"blend_weight must be in [0, 1], got {blend_weight}")
        self.first_pass = first_pass
        self.top_n = int(top_n)
        self.blend_weight = float(blend_weight)
        self.enabled = bool(enabled)
        self.max_chars = max_chars
        self._spec = cross_encoder
        self._model: CrossEncoder | None = (
            cross_encoder if isinstance(cross_encoder, CrossEncoder) else None
        )
        self._load_error: str | None = None

    def _get_model(self) -> CrossEncoder | None:
        """The cross-encoder, loaded once; None (with ``_load_error`` set) if it cannot be."""
        if self._model is None and self._load_error is None:
            try:
                self._model = as_cross_encoder(self._spec)
            except Exception as exc:  # never raise for model failures
                self._load_error = f"{type(exc).__name__}: {exc}"
        return self._model

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        """Rank with the first pass, then rerank its top ``top_n`` with the cross-encoder.

        Raises:
            InputError: an empty question (checked here, whatever the first pass checks) or
                invalid passages.
        """
        if not isinstance(query, str) or not query.strip():
            raise InputError("the question is empty: type a question")
        plist = normalize_passages(passages)
        t0 = time.perf_counter()
        first = self.first_pass.rank(query, plist)
        t_first = time.perf_counter() - t0
        timings = {f"first_pass.{k}": v for k, v in first.timings.items()}
        timings["first_pass"] = t_first
        warnings = list(first.warnings)
        info: dict[str, Any] = {
            "first_pass": getattr(self.first_pass, "name", type(self.first_pass).__name__),
            "first_pass_level": getattr(self.first_pass, "level", "passage"),
            "top_n": self.top_n,
            "blend_weight": self.blend_weight,
            "max_chars": self.max_chars,
            "enabled": self.enabled,
            "model_source": self._model.source if self._model else spec_name(self._spec),
            "trained": self._model.trained if self._model else None,
            "degraded": False,
            "reranked": 0,
        }
        ranked = first.passages_ranked
        top = ranked[: self.top_n]

        def passthrough(reason: str | None) -> Ranking:
            if reason is not None:
                warnings.append(f"cross-encoder unavailable ({reason}); showing first-pass order")
                info["degraded"] = True
            out = [
                ScoredPassage(
                    p.passage_idx,
                    p.score,
                    rank=r,
                    title=p.title,
                    extra={**p.extra, "pre_rerank_score": p.score},
                )
                for r, p in enumerate(ranked, 1)
            ]
            return Ranking(
                query,
                first.passages,
                self.name,
                passages_ranked=out,
                timings=timings,
                warnings=warnings,
                info=info,
            )

        if not self.enabled or not top:
            return passthrough(None)

        t0 = time.perf_counter()
        model = self._get_model()
        timings["cross_encoder_load"] = time.perf_counter() - t0
        if model is None:
            return passthrough(f"failed to load {spec_name(self._spec)}: {self._load_error}")
        info["model_source"] = model.source
        info["trained"] = model.trained
        if not model.trained:
            warnings.append(untrained_warning(model))

        t0 = time.perf_counter()
        try:
            pairs = [(query, pair_text(first.passages[p.passage_idx], self.max_chars)) for p in top]
            logits = [float(x) for x in model.predict(pairs)]
            texts = [lexical_text(first.passages[p.passage_idx]) for p in top]
            logits, _ = add_lexical(model, query, texts, logits)  # the model's lexical prior
            if len(logits) != len(top):
                raise RuntimeError(f"got {len(logits)} scores for {len(top)} passages")
            if not all(math.isfinite(x) for x in logits):
                raise RuntimeError("non-finite scores")
        except Exception as exc:  # never raise for model failures
            timings["cross_encoder"] = time.perf_counter() - t0
            return passthrough(f"scoring failed: {type(exc).__name__}: {exc}")
        timings["cross_encoder"] = time.perf_counter() - t0

        ce, final, order = blend(logits, [p.score for p in top], self.blend_weight)
        out: list[ScoredPassage] = []
        for i in order:
            p = top[i]
            extra = {
                **p.extra,
                "cross_encoder_score": ce[i],
                "cross_encoder_logit": logits[i],
                "pre_rerank_score": p.score,
                "final_score": final[i],
            }
            out.append(ScoredPassage(p.passage_idx, final[i], title=p.title, extra=extra))

        floor = min(final)
        all_scaled = minmax([p.score for p in ranked])
        cap = floor
        for p, s in zip(ranked[len(top) :], all_scaled[len(top) :]):
            cap = min(cap, floor * s)
            extra = {**p.extra, "pre_rerank_score": p.score}
            out.append(ScoredPassage(p.passage_idx, cap, title=p.title, extra=extra))
        for r, p in enumerate(out, 1):
            p.rank = r
        info["reranked"] = len(top)
        return Ranking(
            query,
            first.passages,
            self.name,
            passages_ranked=out,
            timings=timings,
            warnings=warnings,
            info=info,
        )
