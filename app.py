"""logrerank Gradio app: layout and event wiring only (handlers live in logrerank.ui).

Run ``python app.py`` (serves on 127.0.0.1:7860, offline, no share link, no analytics).
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import gradio as gr  # noqa: E402

from logrerank import ui  # noqa: E402
from logrerank.pipeline import LoGReranker  # noqa: E402

MODEL = LoGReranker.from_pretrained()  # loaded once per process
EXAMPLES = ui.list_examples()


def rerank(question: str, passages: str, upload: str | None):
    """Rerank the pasted passages for the question (named API endpoint ``/rerank``)."""
    return ui.run_rerank(MODEL, question, passages, upload)


def pick_example(name: str):
    return ui.load_example(name)


with gr.Blocks(title="logrerank", analytics_enabled=False) as demo:
    gr.Markdown(
        "# logrerank\nLocal-to-global sentence-level graph reranking of scientific evidence. "
        "Paste a question and passages (blank-line separated; optional `Title:` first line)."
    )
    with gr.Row():
        with gr.Column(scale=2):
            question = gr.Textbox(label="Question", lines=2)
            passages = gr.Textbox(label="Passages", lines=12)
            upload = gr.File(label="or upload JSON / JSONL / TXT", type="filepath")
            with gr.Row():
                example = gr.Dropdown(list(EXAMPLES), label="Examples", value=None)
                run = gr.Button("Rerank", variant="primary")
        with gr.Column(scale=3):
            status = gr.Markdown(
                ui.status_markdown(
                    {
                        "model": MODEL.source,
                        "device": str(MODEL.device_),
                        "precision": str(MODEL.autocast_dtype or "float32"),
                    },
                    [],
                    {},
                )
            )
            order = gr.Textbox(label="Passage order (by best sentence)", lines=6)
    table = gr.Dataframe(label="Sentence ranking", wrap=True)
    with gr.Row():
        context = gr.Textbox(label="Structured context (prompt text)", lines=14)
        context_json = gr.Code(label="Structured context (JSON)", language="json")

    outputs = [status, table, order, context, context_json]
    run.click(rerank, [question, passages, upload], outputs, api_name="rerank")
    question.submit(rerank, [question, passages, upload], outputs, api_name=False)
    example.change(pick_example, [example], [question, passages], api_name=False)

demo.queue(default_concurrency_limit=2)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 7860)))
    args = parser.parse_args()
    demo.launch(server_name="127.0.0.1", server_port=args.port, share=False)
