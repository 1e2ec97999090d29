"""Cross-encoder baselines: the model alone over passages or sentences, and a memoising copy.

* :class:`CrossEncoderRanker`: the cross-encoder (:class:`~logrerank.models.cross_encoder.
  CrossEncoder`) on its own, at passage level (``(query, title + first max_chars chars)``),
  full-text level (``(query, title + window)`` for every window of the whole passage, best
  window; :mod:`logrerank.models.pair_windows`) or sentence level (``(query, sentence)``);
  scores are the model's calibrated ``sigmoid(a * logit + b)`` in [0, 1]
  (:meth:`~logrerank.models.cross_encoder.CrossEncoder.probability`).
* :class:`MemoCrossEncoder`: a loaded model whose scores are memoised per pair.

The two-stage ranker (first pass, cross-encoder over its top ``top_n``, blended) is
:class:`~logrerank.baselines.cross_encoder_stage.CrossEncoderStage`.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..inputs.passages import normalize_passages
from ..models.cross_encoder import (
    DEFAULT_MAX_CHARS,
    CrossEncoder,
    pair_text,
    sigmoid,
)
from ..models.pair_windows import full_pair_texts
from ..text.bm25 import minmax
from ..text.segment import passage_spans
from ..types import InputError, Passage, Ranking, ScoredSentence


def probability(model: Any, logit: float) -> float:
    """The score reported for a logit: the model's calibrated probability, else its sigmoid."""
    fn = getattr(model, "probability", None)
    return float(fn(logit)) if callable(fn) else sigmoid(logit)


def sink(logits: list[float], blank: list[int]) -> list[float]:
    """``logits`` with those at ``blank`` (passages without text) set below all the others."""
    skip = set(blank)
    if not skip:
        return list(logits)
    floor = min((x for i, x in enumerate(logits) if i not in skip), default=0.0) - 1.0
    return [floor if i in skip else x for i, x in enumerate(logits)]


def add_lexical(
    model: Any, query: str, texts: list[str], logits: list[float]
) -> tuple[list[float], list[float]]:
    """``(logits + w * lex, lex)``: the model's lexical prior over the texts of one query.

    ``lex = minmax(BM25(query, texts))`` with IDF over ``texts`` themselves
    (:func:`~logrerank.text.bm25.bm25_scores`, the pools' settings) and ``w`` the model's
    ``lexical_weight`` (:mod:`logrerank.models.ce_prior`); a model without one (weight 0)
    gets its logits back unchanged and ``lex`` all zeros.
    """
    w = float(getattr(model, "lexical_weight", 0.0) or 0.0)
    if w <= 0 or not texts:
        return list(logits), [0.0] * len(texts)
    from ..text.bm25 import bm25_scores

    lex = minmax(bm25_scores(query, texts))
    return [x + w * v for x, v in zip(logits, lex)], lex


def lexical_text(p: Passage) -> str:
    """What the lexical prior reads for a passage: ``title + " " + text`` (as LoG's
    ``passage_bm25`` input does)."""
    return f"{p.title} {p.text}" if p.title else p.text


def as_cross_encoder(spec: CrossEncoder | str | os.PathLike[str] | None) -> CrossEncoder:
    """``spec`` itself when it is a loaded model, else :class:`CrossEncoder` of that path."""
    return spec if isinstance(spec, CrossEncoder) else CrossEncoder(spec)


def spec_name(spec: CrossEncoder | str | os.PathLike[str] | None) -> str:
    """What ``spec`` is called in messages (a model's ``source``, ``"default"`` or the path)."""
    if isinstance(spec, CrossEncoder):
        return spec.source
    return "default" if spec in (None, "") else str(spec)


def untrained_warning(model: CrossEncoder) -> str:
    """The warning shown when ``model`` has a freshly initialised head."""
    return (
        f"cross-encoder has an {model.source}: its scores are not trained relevance "
        "judgements (train one with `logrerank train crossencoder`)"
    )


