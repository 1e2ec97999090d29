"""The logrerank Gradio app: layout and event wiring only (handlers: :mod:`logrerank.app.handlers`).

``python app.py`` or ``logrerank app`` runs :func:`main`: it serves on 127.0.0.1:7860, offline,
with no share link and no analytics. ``--port``, else Gradio's own ``GRADIO_SERVER_PORT`` (or
``$PORT``), sets the port and ``GRADIO_SERVER_NAME`` the address; uploads over the input limit
are refused by Gradio before they are written (``max_file_size``). ``--cross-encoder DIR`` (else
``$LOGRERANK_CROSS_ENCODER``, else the bundled one) picks the comparison's cross-encoder: any
sentence-transformers or Hugging Face sequence-classification folder; the status panel shows it
with a trained / UNTRAINED / UNAVAILABLE badge. The ``demo`` Blocks object is built at import
time, without loading a model, so tests and ``bench/load_test.py`` can launch it (with
:func:`launch_kwargs` for the page style and the upload limit); the models load once per
process (:class:`~logrerank.app.loading.LazyBackend`): in :func:`main` after its arguments are
parsed, else on the first request. The events that rank read their settings from one
:class:`KnobInputs`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import partial
from typing import Any

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import gradio as gr  # noqa: E402

from ..inputs.limits import DEFAULT_LIMITS  # noqa: E402
from ..local.memory import freeze_startup_objects  # noqa: E402
from . import api, viz  # noqa: E402
from . import handlers as ui  # noqa: E402
from .loading import LazyBackend, bundled_log_config  # noqa: E402
from .options import parse_args  # noqa: E402
from .state import (  # noqa: E402
    ABLATIONS,
    DETAIL_COLUMNS,
    METRIC_COLUMNS,
    TABLE_COLUMNS,
    Knobs,
    Result,
    Session,
)
from .styles import CSS  # noqa: E402

# no full-GC pauses inside requests (bench/README.md, "Passages cached"): freeze after loading
BACKEND = LazyBackend(after_load=freeze_startup_objects)  # models load on first use
EXAMPLES = ui.list_examples()
DEFAULT = Knobs()
GRAPH_CFG = bundled_log_config().graph  # the sliders' defaults: config.json, no weights
LIMITS = DEFAULT_LIMITS  # the LoG model's input limits (LoGReranker.limits)

INTRO = """# logrerank · LoG-Reranker
Sentence-level **local-to-global graph reranking** of scientific evidence: each sentence gets a
**local** score (question + its passage, role-aware) and a **global** score from a graph attention
network over the sentences of all passages. Examples are illustrative texts written for this demo."""

EMPTY_STATE = (
    "<div class='lr-empty'><b>Start here:</b> click an example "
    "<span class='lr-wide'>on the left</span><span class='lr-narrow'>above</span> under "
    "<i>Try an example</i> (it loads and runs), or type a question, paste passages separated by "
    "blank lines and press <b>Rerank</b>. The ranked sentences appear here; the other tabs show the sentence "
    "graph, the comparison with a cross-encoder and BM25, the context an LLM would receive and "
    "why a sentence sits where it does.</div>"
)

SCROLL_TO_RESULTS = """() => {
  const el = document.getElementById('results');
  if (!el) { return; }
  const top = el.getBoundingClientRect().top;
  if (top < 0 || top > window.innerHeight * 0.5) { el.scrollIntoView({block: 'start'}); }
}"""


def initial_status() -> str:
    """The status panel before the first run (read at page load: follows ``--cross-encoder``;
    the first page load of a process loads the models)."""
    backend = BACKEND.get()
    rows, device = backend.model_rows(), backend.device_info()
    return EMPTY_STATE + viz.status_html(rows, *device, backend.startup_warnings(), {})


@dataclass
class KnobInputs:
    """The widgets a :class:`Knobs` is read from, bound once: every event that ranks takes
    ``[session, *components()]`` and rebuilds the knobs with :meth:`knobs`. The field names
    are the keywords of :meth:`Knobs.make`."""

    top_k: Any
    tau_sim: Any
    delta: Any
    k: Any
    blend: Any
    switches: Any
    graph_top_n: Any
    context_tokens: Any
    min_score: Any
    cross_encoder: Any

    def components(self) -> list[Any]:
        """The widgets in field order (the order :meth:`knobs` reads their values in)."""
        return [getattr(self, f.name) for f in fields(self)]

    @classmethod
    def knobs(cls, values: Sequence[Any]) -> Knobs:
        """:class:`Knobs` from the widgets' values, in the order of :meth:`components`."""
        return Knobs.make(**dict(zip((f.name for f in fields(cls)), values, strict=True)))


