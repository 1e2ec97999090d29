"""Silver sentence labels for PubMedQA non-test questions (docs/evaluation.md).

PubMedQA's abstracts come without their conclusion; the withheld conclusion is the question's
``long_answer``. The sentences of the abstract closest to it (by ROUGE-1 F1) are likely the
evidence, so they serve as silver rationale sentences for stage-1 training
(source ``"pubmedqa-silver"`` in :class:`logrerank.training.log.log_config.TrainConfig`).

Leakage rule: only the non-test questions are used, and every candidate whose doc id is one of
the 500 official PubMedQA test PMIDs is removed from the pool, so no test abstract is seen in
training, not even as a negative.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from logrerank.data.common import default_data_root
from logrerank.data.schema import Example

#: Name of the training source built here.
SILVER_SOURCE = "pubmedqa-silver"

_TOKEN = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def rouge1_f1(sentence: str, reference: str) -> float:
    """ROUGE-1 F1 of ``sentence`` against ``reference`` (see :func:`silver_sentences`)."""
    return _f1(Counter(_tokens(sentence)), Counter(_tokens(reference)))


def _f1(sent: Counter[str], ref: Counter[str]) -> float:
    n_s, n_r = sum(sent.values()), sum(ref.values())
    if not n_s or not n_r:
        return 0.0
    overlap = sum((sent & ref).values())  # clipped counts: sum_w min(c_s(w), c_r(w))
    # 2PR / (P + R) with P = overlap / n_s and R = overlap / n_r simplifies to this (exact
    # division, so a threshold such as 0.2 compares without rounding noise)
    return 2 * overlap / (n_s + n_r)


def silver_scores(sentences: list[str], reference: str) -> list[float]:
    """ROUGE-1 F1 of each sentence against ``reference``, in sentence order."""
    ref = Counter(_tokens(reference))
    return [_f1(Counter(_tokens(s)), ref) for s in sentences]


def silver_sentences(
    sentences: list[str], reference: str, top: int = 2, min_f1: float = 0.2
) -> list[int]:
    """Indices of the sentences closest to ``reference`` by ROUGE-1 F1.

    Text is lowercased and tokenised into alphanumeric words (regex ``[a-z0-9]+``, no
    stemming, no stopword removal). With ``c_x(w)`` the count of word ``w`` in ``x``, ``s`` a
    sentence and ``r`` the reference::

        overlap = sum_w min(c_s(w), c_r(w))          (clipped counts on token multisets)
        P = overlap / |s|,   R = overlap / |r|       (|x| = number of tokens of x)
        F1 = 2 P R / (P + R) = 2 overlap / (|s| + |r|)   (0 when overlap = 0)

    Args:
        sentences: The passage's sentences.
        reference: The reference text (PubMedQA: the withheld conclusion, ``long_answer``).
        top: At most this many sentences are returned.
        min_f1: Sentences with F1 below this are never returned.

    Returns:
        The indices of the ``top`` highest-F1 sentences with ``F1 >= min_f1`` (ties broken by
        the lower index), sorted ascending. ``[]`` for an empty reference (no tokens), an
        empty ``sentences`` list or when no sentence reaches ``min_f1``.
    """
    if not _tokens(reference):
        return []
    return _top(silver_scores(sentences, reference), top, min_f1)


def _top(scores: list[float], top: int, min_f1: float) -> list[int]:
    """Indices of the ``top`` highest scores ``>= min_f1`` (ties: lower index), ascending."""
    if top <= 0:
        return []
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return sorted(i for i in ranked[:top] if scores[i] >= min_f1)


def pubmedqa_test_ids(data_root: str | os.PathLike[str] | None = None) -> set[str]:
    """The 500 official PubMedQA test PMIDs.

    Read as :func:`~logrerank.data.pubmedqa.read_pubmedqa` does: the keys of
    ``<data_root>/pubmedqa/test_ground_truth.json`` (``data_root`` defaults to
    :func:`~logrerank.data.common.default_data_root`), as strings.
    """
    root = Path(data_root) if data_root is not None else default_data_root()
    with open(root / "pubmedqa" / "test_ground_truth.json", encoding="utf-8") as f:
        return {str(k) for k in json.load(f)}


def silver_examples(
    examples: Iterable[Example],
    test_ids: set[str],
    top: int = 2,
    min_f1: float = 0.2,
    roles: Iterable[str] | None = None,
) -> tuple[list[Example], dict[str, Any]]:
    """PubMedQA non-test examples with silver sentence labels on their gold abstract.

    For each example: every candidate whose doc id is in ``test_ids`` is removed (leakage
    rule); the gold abstract's silver sentences are :func:`silver_sentences` of its sentences
    against ``meta["long_answer"]``. Examples whose query id is a test id, whose gold doc is no
    longer among the candidates, or whose gold doc gets no silver sentence are dropped.

    Args:
        examples: PubMedQA examples with pools (``load_benchmark("pubmedqa", split="train")``).
        test_ids: The PubMedQA test PMIDs (:func:`pubmedqa_test_ids`).
        top: Silver sentences per gold abstract at most.
        min_f1: Minimum ROUGE-1 F1 of a silver sentence.
        roles: When given, only sentences whose PubMedQA section role (``ex.roles[gold]``,
            mapped by :data:`~logrerank.data.headings.PUBMEDQA_ROLE_MAP` to background / method /
            result) is in this set can be silver. ``{"result"}`` keeps the labels on findings:
            with any role, 24 % of the chosen sentences are an abstract's first sentence (SciFact
            gold: 3 %), mostly objectives that restate the question as the conclusion does.

    Returns:
        ``(kept, stats)``: new Examples (inputs are not modified) with
        ``gold_sentences = {gold: indices}`` and ``meta["silver_f1"]`` (the F1 of each chosen
        sentence); ``stats`` has ``loaded``, ``kept``, ``dropped_test_query``,
        ``dropped_gold_removed``, ``dropped_no_silver``, ``test_candidates_removed`` (over
        all loaded examples), ``mean_candidates`` (kept examples, after removal),
        ``mean_silver`` and ``mean_silver_f1`` (over the chosen sentences).
    """
    kept: list[Example] = []
    stats: dict[str, Any] = {
        "loaded": 0,
        "kept": 0,
        "dropped_test_query": 0,
        "dropped_gold_removed": 0,
        "dropped_no_silver": 0,
        "test_candidates_removed": 0,
    }
    f1s: list[float] = []
    n_silver = n_cands = 0
    allowed = set(roles) if roles is not None else None
    for ex in examples:
        stats["loaded"] += 1
        candidates = [d for d in ex.candidates if d.doc_id not in test_ids]
        stats["test_candidates_removed"] += len(ex.candidates) - len(candidates)
        if ex.qid in test_ids:
            stats["dropped_test_query"] += 1
            continue
        by_id = {d.doc_id: d for d in candidates}
        golds = [g for g in ex.gold_doc_ids if g in by_id]
        if not golds or len(golds) < len(ex.gold_doc_ids):
            stats["dropped_gold_removed"] += 1
            continue
        reference = str(ex.meta.get("long_answer") or "")
        gold_sentences: dict[str, list[int]] = {}
        chosen_f1: list[float] = []
        for g in golds:
            scores = silver_scores(list(by_id[g].sentences), reference)
            if allowed is not None:  # other sections never qualify
                sent_roles = list((ex.roles or {}).get(g) or [])
                ok = [j < len(sent_roles) and sent_roles[j] in allowed for j in range(len(scores))]
                scores = [f if k else -1.0 for f, k in zip(scores, ok)]
            idx = _top(scores, top, min_f1) if _tokens(reference) else []
            if idx:
                gold_sentences[g] = idx
                chosen_f1 += [scores[i] for i in idx]
        if len(gold_sentences) < len(golds):
            stats["dropped_no_silver"] += 1
            continue
        meta = {**ex.meta, "silver_f1": chosen_f1}
        kept.append(
            dataclasses.replace(ex, candidates=candidates, gold_sentences=gold_sentences, meta=meta)
        )
        f1s += chosen_f1
        n_silver += sum(len(v) for v in gold_sentences.values())
        n_cands += len(candidates)
    stats["kept"] = len(kept)
    stats["mean_candidates"] = n_cands / len(kept) if kept else 0.0
    stats["mean_silver"] = n_silver / len(kept) if kept else 0.0
    stats["mean_silver_f1"] = sum(f1s) / len(f1s) if f1s else 0.0
    return kept, stats
