"""How a pool was treated (logrerank.ranking.treatment): the "what ranked" headline of the app,
the API and the CLI names the graph's learned share and says "local scores only" when the graph
changed nothing."""

from __future__ import annotations

from logrerank.cli.rerank import format_ranking
from logrerank.ranking.treatment import headline, pool_treatment
from logrerank.types import Passage, Ranking, ScoredSentence


def _ranking(
    gate: float | None = 0.62, use_global: bool = True, lexical_weight: float = 0.0
) -> Ranking:
    sents = [
        ScoredSentence(n, 0, n, f"Sentence {n}.", 0, 12, score=0.9 - 0.1 * n, rank=n + 1)
        for n in range(3)
    ]
    info = {
        "use_global": use_global,
        "global_stage": "global" if use_global else None,
        "graph_gate": gate if use_global else None,
        "titled_fraction": 0.5,
        "score": {"lexical_weight": lexical_weight},
    }
    return Ranking("q", [Passage("x")], "log", sents, info=info)


def test_a_moving_graph_is_named_with_its_learned_share() -> None:
    t = pool_treatment(_ranking(0.62), [2, 1, 0])
    assert t["graph_effect"] == "changed order" and t["graph_moved"] == 2
    assert t["graph_weight"] == t["graph_gate"] == 0.62 and t["global_stage"] == "global"
    assert t["titled_fraction"] == 0.5 and t["priors"] == []
    assert set(t) == {
        "global_stage", "graph_weight", "graph_gate", "titled_fraction", "priors",
        "graph_moved", "graph_effect",
    }  # fmt: skip
    assert headline(t, n_sentences=3) == (
        "Ranking: LoG (graph share 0.62, learned from the pool; the graph moved 2 of 3 sentences)"
    )
    unknown = pool_treatment(_ranking(0.62))
    assert unknown["graph_moved"] is None
    assert headline(unknown) == "Ranking: LoG (graph share 0.62, learned from the pool)"


def test_switched_off_and_unmoved_orders_say_so() -> None:
    off = pool_treatment(_ranking(use_global=False), [0, 1, 2])
    assert off["graph_effect"] == "switched off" and off["graph_weight"] == 0.0
    assert off["graph_gate"] is None and off["global_stage"] is None
    assert headline(off) == "Ranking: local scores only (LoG: the graph stage is switched off)"
    assert headline(off, "LoG (local only)").startswith("Ranking: local scores only (LoG (local")
    same = pool_treatment(_ranking(0.31), [0, 1, 2])
    assert same["graph_effect"] == "no change" and same["graph_moved"] == 0
    assert headline(same) == (
        "Ranking: LoG, the same order as local scores only (graph share 0.31: the graph moved "
        "no sentence)"
    )


def test_a_gate_near_zero_leaves_local_scores_to_decide() -> None:
    t = pool_treatment(_ranking(0.01, lexical_weight=0.3), [2, 1, 0])
    assert t["graph_effect"] == "graph share ~0" and t["graph_weight"] == 0.01
    assert t["priors"] == ["lexical prior w 0.3"]
    line = headline(t)
    assert line == (
        "Ranking: local scores only + lexical prior w 0.3 (graph share 0.01, learned from the "
        "pool: local scores decide)"
    )
    assert "LoG without links" in headline(t, "LoG without links")  # an ablation is named


def test_a_stage_without_a_gate_counts_the_graph_fully() -> None:
    t = pool_treatment(_ranking(None), [1, 0, 2])
    assert t["graph_weight"] == 1.0 and t["graph_gate"] is None
    assert headline(t, n_sentences=3) == (
        "Ranking: LoG (graph share 1, no gate; the graph moved 2 of 3 sentences)"
    )


def test_cli_text_names_the_treatment(tiny_model) -> None:
    passages = ["Statins lowered dementia risk. The cohort was large.", "Trials found no effect."]
    enc = tiny_model.encode("Do statins reduce dementia?", passages)
    ranking = tiny_model.rank_encoded(enc)
    local = [s.node for s in tiny_model.rank_encoded(enc, use_global=False).sentences]
    second = format_ranking(ranking, local_order=local).splitlines()[1]
    assert second == headline(pool_treatment(ranking, local), "LoG", len(ranking.sentences))
    assert second.startswith("Ranking: ")
    plain = format_ranking(Ranking("q", [], "bm25"))
    assert "Ranking: " not in plain  # no gate recorded (not a LoG ranking): no headline
