"""The logrerank Gradio app: layout and event wiring only (handlers: :mod:`logrerank.app.handlers`).

``python app.py`` or ``logrerank app`` runs :func:`main`: it serves on 127.0.0.1:7860 (``--port``
or ``$PORT`` to change), offline, with no share link and no analytics. The ``demo`` Blocks object
is built at import time (models loaded once per process) so tests and ``bench/load_test.py`` can
launch it.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from functools import partial
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import gradio as gr  # noqa: E402

from ..memory import freeze_startup_objects  # noqa: E402
from . import handlers as ui  # noqa: E402
from . import viz  # noqa: E402
from .state import (  # noqa: E402
    ABLATIONS,
    METRIC_COLUMNS,
    TABLE_COLUMNS,
    Backend,
    Knobs,
    Result,
    Session,
)

BACKEND = Backend.load()  # models loaded once per process
EXAMPLES = ui.list_examples()
DEFAULT = Knobs()
GRAPH_CFG = BACKEND.log.config.graph
freeze_startup_objects()  # no full-GC pauses inside requests (bench/README.md, "Passages cached")

INTRO = """# logrerank · LoG-Reranker
Sentence-level **local-to-global graph reranking** of scientific evidence: each sentence gets a
**local** score (question + its passage, role-aware) and a **global** score from a relation-aware
graph attention network over the sentences of all passages. The tabs show the sentence graph, the
ranking, how it differs from a cross-encoder and BM25, and the context an LLM would receive.
Examples are illustrative texts written for this demo."""


def _emit(res: Result) -> tuple[Any, ...]:
    """A handler Result in the order of OUTPUTS."""
    return (
        res.status,
        res.graph,
        res.table,
        res.heat,
        res.compare,
        res.slope,
        res.metrics,
        res.tokens,
        res.context_prompt,
        res.context_json,
        gr.DownloadButton(value=res.context_file, interactive=res.context_file is not None),
        gr.Dropdown(choices=res.explain_choices, value=res.explain_value),
        res.explain,
        res.session,
    )


def _knobs(top_k, tau_sim, delta, k, blend, ablations, graph_top_n) -> Knobs:
    return Knobs.make(top_k, tau_sim, delta, k, blend, ablations, graph_top_n)


def rerank(
    question: str,
    passages: str,
    upload: str | None,
    top_k: float = DEFAULT.top_k,
    tau_sim: float = GRAPH_CFG.tau_sim,
    delta: float = GRAPH_CFG.delta,
    k: float = GRAPH_CFG.top_k,
    blend: float = DEFAULT.blend,
    ablations: list[str] | None = None,
    graph_top_n: float = 0,
    session: Session | None = None,
):
    """Rerank the passages for the question (named API endpoint ``/rerank``)."""
    knobs = _knobs(top_k, tau_sim, delta, k, blend, ablations, graph_top_n)
    return _emit(ui.run_rerank(BACKEND, session, question, passages, upload, knobs))


def recompute(top_k, tau_sim, delta, k, blend, ablations, graph_top_n, session):
    """Knob change: graph stages only, from the cached encodings."""
    knobs = _knobs(top_k, tau_sim, delta, k, blend, ablations, graph_top_n)
    return _emit(ui.recompute(BACKEND, session, knobs))


def pick_example(name: str) -> tuple[str, str, None]:
    question, passages = ui.load_example(name)
    return question, passages, None


with gr.Blocks(title="logrerank", analytics_enabled=False) as demo:
    session = gr.State(None)
    gr.Markdown(INTRO)
    with gr.Row(equal_height=False):
        with gr.Column(scale=2, min_width=360):
            question = gr.Textbox(
                label="Question (Enter runs)",
                lines=1,
                max_lines=3,
                placeholder="e.g. Do statins reduce the risk of dementia?",
                elem_id="question",
            )
            passages = gr.Textbox(
                label="Passages (blank-line separated; optional 'Title:' first line)",
                lines=8,
                max_lines=20,
                elem_id="passages",
            )
            upload = gr.File(
                label="…or upload JSON / JSONL / TXT",
                type="filepath",
                file_types=[".json", ".jsonl", ".txt"],
                elem_id="upload",
            )
            run = gr.Button("Rerank", variant="primary", elem_id="run")
            gr.Markdown("**Examples** (click to load and run)")
            with gr.Row():
                example_buttons = [
                    gr.Button(name, size="sm", elem_id=f"example-{i}")
                    for i, name in enumerate(EXAMPLES)
                ]
            with gr.Accordion("Knobs (recomputed from cached encodings)", open=True):
                top_k = gr.Slider(1, 30, DEFAULT.top_k, step=1, label="top-K context units")
                tau_sim = gr.Slider(
                    0.0, 1.0, GRAPH_CFG.tau_sim, step=0.01, label="τ_sim similarity threshold"
                )
                delta = gr.Slider(
                    0.0, 1.0, GRAPH_CFG.delta, step=0.01, label="δ max local-score gap"
                )
                k = gr.Slider(0, 32, GRAPH_CFG.top_k, step=1, label="k similar neighbours per node")
                blend = gr.Slider(
                    0.0, 1.0, DEFAULT.blend, step=0.05, label="blend weight (cross-encoder stage)"
                )
                ablations = gr.CheckboxGroup(
                    list(ABLATIONS),
                    value=list(ABLATIONS),
                    label="Enabled parts (uncheck = ablation)",
                    elem_id="ablations",
                )
        with gr.Column(scale=5, min_width=600):
            status = gr.HTML(
                viz.status_html(BACKEND.model_rows(), *BACKEND.device_info(), [], {}),
                elem_id="status",
            )
            with gr.Tabs():
                with gr.Tab("Sentence graph", id="graph"):
                    graph_top_n = gr.Slider(
                        0,
                        100,
                        0,
                        step=1,
                        label="show only the top-N sentences and their neighbours (0 = all)",
                    )
                    graph = gr.HTML(elem_id="graph")
                with gr.Tab("Ranking", id="ranking"):
                    table = gr.Dataframe(
                        headers=TABLE_COLUMNS,
                        wrap=True,
                        max_height=520,
                        interactive=False,
                        elem_id="table",
                        label="Sentences ranked by LoG (Δ vs CE > 0: LoG ranks it higher than the cross-encoder)",
                    )
                    heat = gr.HTML(elem_id="heat")
                with gr.Tab("Comparison", id="compare"):
                    compare = gr.HTML(elem_id="compare")
                    slope = gr.Plot(label="Rank shift", elem_id="slope")
                    metrics = gr.Dataframe(
                        headers=METRIC_COLUMNS,
                        interactive=False,
                        elem_id="metrics",
                        label="Agreement with LoG (overlap@k, Kendall τ over all items)",
                    )
                with gr.Tab("Structured context", id="context"):
                    tokens = gr.Markdown(elem_id="tokens")
                    context = gr.Textbox(
                        label="Structured context (as the generator sees it)",
                        lines=14,
                        max_lines=30,
                        buttons=["copy"],
                        elem_id="context",
                    )
                    context_json = gr.Code(
                        label="Units (JSON)", language="json", elem_id="context-json"
                    )
                    download = gr.DownloadButton(
                        "Download context JSON", interactive=False, elem_id="download"
                    )
                with gr.Tab("Explain a sentence", id="explain"):
                    pick = gr.Dropdown(label="Sentence", choices=[], elem_id="explain-pick")
                    explanation = gr.HTML(elem_id="explain")

    inputs = [
        question,
        passages,
        upload,
        top_k,
        tau_sim,
        delta,
        k,
        blend,
        ablations,
        graph_top_n,
        session,
    ]
    knob_inputs = [top_k, tau_sim, delta, k, blend, ablations, graph_top_n, session]
    outputs = [
        status,
        graph,
        table,
        heat,
        compare,
        slope,
        metrics,
        tokens,
        context,
        context_json,
        download,
        pick,
        explanation,
        session,
    ]
    run.click(rerank, inputs, outputs, api_name="rerank")
    question.submit(rerank, inputs, outputs, api_name=False)
    for name, button in zip(EXAMPLES, example_buttons):
        button.click(
            partial(pick_example, name), None, [question, passages, upload], api_name=False
        ).then(rerank, inputs, outputs, api_name=False)
    for slider in (top_k, tau_sim, delta, k, blend):
        slider.change(recompute, knob_inputs, outputs, api_name=False, trigger_mode="always_last")
    ablations.change(recompute, knob_inputs, outputs, api_name=False)
    graph_top_n.change(
        ui.redraw_graph, [session, graph_top_n], graph, api_name=False, trigger_mode="always_last"
    )
    pick.change(ui.explain, [session, pick], explanation, api_name=False)

demo.queue(default_concurrency_limit=2, max_size=32)


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the app on 127.0.0.1 (no share link) until interrupted.

    Args:
        argv: command-line arguments (None = ``sys.argv[1:]``): ``--port`` (default ``$PORT``,
            else 7860).
    """
    parser = argparse.ArgumentParser(description="Serve the logrerank app on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 7860)))
    args = parser.parse_args(argv)
    demo.launch(server_name="127.0.0.1", server_port=args.port, share=False)


__all__ = ["demo", "main", "recompute", "rerank"]
