"""How a pool was treated (logrerank.ranking.treatment): the "what ranked" headline of the app,
the API and the CLI says "local scores only" when the graph changed nothing."""

from __future__ import annotations

from logrerank.cli.rerank import format_ranking
from logrerank.ranking.treatment import headline, pool_treatment
from logrerank.types import Passage, Ranking, ScoredSentence


def _ranking(route: dict | None, use_global: bool = True, stage: str = "multi-passage") -> Ranking:
    sents = [
        ScoredSentence(n, 0, n, f"Sentence {n}.", 0, 12, score=0.9 - 0.1 * n, rank=n + 1)
        for n in range(3)
    ]
    info = {"use_global": use_global, "global_stage": stage if use_global else None}
    if route is not None:
        info["route"] = {"titled_fraction": 1.0, "lexical_max_titled": 0.5, **route}
    return Ranking("q", [Passage("x")], "log", sents, info=info)


def test_graph_weight_zero_is_local_scores_only() -> None:
    r = _ranking({"titled_fraction": 0.0, "global_weight": 0.0, "lexical_weight": 0.3})
    t = pool_treatment(r, [0, 1, 2])
    assert t["graph_effect"] == "weight 0" and t["pool_kind"] == "untitled pools"
    line = headline(t)
    assert line.startswith("Ranking: local scores only + lexical prior w 0.3 (graph weight 0 ")
    assert "untitled pools" in line and "LoG" not in line


def test_switched_off_and_unmoved_orders_say_so() -> None:
    off = pool_treatment(_ranking({"global_weight": 1.0}, use_global=False), [0, 1, 2])
    assert off["graph_effect"] == "switched off" and off["graph_weight"] == 0.0
    assert headline(off, "LoG (local only)").startswith("Ranking: local scores only (LoG (local")
    same = pool_treatment(_ranking({"global_weight": 1.0}), [0, 1, 2])
    assert same["graph_effect"] == "no change" and same["graph_moved"] == 0
    assert "the same order as local scores only" in headline(same)


def test_a_moving_graph_is_named_with_stage_and_weight() -> None:
    t = pool_treatment(
        _ranking({"global_weight": 0.5, "paper": True}, stage="single-passage"), [2, 1, 0]
    )
    assert t["graph_effect"] == "changed order" and t["graph_moved"] == 2
    assert headline(t, n_sentences=3) == (
        "Ranking: LoG (single-passage global stage, graph weight 0.5; the graph stage moved 2 of "
        "3 sentences)"
    )
    unknown = pool_treatment(_ranking({"global_weight": 1.0}))
    assert unknown["graph_moved"] is None and "graph weight 1" in headline(unknown)


def test_cli_text_names_the_treatment(tiny_model) -> None:
    passages = ["Statins lowered dementia risk. The cohort was large.", "Trials found no effect."]
    enc = tiny_model.encode("Do statins reduce dementia?", passages)
    ranking = tiny_model.rank_encoded(enc)
    local = [s.node for s in tiny_model.rank_encoded(enc, use_global=False).sentences]
    second = format_ranking(ranking, local_order=local).splitlines()[1]
    assert second == headline(pool_treatment(ranking, local), "LoG", len(ranking.sentences))
    assert second.startswith("Ranking: ")
    plain = format_ranking(Ranking("q", [], "bm25"))
    assert "Ranking: " not in plain  # no route recorded (not a LoG ranking): no headline
