"""The app's ``/rerank`` API endpoint: one JSON object out, a named error for a bad argument.

A script calling ``/rerank`` through ``gradio_client`` or plain HTTP gets a dict
(:func:`result_json`) with named fields, or an error whose message names the bad argument
(:mod:`logrerank.app.api_args`; ``gradio_client`` raises ``AppError`` with it, plain HTTP
answers it as the call's ``error`` event, or a 400 from :mod:`logrerank.app.api_http` when the
request body itself is malformed). Passage and sentence numbers count from 1 in every field.
The page itself keeps its own event (several outputs, errors shown in the status panel).
docs/api.md documents the endpoint.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..ranking.treatment import headline, pool_treatment
from ..types import json_safe
from . import handlers as ui
from .api_args import PART_KEYS, ApiArgError, Checked, check_args
from .context_view import one_based
from .state import Backend, Knobs, Result

NUMBERING = (
    "passage and sentence numbers count from 1 everywhere: P1·S1 is the first sentence of the "
    "first passage; rank 1 is the best"
)
"""The numbering convention, sent with every answer (``numbering``)."""

DESCRIPTION = (
    "Rerank passages for a question with LoG and get one JSON object back. Send the question "
    "and the passages as text: passages are separated by blank lines, and a passage may start "
    "with a line Title: followed by its title. The other arguments are optional: top_k (context "
    "units, a whole number from 1 to 100), tau_sim (similarity threshold, -1 to 1), delta "
    "(largest local-score gap of a similarity link, 0 to 1), k (similar neighbours per "
    "sentence, 0 to 64), blend (the cross-encoder's share in the cross-encoder stage, 0 to 1), "
    "ablations (the parts kept on, by name: use_global, cross_passage, typed, links, lexical; "
    "all when left out, none for an empty list) and cross_encoder (bundled, twin, default or a "
    "folder on the server). Leave upload empty: files go through the page. A bad argument is "
    "answered by an error that names it. The answer says what ranked and how the pool was "
    "treated (pool: graph_weight, the graph's learned share of the score from 0 to 1, and "
    "what the graph changed), the settings used, the sentences and passages in rank order and "
    "the agreement with the baselines; passage and sentence numbers count from 1. The fields are "
    "described in docs/api.md of the logrerank repository. In bash, take the event id of the "
    "cURL snippet first, EVENT_ID=$(curl -s -X POST ... | awk -F'\"' '{ print $4}'), then run "
    "curl -N .../gradio_api/call/rerank/$EVENT_ID: piping into read sets nothing in bash."
)
"""The API page's description of ``/rerank``: prose, no markup (the page shows it as is)."""

EXAMPLE = {
    "question": "Do statins reduce the risk of dementia?",
    # one line: the page pastes it into its Python and cURL snippets as is (a newline would
    # break both); one passage of two sentences
    "passages": "In a cohort of 12,000 adults, statin users had a lower risk of dementia. "
    "Trials of statins showed no effect on cognitive decline.",
    "upload": "",
    "ablations": list(PART_KEYS),
}
"""Example values of the API page's snippets (the others show their defaults)."""

PARAM_NOTES = {
    "question": "the question (text, required)",
    "passages": "the passages as text, separated by blank lines; a passage may start with a "
    "line Title: and its title (required)",
    "upload": "leave empty: files go through the page",
    "top_k": "context units, a whole number from 1 to 100",
    "tau_sim": "similarity threshold of the sentence graph, -1 to 1",
    "delta": "largest local-score gap of a similarity link, 0 to 1",
    "k": "similar neighbours kept per sentence, a whole number from 0 to 64",
    "blend": "the cross-encoder's share in the cross-encoder stage, 0 to 1",
    "ablations": "the parts kept on: use_global, cross_passage, typed, links, lexical (null = "
    "all, [] = none)",
    "cross_encoder": "the comparison's cross-encoder: bundled, twin, default (empty) or a folder "
    "on the server",
}
"""What the API page says under each argument (instead of Gradio's "the 1st Api component")."""


