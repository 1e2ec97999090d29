"""Cross-encoder baseline and the cross-encoder rerank stage (seed 001, DESIGN §6).

Three pieces:

* :class:`CrossEncoder` — a ``(query, text) -> relevance logit`` model in the style of the
  sentence-transformers ``CrossEncoder``: any Hugging Face sequence-classification checkpoint
  folder with one output label (a sentence-transformers cross-encoder folder is one) loaded
  offline from safetensors only. ``None`` loads the project's trained cross-encoder from
  ``checkpoints/cross-encoder/`` when it exists, else the packaged all-MiniLM-L6-v2 with a
  fresh, seeded regression head (``trained = False``: its scores are not meaningful yet).
* :class:`CrossEncoderRanker` — the cross-encoder on its own, at passage level
  (``(query, title + first max_chars chars)``) or sentence level (``(query, sentence)``);
  scores are ``sigmoid(logit)`` in [0, 1].
* :class:`CrossEncoderStage` — the two-stage pattern of seed 001: a first-pass ranker over
  everything, the cross-encoder over its top ``top_n`` only, min-max normalised and blended
  ``final = w * ce + (1 - w) * first_pass``. It never raises for model failures: a missing or
  broken model, or a scoring error, passes the first-pass order through with a warning and
  ``Ranking.info["degraded"] = True``.

Nothing is downloaded and no pickle is ever loaded.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..backbone import (
    PACKAGED,
    autocast_dtype,
    load_tokenizer,
    packaged_path,
    pick_device,
)
from ..io import normalize_passages
from ..memory import TRIM_BUDGET_MB, HeapBudget, trim_heap
from ..resources import checkpoint_dir
from ..segment import passage_spans
from ..types import InputError, Passage, Ranking, ScoredPassage, ScoredSentence
from .base import Ranker, minmax

HEAD_SEED = 13
"""Seed of the fresh regression head when a checkpoint has none (e.g. the packaged backbone)."""

DEFAULT_MAX_CHARS = 1000
"""Passage characters (after the title) shown to the cross-encoder (seed 001)."""


class CrossEncoderError(RuntimeError):
    """The cross-encoder cannot be loaded offline (missing folder, no safetensors, bad files)."""


def default_checkpoint_dir() -> Path:
    """Where the project's trained cross-encoder lives.

    ``$LOGRERANK_CHECKPOINTS/cross-encoder`` when the variable is set, else
    the copy bundled in the package (:func:`logrerank.resources.checkpoint_dir`). It is used by ``CrossEncoder(None)`` only when it
    holds a ``config.json``.
    """
    return checkpoint_dir("cross-encoder")


def _head_missing(loading_info: dict[str, Any] | None) -> bool:
    """Whether some weights (in practice the classification head) were freshly initialised.

    Any weight missing from the checkpoint or re-initialised for a shape mismatch counts
    (position-id buffers aside): the logits then depend on random weights.
    """
    if not loading_info:
        return False
    keys = [str(k) for k in loading_info.get("missing_keys") or ()]
    keys += [str(k) for k in loading_info.get("mismatched_keys") or ()]
    return any(not k.endswith("position_ids") for k in keys)


def sigmoid(x: float) -> float:
    """Numerically stable logistic function (``nan`` stays ``nan``)."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def pair_text(p: Passage, max_chars: int | None = DEFAULT_MAX_CHARS) -> str:
    """What the cross-encoder reads for a passage: ``title + ". " + text[:max_chars]``.

    The title (when present) is always kept whole; only the body is cut (seed 001: "title plus
    the first 1,000 abstract characters"). ``max_chars`` None or <= 0 keeps the whole body.
    """
    body = p.text[:max_chars] if max_chars and max_chars > 0 else p.text
    return f"{p.title}. {body}" if p.title else body


