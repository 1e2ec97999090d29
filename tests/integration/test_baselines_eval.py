"""`logrerank eval` smoke runs on the public data (``data``; skipped without ../shared/data) and the
bi-encoder baseline on the real packaged backbone (``slow``). The toy-input tests are in
``tests/unit/test_baselines_eval.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank.cli import main
from logrerank.data.common import default_data_root

PASSAGES = [
    {"title": "Aspirin trial", "text": "Aspirin reduced heart attacks by 20%. It was cheap."},
    {"title": "Statins", "text": "Statins lower cholesterol. Muscle pain is a side effect."},
    {"title": "Diet", "text": "A Mediterranean diet was studied. Olive oil was used."},
]


needs_data = pytest.mark.skipif(
    not default_data_root().is_dir(), reason="public data not found (set LOGRERANK_DATA)"
)


@pytest.mark.data
@needs_data
def test_eval_smoke_scifact_real_data(tmp_path: Path):
    """CI smoke evaluation: a few real SciFact dev queries through `logrerank eval`."""
    rc = main(
        [
            "eval", "--benchmark", "scifact", "--limit", "3", "--quiet",
            "--rankers", "first-pass,bm25,bm25-sent,evidence-graph",
            "--out", str(tmp_path),
        ]
    )  # fmt: skip
    assert rc == 0
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["meta"]["queries"] == 3
    for name in ("first-pass", "bm25", "bm25-sent", "evidence-graph"):
        p = res["summary"][name]["passage"]
        assert 0.0 <= p["ndcg@10"] <= 100.0
        assert res["summary"][name]["queries"] == 3
    assert res["summary"]["bm25-sent"]["sentence"] is not None
    assert (tmp_path / "results.md").read_text().count("|") > 10


@pytest.mark.data
@needs_data
def test_eval_smoke_multihop_coverage(tmp_path: Path):
    rc = main(
        [
            "eval",
            "-b",
            "hotpotqa",
            "--limit",
            "3",
            "--quiet",
            "-r",
            "bm25,evidence-graph",
            "-o",
            str(tmp_path),
        ]
    )
    assert rc == 0
    res = json.loads((tmp_path / "results.json").read_text())
    assert "coverage@2" in res["summary"]["evidence-graph"]["passage"]


@pytest.mark.slow
def test_bi_encoder_real_backbone():
    from logrerank.baselines.bi_encoder_ranker import BiEncoderRanker

    r = BiEncoderRanker("sentence").rank("Does aspirin prevent heart attacks?", PASSAGES)
    assert r.sentences[0].passage_idx == 0
    assert len(r.sentences) == 6
    assert all(0.0 <= s.score <= 1.0 for s in r.sentences)
