"""End-to-end test of logrerank.pipeline.LoGReranker on the real packaged all-MiniLM-L6-v2
backbone (``slow``); the tiny-model tests are in ``tests/unit/test_pipeline.py``."""

from __future__ import annotations

import pytest

from logrerank.config import ScoreConfig
from logrerank.graph.sentence_graph import Relation
from logrerank.pipeline import LoGReranker
from tests.helpers import check_ranking, scores

SCIENTIFIC = [
    {
        "title": "CRISPR-Cas9 off-target effects",
        "text": "BACKGROUND: Off-target cleavage limits the clinical use of CRISPR-Cas9. "
        "METHODS: We sequenced 12 edited cell lines with GUIDE-seq (Fig. 2). RESULTS: "
        "High-fidelity variants reduced off-target sites by 94% (p < 0.001).",
    },
    {
        "title": "Base editing",
        "text": "Base editors convert C:G to T:A pairs without double-strand breaks. They "
        "were delivered by lipid nanoparticles, i.e. without viral vectors. Editing "
        "efficiency reached 60% in hepatocytes.",
    },
    {
        "title": "Prime editing",
        "text": "Prime editing uses a reverse transcriptase fused to Cas9 nickase. "
        "Compared with HDR, it produced fewer indels (Smith et al. 2021).",
    },
    {
        "title": "Delivery",
        "text": "Adeno-associated viruses have a packaging limit of about 4.7 kb.\n\nLarger "
        "editors must therefore be split across two vectors.",
    },
    {
        "title": "Unrelated",
        "text": "Coral reefs host a quarter of marine species. Bleaching events have become "
        "more frequent since 1998.",
    },
]


@pytest.mark.slow
def test_packaged_backbone_end_to_end() -> None:
    model = LoGReranker.from_pretrained(device="cpu")
    assert model.local.hidden_size == 384
    query = "How can the off-target effects of CRISPR genome editing be reduced?"
    r = model.rerank(query, SCIENTIFIC)
    check_ranking(r, SCIENTIFIC)
    for stage in ("segment", "tokenize", "local", "graph", "global", "context", "total"):
        assert stage in r.timings and r.timings[stage] >= 0.0
    assert r.timings["local"] > 0.0
    assert r.info["num_nodes"] == len(r.sentences) >= 12
    assert r.context["units"] and r.context["prompt"]
    if not r.info["trained"]:
        assert any("untrained" in w for w in r.warnings)
    # Same input, same output; cached encodings reproduce the ranking.
    enc = model.encode(query, SCIENTIFIC)
    again = model.rank_encoded(enc)
    assert scores(again) == scores(r)
    local_only = model.rank_encoded(enc, use_global=False)
    if model.config.score == ScoreConfig():  # no score adjustments: sort score = local score
        assert all(s.score == s.local_score for s in local_only.sentences)
    saved, model.config.score = model.config.score, ScoreConfig()
    try:
        plain = model.rank_encoded(enc, use_global=False)
        assert all(s.score == s.local_score for s in plain.sentences)
    finally:
        model.config.score = saved
    untyped = model.rank_encoded(enc, typed=False)
    assert all(e.relation_id == 0 for e in untyped.edges)
    nocross = model.rank_encoded(enc, cross_passage=False)
    assert not any(e.relation == "similar" for e in nocross.edges)
    assert Relation.SIMILAR == 7
