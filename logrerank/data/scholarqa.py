"""Reader of ScholarQA-Multi (ScholarQABench, OpenScholar): expert multi-paper questions.

``scholarqabench/scholarqa_multi/human_answers.json`` holds 108 questions (computer science,
biomedicine, physics) with an expert's long-form answer and the paper passages the expert cited
(``ctxs``: 2-10 per question, each with the paper's ``title`` and the passage ``text``). It is
**evaluation only**: nothing is trained or chosen on it.

The retrieved pools OpenScholar used are not in the public data, so the benchmark is built from
the cited passages themselves: the corpus is every distinct cited passage of the 108 questions
(passages with the same title and text are one document, gold for every question that cites
it), and a question's gold is the passages its expert cited. Pools are the usual BM25 top ``k``
over that corpus with gold inserted (:mod:`logrerank.data.first_pass`), so the other 48-ish
passages of a pool are other experts' citations on the nearest topics, titled by their papers.

Quirks: a few ``ctxs`` have no text (``NaN`` in the source JSON, read as a float) or a blank
one; they are skipped (counted in ``stats["n_ctx_skipped"]``), and a question left without a
cited passage is skipped (``stats["n_questions_skipped"]``). Titles that are missing or not a
string become ``""``. Passage text is split into sentences by
:func:`logrerank.data.common.split_sentences`; there is no sentence-level gold. In the source
file the 10 ``cs_hci`` questions carry passages that photonics questions cite (all 71 of their
cited passages are also a photonics question's), so their gold does not answer them and every
ranker scores about 0 there; they are kept as the file has them, and ``meta["subject"]`` lets a
report set them apart.
"""

from __future__ import annotations

import os
from typing import Any

from logrerank.data.common import read_json, split_sentences
from logrerank.data.schema import Doc, Example


def _text(value: Any) -> str:
    """``value`` as stripped text, ``""`` when it is not a string."""
    return value.strip() if isinstance(value, str) else ""


def read_scholarqa(
    path: str | os.PathLike[str], *, stats: dict[str, Any] | None = None
) -> tuple[list[Example], dict[str, Doc]]:
    """Read ScholarQA-Multi as question -> cited-passage retrieval (rules in the module docstring).

    Args:
        path: ``human_answers.json``.
        stats: Optional dict that receives ``n_questions``, ``n_questions_skipped``,
            ``n_ctx_skipped`` and ``n_passages`` (distinct cited passages).

    Returns:
        ``(examples, corpus)``: examples in file order (``qid`` = the source ``id``, ``meta``
        with ``dataset``, ``subject`` and ``annotator``), doc ids ``sqa<N>`` in order of first
        citation.

    Raises:
        ValueError: When the file is not a list of question records, or ids repeat.
    """
    data = read_json(path)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of question records")
    corpus: dict[str, Doc] = {}
    by_key: dict[tuple[str, str], str] = {}
    examples: list[Example] = []
    seen: set[str] = set()
    n_ctx_skipped = n_skipped = 0
    for i, record in enumerate(data):
        qid = str(record.get("id") or f"q{i}")
        if qid in seen:
            raise ValueError(f"{path}: duplicate question id {qid}")
        seen.add(qid)
        gold: list[str] = []
        for ctx in record.get("ctxs") or []:
            title, text = _text(ctx.get("title")), _text(ctx.get("text"))
            sentences = split_sentences(text) if text else []
            if not sentences:
                n_ctx_skipped += 1
                continue
            key = (title, " ".join(text.split()))
            if key not in by_key:
                doc_id = f"sqa{len(by_key)}"
                by_key[key] = doc_id
                corpus[doc_id] = Doc(doc_id, title, sentences)
            if by_key[key] not in gold:
                gold.append(by_key[key])
        query = _text(record.get("input"))
        if not gold or not query:
            n_skipped += 1
            continue
        meta = {
            "dataset": "scholarqa",
            "subject": record.get("subject"),
            "annotator": record.get("annotator"),
        }
        examples.append(Example(qid=qid, query=query, gold_doc_ids=gold, meta=meta))
    if stats is not None:
        stats.update(
            n_questions=len(examples),
            n_questions_skipped=n_skipped,
            n_ctx_skipped=n_ctx_skipped,
            n_passages=len(corpus),
        )
    return examples, corpus
