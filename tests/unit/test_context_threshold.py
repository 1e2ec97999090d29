"""The context's relevance threshold is relative to the best unit's score (issue 50): a pool
whose scores are all low keeps its units, off-topic units below the fraction are still cut."""

from __future__ import annotations

from logrerank.config import ContextConfig
from logrerank.ranking.context import apply_budget


def _unit(node: int, score: float) -> dict:
    return {"node": node, "passage": node, "passage_id": str(node), "title": "", "sentence": 0,
            "role": "result", "text": f"sentence {node}", "score": score,
            "before": None, "after": None, "similar": []}  # fmt: skip


def _context(scores: list[float]) -> dict:
    return {"k": len(scores), "units": [_unit(i, s) for i, s in enumerate(scores)], "prompt": ""}


def test_low_scores_keep_every_unit():
    # every score <= 0.13 (the chain-of-thought example): an absolute 0.05 cut kept 2 units
    scores = [0.13, 0.09, 0.07, 0.04, 0.03, 0.02]
    out = apply_budget(_context(scores), ContextConfig(min_score=0.05))
    assert [u["node"] for u in out["units"]] == list(range(6))
    assert out["budget"]["threshold"] == 0.05 * 0.13
    assert out["budget"]["units_below_threshold"] == 0


def test_threshold_is_a_fraction_of_the_best_score():
    out = apply_budget(_context([0.9, 0.5, 0.04, 0.01]), ContextConfig(min_score=0.05))
    assert [u["node"] for u in out["units"]] == [0, 1]  # 0.04 < 0.045
    scaled = apply_budget(_context([0.09, 0.05, 0.004, 0.001]), ContextConfig(min_score=0.05))
    assert [u["node"] for u in scaled["units"]] == [0, 1]  # the same cut, scores / 10


def test_neighbours_use_the_same_threshold():
    ctx = _context([0.1, 0.08])
    ctx["units"][0]["after"] = _unit(7, 0.01)  # 0.01 >= 0.5 x 0.1? no: left out
    ctx["units"][1]["before"] = _unit(8, 0.06)  # kept
    out = apply_budget(ctx, ContextConfig(min_score=0.5))
    assert out["units"][0]["after"] is None and out["units"][1]["before"]["node"] == 8
