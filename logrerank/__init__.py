"""logrerank: local-to-global sentence-level graph reranking of scientific evidence.

Public API::

    from logrerank import LoGReranker
    model = LoGReranker.from_pretrained()          # bundled checkpoint (or labelled untrained init)
    ranking = model.rerank("question", ["passage one ...", {"title": "T", "text": "..."}])
    ranking.sentences[0].text, ranking.passage_order(), ranking.context["prompt"]

    passages = passages_from_pdf("paper.pdf")       # a paper PDF -> passages (docs/pdf.md)
    ranking = model.rerank("question", passages)   # passage.meta: paper, section, pages
"""

from __future__ import annotations

from typing import Any

from .config import ROLE_NAMES, ConfigError, LoGConfig
from .types import GraphEdge, InputError, Passage, Ranking, ScoredPassage, ScoredSentence

__version__ = "0.2.0"

__all__ = [
    "ROLE_NAMES",
    "ConfigError",
    "GraphEdge",
    "InputError",
    "LoGConfig",
    "LoGReranker",
    "Passage",
    "Ranking",
    "ScoredPassage",
    "ScoredSentence",
    "__version__",
    "passages_from_pdf",
    "rerank",
]

_DEFAULT = None


def __getattr__(name: str) -> Any:
    # Import torch-heavy modules lazily so `import logrerank` stays cheap.
    if name == "LoGReranker":
        from .pipeline import LoGReranker

        return LoGReranker
    raise AttributeError(name)


def rerank(query: str, passages: list[Any]) -> Ranking:
    """Rerank with the default model (loaded once per process)."""
    global _DEFAULT
    if _DEFAULT is None:
        from .pipeline import LoGReranker

        _DEFAULT = LoGReranker.from_pretrained()
    return _DEFAULT.rerank(query, passages)


def passages_from_pdf(path: Any, max_pages: int = 100) -> list[Passage]:
    """The passages of a paper PDF: paragraphs in reading order (long ones windowed on sentence
    boundaries), each titled ``<paper title> — <section heading>``, with ``meta`` =
    ``{"source", "paper", "section", "pages", "kind"}`` (``docs/pdf.md``; needs pdfminer.six).

    Args:
        path: the PDF file.
        max_pages: pages read at most.

    Raises:
        InputError: not a PDF, encrypted, damaged, a scan without a text layer (the message
            says which and what to do).
    """
    from .pdf import pdf_passages

    return pdf_passages(path, max_pages=max_pages)