def _emit(res: Result) -> tuple[Any, ...]:
    """A handler Result in the order of OUTPUTS; an error keeps the other views as they are."""
    if not res.ok:
        return (res.status, *([gr.skip()] * (N_OUTPUTS - 2)), res.session)
    return (
        res.status,
        res.graph,
        gr.Dataframe(value=res.table, label=res.table_label or None),
        res.heat,
        res.compare,
        res.slope,
        gr.Dataframe(value=res.metrics, label=res.metrics_label or None),
        res.tokens,
        res.context_prompt,
        res.context_json,
        gr.DownloadButton(value=res.context_file, interactive=res.context_file is not None),
        gr.Dropdown(choices=res.explain_choices, value=res.explain_value),
        res.explain,
        res.details,
        res.session,
    )


N_OUTPUTS = 15  # status, graph, table, heat, compare, slope, metrics, tokens, context,
# context_json, download, pick, explanation, details, session


def rerank(
    question: str, passages: str, upload: Any, session: Session | None, *knobs: Any
) -> tuple[Any, ...]:
    """Rerank the passages for the question (the page's event; scripts use ``/rerank``,
    :mod:`logrerank.app.api`); ``knobs`` are the values of :class:`KnobInputs`."""
    res = ui.run_rerank(BACKEND.get(), session, question, passages, upload, KnobInputs.knobs(knobs))
    return _emit(res)


def recompute(session: Session | None, *knobs: Any) -> tuple[Any, ...]:
    """Knob change: graph stages only, from the cached encodings (a new cross-encoder choice
    re-ranks the baselines, not LoG's transformer)."""
    return _emit(ui.recompute(BACKEND.get(), session, KnobInputs.knobs(knobs)))


def recompute_for_choice(session: Session | None, *knobs: Any) -> tuple[Any, ...]:
    """A new cross-encoder choice (the menu's ``.change``: once per pick, however it was
    picked): re-rank the baselines from the cached encodings; before the first run (the menu
    is filled in at page load) nothing is shown, the choice applies to the run."""
    if session is None or session.encoded is None:
        return tuple(gr.skip() for _ in range(N_OUTPUTS))
    return recompute(session, *knobs)


def cross_encoder_menu() -> Any:
    """The cross-encoder menu at page load: every choice with its badge, the default picked
    (read at page load: follows ``--cross-encoder``)."""
    backend = BACKEND.get()
    options = backend.choice_options()
    default = backend.cross_encoder_choice
    value = default if default in {v for _, v in options} else options[0][1]
    return gr.Dropdown(choices=options, value=value)


def pick_example(name: str) -> tuple[str, str, None]:
    question, passages = ui.load_example(name)
    return question, passages, None


def source_note(passages_text: str | None, upload: Any) -> str:
    """The line under the upload box: which input a run will use."""
    if not upload:
        return ""
    return "**" + ui.input_source(passages_text, upload) + ".**"


