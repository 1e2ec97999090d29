"""The dense priors of paper pools: the packaged embedder's reading of passages and titled sentences.

LoG reads sentences, and a sentence is read without its passage's title. In a pool of paper
passages both carry evidence the sentences miss: the zero-shot bi-encoder on ``title. text``
ranks the passages of scientific questions well where the best single sentence does not, and
on ``title. sentence`` better still on Evidence Inference pools (docs/method.md, "Paper pools:
the dense priors"). A paper pool therefore adds

    f_ij += v * s * cos(e_q, e_{p_i}) + u * s * cos(e_q, e_{t_i. s_ij})

to the final logit of every sentence j of passage i, where ``e`` is the packaged
all-MiniLM-L6-v2 embedding (mean pooling, L2 norm; :class:`logrerank.models.bi_encoder.BiEncoder`)
of the query, of ``title + ". " + text`` (the first 256 word pieces) and of ``title + ". " +
sentence``, ``s`` = :data:`DENSE_SCALE` (the initial scale of the sentence prior,
``local.prior_scale``), ``v`` the route's ``dense_weight`` (the *dense passage prior*) and ``u``
its ``sentence_weight`` (the *titled-sentence prior*), both chosen on training pools by
``logrerank tune-score --paper-route`` (``score.paper_*`` / ``score.citance_*``).

The embeddings come from the frozen packaged encoder that LoG's sentence prior already runs
(shared, not copied). They depend on the text alone, so :class:`DensePrior` keeps them across
calls (in the model's ``caches.dense``); only the query is embedded per call. Evaluations and
tunings that keep encodings on disk (``--encodings DIR``) also keep these embeddings there
(:func:`load_kept` / :func:`save_kept`, ``DIR/dense-prior.safetensors``: SHA-1 digests of the
texts and their rows, no pickle), so a second run embeds nothing it has seen.
"""

from __future__ import annotations

import hashlib
import sys
from collections import OrderedDict
from pathlib import Path
from typing import Any, NamedTuple

import torch
from safetensors.torch import load_file, save_file
from torch import Tensor

DENSE_SCALE = 10.0
"""``s``: the dense prior's cosine is scaled like the sentence prior's (``local.prior_scale``)."""

KEPT_FILE = "dense-prior.safetensors"
"""The file of kept text embeddings inside an encodings folder."""


def digest(text: str) -> bytes:
    """The 20-byte SHA-1 digest a kept embedding is filed under."""
    return hashlib.sha1(text.encode("utf-8")).digest()


def passage_text(passage: Any) -> str:
    """What the embedder reads for a passage: ``title + ". " + text`` (the text alone without a
    title)."""
    title = (getattr(passage, "title", "") or "").strip()
    return f"{title}. {passage.text}" if title else passage.text


def sentence_text(passage: Any, sentence: str) -> str:
    """What the embedder reads for a sentence: ``title + ". " + sentence`` (the sentence alone
    without a title)."""
    title = (getattr(passage, "title", "") or "").strip()
    return f"{title}. {sentence}" if title else sentence


class Priors(NamedTuple):
    """The dense priors of one pool (None where the route does not weight them)."""

    passage: Tensor | None  # [P] cos(e_q, e_p), the dense passage prior
    sentence: Tensor | None  # [N] cos(e_q, e_{title. sentence}), the titled-sentence prior


