"""The app's ``/rerank`` API endpoint: one JSON object out, errors raised as ``gr.Error``.

A script calling ``/rerank`` through ``gradio_client`` gets a dict (:func:`result_json`) with
named fields, or an exception carrying the message when the input is bad (``gradio_client``
raises ``AppError`` with it); it never has to parse the page's HTML. The page itself keeps its
own event (several outputs, errors shown in the status panel).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..types import json_safe
from . import handlers as ui
from .state import Backend, Knobs, Result


def _records(frame: Any, names: dict[str, str]) -> list[dict[str, Any]]:
    """A table's rows as dicts with API field names (``names``: column -> field)."""
    rows = json_safe(frame.to_dict(orient="records")) if frame is not None else []
    return [{names.get(k, k): v for k, v in row.items()} for row in rows]


def result_json(res: Result) -> dict[str, Any]:
    """The API's answer for one successful call.

    Fields: ``ranker`` and ``cross_encoder`` (what ranked and what it is compared with, the
    ablations named), ``sentences`` (rank order: ``rank``, ``text``, ``score``, ``delta_vs_ce``,
    ``ref`` = ``P#·S#``, ``role``), ``passages`` (LoG passage order: ``rank``, ``passage``
    1-based, ``title``, ``score``), ``agreement`` (overlap / Kendall tau against each
    baseline), ``context`` (the structured context as text) and ``context_units``,
    ``graph_links`` (links per relation), ``warnings``, and ``timings`` (seconds per stage).
    """
    session = res.session
    ranking = session.ranking
    log_name, ce_name = session.names
    sentences = _records(
        res.table, {"Δ vs CE": "delta_vs_ce", "P·S": "ref"}
    )  # columns: rank, text, score, Δ vs CE, P·S, role
    passages = [
        {
            "rank": p.rank,
            "passage": p.passage_idx + 1,
            "title": ranking.passages[p.passage_idx].title,
            "score": p.score,
        }
        for p in ranking.passages_ranked
    ]
    agreement = _records(
        res.metrics, {"LoG vs": "versus", "Kendall τ": "kendall_tau", "overlap@5": "overlap_at_5"}
    )
    for row in agreement:
        row["overlap_at_10"] = row.pop("overlap@10", None)
    from .viz import link_counts

    return json_safe(
        {
            "ranker": log_name,
            "cross_encoder": ce_name,
            "sentences": sentences,
            "passages": passages,
            "agreement": agreement,
            "context": res.context_prompt,
            "context_units": (ranking.context or {}).get("units", []),
            "graph_links": link_counts(ranking.edges),
            "warnings": list(ranking.warnings),
            "timings": dict(ranking.timings),
        }
    )


def make_rerank(backend: Callable[[], Backend], default: Knobs, graph: Any) -> Callable:
    """The ``/rerank`` function over the models ``backend()`` returns (loaded on the first
    call); omitted settings take the page defaults (``default`` knobs, the model's ``graph``
    config)."""

    def rerank(
        question: str,
        passages: str,
        upload: str | None = None,
        top_k: float = default.top_k,
        tau_sim: float = graph.tau_sim,
        delta: float = graph.delta,
        k: float = graph.top_k,
        blend: float = default.blend,
        ablations: list[str] | None = None,
        cross_encoder: str = "",
    ) -> dict[str, Any]:
        """Rerank blank-line separated passages (optional ``Title:`` first lines) for the
        question; returns one JSON object (:func:`result_json`). ``ablations`` lists the parts
        to keep on (default all), ``cross_encoder`` the comparison's (``bundled``, ``twin`` or
        a folder; empty = default). Bad input raises an error with the message."""
        import gradio as gr

        if upload:
            raise gr.Error("the API takes the passages as text; upload files through the page")
        knobs = Knobs.make(
            top_k, tau_sim, delta, k, blend, ablations, 0, cross_encoder=cross_encoder
        )
        res = ui.run_rerank(backend(), None, question, passages, None, knobs)
        if not res.ok:
            raise gr.Error(res.error or "the request failed")
        return result_json(res)

    return rerank


__all__ = ["make_rerank", "result_json"]