with gr.Blocks(title="logrerank", analytics_enabled=False) as demo:
    session = gr.State(None)
    gr.Markdown(INTRO)
    with gr.Row(equal_height=False):
        with gr.Column(scale=2, min_width=320, elem_id="inputs"):
            gr.Markdown("**Try an example** (click to load and run)")
            with gr.Row(elem_classes="lr-examples"):
                example_buttons = [
                    gr.Button(name, size="sm", elem_id=f"example-{i}", min_width=120)
                    for i, name in enumerate(EXAMPLES)
                ]
            question = gr.Textbox(
                label="Question (Enter runs)",
                lines=1,
                max_lines=3,
                placeholder="e.g. Do statins reduce the risk of dementia?",
                elem_id="question",
            )
            passages = gr.Textbox(
                label="Passages (blank-line separated; optional 'Title:' first line)",
                lines=6,
                max_lines=14,
                elem_id="passages",
            )
            run = gr.Button("Rerank", variant="primary", elem_id="run")
            upload = gr.File(
                label="…or upload JSON / JSONL / TXT / paper PDFs, several at once (up to "
                f"{LIMITS.max_upload_bytes / 1e6:,.1f} MB and {LIMITS.max_pdf_pages:,} PDF pages "
                "each; files are used instead of the pasted passages)",
                type="filepath",
                file_count="multiple",
                file_types=[".json", ".jsonl", ".txt", ".pdf"],
                height=110,
                elem_id="upload",
            )
            source = gr.Markdown(elem_id="source-note")
            with gr.Accordion("Knobs (recomputed from cached encodings)", open=False):
                top_k = gr.Slider(1, 30, DEFAULT.top_k, step=1, label="top-K context units")
                context_tokens = gr.Slider(
                    0,
                    4000,
                    DEFAULT.context_tokens,
                    step=25,
                    label="context token budget (0 = automatic: at most 400 tokens and 90% of "
                    "the flat top-K passages)",
                    elem_id="context-tokens",
                )
                min_score = gr.Slider(
                    0.0,
                    1.0,
                    DEFAULT.min_score,
                    step=0.01,
                    label="context relevance threshold (fraction of the best unit's score)",
                    elem_id="min-score",
                )
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
                ce_pick = gr.Dropdown(
                    label="cross-encoder of the comparison (bundled, the passage twin of LoG's "
                    "local scorer, or the --cross-encoder folder)",
                    choices=[("default", "")],  # the real menu is set at page load
                    value="",  # API default: the default cross-encoder
                    allow_custom_value=True,  # the API may name a folder
                    elem_id="ce-pick",
                )
                ablations = gr.CheckboxGroup(
                    list(ABLATIONS),
                    value=list(ABLATIONS),
                    label="Enabled parts (uncheck = ablation)",
                    elem_id="ablations",
                )
        with gr.Column(scale=5, min_width=340, elem_id="results"):
            status = gr.HTML(EMPTY_STATE, elem_id="status")  # + the models at page load
            with gr.Tabs(elem_id="results-tabs"):
                with gr.Tab("Ranking", id="ranking"):
                    table = gr.Dataframe(
                        headers=TABLE_COLUMNS,
                        wrap=True,
                        max_height=560,
                        interactive=False,
                        column_widths=["52px", "40%", "76px", "76px", "70px", "20%", "84px"],
                        elem_id="table",
                        label="Sentences ranked by LoG · order = score: what the ranking is "
                        "sorted by · "
                        "Δ vs CE > 0: LoG ranks it higher than the cross-encoder",
                    )
                    with gr.Accordion(
                        "Score details: raw global / local, roles, baselines", open=False
                    ):
                        details = gr.Dataframe(
                            headers=DETAIL_COLUMNS,
                            max_height=420,
                            interactive=False,
                            elem_id="details",
                        )
                    heat = gr.HTML(elem_id="heat")
                with gr.Tab("Graph", id="graph"):
                    graph_top_n = gr.Slider(
                        0,
                        500,
                        0,
                        step=1,
                        label="show the top-N sentences and their neighbours (0 = automatic: "
                        "all up to 60 sentences, else the top 12)",
                        elem_id="graph-top-n",
                    )
                    graph = gr.HTML(elem_id="graph")
                with gr.Tab("Compare", id="compare"):
                    compare = gr.HTML(elem_id="compare")
                    slope = gr.Plot(label="Rank shift", elem_id="slope")
                    metrics = gr.Dataframe(
                        headers=METRIC_COLUMNS,
                        interactive=False,
                        elem_id="metrics",
                        label="Agreement with LoG (n/a: every item fits in the top k, or too few)",
                    )
                with gr.Tab("Context", id="context"):
                    tokens = gr.Markdown(elem_id="tokens")
                    context = gr.Textbox(
                        label="Structured context (as the generator sees it)",
                        lines=14,
                        max_lines=30,
                        buttons=["copy"],
                        elem_id="context",
                    )
                    context_json = gr.Code(
                        label="Units (JSON; passage and sentence numbers 1-based)",
                        language="json",
                        wrap_lines=True,  # no sideways scrolling on a phone
                        elem_id="context-json",
                    )
                    download = gr.DownloadButton(
                        "Download context JSON", interactive=False, elem_id="download"
                    )
                with gr.Tab("Explain", id="explain"):
                    pick = gr.Dropdown(label="Sentence", choices=[], elem_id="explain-pick")
                    explanation = gr.HTML(elem_id="explain")

    knob_widgets = KnobInputs(
        top_k=top_k,
        tau_sim=tau_sim,
        delta=delta,
        k=k,
        blend=blend,
        switches=ablations,
        graph_top_n=graph_top_n,
        context_tokens=context_tokens,
        min_score=min_score,
        cross_encoder=ce_pick,
    )
    knob_inputs = [session, *knob_widgets.components()]
    inputs = [question, passages, upload, *knob_inputs]
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
        details,
        session,
    ]
    assert len(outputs) == N_OUTPUTS
    # the page's own event; scripts call the JSON endpoint /rerank (logrerank/app/api.py)
    api.register(BACKEND.get, DEFAULT, GRAPH_CFG)  # checked arguments, prose API page
    run.click(rerank, inputs, outputs, api_name=False).then(None, None, None, js=SCROLL_TO_RESULTS)
    question.submit(rerank, inputs, outputs, api_name=False).then(
        None, None, None, js=SCROLL_TO_RESULTS
    )
    for name, button in zip(EXAMPLES, example_buttons):
        button.click(
            partial(pick_example, name), None, [question, passages, upload], api_name=False
        ).then(rerank, inputs, outputs, api_name=False).then(None, None, None, js=SCROLL_TO_RESULTS)
    upload.change(source_note, [passages, upload], source, api_name=False)
    for slider in (top_k, tau_sim, delta, k, blend, context_tokens, min_score):
        slider.change(recompute, knob_inputs, outputs, api_name=False, trigger_mode="always_last")
    ablations.change(recompute, knob_inputs, outputs, api_name=False)
    # .change, not .input: Gradio's dropdown dispatches "input" on the pick and again on the
    # blur that follows it (one pick recomputed twice); "change" fires once per new value
    ce_pick.change(recompute_for_choice, knob_inputs, outputs, api_name=False)
    demo.load(cross_encoder_menu, None, ce_pick, api_name=False)
    demo.load(initial_status, None, status, api_name=False)
    graph_top_n.change(
        ui.redraw_graph, [session, graph_top_n], graph, api_name=False, trigger_mode="always_last"
    )
    pick.change(ui.explain, [session, pick], explanation, api_name=False)