class DensePrior:
    """Cosine of the query to text embeddings (passages, titled sentences), cached across calls.

    Args:
        embedder: a :class:`~logrerank.models.bi_encoder.BiEncoder` (anything with
            ``embed(texts) -> [n, d]`` unit-norm rows).
        max_passages: text embeddings kept (least recently used dropped first).
        name: the embedder's name, recorded in a kept file and checked when one is read.
    """

    def __init__(self, embedder: Any, max_passages: int = 50000, name: str = ""):
        self.embedder = embedder
        self.max_passages = max_passages
        self.name = name
        self.store: OrderedDict[str, Tensor] = OrderedDict()
        self.kept: dict[bytes, Tensor] | None = None  # digest -> [d]; every embedding, for a file
        self.added = 0  # embeddings computed (not read) since the file was last written
        self._query: tuple[str, Tensor] | None = None  # the last query and its embedding

    def passage_embeddings(self, passages: list[Any]) -> Tensor:
        """``[P, d]`` embeddings of the passages' :func:`passage_text`, from the store when held."""
        return self.embeddings([passage_text(p) for p in passages])

    def embeddings(self, texts: list[str]) -> Tensor:
        """``[n, d]`` embeddings of ``texts``, from the store when held."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.store))
        if missing and self.kept is not None:
            for t in missing:
                if (row := self.kept.get(digest(t))) is not None:
                    self.store[t] = row
            missing = [t for t in missing if t not in self.store]
        if missing:
            for t, e in zip(missing, self.embedder.embed(missing)):
                self.store[t] = e
                if self.kept is not None:
                    self.kept[digest(t)] = e
                    self.added += 1
        rows = []
        for t in texts:
            self.store.move_to_end(t)
            rows.append(self.store[t])
        while len(self.store) > self.max_passages:
            self.store.popitem(last=False)
        return torch.stack(rows) if rows else torch.zeros(0, 0)

    def load(self, path: str | Path) -> int:
        """Keep every embedding from now on and read those filed at ``path`` (a file of
        :meth:`save`; none there = start empty). Returns how many were read.

        Raises:
            ValueError: the file was written by another embedder.
        """
        self.kept = {} if self.kept is None else self.kept
        path = Path(path)
        if not path.exists():
            return 0
        from safetensors import safe_open

        with safe_open(str(path), framework="pt") as f:
            found = (f.metadata() or {}).get("embedder", "")
        if found != self.name:
            raise ValueError(f"{path} holds embeddings of {found!r}, not of {self.name!r}")
        tensors = load_file(str(path))
        keys, rows = tensors["digests"], tensors["embeddings"]  # [n, 20] uint8, [n, d]
        raw = keys.numpy().tobytes()
        for i, row in enumerate(rows):
            self.kept.setdefault(raw[20 * i : 20 * (i + 1)], row)
        return len(keys)

    def save(self, path: str | Path) -> int:
        """Write every kept embedding to ``path`` (atomically), together with those another
        process has filed there since (read first, so runs sharing a folder add up); returns
        how many the file holds. Nothing is written when no embedding was computed since the
        last write and the file exists."""
        if not self.kept:
            return 0
        path = Path(path)
        if not self.added and path.exists():
            return len(self.kept)
        self.load(path)  # rows filed meanwhile; ours stay where both have one
        keys = list(self.kept)
        tensors = {
            "digests": torch.frombuffer(bytearray(b"".join(keys)), dtype=torch.uint8).view(-1, 20),
            "embeddings": torch.stack([self.kept[k] for k in keys]).contiguous(),  # [n, d]
        }
        tmp = path.with_suffix(".tmp")
        save_file(tensors, str(tmp), metadata={"embedder": self.name})
        tmp.replace(path)
        self.added = 0
        return len(keys)

    def query_embedding(self, query: str) -> Tensor:
        """``[d]`` the query's embedding (the last one is kept: both priors of a pool share it)."""
        if self._query is None or self._query[0] != query:
            self._query = (query, self.embedder.embed([query])[0])
        return self._query[1]

    def __call__(self, query: str, passages: list[Any]) -> Tensor:
        """``[P]`` ``cos(e_q, e_p)`` for each passage (float32)."""
        if not passages:
            return torch.zeros(0)
        return (self.passage_embeddings(passages) @ self.query_embedding(query)).float()

    def sentences(self, query: str, passages: list[Any], sentences: list[Any]) -> Tensor:
        """``[N]`` ``cos(e_q, e_{title. s})`` for each sentence (``.passage_idx``, ``.text``)."""
        if not sentences:
            return torch.zeros(0)
        texts = [sentence_text(passages[s.passage_idx], s.text) for s in sentences]
        return (self.embeddings(texts) @ self.query_embedding(query)).float()


