"""Explicit registry of every ranker, built lazily and sharing loaded models.

``build_rankers(["bm25", "log", "log-local"])`` returns ``{name: ranker}``; each ranker has
``name``, ``level`` and ``rank(query, passages) -> Ranking``. Heavy models (LoG, bi-encoder,
cross-encoder) load once per :class:`Models` and are shared between the rankers that use them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .inputs.passages import normalize_passages
from .types import InputError, Ranking

RANKERS: dict[str, str] = {
    "first-pass": "the candidate order as retrieved (BM25 over the whole corpus for built pools)",
    "bm25": "BM25 over the candidate passages (bm25s)",
    "bm25-sent": "BM25 over the candidate sentences; passage = best sentence",
    "bi-encoder": "zero-shot all-MiniLM-L6-v2 cosine per sentence; passage = best sentence",
    "bi-encoder-passage": "zero-shot all-MiniLM-L6-v2 cosine per passage",
    "cross-encoder": "cross-encoder on (query, passage)",
    "cross-encoder-nolex": "the cross-encoder without its lexical prior (an ablation; equal to "
    "cross-encoder for a model without one)",
    "cross-encoder-sent": "cross-encoder on (query, sentence); passage = best sentence",
    "cross-encoder-full": "cross-encoder on (query, title + window) over the whole passage; "
    "passage = best window",
    "cross-encoder-twin": "LoG's local scorer trained the same way on passage units (title + "
    "window; the frozen layers, prior and joint layer of log-local); passage = best unit",
    "ce-stage": "the cross-encoder stage: the first pass's top 25 rescored, min-max blended "
    "0.5/0.5 (first pass: BM25 over the candidates, or the retrieval order of pooled benchmarks "
    "in logrerank eval)",
    "ce-stage-bm25": "the cross-encoder stage over BM25 over the candidates, whatever the "
    "input order (what the app shows for pasted passages)",
    "evidence-graph": "the evidence-graph selector (greedy) with BM25 relevance",
    "evidence-graph-ce": "the evidence-graph selector (greedy) with cross-encoder relevance",
    "log": "LoG-Reranker (local + graph)",
    "log-local": "LoG ablation: local scores only (no graph)",
    "log-nocross": "LoG ablation: no cross-passage edges",
    "log-untyped": "LoG ablation: all edges one relation type",
    "log-nolinks": "LoG ablation: no link relations (mentions, mentioned-by, shared-term)",
    "log-nolex": "LoG ablation: lexical node inputs zeroed at inference (models that have them)",
    "log-maxsent": "LoG ablation: passages ranked by their best sentence, without the learned "
    "passage score (models that have one)",
}
"""Registry names -> one-line descriptions (``logrerank eval --rankers`` takes these)."""


class FirstPassRanker:
    """Keeps the input order (the retriever's ranking); score = 1 - i / n."""

    name, level = "first-pass", "passage"

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        plist = normalize_passages(passages)
        n = len(plist)
        return Ranking.from_passage_scores(query, plist, [1 - i / n for i in range(n)], self.name)


class LoGRanker:
    """Adapter: LoG (or one ablation) as a registry ranker.

    LoG and its ablations share one model and a one-entry encoding cache, so evaluating the
    ablations on the same input runs the transformer once; each result's ``timings`` still
    includes the (shared) encoding stages.
    """

    level = "sentence"

    def __init__(self, name: str, models: Models):
        from .pipeline import ABLATIONS

        self.name, self.models, self.switches = name, models, ABLATIONS[name]

    def rank(self, query: str, passages: list[Any]) -> Ranking:
        model = self.models.log
        plist = normalize_passages(passages)
        key = (query, tuple((p.title, p.text) for p in plist))
        if key in self.models.encodings:  # read from an encoding cache (eval --encodings)
            self.models.cache_value, self.models.cache_key = self.models.encodings[key], key
        elif self.models.cache_key != key and model.config.local.unit == "sentence":
            # sentence units never read titles: a pool cached under other titles serves as is,
            # its passages retitled (eval --titles first3 / none reuse the full-title encodings)
            from .ranking.results import retitled

            found = self.models.encodings_by_text().get((query, tuple(p.text for p in plist)))
            if found is not None and len(found.passages) == len(plist):
                enc = retitled(found, [p.title for p in plist])
                self.models.cache_value, self.models.cache_key = enc, key
        if self.models.cache_key != key:
            self.models.cache_value = model.encode(query, passages)
            self.models.cache_key = key
            if self.models.collect_encodings:  # kept for eval --encodings to write
                self.models.new_encodings.append(self.models.cache_value)
        return model.rank_encoded(self.models.cache_value, ranker=self.name, **self.switches)


@dataclass
class Models:
    """Lazily loaded shared models."""

    checkpoint: str | None = None  # LoG checkpoint folder (None = bundled default)
    cross_encoder_path: str | None = None  # cross-encoder folder (None = bundled default)
    device: str = "auto"
    runtime: str = "torch"  # transformer runtime of LoG and the cross-encoder (logrerank.runtime)
    precision: str | None = None  # torch autocast of both (None: the checkpoint's / "auto")
    memo_cross_encoder: bool = False  # memoise cross-encoder scores across rankers (eval)
    twin_checkpoint: str | None = None  # cross-encoder-twin folder (None = bundled default)
    # first pass of ce-stage: "bm25" (BM25 over the candidates) or "first-pass" (the input
    # order, i.e. the retriever's ranking: BM25 over the whole corpus for built pools)
    stage_first_pass: str = "bm25"
    _log: Any = None
    _bi: Any = None
    _ce: Any = None
    _twin: Any = None
    cache_key: Any = None
    cache_value: Any = field(default=None, repr=False)
    # encoded pools by (query, ((title, text), ...)), read from an encoding cache written by
    # this checkpoint's local stage (logrerank eval --encodings); LoG rankers skip encoding them
    encodings: dict[Any, Any] = field(default_factory=dict, repr=False)
    collect_encodings: bool = False  # keep every pool the LoG rankers encode (new_encodings)
    new_encodings: list[Any] = field(default_factory=list, repr=False)
    _by_text: dict[Any, Any] | None = field(default=None, repr=False)

    def encodings_by_text(self) -> dict[Any, Any]:
        """:attr:`encodings` keyed by ``(query, passage texts)`` (titles left out), built once."""
        if self._by_text is None or len(self._by_text) < len(self.encodings):
            self._by_text = {
                (q, tuple(t for _, t in ps)): e for (q, ps), e in self.encodings.items()
            }
        return self._by_text

    @property
    def log(self):
        if self._log is None:
            from .pipeline import LoGReranker

            extra = {"precision": self.precision} if self.precision else {}
            self._log = LoGReranker.from_pretrained(
                self.checkpoint, device=self.device, runtime=self.runtime, **extra
            )
        return self._log

    @property
    def bi_encoder(self):
        if self._bi is None:
            from .baselines.bi_encoder_ranker import BiEncoder

            self._bi = BiEncoder(device=self.device)
        return self._bi

    @property
    def cross_encoder(self):
        if self._ce is None:
            from .baselines.cross_encoder_ranker import MemoCrossEncoder
            from .models.cross_encoder import CrossEncoder

            ce = CrossEncoder(
                self.cross_encoder_path,
                device=self.device,
                precision=self.precision or "auto",
                runtime=self.runtime,
            )
            self._ce = MemoCrossEncoder.wrap(ce) if self.memo_cross_encoder else ce
        return self._ce

    @property
    def twin(self):
        """The cross-encoder twin (raises ``TwinUnavailableError`` without a checkpoint)."""
        if self._twin is None:
            from .baselines.twin import load_twin

            self._twin = load_twin(self.twin_checkpoint, device=self.device)
        return self._twin


def _factories(models: Models) -> dict[str, Callable[[], Any]]:
    from .baselines.bm25_ranker import BM25Reranker

    def bi(level: str):
        from .baselines.bi_encoder_ranker import BiEncoderRanker

        return BiEncoderRanker(level, models.bi_encoder)

    def ce_model():
        try:
            return models.cross_encoder
        except Exception:  # fail lazily, at rank time, where callers degrade visibly
            return models.cross_encoder_path or "packaged:all-MiniLM-L6-v2-missing"

    def ce(level: str, lexical: bool = True):
        from .baselines.cross_encoder_ranker import CrossEncoderRanker

        return CrossEncoderRanker(ce_model(), level=level, lexical=lexical)

    def twin():
        from .baselines.twin import TwinRanker

        return TwinRanker(lambda: models.twin)  # loaded on first use

    def stage(first_pass: str | None = None):
        from .baselines.cross_encoder_stage import CrossEncoderStage

        first_pass = first_pass or models.stage_first_pass
        if first_pass not in ("bm25", "first-pass"):
            raise InputError(f"stage first pass must be 'bm25' or 'first-pass', got {first_pass!r}")
        first = FirstPassRanker() if first_pass == "first-pass" else None
        return CrossEncoderStage(first or BM25Reranker("passage"), ce_model())

    def graph(relevance):
        from .baselines.evidence_graph import EvidenceGraphSelector

        return EvidenceGraphSelector(relevance_ranker=relevance)

    return {
        "first-pass": FirstPassRanker,
        "bm25": lambda: BM25Reranker("passage"),
        "bm25-sent": lambda: BM25Reranker("sentence"),
        "bi-encoder": lambda: bi("sentence"),
        "bi-encoder-passage": lambda: bi("passage"),
        "cross-encoder": lambda: ce("passage"),
        "cross-encoder-nolex": lambda: ce("passage", lexical=False),
        "cross-encoder-sent": lambda: ce("sentence"),
        "cross-encoder-full": lambda: ce("full"),
        "cross-encoder-twin": twin,
        "ce-stage": stage,
        "ce-stage-bm25": lambda: stage("bm25"),
        "evidence-graph": lambda: graph(None),
        "evidence-graph-ce": lambda: graph(ce("passage")),
        **{
            n: (lambda n=n: LoGRanker(n, models))
            for n in RANKERS
            if n == "log" or n.startswith("log-")
        },
    }


def build_rankers(names: list[str], models: Models | None = None) -> dict[str, Any]:
    """Instantiate rankers by registry name, sharing ``models``.

    Raises:
        InputError: an unknown name (the message lists the known ones).
    """
    models = models or Models()
    factories = _factories(models)
    unknown = [n for n in names if n not in factories]
    if unknown:
        raise InputError(f"unknown ranker(s) {unknown}; known: {', '.join(RANKERS)}")
    out = {}
    for n in names:
        r = factories[n]()
        r.name = n
        out[n] = r
    return out