def _agreement_value(value: Any) -> float | int | None:
    """A figure of the agreement table as a number (``n/a`` -> None)."""
    try:
        return json_safe(float(value)) if value not in (None, "n/a") else None
    except (TypeError, ValueError):
        return None


def _agreement(metrics: Any) -> list[dict[str, Any]]:
    rows = metrics.to_dict(orient="records") if metrics is not None else []
    return [
        {
            "level": r.get("level"),
            "versus": r.get("LoG vs"),
            "items": int(r["items"]) if r.get("items") is not None else None,
            "overlap_at_5": _agreement_value(r.get("overlap@5")),
            "overlap_at_10": _agreement_value(r.get("overlap@10")),
            "kendall_tau": _agreement_value(r.get("Kendall τ")),
        }
        for r in rows
    ]


def result_json(
    res: Result, checked: Checked | None = None, notes: list[str] | None = None
) -> dict[str, Any]:
    """The API's answer for one successful call (docs/api.md).

    Fields: ``ranker`` and ``cross_encoder`` (what ranked, with its ablations, and what it is
    compared with), ``pool`` (how the pool was treated, as numbers: ``graph_weight``, the
    graph's share of the final logits, and ``graph_gate``, the learned gate it comes from (null
    for a stage without one); ``graph_moved``, ``graph_effect``, ``titled_fraction``,
    ``priors`` and the ``headline``; :func:`~logrerank.ranking.treatment.pool_treatment`),
    ``settings`` (the arguments as used), ``numbering``, ``sentences`` (rank order: ``rank``,
    ``text``, ``score``, ``local_score``, ``global_score``, ``delta_vs_ce``, ``ref`` =
    ``P#·S#``, ``passage``, ``sentence``, ``role``), ``passages`` (LoG passage order: ``rank``,
    ``passage``, ``title``, ``score``), ``agreement`` (overlap / Kendall tau against each
    baseline, numbers or null), ``context`` (the structured context as text) and
    ``context_units``, ``graph_links`` (links per relation), ``warnings`` and ``timings``
    (seconds per stage; ``notes`` are added to the warnings). Every passage / sentence
    number counts from 1.
    """
    from .viz import link_counts, sentence_ref

    session = res.session
    ranking = session.ranking
    log_name, ce_name = session.names
    local = sorted(session.local_ranks, key=session.local_ranks.get)
    pool = pool_treatment(ranking, local or None)
    pool["headline"] = headline(pool, log_name, len(ranking.sentences))
    sentences = []
    for s in ranking.sentences:
        ce_rank = session.signals.get(s.node, {}).get("ce_rank")
        sentences.append(
            {
                "rank": s.rank,
                "text": s.text,
                "score": s.score,
                "local_score": s.local_score,
                "global_score": s.global_score,
                "delta_vs_ce": (ce_rank - s.rank) if ce_rank is not None else None,
                "ref": sentence_ref(s),
                "passage": s.passage_idx + 1,
                "sentence": s.sent_idx + 1,
                "role": s.role,
            }
        )
    passages = [
        {
            "rank": p.rank,
            "passage": p.passage_idx + 1,
            "title": ranking.passages[p.passage_idx].title,
            "score": p.score,
        }
        for p in ranking.passages_ranked
    ]
    settings = {}
    if checked is not None:
        settings = {
            name: getattr(checked, name) for name in ("top_k", "tau_sim", "delta", "k", "blend")
        }
        on = set(checked.parts)
        settings["parts_on"] = [k for k, label in PART_KEYS.items() if label in on]
        settings["parts_off"] = [k for k, label in PART_KEYS.items() if label not in on]
        settings["cross_encoder"] = checked.cross_encoder or "default"
    units = json_safe((ranking.context or {}).get("units", []))
    return json_safe(
        {
            "ranker": log_name,
            "cross_encoder": ce_name,
            "pool": pool,
            "settings": settings,
            "numbering": NUMBERING,
            "sentences": sentences,
            "passages": passages,
            "agreement": _agreement(res.metrics),
            "context": res.context_prompt,
            "context_units": one_based(units),
            "graph_links": link_counts(ranking.edges),
            "warnings": list(ranking.warnings) + list(notes or []),
            "timings": dict(ranking.timings),
        }
    )