class CrossEncoder:
    """A ``(query, text) -> relevance logit`` model (sentence-transformers CrossEncoder style).

    Attributes:
        path: the folder (or cached hub id) the weights came from.
        source: human-readable provenance, e.g. ``"checkpoint /x/cross-encoder"`` or
            ``"UNTRAINED head on packaged all-MiniLM-L6-v2"``.
        trained: False when some weights (in practice the regression head) were freshly
            initialised, seeded with :data:`HEAD_SEED`, because the checkpoint lacked them; its
            logits are then not meaningful relevance scores. True means only "every weight
            was read from the checkpoint": a model saved with :meth:`save_pretrained` right
            after loading an untrained head reloads as ``trained``.
        max_length: token budget per pair (capped by the tokenizer and position table).
        device: torch device the model runs on.
        autocast: the autocast dtype (bf16) or None for fp32.
        batch_size: pairs per forward pass.
        model: the ``AutoModelForSequenceClassification`` (eval mode).
        tokenizer: its tokenizer.
        trim_budget_mb: growth of the resident memory within one :meth:`predict` above which
            the heap is trimmed after a batch (:class:`~logrerank.memory.HeapBudget`).
    """

    trim_budget_mb: float = TRIM_BUDGET_MB

    def __init__(
        self,
        model_name_or_path: str | os.PathLike[str] | None = None,
        max_length: int = 256,
        device: str = "auto",
        precision: str = "auto",
        batch_size: int = 32,
    ) -> None:
        """Load a cross-encoder offline.

        Args:
            model_name_or_path: a sequence-classification checkpoint folder (or an id already in
                the local HF cache). None: the trained project checkpoint under
                :func:`default_checkpoint_dir` when it exists, else the packaged
                all-MiniLM-L6-v2 with a fresh seeded head (``trained = False``).
                ``"packaged:all-MiniLM-L6-v2"`` always means the latter.
            max_length: max tokens per (query, text) pair; longer pairs are cut
                (``longest_first``).
            device: ``"auto"`` (CUDA when present), ``"cpu"``, ``"cuda"``, ...
            precision: ``"auto"``/``"bf16"`` (bf16 autocast where supported) or ``"fp32"``.
            batch_size: pairs per forward pass.

        Raises:
            CrossEncoderError: the model or tokenizer cannot be loaded offline.
            ValueError: bad ``max_length``, ``batch_size`` or ``precision``.
        """
        if max_length < 8:
            raise ValueError(f"max_length must be >= 8, got {max_length}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.device = pick_device(device)
        self.autocast = autocast_dtype(self.device, precision)
        self.precision = precision
        self.batch_size = int(batch_size)

        if model_name_or_path in (None, ""):
            ckpt = default_checkpoint_dir()
            if (ckpt / "config.json").is_file():
                path, packaged = str(ckpt), False
            else:
                path, packaged = _packaged_path(), True
        elif str(model_name_or_path) == PACKAGED:
            path, packaged = _packaged_path(), True
        else:
            path, packaged = str(model_name_or_path), False  # checked by _load_model
        self.path = path
        self.model, fresh_head = _load_model(path)
        self.model.to(self.device).eval()
        try:
            self.tokenizer = load_tokenizer(path)
        except Exception as exc:
            raise CrossEncoderError(f"cannot load the cross-encoder tokenizer: {exc}") from exc
        self.trained = not fresh_head
        where = "packaged all-MiniLM-L6-v2" if packaged else path
        self.source = f"UNTRAINED head on {where}" if fresh_head else f"checkpoint {where}"
        self.max_length = _cap_length(int(max_length), self.tokenizer, self.model)

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str], **kwargs: Any) -> CrossEncoder:
        """Load a folder written by :meth:`save_pretrained` (or any compatible checkpoint).

        Args:
            path: the folder.
            **kwargs: ``max_length``, ``device``, ``precision``, ``batch_size``.
        """
        return cls(str(path), **kwargs)

    def save_pretrained(self, path: str | os.PathLike[str]) -> None:
        """Write ``model.safetensors``, ``config.json`` and the tokenizer files to ``path``.

        Raises:
            CrossEncoderError: no safetensors file was written.
        """
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        _save_model(self.model, out)
        self.tokenizer.save_pretrained(str(out))
        if not any(out.glob("*.safetensors")):
            raise CrossEncoderError(f"saving to {str(out)!r} produced no .safetensors file")

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        if self.autocast is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.autocast)

    @torch.inference_mode()
    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Relevance logits, one per ``(query, text)`` pair, in input order.

        Pairs are tokenised once, sorted by token length and batched so that each batch pads
        only to its own longest pair; results are returned in the caller's order, so they do
        not depend on ``batch_size`` (up to float rounding).

        Args:
            pairs: ``(query, text)`` tuples.

        Returns:
            Raw logits (higher = more relevant); map with a sigmoid for [0, 1].
        """
        if not pairs:
            return []
        queries = [str(q) for q, _ in pairs]
        texts = [str(t) for _, t in pairs]
        enc = self.tokenizer(
            queries,
            texts,
            truncation="longest_first",
            max_length=self.max_length,
            padding=False,
        )
        keys = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in enc]
        lengths = [len(ids) for ids in enc["input_ids"]]
        order = sorted(range(len(pairs)), key=lambda i: (lengths[i], i))
        pad_id = self.tokenizer.pad_token_id or 0
        left = getattr(self.tokenizer, "padding_side", "right") == "left"
        out = [0.0] * len(pairs)
        budget = HeapBudget(self.trim_budget_mb)
        for b in range(0, len(order), self.batch_size):
            idx = order[b : b + self.batch_size]
            width = max(lengths[i] for i in idx)
            batch = {}
            for k in keys:
                fill = pad_id if k == "input_ids" else 0
                rows = []
                for i in idx:
                    row = list(enc[k][i])
                    pad = [fill] * (width - len(row))
                    rows.append(pad + row if left else row + pad)
                batch[k] = torch.tensor(rows, dtype=torch.long, device=self.device)
            with self._autocast():
                logits = self.model(**batch).logits
            vals = logits.float().reshape(len(idx), -1)[:, 0].cpu().tolist()
            for i, v in zip(idx, vals):
                out[i] = float(v)
            del logits, batch
            budget.check()  # bounded growth on large inputs (logrerank/memory.py)
        trim_heap()  # keep a long-running process's RSS flat
        return out


def _packaged_path() -> str:
    try:
        return packaged_path()
    except Exception as exc:
        raise CrossEncoderError(str(exc)) from exc


def _load_model(path: str) -> tuple[torch.nn.Module, bool]:
    """Load a 1-label sequence classifier offline; returns (model, head_was_fresh)."""
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise CrossEncoderError(f"cross-encoder path {path!r} is not a folder")
    if p.is_dir():
        if not (p / "config.json").is_file():
            raise CrossEncoderError(f"cross-encoder folder {path!r} has no config.json")
        if not any(p.glob("*.safetensors")):
            raise CrossEncoderError(
                f"cross-encoder folder {path!r} has no .safetensors weights "
                "(pickle checkpoints are refused)"
            )
    elif p.is_absolute() or path.startswith((".", "~")):
        raise CrossEncoderError(f"cross-encoder folder {path!r} does not exist")
    if p.is_dir() and (p / "logrerank_delta.json").is_file():
        # Project delta checkpoint: packaged backbone + stored top layers/head (train_ce.py).
        from ..training.cross_encoder import load_delta_checkpoint

        try:
            return load_delta_checkpoint(p), False
        except Exception as exc:
            raise CrossEncoderError(f"cannot load cross-encoder delta {path!r}: {exc}") from exc
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(HEAD_SEED)
            model, info = AutoModelForSequenceClassification.from_pretrained(
                path,
                local_files_only=True,
                use_safetensors=True,
                num_labels=1,
                output_loading_info=True,
            )
    except Exception as exc:
        raise CrossEncoderError(f"cannot load cross-encoder from {path!r} offline: {exc}") from exc
    finally:
        hf_logging.set_verbosity(verbosity)
    return model.eval(), _head_missing(info)


def _save_model(model: torch.nn.Module, out: Path) -> None:
    import inspect

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    params = inspect.signature(model.save_pretrained).parameters
    if "safe_serialization" in params:  # transformers 4.x; 5.x always writes safetensors
        model.save_pretrained(str(out), safe_serialization=True)
    else:
        model.save_pretrained(str(out))


def _cap_length(max_length: int, tokenizer: Any, model: torch.nn.Module) -> int:
    """``max_length`` capped by the tokenizer's limit and the model's position table."""
    caps = [max_length]
    tok_max = getattr(tokenizer, "model_max_length", None)
    if isinstance(tok_max, int) and 0 < tok_max < 100_000:
        caps.append(tok_max)
    pos = getattr(getattr(model, "config", None), "max_position_embeddings", None)
    if isinstance(pos, int) and pos > 0:
        caps.append(pos)
    return min(caps)


def _as_cross_encoder(spec: CrossEncoder | str | os.PathLike[str] | None) -> CrossEncoder:
    return spec if isinstance(spec, CrossEncoder) else CrossEncoder(spec)


def _spec_name(spec: CrossEncoder | str | os.PathLike[str] | None) -> str:
    if isinstance(spec, CrossEncoder):
        return spec.source
    return "default" if spec in (None, "") else str(spec)


def _untrained_warning(model: CrossEncoder) -> str:
    return (
        f"cross-encoder has an {model.source}: its scores are not trained relevance "
        "judgements (train one into checkpoints/cross-encoder/)"
    )


class MemoCrossEncoder:
    """A :class:`~logrerank.baselines.cross_encoder.CrossEncoder` whose scores are memoised.

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