def model_prior(model: Any) -> DensePrior:
    """The :class:`DensePrior` of a :class:`~logrerank.pipeline.LoGReranker`: in isolated mode it
    embeds with the model's frozen packaged encoder (the sentence prior's, shared), else it loads
    the packaged backbone once; fp32 on the model's device."""
    from ..models.bi_encoder import BiEncoder

    shared = model.config.local.isolated_layers > 0
    return DensePrior(
        BiEncoder(
            model.config.backbone.name_or_path,
            device=str(model.device_),
            precision="fp32",
            batch_size=16,
            model=model.local.encoder if shared else None,
            tokenizer=model.tokenizer if shared else None,
        ),
        name=model.config.backbone.name_or_path or "packaged all-MiniLM-L6-v2",
    )


def _prior(model: Any) -> DensePrior:
    """The model's :class:`DensePrior`, built once and kept in ``model.caches.dense``."""
    if model.caches.dense is None:
        model.caches.dense = model_prior(model)
    return model.caches.dense


def load_kept(model: Any, folder: str | Path, log: Any = None) -> int | None:
    """Make the model's :class:`DensePrior` keep its embeddings for ``folder/`` :data:`KEPT_FILE`
    and read those already there; returns how many were read. Where the file there holds another
    embedder's rows, nothing is read or kept (None), and ``log`` (default stderr) says so."""
    prior = _prior(model)
    try:
        return prior.load(Path(folder) / KEPT_FILE)
    except ValueError as e:
        print(f"warning: dense-prior embeddings not kept: {e}", file=log or sys.stderr)
        prior.kept = None
        return None


def save_kept(model: Any, folder: str | Path) -> int:
    """Write the model's kept embeddings to ``folder/`` :data:`KEPT_FILE`; returns how many."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    return _prior(model).save(Path(folder) / KEPT_FILE)


def passage_cosines(model: Any, enc: Any) -> Tensor:
    """``[P]`` ``cos(e_q, e_p)`` of an encoded pool's query to each of its passages."""
    return _prior(model)(enc.query, enc.passages)


def sentence_cosines(model: Any, enc: Any) -> Tensor:
    """``[N]`` ``cos(e_q, e_{title. s})`` of an encoded pool's query to each titled sentence."""
    return _prior(model).sentences(enc.query, enc.passages, enc.sentences)


def route_prior(model: Any, enc: Any, route: Any) -> Priors:
    """The dense priors a pool's :class:`~logrerank.ranking.routing.PoolRoute` weights
    (``route.dense_weight`` / ``route.sentence_weight`` > 0), each None where it does not."""
    return Priors(
        passage_cosines(model, enc) if route.dense_weight else None,
        sentence_cosines(model, enc) if route.sentence_weight else None,
    )


def annotate(ranking: Any, priors: Priors, route: Any) -> None:
    """Record each ranked passage's ``dense_prior`` (the cosine) and ``dense_term`` (``v * s *
    cosine``, the logit it added), and each sentence's ``title_sentence_prior`` /
    ``title_sentence_term`` (``u * s * cosine``), in their ``extra`` (where the prior ran)."""
    if priors.passage is not None:
        for p in ranking.passages_ranked:
            cos = float(priors.passage[p.passage_idx])
            p.extra["dense_prior"] = cos
            p.extra["dense_term"] = route.dense_weight * DENSE_SCALE * cos
    if priors.sentence is not None:
        for s in ranking.sentences:
            cos = float(priors.sentence[s.node])
            s.extra["title_sentence_prior"] = cos
            s.extra["title_sentence_term"] = route.sentence_weight * DENSE_SCALE * cos
