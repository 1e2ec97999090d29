"""tune-score --paper-route: the graph-vs-local weight of paper pools is the grid value with the
best macro passage nDCG@10 over the selection specs, written into the checkpoint's config."""

from __future__ import annotations

import json
import statistics

import pytest

from logrerank.data.schema import Doc, Example
from logrerank.pipeline import LoGReranker
from logrerank.training.log import route_tuning
from logrerank.training.log.encode_cache import example_passages

PAPER = "A randomised trial of {} for the prevention of cancer in older adults"
TOPICS = ["aspirin", "statins", "metformin", "vitamin D"]


def _examples(short_titles: bool = False) -> list[Example]:
    docs = [
        Doc(f"d{i}", t if short_titles else PAPER.format(t),
            [f"{t.capitalize()} lowered cancer incidence.", "Adherence was high in both arms."])
        for i, t in enumerate(TOPICS)
    ]  # fmt: skip
    return [
        Example(f"q{i}", f"Does {t} prevent cancer?", docs, [f"d{i}"]) for i, t in enumerate(TOPICS)
    ]


def test_chosen_weight_is_the_best_macro_and_is_written(tiny_ckpt, tmp_path, monkeypatch):
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    for f in tiny_ckpt.iterdir():
        (ckpt / f.name).write_bytes(f.read_bytes())
    model = LoGReranker.from_pretrained(str(ckpt))
    sets = {"a": _examples(), "b": _examples(short_titles=True)}
    encoded = {
        k: [model.encode(ex.query, example_passages(ex)) for ex in v] for k, v in sets.items()
    }

    def fake_encode_cached(_model, src, split, limit, cache_dir, log, offset=0):
        return sets[src], encoded[src]

    monkeypatch.setattr(route_tuning, "encode_cached", fake_encode_cached)
    out = route_tuning.tune_paper_route(ckpt, specs=("a:train:4", "b:train:4"), command="cmd")
    # the short-titled pools are not paper pools: only "a" counts
    assert out["pools"] == {"a:train:4": 4, "b:train:4": 0} and list(out["per_spec"]) == [
        "a:train:4"
    ]
    rows = route_tuning.pool_rows(model, sets["a"], encoded["a"])
    macro = {a: statistics.fmean(r[str(a)] for r in rows) for a in route_tuning.GRID}
    best = max(route_tuning.GRID, key=lambda a: (round(macro[a], 6), a))
    assert out["chosen"] == {"paper_title_words": 7.0, "paper_global_weight": best}
    assert out["macro"][str(best)] == pytest.approx(macro[best], abs=0.01)
    meta = json.loads((ckpt / "config.json").read_text())
    assert meta["model"]["score"]["paper_global_weight"] == best
    assert meta["training"]["paper_route"]["command"] == "cmd"
    back = LoGReranker.from_pretrained(str(ckpt))
    assert back.config.score.paper_title_words == 7.0
