"""TREC run files out of ``logrerank eval --save-runs``, and per-query figures of any run file.

:func:`write_runs` writes ``runs/<ranker>.trec`` (``qid Q0 docid rank score tag``), each query's
candidates best first with the score ``n - rank + 1`` (``n`` = the query's candidates): strictly
decreasing, so ``trec_eval`` and ``ir_measures``, which sort by score and break ties by doc id,
read back exactly the ranker's order. The rankers' own scores are not comparable across rankers
anyway; the rank is what the metrics use.

:func:`run_per_query` scores a run file against qrels with the project's metrics
(:mod:`logrerank.evaluation.metrics`, graded gains in nDCG) for ``logrerank paired-test``. Like
``ir_measures``, it scores every judged query: 0 when the run lacks it or when it has no relevant
passage.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..batch.io import trec_lines
from ..data.qrels import read_qrels, read_run_rankings
from ..types import InputError
from .metrics import average_precision_at_k, ndcg_at_k, recall_at_k

_METRIC = re.compile(r"^(recall|r|map|ap|ndcg)@(\d+)$", re.IGNORECASE)


def write_runs(out_dir: str | Path, rankings: dict[str, dict[str, list[str]]]) -> list[Path]:
    """Write one TREC run per ranker under ``out_dir/runs/``.

    Args:
        out_dir: the ``--out`` folder.
        rankings: ``{ranker: {qid: [doc ids, best first]}}`` (``evaluate(..., keep_rankings=True)``).

    Returns:
        The files written, ``runs/<ranker>.trec``, in ranker order.
    """
    folder = Path(out_dir) / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for ranker, by_qid in rankings.items():
        path = folder / f"{ranker}.trec"
        with path.open("w", encoding="utf-8", newline="\n") as f:
            for qid, ids in by_qid.items():
                scores = [float(len(ids) - i) for i in range(len(ids))]
                record = {"id": qid, "passage_order": ids, "passage_scores": scores}
                f.write(trec_lines(record, tag=ranker))
        written.append(path)
    return written


def parse_metric(metric: str) -> tuple[str, int]:
    """``"ndcg@10"`` -> ``("ndcg", 10)``; ``recall`` / ``R``, ``map`` / ``AP``, ``ndcg``.

    Raises:
        InputError: another metric, or a cut-off below 1.
    """
    m = _METRIC.match(metric.strip())
    if not m or int(m.group(2)) < 1:
        raise InputError(f"metric {metric!r}: expected recall@k, map@k or ndcg@k (k >= 1)")
    name = m.group(1).lower()
    return {"r": "recall", "ap": "map"}.get(name, name), int(m.group(2))


def run_per_query(run: str | Path, qrels: str | Path, metric: str = "ndcg@10") -> dict[str, float]:
    """``{qid: metric}`` of a TREC run over every query of ``qrels``.

    The run's order is ``trec_eval``'s (score descending, ties by doc id descending). nDCG uses
    the graded gains; recall and MAP count grade >= 1 as relevant (MAP divides by min(G, k),
    see docs/evaluation.md).

    Raises:
        InputError: a missing or malformed file, or an unknown metric.
    """
    name, k = parse_metric(metric)
    judged = read_qrels(qrels)
    ranked = read_run_rankings(run)
    out: dict[str, float] = {}
    for qid, grades in judged.items():
        gold = [d for d, g in grades.items() if g >= 1]
        ids = ranked.get(qid, [])
        if not gold or not ids:
            out[qid] = 0.0
        elif name == "ndcg":
            out[qid] = ndcg_at_k(ids, gold, k, gains=grades)
        elif name == "recall":
            out[qid] = recall_at_k(ids, gold, k)
        else:
            out[qid] = average_precision_at_k(ids, gold, k)
    return out