class MemoCrossEncoder:
    """A :class:`~logrerank.models.cross_encoder.CrossEncoder` whose scores are memoised.

    Built by copying the loaded model's attributes into a subclass instance (so library code
    that checks ``isinstance(x, CrossEncoder)`` accepts it). The app uses it so the blend-weight
    knob re-runs the cross-encoder stage without re-scoring any pair; ``logrerank eval`` uses it
    so the cross-encoder rankers (passage, stage, evidence graph) score each pair once per query.
    At most ``MAX_ENTRIES`` scores are kept (the memo is cleared when full).
    """

    MAX_ENTRIES = 50_000

    @staticmethod
    def wrap(model: Any) -> Any:
        """Return a memoising copy of ``model`` (a loaded CrossEncoder)."""
        base = type(model)

        class _Memo(base):  # type: ignore[misc, valid-type]
            def predict(self, pairs):  # noqa: D401 - same contract as CrossEncoder.predict
                memo = self._memo
                missing = list(dict.fromkeys(p for p in pairs if p not in memo))
                if missing:
                    if len(memo) + len(missing) > MemoCrossEncoder.MAX_ENTRIES:
                        memo.clear()
                    for p, x in zip(missing, base.predict(self, missing)):
                        memo[p] = float(x)
                    self.calls += 1
                return [memo[p] for p in pairs]

        obj = _Memo.__new__(_Memo)
        obj.__dict__.update(model.__dict__)
        obj._memo = {}
        obj.calls = 0
        return obj


LEVELS = ("passage", "full", "sentence")
"""What :class:`CrossEncoderRanker` scores: truncated passages, whole passages, sentences."""


