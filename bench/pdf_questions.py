"""Questions written about the two shared papers: the rank LoG gives the answering sentence
(docs/pdf.md, "The two shared papers"). Needs the bundled model and ../shared/data/pdfs.

    python bench/pdf_questions.py [../shared/data/pdfs]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

QUESTIONS = {
    "N18-3011.pdf": [
        ("How many nodes does the literature graph have?", "more than 280M nodes"),
        (
            "What data was the ScienceParse metadata extraction model trained on?",
            "trained on a snapshot of the data at PubMed Central",
        ),
        ("Which knowledge bases are used to create entity nodes?", "UMLS"),
    ],
    "2020.acl-main.447.pdf": [
        ("How many papers does the S2ORC corpus contain?", "81.1M"),
        ("Which tools are used to process the PDFs?", "GROBID to process"),
    ],
}
"""Per paper: (question, a substring every answering sentence holds)."""


def main(argv: list[str] | None = None) -> int:
    """Print one Markdown row per question: paper, question, answer rank, top sentence."""
    from logrerank import LoGReranker, passages_from_pdf

    argv = sys.argv[1:] if argv is None else argv
    folder = Path(argv[0]) if argv else Path("../shared/data/pdfs")
    model = LoGReranker.from_pretrained()
    print("| paper | question | answer rank | first answering sentence | s |")
    print("|---|---|---:|---|---:|")
    for name, questions in QUESTIONS.items():
        passages = passages_from_pdf(folder / name)
        for question, answer in questions:
            t0 = time.perf_counter()
            ranking = model.rerank(question, passages)
            hit = next((s for s in ranking.sentences if answer in s.text), None)
            rank = hit.rank if hit else "-"
            text = hit.text[:90] if hit else ""
            print(f"| {name} | {question} | {rank} | {text} | {time.perf_counter() - t0:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
