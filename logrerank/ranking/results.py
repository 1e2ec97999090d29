"""What the reranker's stages hand on: :class:`Encoded` (the local stage's output, cached across
knob changes) and the assembly of the final :class:`~logrerank.types.Ranking` from score tensors.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch
from torch import Tensor

from ..config import ROLE_NAMES, ScoreConfig
from ..graph.sentence_graph import relation_name
from ..text.lexical import pool_lexical
from ..text.segment import Span
from ..types import GraphEdge, Passage, Ranking, ScoredSentence
from .scoring import adjust_logits
from .selection import apply_selection


@dataclass
class Encoded:
    """Everything the graph stages need, computed once per (query, passages)."""

    query: str
    passages: list[Passage]
    sentences: list[ScoredSentence]  # document order, scores not yet set
    passage_of: Tensor  # [N] long
    h: Tensor  # [N, d] float32 contextual sentence vectors
    role_probs: Tensor  # [N, 3]
    local_logits: Tensor  # [N]
    intent_by_passage: Tensor  # [P, 3] (zeros for passages without sentences)
    warnings: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    prior_logits: Tensor | None = None  # [N] bi-encoder prior part of local_logits (isolated)
    # passage cache (LoGReranker.passage_cache_mb): windows whose sentences were all cached
    # (only the query and the joint layer ran) / all windows; (0, 0) when the cache is off
    cached_windows: tuple[int, int] = (0, 0)
    # [N, 3] lexical node inputs, computed on first use (logrerank.text.lexical.pool_lexical)
    lexical: Tensor | None = field(default=None, repr=False, compare=False)


def retitled(enc: Encoded, titles: list[str]) -> Encoded:
    """``enc`` with its passages' titles replaced by ``titles`` (one per passage) and its
    lexical inputs reset; the tensors are shared. Valid because sentence units never read
    titles (``local.unit == "sentence"``): only the graph inputs depend on them."""
    passages = [dataclasses.replace(p, title=t) for p, t in zip(enc.passages, titles, strict=True)]
    return dataclasses.replace(enc, passages=passages, lexical=None)


def unscored_sentences(spans: list[list[Span]]) -> tuple[list[ScoredSentence], Tensor]:
    """The sentences of every passage in document order (node ids ``0..N-1``), scores unset.

    Args:
        spans: per passage, its sentence spans (:func:`logrerank.text.segment.passage_spans`).

    Returns:
        The sentences and ``passage_of`` ``[N]`` (long), the passage of each.
    """
    sentences, passage_of = [], []
    for p, sp in enumerate(spans):
        for j, s in enumerate(sp):
            sentences.append(ScoredSentence(len(sentences), p, j, s.text, s.start, s.end, 0.0))
            passage_of.append(p)
    return sentences, torch.tensor(passage_of, dtype=torch.long)


def passage_logits(head, enc: Encoded, logits: Tensor) -> tuple[Tensor, Tensor] | None:
    """The learned passage score of a pool (:class:`~logrerank.ranking.passage_head.PassageHead`), or
    None without a head (or without sentences).

    Args:
        head: the model's passage head, or None.
        enc: the local stage's output.
        logits: ``[N]`` final sentence logits (:func:`final_logits`).
    """
    from .passage_head import passage_features

    if head is None or logits.numel() == 0:
        return None
    P = len(enc.passages)
    feats = passage_features(
        logits.float(),
        enc.local_logits.float(),
        enc.prior_logits,
        pool_lexical(enc),
        enc.passage_of,
        P,
    )
    was = head.training
    head.eval()
    with torch.no_grad():
        out = head(logits.float(), enc.h.float(), feats, enc.passage_of)
    head.train(was)
    return out


def final_scores(
    enc: Encoded, l_global: Tensor | None, score: ScoreConfig, lexical_weight: float = 0.0
) -> Tensor:
    """``[N]`` final sentence scores: ``sigmoid`` of :func:`final_logits` (same arguments)."""
    return torch.sigmoid(final_logits(enc, l_global, score, lexical_weight))


def final_logits(
    enc: Encoded,
    l_global: Tensor | None,
    score: ScoreConfig,
    lexical_weight: float = 0.0,
) -> Tensor:
    """``[N]`` final sentence logits: the global logits (the local ones when the graph stage did
    not run) after the score adjustments of :func:`logrerank.ranking.scoring.adjust_logits`, plus
    ``lexical_weight * passage_bm25`` (:func:`logrerank.text.lexical.pool_lexical`).

    Args:
        enc: the local stage's output.
        l_global: ``[N]`` global logits, or None.
        score: the score adjustment settings.
        lexical_weight: w of the lexical prior (``ScoreConfig.lexical_weight``; 0 = none).
    """
    out = adjust_logits(
        (l_global if l_global is not None else enc.local_logits).float(),
        enc.passage_of,
        [s.text for s in enc.sentences],
        score.merge_duplicates,
        score.passage_weight,
        None if enc.prior_logits is None else enc.local_logits - enc.prior_logits,
        score.head_weight,
    )
    if lexical_weight:
        out = out + lexical_weight * pool_lexical(enc)[:, 1].to(out.dtype)
    return out


def build_ranking(
    enc: Encoded,
    final: Tensor,
    z_local: Tensor,
    z_global: Tensor | None,
    ranker: str,
    passage_logits: tuple[Tensor, Tensor] | None = None,
    selection: ScoreConfig | None = None,
    calibration: tuple[float, float] = (1.0, 0.0),
    raw: Tensor | None = None,
) -> Ranking:
    """Scored sentences and passages of one call (context, edges and info are added after).

    Args:
        enc: the local stage's output.
        final: ``[N]`` final sentence scores (the shown, calibrated ones).
        z_local: ``[N]`` local scores ``sigmoid(l_local)``.
        z_global: ``[N]`` global scores, or None when the graph stage did not run.
        ranker: name recorded in the result.
        passage_logits: ``(scores [P], correction [P])`` of the learned passage score
            (:func:`logrerank.ranking.passage_head.PassageHead`), or None: passages are then ranked by
            their best sentence.
        selection: the sentence selection settings (``select_*`` of
            :class:`~logrerank.config.ScoreConfig`; :mod:`logrerank.ranking.selection`), or None for
            the plain score order. The passage order does not depend on them.
        calibration: ``(a, b)`` of the shown passage scores ``sigmoid(a * s + b)`` of a learned
            passage score (``ScoreConfig.calibration_a/b``; the sentence scores in ``final``
            are calibrated already).
        raw: ``[N]`` the uncalibrated final scores ``sigmoid(f)`` the selection reads (None =
            ``final``), so that a calibration never changes the selected order.
    """
    sentences = []
    roles = enc.role_probs.argmax(-1).tolist()
    probs = enc.role_probs.double().tolist()  # one conversion per tensor, not per element
    finals, zls = final.double().tolist(), z_local.double().tolist()
    zgs = z_global.double().tolist() if z_global is not None else None
    for s in enc.sentences:
        n = s.node
        sentences.append(
            dataclasses.replace(
                s,
                score=finals[n],
                role_probs=probs[n],
                role=ROLE_NAMES[roles[n]],
                local_score=zls[n],
                global_score=zgs[n] if zgs is not None else None,
                extra={},
            )
        )
    intent = enc.intent_by_passage
    has = torch.zeros(len(enc.passages), dtype=torch.bool)
    has[enc.passage_of] = True
    ranking = Ranking.from_sentence_scores(
        enc.query,
        enc.passages,
        sentences,
        ranker,
        intent_probs=[float(x) for x in intent[has].mean(0)],
        intent_by_passage=[[float(x) for x in row] for row in intent],
        warnings=list(enc.warnings),
    )
    if passage_logits is not None:
        rerank_passages(ranking, *passage_logits, calibration=calibration)
    if selection is not None:
        apply_selection(ranking, enc.h, selection, raw)
    return ranking


def rerank_passages(
    ranking: Ranking,
    scores: Tensor,
    correction: Tensor,
    calibration: tuple[float, float] = (1.0, 0.0),
) -> None:
    """Order ``ranking.passages_ranked`` by learned passage logits (in place).

    Each passage's ``score`` becomes ``sigmoid(a * scores[p] + b)`` (``calibration = (a, b)``,
    a > 0: the order is the logits'); ``extra`` keeps the breakdown:
    ``best_sentence`` (the score of its best sentence, what ranked it before) and
    ``passage_head`` (the learned correction, in logits). Ties break by passage index.
    """
    a, b = calibration
    s, c = scores.double().tolist(), correction.double().tolist()
    by_idx = {p.passage_idx: p for p in ranking.passages_ranked}
    order = sorted(by_idx, key=lambda i: (-s[i] if s[i] == s[i] else float("inf"), i))
    ranked = []
    for r, i in enumerate(order, 1):
        p = by_idx[i]
        p.extra = {**p.extra, "best_sentence": p.score, "passage_head": c[i]}
        p.score = float(torch.sigmoid(torch.tensor(a * s[i] + b, dtype=torch.float64)))
        p.rank = r
        ranked.append(p)
    ranking.passages_ranked = ranked


def graph_edges(data, attention: list[Tensor] | None) -> list[GraphEdge]:
    """The sentence graph's edges for the result, with per-layer attention when the GAT ran.

    Args:
        data: the graph from :func:`logrerank.graph.sentence_graph.build_graph`.
        attention: per GAT layer ``[E]`` head-mean attention, or None.
    """
    src, dst = data.edge_index.tolist()
    rel = data.relation_type.tolist()
    used = data.edge_type.tolist()
    sim = data.edge_sim.tolist()
    att = torch.stack(attention, 1).tolist() if attention else None  # [E, layers]
    return [
        GraphEdge(
            u,
            v,
            relation_name(r),
            t,
            None if c != c else c,  # NaN -> None
            att[e] if att is not None else None,
        )
        for e, (u, v, r, t, c) in enumerate(zip(src, dst, rel, used, sim))
    ]


def call_info(
    model, enc: Encoded, data, gcfg, gate: float | None, use_global: bool, head: bool
) -> dict:
    """``Ranking.info`` of one :meth:`~logrerank.pipeline.LoGReranker.rank_encoded` call: the
    model and config facts the app and the CLI display.

    Args:
        model: the :class:`~logrerank.pipeline.LoGReranker`.
        enc: the local stage's output.
        data: the sentence graph that was built.
        gcfg: the graph settings used.
        gate: the pool's learned graph share (``GlobalConfig.pool_gate``), None for a gate-less
            stage or when the graph stage did not run.
        use_global: whether the global stage ran.
        head: whether the learned passage score ranked the passages.
    """
    from ..graph.links import titled_fraction
    from ..graph.sentence_graph import edge_counts

    sc = model.config.score
    return {
        "model": model.source,
        "trained": model.config.trained,
        "device": str(model.device_),
        "precision": str(model._autocast_dtype_used()).replace("torch.", ""),
        "runtime": model.runtime_in_use,
        "use_global": use_global,
        "global_stage": "global" if use_global else None,
        "graph_gate": gate if use_global else None,
        "titled_fraction": round(titled_fraction(enc.passages), 4),
        "graph": dataclasses.asdict(gcfg),
        "score": dataclasses.asdict(sc),
        "calibration": [sc.calibration_a, sc.calibration_b],
        "passage_head": head,
        "num_nodes": int(data.num_nodes),
        "edge_counts": edge_counts(data),
        "passage_cache_windows": list(enc.cached_windows),
    }
