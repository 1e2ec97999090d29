"""The global stage's inputs of one encoded pool: the typed sentence graph (with the link edges
the config switches on) and the ``[N, 3]`` lexical node inputs.

Inference (:meth:`logrerank.pipeline.LoGReranker.rank_encoded`) and stage-2 training
(:mod:`logrerank.training.log.graph_cv`) both build them here, so training sees exactly the graph
that inference builds.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import Tensor
from torch_geometric.data import Data

from ..config import GlobalConfig, GraphConfig, LoGConfig
from ..ranking.results import Encoded
from ..ranking.routing import CITING, MULTI, SINGLE, pool_route
from ..text.lexical import pool_lexical
from .ensemble import build_global_stage
from .global_model import GlobalReranker
from .links import pool_links
from .sentence_graph import build_graph

__all__ = [
    "CITING",
    "MULTI",
    "SINGLE",
    "extra_stages",
    "graph_inputs",
    "global_scores",
    "route",
    "stage_graph",
    "stage_module",
]


def route(config: LoGConfig, enc: Encoded) -> str:
    """Which global stage ranks a pool (:data:`SINGLE`, :data:`MULTI` or :data:`CITING`): the
    ``stage`` of its :func:`logrerank.ranking.routing.pool_route`."""
    return pool_route(config, enc.passages, enc.query).stage


def extra_stages(hidden: int, config: LoGConfig):
    """``(single, citing)``: the routed model's single-passage stage (``config.single``; None
    when ``single.min_titled`` is 0) and its multi-passage stage for citing queries (the main
    stage's settings; None without ``score.citance_stage``)."""
    single = config.single.min_titled > 0
    citing = config.score.citance_stage
    return (
        GlobalReranker(hidden, config.single.global_) if single else None,
        build_global_stage(hidden, _citing_config(config.global_)) if citing else None,
    )


def _citing_config(glob: GlobalConfig) -> GlobalConfig:
    """The citing-query stage's settings: the main stage's, with its own number of members."""
    return dataclasses.replace(glob, members=glob.citing_members)


def stage_module(model, stage: str):
    """The global stage module of ``model`` that ranks pools routed to ``stage``."""
    if stage == SINGLE:
        return model.global_single
    return model.global_citing if stage == CITING else model.global_model


def stage_configs(config: LoGConfig, stage: str) -> tuple[GraphConfig, GlobalConfig]:
    """``(graph, global)`` settings of a stage named by :func:`route`."""
    if stage == SINGLE:
        return config.single.graph, config.single.global_
    return config.graph, config.global_


def stage_graph(
    config: LoGConfig, stage: str, graph: GraphConfig | None
) -> tuple[GraphConfig, GlobalConfig]:
    """Graph settings (a copy) and global settings of ``stage`` (:func:`route`).

    ``graph`` (e.g. the app's knobs) is used as given by the main stage. The single-passage
    stage starts from its own graph settings and takes the fields where ``graph`` differs
    from the main stage's (what the user changed); it never gets link edges it has no
    relation weights for.
    """
    base, stage_cfg = stage_configs(config, stage)
    if graph is None:
        return dataclasses.replace(base), stage_cfg
    if stage in (MULTI, CITING):  # the citing stage shares the main stage's settings
        return dataclasses.replace(graph), stage_cfg
    changed = {
        f.name: getattr(graph, f.name)
        for f in dataclasses.fields(graph)
        if getattr(graph, f.name) != getattr(config.graph, f.name)
    }
    gcfg = dataclasses.replace(base, **changed)
    if stage_cfg.relations < 11:
        gcfg.mentions = gcfg.shared_terms = False
    return gcfg, stage_cfg


def graph_inputs(
    config: LoGConfig,
    enc: Encoded,
    gcfg: GraphConfig | None = None,
    lexical: bool = True,
    global_cfg: GlobalConfig | None = None,
) -> tuple[Data, Tensor | None]:
    """``(data, lexical)`` of an encoded pool.

    Args:
        config: the model's config (its ``global_`` section says whether lexical inputs are
            used).
        enc: the pool's local encoding.
        gcfg: graph settings (default ``config.graph``).
        lexical: False = the "no lexical node input" ablation: the lexical inputs are zeros
            (what an all-tied pool gives no node; the model's other inputs are unchanged).
        global_cfg: the settings of the global stage that will read the inputs (default
            ``config.global_``; :func:`stage_configs`).

    Returns:
        The graph (:func:`logrerank.graph.sentence_graph.build_graph`) and the lexical inputs
        (:func:`logrerank.text.lexical.pool_lexical`), None when the global model does not use them.
    """
    gcfg = gcfg or config.graph
    link = pool_links(enc, gcfg) if (gcfg.mentions or gcfg.shared_terms) else None
    z_local = torch.sigmoid(enc.local_logits)
    data = build_graph(enc.h, enc.role_probs, z_local, enc.passage_of, gcfg, link)
    g = global_cfg or config.global_
    if not (g.lexical_inputs or g.lexical_residual):
        return data, None
    lex = pool_lexical(enc)
    return data, lex if lexical else torch.zeros_like(lex)


def global_scores(
    model, enc: Encoded, data: Data, lexical: Tensor | None, device: torch.device
) -> tuple[Tensor, Tensor, list[Tensor]]:
    """Run the global model (:class:`~logrerank.graph.global_model.GlobalReranker`) on a pool's
    graph: ``(z_global [N], l_global [N], attention)``, attention per layer ``[E]`` (head
    mean), all on the CPU in float32."""
    out, _ = model(
        enc.h.to(device),
        enc.role_probs.to(device),
        enc.local_logits.to(device),
        data.edge_index.to(device),
        data.edge_type.to(device),
        return_attention=True,
        lexical=None if lexical is None else lexical.to(device),
        passage_of=enc.passage_of.to(device),
    )
    attention = [a.float().mean(-1).cpu() for a in out.attention]
    return out.scores.float().cpu(), out.logits.float().cpu(), attention
