"""The global stage's inputs of one encoded pool: the typed sentence graph (with the link edges
the config switches on), the ``[N, 3]`` lexical node inputs and the pool features a gated stage
reads (:mod:`logrerank.graph.pool_features`).

Inference (:meth:`logrerank.pipeline.LoGReranker.rank_encoded`) and stage-2 training
(:mod:`logrerank.training.log.graph_cv`) both build them here, so training sees exactly the graph
that inference builds.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch_geometric.data import Data

from ..config import GraphConfig, LoGConfig
from ..ranking.results import Encoded
from ..text.lexical import pool_lexical
from .links import pool_links
from .pool_features import pool_features
from .sentence_graph import build_graph

__all__ = ["global_scores", "graph_inputs", "stage_pool"]


def graph_inputs(
    config: LoGConfig,
    enc: Encoded,
    gcfg: GraphConfig | None = None,
    lexical: bool = True,
) -> tuple[Data, Tensor | None]:
    """``(data, lexical)`` of an encoded pool.

    Args:
        config: the model's config (its ``global_`` section says whether lexical inputs are
            used).
        enc: the pool's local encoding.
        gcfg: graph settings (default ``config.graph``).
        lexical: False = the "no lexical node input" ablation: the lexical inputs are zeros
            (what an all-tied pool gives no node; the model's other inputs are unchanged).

    Returns:
        The graph (:func:`logrerank.graph.sentence_graph.build_graph`) and the lexical inputs
        (:func:`logrerank.text.lexical.pool_lexical`), None when the global model does not use them.
    """
    gcfg = gcfg or config.graph
    link = pool_links(enc, gcfg) if (gcfg.mentions or gcfg.shared_terms) else None
    z_local = torch.sigmoid(enc.local_logits)
    data = build_graph(enc.h, enc.role_probs, z_local, enc.passage_of, gcfg, link)
    g = config.global_
    if not (g.lexical_inputs or g.lexical_residual):
        return data, None
    lex = pool_lexical(enc)
    return data, lex if lexical else torch.zeros_like(lex)


def global_scores(
    model, enc: Encoded, data: Data, lexical: Tensor | None, device: torch.device
) -> tuple[Tensor, Tensor, list[Tensor], float | None]:
    """Run the global model (:class:`~logrerank.graph.global_model.GlobalReranker`) on a pool's
    graph: ``(z_global [N], l_global [N], attention, gate)``, attention per layer ``[E]`` (head
    mean), all on the CPU in float32; ``gate`` is the pool's learned graph share (None without
    ``pool_gate``)."""
    pool = stage_pool(model, enc, data)
    out, _ = model(
        enc.h.to(device),
        enc.role_probs.to(device),
        enc.local_logits.to(device),
        data.edge_index.to(device),
        data.edge_type.to(device),
        return_attention=True,
        lexical=None if lexical is None else lexical.to(device),
        passage_of=enc.passage_of.to(device),
        pool=None if pool is None else pool.to(device),
    )
    attention = [a.float().mean(-1).cpu() for a in out.attention]
    gate = None if out.gate is None else float(out.gate)
    return out.scores.float().cpu(), out.logits.float().cpu(), attention, gate


def stage_pool(model, enc: Encoded, data: Data) -> Tensor | None:
    """The pool features (:func:`~logrerank.graph.pool_features.pool_features`) a global stage
    with ``pool_gate`` reads, None for one without."""
    if not getattr(model.config, "pool_gate", False):
        return None
    return pool_features(enc.query, enc.passages, data.relation_type, enc.local_logits)
