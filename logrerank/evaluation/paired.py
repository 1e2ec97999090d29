"""Paired randomisation test between two rankers' per-query scores (same pools, same queries).

Reads the per-query rows that ``logrerank eval --out`` writes to ``results.json`` and compares
two rankers (of one run or of two runs) over the queries both have: the mean difference, a 95 %
bootstrap interval and the two-sided p-value of a sign-flip randomisation test (seeded, so the
figures repeat). ``logrerank paired-test`` prints :func:`format_paired` of :func:`paired_test`.
"""

from __future__ import annotations

import json
import random
import statistics
from pathlib import Path

from ..types import InputError


def results_path(run: str | Path) -> Path:
    """``run`` itself when it is a file, else ``run/results.json`` (a ``logrerank eval`` folder)."""
    path = Path(run)
    return path / "results.json" if path.is_dir() else path


def per_query(
    path: str | Path, ranker: str, level: str = "passage", metric: str = "ndcg@10"
) -> dict[str, float]:
    """``{qid: metric}`` of ``ranker`` at ``level`` in a ``results.json`` (or its run folder).

    Queries without a figure at that level (no sentence labels) are left out.

    Raises:
        InputError: the file is missing or does not hold ``ranker``.
    """
    file = results_path(path)
    if not file.is_file():
        raise InputError(f"{file} not found (a results.json of logrerank eval --out)")
    with open(file, encoding="utf-8") as f:
        rows_by_ranker = json.load(f)["per_query"]
    if ranker not in rows_by_ranker:
        raise InputError(f"{file} has no ranker {ranker!r}; it has: {', '.join(rows_by_ranker)}")
    rows = rows_by_ranker[ranker]
    return {r["qid"]: r[level][metric] for r in rows if r.get(level) and metric in r[level]}


def parse_spec(spec: str) -> tuple[str, str]:
    """``"PATH:RANKER"`` -> ``(PATH, RANKER)`` (split at the last colon).

    Raises:
        InputError: no ``:RANKER`` part.
    """
    path, sep, ranker = spec.rpartition(":")
    if not sep or not path or not ranker:
        raise InputError(f"{spec!r}: expected RESULTS:RANKER, e.g. runs/eval/results.json:log")
    return path, ranker


def paired_test(a: dict[str, float], b: dict[str, float], draws: int = 10_000) -> dict:
    """Compare ``a`` against ``b`` over their shared queries.

    Args:
        a: per-query scores of the first ranker (``{qid: score}``).
        b: per-query scores of the second ranker.
        draws: sign-flip randomisations (the bootstrap always takes 2,000 resamples).

    Returns:
        ``{"queries", "mean_difference", "ci95": (lo, hi), "better", "worse", "p_value"}``;
        differences are ``a - b`` in the scores' own unit. The random generator is seeded (0).

    Raises:
        InputError: the two share no query, or ``draws`` < 1.
    """
    if draws < 1:
        raise InputError("--draws must be >= 1")
    qids = sorted(set(a) & set(b))
    if not qids:
        raise InputError("the two rankers share no query")
    d = [a[q] - b[q] for q in qids]
    obs = statistics.mean(d)
    rng = random.Random(0)
    extreme = sum(
        abs(statistics.mean(x if rng.random() < 0.5 else -x for x in d)) >= abs(obs) - 1e-12
        for _ in range(draws)
    )
    boots = sorted(statistics.mean(rng.choice(d) for _ in d) for _ in range(2000))
    return {
        "queries": len(qids),
        "mean_difference": obs,
        "ci95": (boots[49], boots[1949]),
        "better": sum(x > 0 for x in d),
        "worse": sum(x < 0 for x in d),
        "p_value": (extreme + 1) / (draws + 1),
    }


def format_paired(result: dict, level: str, metric: str) -> str:
    """One line: queries, mean difference and interval (in points), wins / losses, p-value."""
    lo, hi = result["ci95"]
    return (
        f"{level} {metric}: {result['queries']} queries, mean difference "
        f"{100 * result['mean_difference']:+.2f} "
        f"(95% bootstrap {100 * lo:+.2f} .. {100 * hi:+.2f}), better on "
        f"{result['better']}, worse on {result['worse']}, "
        f"sign-flip p = {result['p_value']:.4f}"
    )