demo.queue(default_concurrency_limit=2, max_size=32)


def launch_kwargs() -> dict[str, Any]:
    """Keyword arguments of ``demo.launch`` besides the address: page style, upload limit, and
    the check of ``/rerank``'s plain-HTTP bodies (:mod:`logrerank.app.api_http`)."""
    from starlette.middleware import Middleware

    from .api_http import RerankBodyCheck

    return {
        "css": CSS,
        "max_file_size": LIMITS.max_upload_bytes,
        "app_kwargs": {"middleware": [Middleware(RerankBodyCheck)]},
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Serve the app (no share link) until interrupted.

    Args:
        argv: command-line arguments (None = ``sys.argv[1:]``): ``--port`` (default
            ``$GRADIO_SERVER_PORT``, else ``$PORT``, else 7860); ``--cross-encoder DIR``
            (default ``$LOGRERANK_CROSS_ENCODER``, else the bundled one). The address is
            ``$GRADIO_SERVER_NAME`` (default 127.0.0.1).
    """
    args = parse_args(argv)
    loaded = BACKEND.loaded
    backend = BACKEND.load(  # the models load here, before serving, not on the first request
        cross_encoder=args.cross_encoder or "default", runtime=args.runtime
    )
    if loaded and args.runtime and args.runtime != backend.runtime:
        backend.use_runtime(args.runtime)  # unavailable: torch + a status-panel warning
    if loaded and args.cross_encoder:
        backend.use_cross_encoder(args.cross_encoder)  # unloadable: UNAVAILABLE + warning
    host = os.environ.get("GRADIO_SERVER_NAME") or "127.0.0.1"
    # quiet: Gradio's own lines include a hint to make a public link; this app has none
    served = demo.launch(  # (app, local URL, share URL) once the server runs
        server_name=host,
        server_port=args.port,
        share=False,
        quiet=True,
        prevent_thread_lock=True,
        **launch_kwargs(),
    )
    if not served:
        return  # no server of this call to wait on
    url = served[1] or f"http://{host}:{args.port}/"
    print(f"* Running on local URL:  {url} (no share link; API: {url}?view=api)", flush=True)
    demo.block_thread()  # until interrupted


__all__ = [
    "CSS",
    "demo",
    "initial_status",
    "launch_kwargs",
    "main",
    "parse_args",
    "recompute",
    "rerank",
]
