"""User check of LoG checkpoints as a researcher meets them.

Part 1 is the statins example with no titles, 3-word titles and full titles: the top 3
sentences with their shown scores, the learned graph share and the wall time of LoG, beside the
bundled cross-encoder's top passages. Part 2 gives, for each bundled test PDF
(tests/integration/test_pdf_papers.py), the rank of the sentence that answers its question.

Usage: python research/user_check_titles.py bundled [CHECKPOINT ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONDITIONS = {"none": lambda t: "", "first3": lambda t: " ".join(t.split()[:3]), "full": str}


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="+", help="'bundled' or checkpoint folders")
    args = ap.parse_args(argv)
    from logrerank import LoGReranker
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
    from logrerank.pdf import read_pdf

    sys.path.insert(0, str(ROOT / "tests" / "integration"))
    from test_pdf_papers import PAPERS, PDFS

    example = json.loads((ROOT / "logrerank/app/examples/statins_dementia.json").read_text())
    query, ctxs = example["question"], example["ctxs"]
    pools = {c: [{"title": f(p.get("title", "")), "text": p["text"]} for p in ctxs]
             for c, f in CONDITIONS.items()}  # fmt: skip
    papers = {n: read_pdf(PDFS / n).passages for n in PAPERS}
    for path in args.checkpoints:
        model = LoGReranker.from_pretrained(None if path == "bundled" else path)
        for cond, pool in pools.items():
            r, dt = _timed(model.rerank, query, pool)
            top = [(round(s.score, 3), s.passage_idx + 1, s.text[:60]) for s in r.sentences[:3]]
            print(path, cond, f"{dt:.1f}s", "graph share", r.info.get("graph_gate"), top)
        for name, want in PAPERS.items():
            r, dt = _timed(model.rerank, want["question"], papers[name])
            rank = next(
                (i + 1 for i, s in enumerate(r.sentences) if want["answer"] in s.text), None
            )
            print(path, name, "answer rank", rank, f"{dt:.1f}s")
    ce = CrossEncoderRanker()
    for cond, pool in pools.items():
        r, dt = _timed(ce.rank, query, pool)
        print("cross-encoder", cond, f"{dt:.1f}s",
              [(round(p.score, 3), p.passage_idx + 1) for p in r.passages_ranked[:3]])  # fmt: skip


if __name__ == "__main__":
    main()
