"""The dense passage prior of paper pools: the packaged embedder's reading of a whole passage.

LoG reads sentences, and a sentence is read without its passage's title. In a pool of paper
passages both carry evidence the sentences miss: the zero-shot bi-encoder on ``title. text``
ranks the passages of scientific questions well where the best single sentence does not
(docs/method.md, "Paper pools: the dense passage prior"). A paper pool therefore adds

    f_ij += v * s * cos(e_q, e_{p_i})

to the final logit of every sentence j of passage i, where ``e`` is the packaged
all-MiniLM-L6-v2 embedding (mean pooling, L2 norm; :class:`logrerank.models.bi_encoder.BiEncoder`)
of the query and of ``title + ". " + text`` (the first 256 word pieces), ``s`` =
:data:`DENSE_SCALE` (the initial scale of the sentence prior, ``local.prior_scale``) and ``v``
the route's ``dense_weight`` (``score.paper_dense_weight`` / ``citance_dense_weight``, chosen on
training pools by ``logrerank tune-score --paper-route``).

The embeddings come from the frozen packaged encoder that LoG's sentence prior already runs
(shared, not copied). They depend on the passage alone, so :class:`DensePrior` keeps them across
calls (in the model's ``caches.dense``); only the query is embedded per call.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
from torch import Tensor

DENSE_SCALE = 10.0
"""``s``: the dense prior's cosine is scaled like the sentence prior's (``local.prior_scale``)."""


def passage_text(passage: Any) -> str:
    """What the embedder reads for a passage: ``title + ". " + text`` (the text alone without a
    title)."""
    title = (getattr(passage, "title", "") or "").strip()
    return f"{title}. {passage.text}" if title else passage.text


class DensePrior:
    """Cosine of the query to each passage's embedding, passage embeddings cached across calls.

    Args:
        embedder: a :class:`~logrerank.models.bi_encoder.BiEncoder` (anything with
            ``embed(texts) -> [n, d]`` unit-norm rows).
        max_passages: passage embeddings kept (least recently used dropped first).
    """

    def __init__(self, embedder: Any, max_passages: int = 20000):
        self.embedder = embedder
        self.max_passages = max_passages
        self.store: OrderedDict[str, Tensor] = OrderedDict()

    def passage_embeddings(self, passages: list[Any]) -> Tensor:
        """``[P, d]`` embeddings of the passages' :func:`passage_text`, from the store when held."""
        texts = [passage_text(p) for p in passages]
        missing = list(dict.fromkeys(t for t in texts if t not in self.store))
        if missing:
            for t, e in zip(missing, self.embedder.embed(missing)):
                self.store[t] = e
        rows = []
        for t in texts:
            self.store.move_to_end(t)
            rows.append(self.store[t])
        while len(self.store) > self.max_passages:
            self.store.popitem(last=False)
        return torch.stack(rows) if rows else torch.zeros(0, 0)

    def __call__(self, query: str, passages: list[Any]) -> Tensor:
        """``[P]`` ``cos(e_q, e_p)`` for each passage (float32)."""
        if not passages:
            return torch.zeros(0)
        q = self.embedder.embed([query])[0]
        return (self.passage_embeddings(passages) @ q).float()


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
            model=model.local.encoder if shared else None,
            tokenizer=model.tokenizer if shared else None,
        )
    )


def passage_cosines(model: Any, enc: Any) -> Tensor:
    """``[P]`` ``cos(e_q, e_p)`` of an encoded pool's query to each of its passages, with the
    model's :class:`DensePrior` (built once, kept in ``model.caches.dense``)."""
    if model.caches.dense is None:
        model.caches.dense = model_prior(model)
    return model.caches.dense(enc.query, enc.passages)


def route_prior(model: Any, enc: Any, route: Any) -> Tensor | None:
    """The dense prior of a pool whose :class:`~logrerank.ranking.routing.PoolRoute` weights it
    (``route.dense_weight > 0``: :func:`passage_cosines`), else None."""
    return passage_cosines(model, enc) if route.dense_weight else None


def annotate_passages(ranking: Any, dense: Tensor | None, weight: float) -> None:
    """Record each ranked passage's ``dense_prior`` (the cosine) and ``dense_term`` (``weight * s
    * cosine``, the logit it added) in its ``extra`` (no-op without a prior)."""
    if dense is None:
        return
    for p in ranking.passages_ranked:
        cos = float(dense[p.passage_idx])
        p.extra["dense_prior"] = cos
        p.extra["dense_term"] = weight * DENSE_SCALE * cos
