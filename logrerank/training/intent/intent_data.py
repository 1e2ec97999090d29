"""Labelled texts for the question-intent classifier (training, epoch choice, evaluation).

The bundled run (``configs/intent.json``) trains on the labelled sentences and uses the weakly
labelled questions to choose the epoch and to report; ``train_on`` and ``select_on`` in
:class:`~logrerank.training.intent.intent_train.IntentTrainConfig` say which.

The label of a question is the kind of sentence that answers it. No source labels questions
that way, so the labels are taken from data that exists:

* **questions and claims with gold evidence** (SciFact train claims, Citation-Integrity train
  claims, HotpotQA and MuSiQue train questions, PubMedQA non-test questions, Evidence
  Inference train prompts, CL-SciSumm ScisummNet citances): the mean role distribution that
  the role tagger (:class:`~logrerank.models.role_tagger.RoleTagger`) gives the gold evidence
  sentences, each read inside its own passage. PubMedQA has no gold sentences; its answer is
  the abstract's conclusion (``LONG_ANSWER``), tagged after the abstract's other sentences.
  MuSiQue marks paragraphs only, and Citation-Integrity's sentence labels are degenerate
  (always sentence 0): there all sentences of the gold passages count.
* **labelled sentences** (CSAbstruct and NICTA-PIBOSO): the sentence's own gold role, the
  sentence read alone as a question is. The train splits train, the dev splits pick the
  epoch, and the test splits are read for the reported accuracy only.

* **questions whose answer is a result by construction** (``pubmedqa_result``,
  ``evinf_result``): PubMedQA non-test questions (each is answered yes / no / maybe by the
  abstract's findings, and its long answer is the conclusion drawn from them) and Evidence
  Inference train prompts ("with respect to outcome, characterize the reported difference
  between intervention and comparator", also asked as the question "What was the difference in
  outcome between intervention and comparator?"), each labelled ``result``. The weak labels
  above never trained the head, and the sentence sources hold no question, so without these
  no question-shaped example said "result".
* **hand-written training questions** (``seed``, ``handwritten_train.json``, 20 per kind,
  written for this purpose; none among the validation or test questions).

Every question source is split deterministically (a hash of the example id) into ``train``,
``val`` and ``heldout`` (reported only); Evidence Inference uses its official ``validation``
split as ``heldout``. No other test split is read.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from ...config import ROLE_NAMES

logger = logging.getLogger(__name__)

QUESTION_SOURCES = ("scifact", "citint", "hotpotqa", "musique", "pubmedqa", "evinf", "scisumm")
SENTENCE_SOURCES = ("csabstruct", "nicta")
LABELLED_QUESTION_SOURCES = ("pubmedqa_result", "evinf_result", "seed")
"""Question-shaped texts with a label that holds by construction (or by hand): they can train."""
SOURCES = QUESTION_SOURCES + SENTENCE_SOURCES + LABELLED_QUESTION_SOURCES

EVINF_AS_QUESTION = "What was the difference in {o} between {i} and {c}?"
"""The second wording of an Evidence Inference prompt (the first is the dataset's own)."""


@dataclass
class IntentText:
    """One training or evaluation text with its soft intent label.

    Attributes:
        text: the question, claim, citance, prompt or sentence.
        target: soft distribution over :data:`~logrerank.config.ROLE_NAMES` (sums to 1).
        source: one of :data:`SOURCES`.
        part: ``"train"``, ``"val"`` or ``"heldout"``.
    """

    text: str
    target: list[float]
    source: str
    part: str


def split_part(key: str, val: float, heldout: float) -> str:
    """Deterministic part of an example id: ``heldout`` / ``val`` / ``train`` by a sha1 hash.

    Args:
        key: a stable id (source and example id).
        val: fraction of ids that go to ``val``.
        heldout: fraction of ids that go to ``heldout``.
    """
    u = int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if u < heldout:
        return "heldout"
    return "val" if u < heldout + val else "train"


def _keep(key: str, cap: int | None) -> bool:
    """Whether a hash-ordered subsample of about ``cap`` ids of a large source keeps ``key``
    (``cap`` is applied by the caller; this only decides membership by a second hash)."""
    return cap is None or int(hashlib.md5(key.encode()).hexdigest()[:8], 16) % 1000 < cap


def _question_items(source: str, root: Path, per_mille: int | None) -> list[tuple]:
    """``(id, question, [(doc sentences, gold indices), ...], part_override)`` per question.

    ``part_override`` is ``"heldout"`` for Evidence Inference validation prompts, else None.
    """
    items: list[tuple] = []
    if source in ("scifact", "citint"):
        from ...data.scifact import read_scifact

        folder = "scifact" if source == "scifact" else "citation_integrity"
        exs, corpus = read_scifact(
            root / folder / "claims_train.jsonl", root / folder / "corpus.jsonl", dataset=source
        )
        for ex in exs:
            if source == "citint":  # degenerate sentence labels: the whole cited passage
                gold = {
                    d: list(range(len(corpus[d].sentences))) for d in ex.gold_doc_ids if d in corpus
                }
            else:
                gold = ex.gold_sentences
            docs = [(corpus[d].sentences, idx) for d, idx in gold.items() if d in corpus and idx]
            if docs and _keep(f"{source}:{ex.qid}", per_mille):
                items.append((ex.qid, ex.query, docs, None))
    elif source in ("hotpotqa", "musique"):
        from ...data.hotpotqa import read_hotpotqa
        from ...data.musique import read_musique

        read = read_hotpotqa if source == "hotpotqa" else read_musique
        for ex in read(root / source / f"{source}_train.json"):
            by_id = {d.doc_id: d for d in ex.candidates}
            docs = []
            for d in ex.gold_doc_ids:
                idx = ex.gold_sentences.get(d) or list(range(len(by_id[d].sentences)))
                docs.append((by_id[d].sentences, idx))
            items.append((ex.qid, ex.query, docs, None))
    elif source == "pubmedqa":
        from ...data.common import split_sentences
        from ...data.pubmedqa import read_pubmedqa

        exs, corpus = read_pubmedqa(root / "pubmedqa" / "ori_pqal.json", split="train")
        for ex in exs:
            ctx = corpus[ex.qid].sentences
            answer = split_sentences(str(ex.meta.get("long_answer") or ""))
            if answer:
                idx = list(range(len(ctx), len(ctx) + len(answer)))
                items.append((ex.qid, ex.query, [(ctx + answer, idx)], None))
    elif source == "evinf":
        from ...data.evidence_inference import read_evidence_inference

        for split in ("train", "validation"):
            exs, corpus = read_evidence_inference(root / "evidence_inference", split)
            for ex in exs:
                if not _keep(f"evinf:{ex.qid}", per_mille):
                    continue
                docs = [(corpus[d].sentences, idx) for d, idx in ex.gold_sentences.items()]
                part = "heldout" if split == "validation" else None
                items.append((ex.qid, ex.query, docs, part))
    elif source == "scisumm":
        from ...data.cl_scisumm import read_cl_scisumm

        exs, corpus = read_cl_scisumm(root / "cl_scisumm", "train")
        for ex in exs:
            if _keep(f"scisumm:{ex.qid}", per_mille):
                docs = [(corpus[d].sentences, idx) for d, idx in ex.gold_sentences.items()]
                items.append((ex.qid, ex.query, docs, None))
    else:
        raise ValueError(f"unknown question source {source!r}")
    return items


def question_texts(
    source: str,
    root: Path,
    tag: Callable[[list[list[str]]], list[torch.Tensor]],
    val: float,
    heldout: float,
    per_mille: int | None = None,
) -> list[IntentText]:
    """The questions of one source, each labelled by the tagger's roles of its gold sentences.

    Args:
        source: one of :data:`QUESTION_SOURCES`.
        root: the public data folder.
        tag: ``RoleTagger.predict`` (per doc, its sentences -> ``[m, 3]`` probabilities).
        val: fraction of questions for early stopping.
        heldout: fraction of questions held out (Evidence Inference: its validation split).
        per_mille: keep about this many of every 1000 questions (large sources), None = all.
    """
    items = _question_items(source, root, per_mille)
    docs: dict[tuple[str, ...], int] = {}
    for _, _, pairs, _ in items:
        for sents, _ in pairs:
            docs.setdefault(tuple(sents), len(docs))
    keys = list(docs)
    probs = tag([list(k) for k in keys]) if keys else []
    out: list[IntentText] = []
    for qid, query, pairs, part in items:
        rows = [probs[docs[tuple(s)]][[i for i in idx if i < len(s)]] for s, idx in pairs]
        rows = [r for r in rows if len(r)]
        if not rows or not query.strip():
            continue
        target = torch.cat(rows).mean(0)
        if source == "evinf" and part is None:
            part = "train" if split_part(f"{source}:{qid}", val, 0.0) == "train" else "val"
        part = part or split_part(f"{source}:{qid}", val, heldout)
        out.append(IntentText(query, [float(x) for x in target], source, part))
    return out


SENTENCE_PARTS = {"train": "train", "dev": "val", "test": "heldout"}
"""Split of a role corpus -> part: train trains, dev picks the epoch, test is reported only."""


def sentence_texts(source: str, root: Path, per_mille: int | None) -> list[IntentText]:
    """CSAbstruct / NICTA-PIBOSO labelled sentences, each a text of its own with its gold
    role (:data:`SENTENCE_PARTS`; ``per_mille`` subsamples the train split only); sentences
    without a role are left out."""
    from ...data.role_corpora import read_csabstruct, read_nicta
    from ..roles.tagger_data import role_split_path

    read = read_csabstruct if source == "csabstruct" else read_nicta
    out: list[IntentText] = []
    for split, part in SENTENCE_PARTS.items():
        for doc in read(role_split_path(source, split, root)):
            for j, (sent, label) in enumerate(zip(doc.sentences, doc.labels)):
                key = f"{source}:{doc.doc_id}:{j}"
                cap = per_mille if split == "train" else None
                if label is None or not sent.strip() or not _keep(key, cap):
                    continue
                target = [float(label == r) for r in ROLE_NAMES]
                out.append(IntentText(sent, target, source, part))
    return out


def _one_hot(role: str) -> list[float]:
    return [float(r == role) for r in ROLE_NAMES]


def labelled_question_texts(
    source: str, root: Path, val: float, heldout: float
) -> list[IntentText]:
    """The texts of one of :data:`LABELLED_QUESTION_SOURCES`, each with a one-hot label.

    ``pubmedqa_result``: the PubMedQA questions outside the 500 test ids, split by the same
    hash as the weakly labelled ``pubmedqa`` source. ``evinf_result``: Evidence Inference
    prompts in two wordings (the dataset's and :data:`EVINF_AS_QUESTION`), train-split prompts
    into ``train`` / ``val`` by hash, the official validation split ``heldout``. ``seed``: the
    hand-written training questions (all ``train``).

    Args:
        source: one of :data:`LABELLED_QUESTION_SOURCES`.
        root: the public data folder (not read for ``seed``).
        val: fraction of questions for the choice (epoch, settings).
        heldout: fraction held out (PubMedQA only; reported, never chosen on).
    """
    out: list[IntentText] = []
    if source == "pubmedqa_result":
        from ...data.pubmedqa import read_pubmedqa

        exs, _ = read_pubmedqa(root / "pubmedqa" / "ori_pqal.json", split="train")
        for ex in exs:
            part = split_part(f"pubmedqa:{ex.qid}", val, heldout)
            if ex.query.strip():
                out.append(IntentText(ex.query, _one_hot("result"), source, part))
    elif source == "evinf_result":
        from ...data.evidence_inference import read_evidence_inference

        for split in ("train", "validation"):
            exs, _ = read_evidence_inference(root / "evidence_inference", split)
            for ex in exs:
                if split == "validation":
                    part = "heldout"
                else:
                    part = "train" if split_part(f"evinf:{ex.qid}", val, 0.0) == "train" else "val"
                m = ex.meta
                asked = EVINF_AS_QUESTION.format(
                    o=m.get("outcome", ""), i=m.get("intervention", ""), c=m.get("comparator", "")
                )
                for text in (ex.query, asked):
                    out.append(IntentText(" ".join(text.split()), _one_hot("result"), source, part))
    elif source == "seed":
        from importlib.resources import files

        pkg = files(__package__).joinpath("handwritten_train.json")
        for q, kind in json.loads(pkg.read_text("utf-8"))["questions"]:
            out.append(IntentText(q, _one_hot(kind), source, "train"))
    else:
        raise ValueError(f"unknown labelled question source {source!r}")
    return out


__all__ = [
    "EVINF_AS_QUESTION",
    "LABELLED_QUESTION_SOURCES",
    "QUESTION_SOURCES",
    "SENTENCE_SOURCES",
    "SOURCES",
    "IntentText",
    "SENTENCE_PARTS",
    "labelled_question_texts",
    "question_texts",
    "sentence_texts",
    "split_part",
]