class CrossEncoderRanker:
    """The cross-encoder alone, over every passage or every sentence.

    Passage level scores ``(query, title + ". " + text[:max_chars])``; sentence level scores
    ``(query, sentence)`` for every sentence of :func:`~logrerank.segment.passage_spans` and
    derives the passage order from each passage's best sentence. Scores are ``sigmoid(logit)``
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
    ) -> None:
        """Configure the ranker.

        Args:
            cross_encoder: a loaded :class:`CrossEncoder`, a checkpoint path, or None for the
                default (see :class:`CrossEncoder`).
            level: ``"passage"`` or ``"sentence"``.
            max_chars: passage-level body characters shown to the model.

        Raises:
            ValueError: unknown ``level``.
        """
        if level not in ("passage", "sentence"):
            raise ValueError(f"level must be 'passage' or 'sentence', got {level!r}")
        self.level = level
        self.max_chars = max_chars
        self._spec = cross_encoder
        self._model = cross_encoder if isinstance(cross_encoder, CrossEncoder) else None

    @property
    def model(self) -> CrossEncoder:
        """The cross-encoder, loaded on first access."""
        if self._model is None:
            self._model = _as_cross_encoder(self._spec)
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
        warnings = [] if model.trained else [_untrained_warning(model)]
        info = {
            "model_source": model.source,
            "trained": model.trained,
            "level": self.level,
            "max_chars": self.max_chars,
        }
        if self.level == "passage":
            t0 = time.perf_counter()
            logits = model.predict([(query, pair_text(p, self.max_chars)) for p in plist])
            timings["cross_encoder"] = time.perf_counter() - t0
            return Ranking.from_passage_scores(
                query,
                plist,
                [sigmoid(x) for x in logits],
                self.name,
                extras=[{"cross_encoder_logit": x} for x in logits],
                timings=timings,
                warnings=warnings,
                info=info,
            )
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
        timings["cross_encoder"] = time.perf_counter() - t0
        for s, x in zip(sentences, logits):
            s.score = sigmoid(x)
            s.extra["cross_encoder_logit"] = x
        ranking = Ranking.from_sentence_scores(
            query, plist, sentences, self.name, timings=timings, warnings=warnings, info=info
        )
        by_node = ranking.sentence_by_node()
        for sp in ranking.passages_ranked:
            if sp.best_node is not None:
                sp.extra["cross_encoder_logit"] = by_node[sp.best_node].extra["cross_encoder_logit"]
        return ranking


class CrossEncoderStage:
    """First pass over everything, cross-encoder over its top ``top_n`` (seed 001).

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
                self._model = _as_cross_encoder(self._spec)
            except Exception as exc:  # never raise for model failures
                self._load_error = f"{type(exc).__name__}: {exc}"
        return self._model

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        """Rank with the first pass, then rerank its top ``top_n`` with the cross-encoder.

        Raises:
            InputError: invalid input (raised by the first pass / passage normalisation).
        """
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
            "model_source": self._model.source if self._model else _spec_name(self._spec),
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
            return passthrough(f"failed to load {_spec_name(self._spec)}: {self._load_error}")
        info["model_source"] = model.source
        info["trained"] = model.trained
        if not model.trained:
            warnings.append(_untrained_warning(model))

        t0 = time.perf_counter()
        try:
            pairs = [(query, pair_text(first.passages[p.passage_idx], self.max_chars)) for p in top]
            logits = [float(x) for x in model.predict(pairs)]
            if len(logits) != len(top):
                raise RuntimeError(f"got {len(logits)} scores for {len(top)} passages")
            if not all(math.isfinite(x) for x in logits):
                raise RuntimeError("non-finite scores")
        except Exception as exc:  # never raise for model failures
            timings["cross_encoder"] = time.perf_counter() - t0
            return passthrough(f"scoring failed: {type(exc).__name__}: {exc}")
        timings["cross_encoder"] = time.perf_counter() - t0

        w = self.blend_weight
        ce = minmax(logits)
        fp = minmax([p.score for p in top])
        final = [w * c + (1.0 - w) * f for c, f in zip(ce, fp)]
        order = sorted(range(len(top)), key=lambda i: (-final[i], i))
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