class CrossEncoderRanker:
    """The cross-encoder alone, over every passage or every sentence.

    Passage level scores ``(query, title + ". " + text[:max_chars])``; full level scores every
    window of the whole passage (``title + ". " + window``, windows of the model's
    ``max_length`` overlapping by 32 tokens) and keeps the best one; sentence level scores
    ``(query, sentence)`` for every sentence of :func:`~logrerank.text.segment.passage_spans` and
    derives the passage order from each passage's best sentence. Scores are :func:`probability` of the logit
    in [0, 1]; the raw logit is kept in ``extra["cross_encoder_logit"]``.

    The model is loaded on first use. Unlike :class:`CrossEncoderStage` this ranker has no
    fallback order, so a model that cannot be loaded raises :class:`CrossEncoderError`.
    """

    name = "cross-encoder"

    def __init__(
        self,
        cross_encoder: CrossEncoder | str | os.PathLike[str] | None = None,
        level: str = "passage",
        max_chars: int = DEFAULT_MAX_CHARS,
        lexical: bool = True,
    ) -> None:
        """Configure the ranker.

        Args:
            cross_encoder: a loaded :class:`CrossEncoder`, a checkpoint path, or None for the
                default (see :class:`CrossEncoder`).
            level: ``"passage"``, ``"full"`` or ``"sentence"``.
            max_chars: passage-level body characters shown to the model.
            lexical: add the model's lexical prior (:func:`add_lexical`; a no-op for a model
                without one). False is the ``cross-encoder-nolex`` ablation.

        Raises:
            ValueError: unknown ``level``.
        """
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        self.level = level
        self.max_chars = max_chars
        self.lexical = lexical
        if not lexical:
            self.name = "cross-encoder-nolex"
        self._spec = cross_encoder
        self._model = cross_encoder if isinstance(cross_encoder, CrossEncoder) else None

    @property
    def model(self) -> CrossEncoder:
        """The cross-encoder, loaded on first access."""
        if self._model is None:
            self._model = as_cross_encoder(self._spec)
        return self._model

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        """Rank ``passages`` (strings, dicts or :class:`Passage`) for ``query``.

        Raises:
            InputError: empty query or invalid passages.
            CrossEncoderError: the model cannot be loaded.
        """
        if not isinstance(query, str) or not query.strip():
            raise InputError("the question is empty: type a question")
        plist = normalize_passages(passages)
        t0 = time.perf_counter()
        model = self.model
        timings = {"cross_encoder_load": time.perf_counter() - t0}
        warnings = [] if model.trained else [untrained_warning(model)]
        if getattr(model, "runtime_warning", None):
            warnings.append(model.runtime_warning)
        info = {
            "model_source": model.source,
            "trained": model.trained,
            "runtime": getattr(model, "runtime", "torch"),
            "level": self.level,
            "max_chars": self.max_chars,
            "prior_scale": model.prior.config.scale if getattr(model, "prior", None) else 0.0,
            "lexical_weight": float(getattr(model, "lexical_weight", 0.0) or 0.0) * self.lexical,
        }
        blank = [i for i, p in enumerate(plist) if not (p.title.strip() or p.text.strip())]
        if len(blank) == len(plist):
            raise InputError("every passage is empty: paste passages with text")
        if blank and self.level != "sentence":
            warnings.append(f"passage(s) {[i + 1 for i in blank]} have no text; they rank last")
        if self.level == "passage":
            t0 = time.perf_counter()
            logits = model.predict([(query, pair_text(p, self.max_chars)) for p in plist])
            logits, lex = self._lexical(model, query, [lexical_text(p) for p in plist], logits)
            logits = sink(logits, blank)
            timings["cross_encoder"] = time.perf_counter() - t0
            return Ranking.from_passage_scores(
                query,
                plist,
                [probability(model, x) for x in logits],
                self.name,
                extras=[{"cross_encoder_logit": x, "lexical": v} for x, v in zip(logits, lex)],
                timings=timings,
                warnings=warnings,
                info=info,
            )
        if self.level == "full":
            return self._rank_full(query, plist, model, timings, warnings, info, blank)
        t0 = time.perf_counter()
        sentences: list[ScoredSentence] = []
        for pi, p in enumerate(plist):
            for j, s in enumerate(passage_spans(p)):
                sentences.append(ScoredSentence(len(sentences), pi, j, s.text, s.start, s.end, 0.0))
        timings["segment"] = time.perf_counter() - t0
        empty = sorted(set(range(len(plist))) - {s.passage_idx for s in sentences})
        if len(empty) == len(plist):
            raise InputError("every passage is empty: paste passages with text")
        if empty:
            warnings.append(f"passage(s) {[i + 1 for i in empty]} have no text; they rank last")
        t0 = time.perf_counter()
        logits = model.predict([(query, s.text) for s in sentences])
        logits, _ = self._lexical(model, query, [s.text for s in sentences], logits)
        timings["cross_encoder"] = time.perf_counter() - t0
        for s, x in zip(sentences, logits):
            s.score = probability(model, x)
            s.extra["cross_encoder_logit"] = x
        ranking = Ranking.from_sentence_scores(
            query, plist, sentences, self.name, timings=timings, warnings=warnings, info=info
        )
        by_node = ranking.sentence_by_node()
        for sp in ranking.passages_ranked:
            if sp.best_node is not None:
                sp.extra["cross_encoder_logit"] = by_node[sp.best_node].extra["cross_encoder_logit"]
        return ranking

    def _lexical(self, model, query, texts, logits):
        """:func:`add_lexical`, or the logits unchanged for the no-lexical ablation."""
        if not self.lexical:
            return list(logits), [0.0] * len(texts)
        return add_lexical(model, query, texts, logits)

    def _rank_full(self, query, plist, model, timings, warnings, info, blank) -> Ranking:
        """Full-text level: every window of every passage scored, a passage = its best window."""
        t0 = time.perf_counter()
        windows = [full_pair_texts(model.tokenizer, query, p, model.max_length) for p in plist]
        owner = [i for i, ws in enumerate(windows) for _ in ws]
        timings["windows"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        logits = model.predict([(query, w) for ws in windows for w in ws])
        timings["cross_encoder"] = time.perf_counter() - t0
        best = [float("-inf")] * len(plist)
        best_window = [0] * len(plist)
        seen = [0] * len(plist)
        for i, x in zip(owner, logits):
            if x > best[i]:
                best[i], best_window[i] = x, seen[i]
            seen[i] += 1
        info["windows"] = len(logits)
        best, _ = self._lexical(model, query, [lexical_text(p) for p in plist], best)
        best = sink(best, blank)
        return Ranking.from_passage_scores(
            query,
            plist,
            [probability(model, x) for x in best],
            self.name,
            extras=[
                {"cross_encoder_logit": x, "best_window": w, "windows": n}
                for x, w, n in zip(best, best_window, seen)
            ],
            timings=timings,
            warnings=warnings,
            info=info,
        )
