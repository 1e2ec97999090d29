"""The Gradio app: page layout (:mod:`~logrerank.app.main`), handlers, per-user state and views."""
