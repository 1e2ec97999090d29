"""tune-score --paper-route: the graph-vs-local weight of paper pools is the grid value with the
best macro passage nDCG@10 over the selection specs, written into the checkpoint's config."""

from __future__ import annotations

import statistics

import pytest

from logrerank.data.schema import Doc, Example
from logrerank.log_checkpoint import read_meta
from logrerank.pipeline import LoGReranker
from logrerank.training.log import route_tuning
from logrerank.training.log.encode_cache import example_passages

PAPER = "A randomised trial of {} for the prevention of cancer in older adults"
TOPICS = ["aspirin", "statins", "metformin", "vitamin D"]


@pytest.fixture
def ckpt(tiny_ckpt, tmp_path):
    """A writable copy of the tiny checkpoint (the tunings write into its config.json)."""
    out = tmp_path / "ckpt"
    out.mkdir()
    for f in tiny_ckpt.iterdir():
        (out / f.name).write_bytes(f.read_bytes())
    return out


def _examples(short_titles: bool = False, citing: bool = False) -> list[Example]:
    docs = [
        Doc(f"d{i}", t if short_titles else PAPER.format(t),
            [f"{t.capitalize()} lowered cancer incidence.", "Adherence was high in both arms."])
        for i, t in enumerate(TOPICS)
    ]  # fmt: skip
    query = "{} was given as in Smith et al. (2010)." if citing else "Does {} prevent cancer?"
    return [Example(f"q{i}", query.format(t), docs, [f"d{i}"]) for i, t in enumerate(TOPICS)]


def test_chosen_weight_is_the_best_macro_and_is_written(ckpt, monkeypatch, tmp_path):
    model = LoGReranker.from_pretrained(str(ckpt))
    sets = {"a": _examples(), "b": _examples(short_titles=True), "c": _examples(citing=True)}
    encoded = {
        k: [model.encode(ex.query, example_passages(ex)) for ex in v] for k, v in sets.items()
    }

    def fake_encode_cached(_model, src, split, limit, cache_dir, log, offset=0):
        return sets[src], encoded[src]

    monkeypatch.setattr(route_tuning, "encode_cached", fake_encode_cached)
    monkeypatch.setattr(route_tuning, "MIN_POOLS", 2)
    specs = ("a:train:4", "b:train:4", "c:train:4")
    out = route_tuning.tune_paper_route(ckpt, specs=specs, cache_dir=str(tmp_path), command="cmd")
    assert (tmp_path / "dense-prior.safetensors").exists()  # the next tuning reads these
    # the short-titled pools are not paper pools; "a" holds questions, "c" citing queries
    assert out["pools"] == {
        "a:train:4": {"question": 4, "citance": 0},
        "b:train:4": {"question": 0, "citance": 0},
        "c:train:4": {"question": 0, "citance": 4},
    }
    assert list(out["per_spec"]["question"]) == ["a:train:4"]
    assert list(out["per_spec"]["citance"]) == ["c:train:4"]
    best = {}
    cells = route_tuning.candidates()
    assert len(cells) == 5 * 4 * 6 * 5
    for kind, src in (("question", "a"), ("citance", "c")):
        rows = route_tuning.pool_rows(model, sets[src], encoded[src])
        assert {r["kind"] for r in rows} == {kind}
        assert len(rows[0]) == 1 + len(cells)  # the kind and one cell per (a, w, v, u)
        macro = {p: statistics.fmean(r[route_tuning.cell(*p)] for r in rows) for p in cells}
        best[kind] = max(cells, key=lambda p: (round(macro[p], 6), -p[3], -p[2], -p[1], p[0]))
        key = route_tuning.cell(*best[kind])
        assert out["macro"][kind][key] == pytest.approx(macro[best[kind]], abs=0.01)
    assert out["chosen"] == {
        "paper_title_words": 7.0,
        "paper_global_weight": best["question"][0],
        "paper_lexical_weight": best["question"][1],
        "paper_dense_weight": best["question"][2],
        "paper_sentence_weight": best["question"][3],
        "citance_route": best["citance"] != best["question"],  # a route only where it differs
        "citance_global_weight": best["citance"][0],
        "citance_lexical_weight": best["citance"][1],
        "citance_dense_weight": best["citance"][2],
        "citance_sentence_weight": best["citance"][3],
    }
    meta = read_meta(ckpt)
    assert meta["model"]["score"]["paper_global_weight"] == best["question"][0]
    assert meta["model"]["score"]["paper_lexical_weight"] == best["question"][1]
    assert meta["model"]["score"]["citance_global_weight"] == best["citance"][0]
    assert meta["model"]["score"]["paper_dense_weight"] == best["question"][2]
    assert meta["model"]["score"]["paper_sentence_weight"] == best["question"][3]
    assert meta["training"]["paper_route"]["command"] == "cmd"
    back = LoGReranker.from_pretrained(str(ckpt))
    assert back.config.score.paper_title_words == 7.0
    assert back.config.score.citance_route == (best["citance"] != best["question"])
    # re-tuning the written checkpoint starts from the same logits (its own paper prior is
    # left out of them), so it makes the same choice
    again = route_tuning.tune_paper_route(ckpt, specs=specs, cache_dir=str(tmp_path), write=False)
    assert again["chosen"] == out["chosen"] and again["macro"] == out["macro"]


