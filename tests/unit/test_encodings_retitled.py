"""``eval --encodings`` across title conditions: a pool encoded with full titles serves the
same pool with cut or no titles (sentence units never read titles), retitled, not re-encoded."""

from __future__ import annotations

from logrerank.rankers import LoGRanker, Models
from logrerank.types import Passage

PASSAGES = [
    Passage("Metformin lowered colorectal cancer risk. The cohort was large.", "Metformin and cancer"),
    Passage("Sleep was unrelated to adenoma.", "Sleep duration"),
]  # fmt: skip


def test_a_pool_cached_with_titles_serves_it_without(make_tiny_model):
    model = make_tiny_model()
    enc = model.encode("metformin cancer", PASSAGES)
    models = Models()
    models._log = model
    models.encodings = {(enc.query, tuple((p.title, p.text) for p in enc.passages)): enc}
    calls = []
    model.encode = lambda *a, **k: calls.append(a)  # any re-encoding is recorded
    bare = [{"title": "", "text": p.text} for p in PASSAGES]
    ranking = LoGRanker("log", models).rank("metformin cancer", bare)
    assert calls == []  # read from the cache
    assert [p.title for p in models.cache_value.passages] == ["", ""]
    assert models.cache_value.h is enc.h  # the same tensors
    assert [p.title for p in enc.passages] == ["Metformin and cancer", "Sleep duration"]
    assert len(ranking.sentences) == 3
