"""Accuracy of the role that the app shows (the LoG local scorer's role head, eq. 3) on the
role corpora's test splits, next to the role tagger it was trained to match.

Each abstract is ranked alone by the bundled LoG model with one neutral question (the role head
reads the question too), its given sentences kept; the role head's probabilities then go through
the role tagger's own evaluation (:func:`logrerank.training.roles.tagger_eval.evaluate_roles`: CSAbstruct
test, NICTA-PIBOSO test and the PubMedQA test ids' section labels). Evaluation only.

    python research/role_head_accuracy.py [--question TEXT] [--max-docs N]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence

import torch

from logrerank.pipeline import LoGReranker
from logrerank.training.roles.tagger_eval import evaluate_roles
from logrerank.types import Passage

NEUTRAL = "What does this abstract report?"


class LoGRoleHead:
    """``predict(docs)`` like the role tagger's, from LoG's role head (one abstract per call).

    Args:
        question: the question every abstract is ranked for.
        checkpoint: a LoG checkpoint folder; None = the bundled one.
    """

    def __init__(self, question: str = NEUTRAL, checkpoint: str | None = None):
        self.model = LoGReranker.from_pretrained(checkpoint)
        self.question = question

    def predict(self, docs: Sequence[Sequence[str]]) -> list[torch.Tensor]:
        """Per abstract, its sentences' role probabilities ``[m, 3]`` in sentence order."""
        out = []
        for doc in docs:
            sents = list(doc)
            ranking = self.model.rerank(self.question, [Passage(" ".join(sents), sentences=sents)])
            ordered = sorted(ranking.sentences, key=lambda s: s.sent_idx)
            out.append(torch.tensor([s.role_probs for s in ordered]))
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--question", default=NEUTRAL)
    ap.add_argument("--max-docs", type=int, default=None, help="first N abstracts per split")
    ap.add_argument("--checkpoint", default=None, help="LoG checkpoint (default: bundled)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.time()
    res = evaluate_roles(LoGRoleHead(args.question, args.checkpoint), max_docs=args.max_docs)
    keys = ("n_docs", "n", "accuracy", "macro_f1", "confusion_gold_by_pred")
    print(json.dumps({k: {f: v[f] for f in keys if f in v} for k, v in res.items()}, indent=1))
    print(f"{time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