def test_best_cell_prefers_less_prior_then_more_graph():
    """Ties go to the smaller titled-sentence weight u, then the smaller dense weight v, then the
    smaller lexical weight w, then the larger graph weight a."""
    cell, best = route_tuning.cell, route_tuning.best_cell
    flat = {cell(*p): 50.0 for p in route_tuning.candidates()}
    assert best(flat) == (1.0, 0.0, 0.0, 0.0)  # all tied: no priors, graph alone
    peak = flat | {cell(0.25, 0.5): 60.0, cell(0.5, 1.0): 60.0}
    assert best(peak) == (0.25, 0.5, 0.0, 0.0)  # tie at 60: the smaller w
    peak[cell(0.75, 1.0)] = 61.0
    assert best(peak) == (0.75, 1.0, 0.0, 0.0)  # a better macro wins over less prior
    peak |= {cell(0.0, 0.0, 0.2): 61.0, cell(0.0, 0.0, 0.1): 61.0}
    assert best(peak) == (0.75, 1.0, 0.0, 0.0)  # tie at 61: the smaller v first
    peak[cell(0.0, 0.0, 0.2)] = 62.0
    assert best(peak) == (0.0, 0.0, 0.2, 0.0)
    peak |= {cell(0.0, 0.0, 0.0, 0.5): 62.0, cell(1.0, 0.0, 0.0, 0.25): 62.0}
    assert best(peak) == (0.0, 0.0, 0.2, 0.0)  # tie at 62: the smaller u before the smaller v
    peak[cell(1.0, 0.0, 0.0, 0.25)] = 63.0
    assert best(peak) == (1.0, 0.0, 0.0, 0.25)
    assert cell(0.25, 0.0) == "0.25|0|0|0"
    assert cell(0.25, 0.5, 0.1, 2.0) == "0.25|0.5|0.1|2"


def test_untitled_weight_keeps_the_graph_only_past_the_margin():
    """a > 0 on untitled pools only where its macro beats a = 0 (local only) by the margin; among
    a > 0 the best, ties to the larger a."""
    choose = route_tuning.choose_untitled_weight
    flat = {"0": 70.0, "0.25": 70.4, "0.5": 70.3, "0.75": 70.0, "1": 69.8}
    assert choose(flat) == 0.0  # +0.4 < 0.5: local only
    better = dict(flat, **{"0.5": 70.6})
    assert choose(better) == 0.5  # +0.6 >= 0.5
    tie = {"0": 60.0, "0.25": 61.0, "0.5": 61.0, "0.75": 60.0, "1": 61.0}
    assert choose(tie) == 1.0
    assert choose(flat, margin=0.0) == 0.25


def test_untitled_route_is_chosen_on_untitled_pools_and_written(ckpt, monkeypatch):
    model = LoGReranker.from_pretrained(str(ckpt))
    untitled = [
        Example(
            ex.qid,
            ex.query,
            [Doc(d.doc_id, "", d.sentences) for d in ex.candidates],
            ex.gold_doc_ids,
        )
        for ex in _examples()
    ]
    sets = {"u": untitled, "p": _examples()}
    encoded = {
        k: [model.encode(ex.query, example_passages(ex)) for ex in v] for k, v in sets.items()
    }
    monkeypatch.setattr(
        route_tuning, "encode_cached", lambda _m, src, *a, **k: (sets[src], encoded[src])
    )
    monkeypatch.setattr(route_tuning, "MIN_POOLS", 2)
    out = route_tuning.tune_untitled_route(ckpt, specs=("u:train:4", "p:train:4"), command="cmd")
    assert out["pools"] == {"u:train:4": 4, "p:train:4": 0}  # titled pools are not counted
    rows = route_tuning.untitled_rows(model, sets["u"], encoded["u"])
    macro = {k: statistics.fmean(r[k] for r in rows) for k in rows[0]}
    assert out["macro"] == {k: round(v, 2) for k, v in macro.items()}
    a = route_tuning.choose_untitled_weight(macro)
    assert out["chosen"] == {"untitled_global_weight": a}
    meta = read_meta(ckpt)
    assert meta["model"]["score"]["untitled_global_weight"] == a
    assert meta["training"]["untitled_route"]["command"] == "cmd"
    assert LoGReranker.from_pretrained(str(ckpt)).config.score.untitled_global_weight == a
    # the two ends are computed apart from the written weight: re-tuning makes the same choice
    again = route_tuning.tune_untitled_route(ckpt, specs=("u:train:4",), write=False)
    assert again["chosen"] == out["chosen"] and again["macro"] == out["macro"]
