"""Training queries shared by LoG training and cross-encoder training: one held-out rule.

Both read the TRAIN splits only (SciFact dev and Citation-Integrity dev are the reported
benchmarks) and hold out the same queries for model selection: a query is held out when
``sha256("<source>:<qid>")`` falls in the first ``fraction`` of the hash range
(:func:`held_out`), so LoG and the cross-encoder are selected on identical slices.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

from ..data.schema import Example
from ..data.silver import SILVER_SOURCE

HAND_SCISUMM = "scisumm-hand"
"""The 40 hand-annotated CL-SciSumm papers (``From-Training-Set-2018``), the shared task's
official training set. They are also the CL-SciSumm benchmark, so they train only
cross-validated by reference paper (``cv_sources``; :func:`logrerank.training.cv.grouped_folds`)
and are reported out of fold."""

TRAIN_FILES: dict[str, tuple[str, ...]] = {
    "scifact": ("scifact/claims_train.jsonl", "scifact/corpus.jsonl"),
    "citint": ("citation_integrity/claims_train.jsonl", "citation_integrity/corpus.jsonl"),
    "pubmedqa": ("pubmedqa/ori_pqal.json", "pubmedqa/test_ground_truth.json"),
    "hotpotqa": ("hotpotqa/hotpotqa_train.json",),
    "musique": ("musique/musique_train.json",),
    "evinf": (
        "evidence_inference/prompts_merged.csv",
        "evidence_inference/v2_annotations.csv",
        "evidence_inference/splits/ev2_train_article_ids.txt",
        "evidence_inference/txt_files",
    ),
    "scisumm": ("cl_scisumm/From-ScisummNet-2019",),
    HAND_SCISUMM: ("cl_scisumm/From-Training-Set-2018",),
    SILVER_SOURCE: ("pubmedqa/ori_pqal.json", "pubmedqa/test_ground_truth.json"),
}
"""Files (under the data root) each training source reads (:func:`logrerank.data.pools.
load_benchmark` with ``split="train"``)."""


def held_out(key: str, fraction: float) -> bool:
    """Deterministic held-out split of TRAIN queries by a hash of ``key`` (``"<source>:<qid>"``)."""
    h = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    return (h % 1000) < fraction * 1000


def train_data_files(
    sources: list[str], data_root: str | os.PathLike[str] | None = None
) -> list[Path]:
    """The data files the training ``sources`` read (whether or not they exist)."""
    from ..data.common import default_data_root

    root = Path(data_root) if data_root else default_data_root()
    files = [root / rel for src in sources for rel in TRAIN_FILES.get(src, ())]
    return list(dict.fromkeys(files))


def load_train_queries(
    cfg: Any, log=sys.stdout, *, require_gold: bool = False
) -> tuple[list[Example], list[Example]]:
    """(train, held-out) examples with 50-candidate pools from the TRAIN splits.

    Args:
        cfg: a run config with ``sources``, ``max_queries`` and ``dev_fraction`` (optionally
            ``skip_queries``: leading queries per source to skip before the cap; and, for
            ``"pubmedqa-silver"``, ``silver_top``, ``silver_min_f1`` and ``silver_roles``).
        log: where the silver statistics go.
        require_gold: skip queries without a gold passage (cross-encoder groups need one).

    ``"scisumm-hand"`` (:data:`HAND_SCISUMM`) loads the hand-annotated CL-SciSumm citances
    (the benchmark's pools); list it in ``cv_sources`` so that it is never hash-held-out.

    ``"pubmedqa-silver"`` loads the PubMedQA non-test questions, removes the test abstracts
    from their pools and labels silver sentences (:func:`logrerank.data.silver.silver_examples`;
    its pools are therefore smaller than 50); its statistics are printed to ``log``.
    """
    from ..data.pools import load_benchmark
    from ..data.silver import pubmedqa_test_ids, silver_examples

    train, dev = [], []
    for src in cfg.sources:
        limit = cfg.max_queries.get(src) or None
        if src == SILVER_SOURCE:
            exs, _ = load_benchmark("pubmedqa", split="train", limit=limit)
            exs, st = silver_examples(
                exs,
                pubmedqa_test_ids(),
                cfg.silver_top,
                cfg.silver_min_f1,
                roles=cfg.silver_roles or None,
            )
            print(
                f"{src}: kept {st['kept']}/{st['loaded']} questions "
                f"(dropped: {st['dropped_no_silver']} without a silver sentence, "
                f"{st['dropped_gold_removed']} gold removed, {st['dropped_test_query']} test ids); "
                f"{st['test_candidates_removed']} test-abstract candidates removed, "
                f"{st['mean_candidates']:.1f} candidates left per question; "
                f"mean silver sentences {st['mean_silver']:.2f}, "
                f"mean ROUGE-1 F1 {st['mean_silver_f1']:.3f}",
                file=log,
                flush=True,
            )
        elif src == HAND_SCISUMM:
            exs, _ = load_benchmark("scisumm", split="test", limit=limit)
        else:
            skip = (getattr(cfg, "skip_queries", None) or {}).get(src, 0)
            exs, _ = load_benchmark(src, split="train", limit=limit and limit + skip)
            exs = exs[skip:]
        for ex in exs:
            ex.meta["source"] = src
            if require_gold and not ex.gold_doc_ids:
                continue
            (dev if held_out(f"{src}:{ex.qid}", cfg.dev_fraction) else train).append(ex)
    return train, dev