def _check_loads(backend: Backend, checked: Checked) -> list[str]:
    """An explicitly chosen cross-encoder must load; the default one may be missing, and the
    answer then says so (returned as a warning).

    Raises:
        ApiArgError: the chosen cross-encoder cannot be loaded.
    """
    loaded = backend.choice(checked.cross_encoder)
    if loaded.model is not None:
        return []
    if checked.cross_encoder:
        raise ApiArgError(
            f"cross_encoder {checked.cross_encoder!r} cannot be loaded: {loaded.error}"
        )
    return [
        f"no cross-encoder ({loaded.error}): delta_vs_ce is null and the agreement has no "
        "cross-encoder rows"
    ]


def make_rerank(backend: Callable[[], Backend], default: Knobs, graph: Any) -> Callable:
    """The ``/rerank`` function over the models ``backend()`` returns (loaded on the first
    call); omitted settings take the page defaults (``default`` knobs, the model's ``graph``
    config)."""
    defaults = {
        "top_k": default.top_k,
        "tau_sim": graph.tau_sim,
        "delta": graph.delta,
        "k": graph.top_k,
        "blend": default.blend,
    }

    def rerank(
        question: str,
        passages: str,
        upload: str = "",
        top_k: int = defaults["top_k"],
        tau_sim: float = defaults["tau_sim"],
        delta: float = defaults["delta"],
        k: int = defaults["k"],
        blend: float = defaults["blend"],
        ablations: list[str] | None = None,
        cross_encoder: str = "",
    ) -> dict[str, Any]:
        """Rerank passages for a question; one JSON object back, a named error for a bad
        argument (the API page shows :data:`DESCRIPTION`)."""
        import gradio as gr

        try:
            checked = check_args(
                defaults,
                question=question,
                passages=passages,
                upload=upload,
                top_k=top_k,
                tau_sim=tau_sim,
                delta=delta,
                k=k,
                blend=blend,
                ablations=ablations,
                cross_encoder=cross_encoder,
            )
            b = backend()
            notes = _check_loads(b, checked)
        except ApiArgError as exc:
            raise gr.Error(str(exc), print_exception=False) from None
        knobs = Knobs.make(
            checked.top_k,
            checked.tau_sim,
            checked.delta,
            checked.k,
            checked.blend,
            list(checked.parts),
            0,
            cross_encoder=checked.cross_encoder,
        )
        res = ui.run_rerank(b, None, checked.question, checked.passages, None, knobs)
        if not res.ok:
            raise gr.Error(res.error or "the request failed", print_exception=False)
        return result_json(res, checked, notes)

    return rerank


def register(backend: Callable[[], Backend], default: Knobs, graph: Any) -> None:
    """Declare ``/rerank`` in the current Blocks: :func:`make_rerank` with the prose
    :data:`DESCRIPTION`, and snippets on the API page that run as shown (:data:`EXAMPLE`)."""
    import gradio as gr
    from gradio.context import get_blocks_context

    gr.api(make_rerank(backend, default, graph), api_name="rerank", api_description=DESCRIPTION)
    root = get_blocks_context()
    fns = [f for f in root.fns.values() if f.api_name == "rerank"] if root else []
    if not fns:
        return
    from .api_args import PARAMS

    for name, comp in zip(PARAMS, fns[-1].inputs):
        comp.label = name
        comp._api_info = {**comp._api_info, "additional_description": PARAM_NOTES[name]}
        if name in EXAMPLE:  # the page's snippets show this value, not a placeholder "..."
            value = EXAMPLE[name]
            comp.example_payload = comp.example_value = lambda v=value: v


__all__ = [
    "DESCRIPTION",
    "EXAMPLE",
    "NUMBERING",
    "PARAM_NOTES",
    "make_rerank",
    "register",
    "result_json",
]
