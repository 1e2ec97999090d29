"""The "pubmedqa-silver" training source on the public PubMedQA files (``data``; skipped when they
are absent): no test abstract leaks in, silver sentences are valid. The hand-computed silver-label
tests are in ``tests/unit/test_silver.py``."""

from __future__ import annotations

import io

import pytest

from logrerank.data.common import default_data_root
from logrerank.data.silver import SILVER_SOURCE, pubmedqa_test_ids
from logrerank.training import queries as td
from logrerank.training.log import log_config as tc


@pytest.mark.data
def test_pubmedqa_silver_source_on_real_data(monkeypatch, tmp_path):
    root = default_data_root()
    if not (root / "pubmedqa" / "ori_pqal.json").is_file():
        pytest.skip(f"public data not found at {root} (set LOGRERANK_DATA)")
    monkeypatch.setenv("LOGRERANK_CACHE", str(tmp_path))  # keep this 20-query pool out of .cache
    test_ids = pubmedqa_test_ids()
    assert len(test_ids) == 500
    cfg = tc.TrainConfig(sources=[SILVER_SOURCE], max_queries={SILVER_SOURCE: 20}, dev_fraction=0.3)
    log = io.StringIO()
    train, dev = td.load_train_queries(cfg, log)
    exs = train + dev
    assert 10 <= len(exs) <= 20, log.getvalue()
    assert train and dev  # the held-out split still works on the new source
    assert not {ex.qid for ex in train} & {ex.qid for ex in dev}
    for ex in exs:
        assert ex.meta["source"] == SILVER_SOURCE
        assert ex.qid not in test_ids
        assert (ex in dev) == td.held_out(f"{SILVER_SOURCE}:{ex.qid}", cfg.dev_fraction)
        ids = [d.doc_id for d in ex.candidates]
        assert not set(ids) & test_ids  # leakage rule: no test abstract, even as a negative
        assert 1 < len(ids) <= 50 and len(set(ids)) == len(ids)
        (gold,) = ex.gold_doc_ids
        assert gold in ids and set(ex.gold_sentences) == {gold}
        idx = ex.gold_sentences[gold]
        n = len(ex.candidates[ids.index(gold)].sentences)
        assert 1 <= len(idx) <= cfg.silver_top and idx == sorted(set(idx))
        assert all(0 <= j < n for j in idx)
        assert all(f >= cfg.silver_min_f1 for f in ex.meta["silver_f1"])
    assert "kept" in log.getvalue() and "mean silver sentences" in log.getvalue()
