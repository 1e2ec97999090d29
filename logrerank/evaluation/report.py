"""Reports over ``logrerank eval`` runs: two runs side by side, and a ranker over seed runs.

Both read the ``summary`` section of the runs' ``results.json``; ``logrerank report compare``
and ``logrerank report seeds`` print :func:`compare_runs` and :func:`seed_table`.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from ..types import InputError
from .paired import results_path


def load_summary(run: str | Path) -> dict:
    """The ``summary`` section (``{ranker: {level: {metric: value}}}``) of a run.

    Args:
        run: a ``logrerank eval --out`` folder or its ``results.json``.

    Raises:
        InputError: no such file.
    """
    file = results_path(run)
    if not file.is_file():
        raise InputError(f"{file} not found (a results.json of logrerank eval --out)")
    return json.loads(file.read_text(encoding="utf-8"))["summary"]


def compare_runs(run_a: str | Path, run_b: str | Path) -> str:
    """nDCG@10 of every ranker and level both runs have, ``a -> b (change)``, then the largest
    absolute change (one line each)."""
    a, b = load_summary(run_a), load_summary(run_b)
    lines, worst = [], 0.0
    for name in a:
        if name not in b:
            continue
        for level in ("passage", "sentence"):
            if "ndcg@10" in (a[name].get(level) or {}) and "ndcg@10" in (b[name].get(level) or {}):
                x, y = a[name][level]["ndcg@10"], b[name][level]["ndcg@10"]
                worst = max(worst, abs(y - x))
                lines.append(f"{name:14s} {level:8s} nDCG@10 {x:6.2f} -> {y:6.2f} ({y - x:+.2f})")
    lines.append(f"largest change: {worst:.2f}")
    return "\n".join(lines)


def seed_figures(run: str | Path, ranker: str) -> dict[str, float]:
    """Passage (``P``) and, when the benchmark has sentence labels, sentence (``S``) nDCG@10 of
    ``ranker`` in one run.

    Raises:
        InputError: the run does not hold ``ranker``.
    """
    summary = load_summary(run)
    if ranker not in summary:
        raise InputError(f"{results_path(run)} has no ranker {ranker!r}")
    out = {"P": summary[ranker]["passage"]["ndcg@10"]}
    if summary[ranker].get("sentence_queries"):
        out["S"] = summary[ranker]["sentence"]["ndcg@10"]
    return out


def seed_table(ranker: str, seeds: list[str], benchmarks: dict[str, list[str]]) -> str:
    """Markdown table: one row per seed, then mean ± sd (sample standard deviation, n - 1).

    Args:
        ranker: the ranker reported.
        seeds: row labels, in the order of each benchmark's folders.
        benchmarks: ``{name: [run folder per seed]}``; a column per benchmark and level.

    Raises:
        InputError: fewer than two seeds, or a benchmark has not one folder per seed.
    """
    if len(seeds) < 2:
        raise InputError("a standard deviation needs at least two seeds")
    cols: list[tuple[str, list[float]]] = []
    for name, dirs in benchmarks.items():
        runs = [seed_figures(d, ranker) for d in dirs]
        if len(runs) != len(seeds):
            raise InputError(f"{name}: {len(runs)} folders for {len(seeds)} seeds")
        for level in ("P", "S"):
            if all(level in r for r in runs):
                cols.append((f"{name} {level}", [r[level] for r in runs]))
    lines = ["| seed | " + " | ".join(c for c, _ in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for i, s in enumerate(seeds):
        lines.append(f"| {s} | " + " | ".join(f"{v[i]:.1f}" for _, v in cols) + " |")
    stats = [f"{statistics.mean(v):.1f} ± {statistics.stdev(v):.1f}" for _, v in cols]
    lines.append("| mean ± sd | " + " | ".join(stats) + " |")
    return "\n".join(lines)
