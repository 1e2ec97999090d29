"""Role-tagger metrics: accuracy, macro-F1 and per-class scores on the role corpora's splits.

:func:`evaluate_roles` scores a tagger on the CSAbstruct / NICTA test (or dev) splits and the
PubMedQA test ids (``logrerank train roles`` reports the test splits at the end of training);
:func:`evaluate_checkpoint` does it for any checkpoint folder.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ...config import ROLE_NAMES
from ...models.role_tagger import RoleTagger
from .tagger_data import IGNORE, label_ids, load_role_split

logger = logging.getLogger(__name__)


def role_metrics(pred: Sequence[int], gold: Sequence[int]) -> dict[str, Any]:
    """Accuracy, macro-F1, per-class precision/recall/F1 and the confusion matrix.

    Sentences whose gold label is :data:`IGNORE` are skipped. Macro-F1 averages the three
    classes (F1 = 0 for a class with no prediction and no gold sentence).
    """
    pairs = [(p, g) for p, g in zip(pred, gold) if g != IGNORE]
    n = len(pairs)
    conf = [[0] * len(ROLE_NAMES) for _ in ROLE_NAMES]  # conf[gold][pred]
    for p, g in pairs:
        conf[g][p] += 1
    per_class = {}
    for c, name in enumerate(ROLE_NAMES):
        tp = conf[c][c]
        n_pred = sum(conf[g][c] for g in range(len(ROLE_NAMES)))
        n_gold = sum(conf[c])
        prec = tp / n_pred if n_pred else 0.0
        rec = tp / n_gold if n_gold else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        per_class[name] = {"precision": prec, "recall": rec, "f1": f1, "support": n_gold}
    return {
        "n": n,
        "accuracy": sum(p == g for p, g in pairs) / n if n else 0.0,
        "macro_f1": sum(v["f1"] for v in per_class.values()) / len(ROLE_NAMES),
        "per_class": per_class,
        "confusion_gold_by_pred": conf,
    }


EVAL_SETS = {
    "csabstruct/test": ("csabstruct", "test", "CSAbstruct test (in-domain, CS)"),
    "nicta/test": ("nicta", "test", "NICTA-PIBOSO test (in-domain, medical)"),
    "pubmedqa/test": (
        "pubmedqa",
        "test",
        "PubMedQA PQA-L official test ids, section-heading labels per sentence (extra check; "
        "never trained on; headings are noisy sentence labels)",
    ),
}


def evaluate_roles(
    tagger: RoleTagger,
    data_root: str | os.PathLike[str] | None = None,
    *,
    splits: Sequence[str] = ("test",),
    max_docs: int | None = None,
) -> dict[str, Any]:
    """Accuracy and macro-F1 of ``tagger`` on CSAbstruct, NICTA and PubMedQA splits.

    Args:
        tagger: a :class:`RoleTagger`.
        data_root: public data folder; None = the default.
        splits: ``"test"`` (CSAbstruct, NICTA, PubMedQA test ids) and/or ``"dev"``
            (CSAbstruct, NICTA).
        max_docs: evaluate only the first N abstracts of each split (quick checks).

    Returns:
        ``{"csabstruct/test": metrics, ...}`` with :func:`role_metrics` plus ``n_docs`` and
        ``description``; a split whose files are absent is skipped.
    """
    out: dict[str, Any] = {}
    sets = []
    for split in splits:
        if split == "test":
            sets += list(EVAL_SETS.items())
        elif split == "dev":
            sets += [
                ("csabstruct/dev", ("csabstruct", "dev", "CSAbstruct dev (model selection)")),
                ("nicta/dev", ("nicta", "dev", "NICTA-PIBOSO dev (model selection)")),
            ]
        else:
            raise ValueError(f"unknown split {split!r}")
    for key, (dataset, split, desc) in sets:
        try:
            docs, labels = load_role_split(dataset, split, data_root)
        except FileNotFoundError as exc:
            logger.warning("skipping %s: %s not found", key, exc)
            continue
        if max_docs is not None:
            docs, labels = docs[:max_docs], labels[:max_docs]
        probs = tagger.predict(docs)
        pred = torch.cat(probs).argmax(-1).tolist() if probs else []
        out[key] = {
            "description": desc,
            "n_docs": len(docs),
            **role_metrics(pred, label_ids(labels)),
        }
    return out


def evaluate_checkpoint(
    checkpoint: str | os.PathLike[str] | None = None,
    data_root: str | os.PathLike[str] | None = None,
    *,
    threads: int | None = None,
    max_docs: int | None = None,
) -> dict[str, Any]:
    """Test-split metrics of a role-tagger checkpoint (the role tagger's MODEL_CARD.md figures).

    Args:
        checkpoint: the folder; None = the bundled ``logrerank/checkpoints/role-tagger``.
        data_root: public data folder; None = the default.
        threads: torch CPU threads (None = leave as is).
        max_docs: evaluate only the first N abstracts of each split.

    Returns:
        As :func:`evaluate_roles`.
    """
    if threads:
        torch.set_num_threads(threads)
    tagger = RoleTagger.from_pretrained(Path(checkpoint) if checkpoint else None)
    return evaluate_roles(tagger, data_root, max_docs=max_docs)
