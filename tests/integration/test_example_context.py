"""Every built-in example of the app keeps its context under the app's relevance threshold: the
threshold is relative to the best unit (``min_score`` x the best score), so a pool whose scores
are all low in absolute terms (the chain-of-thought example's best sentence scores about 0.13)
keeps the same units as a pool with high scores would: every one of the K units within that
fraction of the best, never only the one or two above an absolute cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank.app.state import DEFAULT_MIN_SCORE
from logrerank.config import ContextConfig

EXAMPLES = sorted((Path(__file__).parents[2] / "logrerank" / "app" / "examples").rglob("*.json"))


@pytest.fixture(scope="module")
def bundled():
    from logrerank.pipeline import LoGReranker

    return LoGReranker.from_pretrained()


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_each_example_keeps_k_context_units(bundled, path: Path) -> None:
    ex = json.loads(path.read_text(encoding="utf-8"))
    passages = [{"title": c.get("title", ""), "text": c["text"]} for c in ex["ctxs"]]
    k = 10
    free = bundled.rerank(ex["question"], passages, context=ContextConfig(top_k=k))
    assert len(free.context["units"]) == min(k, len(free.sentences))
    cfg = ContextConfig(
        top_k=k, min_score=DEFAULT_MIN_SCORE
    )  # no token budget: the threshold alone
    units = bundled.rerank(ex["question"], passages, context=cfg).context["units"]
    best = max(u["score"] for u in free.context["units"])
    expected = [u["node"] for u in free.context["units"] if u["score"] >= DEFAULT_MIN_SCORE * best]
    assert [u["node"] for u in units] == expected, path.stem
    assert len(units) >= 5, (path.stem, len(units))  # not collapsed to the top one or two
    if path.stem == "chain_of_thought_math":
        assert best < 0.5  # low in absolute terms, and the context is kept all the same
