"""Reader of MuSiQue(-Ans): multi-hop questions with fixed pools."""

from __future__ import annotations

import os

from logrerank.data.common import read_json, split_sentences
from logrerank.data.schema import Doc, Example


def read_musique(path: str | os.PathLike[str]) -> list[Example]:
    """Read a MuSiQue(-Ans) file.

    Candidates are the question's 20 paragraphs in file order, each split into sentences with
    :func:`split_sentences`. ``doc_id`` is ``"<question id>#<idx>"``: titles are not usable as
    ids because 37 of the 100 sample questions have two different paragraphs with the same
    title. ``gold_doc_ids`` are the ``is_supporting`` paragraphs; there are no sentence labels.
    ``meta["hops"]`` lists, per step of ``question_decomposition``, the doc id of its
    ``paragraph_support_idx`` (what hop coverage@k is measured on).

    The companion ``musique_train_corpus.json`` is only the union of these paragraphs
    (``{title, text}`` records), so it is not needed.

    Args:
        path: e.g. ``musique/musique_train.json``.

    Returns:
        Examples with ``meta["fixed_pool"] = True`` and ``answer``, ``answer_aliases``,
        ``hops``, ``decomposition``, ``answerable``.
    """
    examples: list[Example] = []
    for row in read_json(path):
        qid = str(row["id"])
        candidates: list[Doc] = []
        id_by_idx: dict[int, str] = {}
        gold: list[str] = []
        for position, para in enumerate(row["paragraphs"]):
            idx = int(para.get("idx", position))
            doc_id = f"{qid}#{idx}"
            id_by_idx[idx] = doc_id
            candidates.append(
                Doc(
                    doc_id=doc_id,
                    title=str(para.get("title") or ""),
                    sentences=split_sentences(str(para.get("paragraph_text") or "")),
                )
            )
            if para.get("is_supporting"):
                gold.append(doc_id)
        decomposition = row.get("question_decomposition") or []
        hops = [
            id_by_idx[int(step["paragraph_support_idx"])]
            for step in decomposition
            if step.get("paragraph_support_idx") is not None
        ]
        examples.append(
            Example(
                qid=qid,
                query=str(row["question"]),
                candidates=candidates,
                gold_doc_ids=gold,
                meta={
                    "dataset": "musique",
                    "fixed_pool": True,
                    "answer": row.get("answer"),
                    "answer_aliases": list(row.get("answer_aliases") or []),
                    "answerable": row.get("answerable"),
                    "hops": hops,
                    "decomposition": [
                        {"question": s.get("question"), "answer": s.get("answer")}
                        for s in decomposition
                    ],
                },
            )
        )
    return examples
