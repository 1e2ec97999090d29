"""Reader of HotpotQA (distractor setting): multi-hop questions with fixed pools."""

from __future__ import annotations

import os

from logrerank.data.common import read_json
from logrerank.data.schema import Doc, Example


def read_hotpotqa(path: str | os.PathLike[str]) -> list[Example]:
    """Read a HotpotQA distractor-setting file (original JSON layout).

    Candidates are the question's own paragraphs in file order (10; one train item has 4),
    ``doc_id`` = ``title`` = the paragraph title (titles are unique within a question, and a
    title always denotes the same text across the sample). Sentences are stripped of the
    leading space HotpotQA puts on every sentence after the first, but none is dropped, so
    ``supporting_facts`` indices stay valid (two sentences in the train sample are blank and
    stay as ``""``). ``gold_doc_ids`` are the supporting titles in order of first mention;
    ``gold_sentences[title]`` the sorted ``sent_id`` values.

    The companion ``hotpotqa_train_corpus.json`` is only the union of these paragraphs
    (title -> sentences, identical text), so it is not needed.

    Args:
        path: e.g. ``hotpotqa/hotpotqa_train.json``.

    Returns:
        Examples with ``meta["fixed_pool"] = True`` and ``answer``, ``type``, ``level``,
        ``supporting_facts``.

    Raises:
        ValueError: If a supporting fact names a title or sentence that is not in the context.
    """
    examples: list[Example] = []
    for row in read_json(path):
        qid = str(row["_id"])
        candidates: list[Doc] = []
        by_title: dict[str, Doc] = {}
        for title, sentences in row["context"]:
            title = str(title)
            if title in by_title:
                raise ValueError(f"{path}: question {qid} repeats paragraph title {title!r}")
            doc = Doc(doc_id=title, title=title, sentences=[str(s).strip() for s in sentences])
            candidates.append(doc)
            by_title[title] = doc
        gold_sentences: dict[str, list[int]] = {}
        for title, sent_id in row.get("supporting_facts") or []:
            title, sent_id = str(title), int(sent_id)
            if title not in by_title or not 0 <= sent_id < len(by_title[title].sentences):
                raise ValueError(
                    f"{path}: question {qid} supporting fact ({title!r}, {sent_id}) "
                    "is not in its context"
                )
            gold_sentences.setdefault(title, []).append(sent_id)
        examples.append(
            Example(
                qid=qid,
                query=str(row["question"]),
                candidates=candidates,
                gold_doc_ids=list(gold_sentences),
                gold_sentences={t: sorted(set(ids)) for t, ids in gold_sentences.items()},
                meta={
                    "dataset": "hotpotqa",
                    "fixed_pool": True,
                    "answer": row.get("answer"),
                    "type": row.get("type"),
                    "level": row.get("level"),
                    "supporting_facts": [list(f) for f in row.get("supporting_facts") or []],
                },
            )
        )
    return examples
