"""Tests for logrerank.data: schema, readers, pools and load_benchmark.

The tests use tiny synthetic files under ``tmp_path``; the tests on the public datasets
(``LOGRERANK_DATA`` or ``../shared/data``) are in ``tests/integration/test_data_readers.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank.data import (
    BENCHMARKS,
    Doc,
    build_or_load_pools,
    default_data_root,
    load_benchmark,
    pool_from_ranking,
    read_citation_integrity,
    read_csabstruct,
    read_nicta,
    read_scifact,
)
from logrerank.data.common import strip_citation_markers
from logrerank.data.first_pass import BM25Ranker
from logrerank.data.headings import pubmedqa_role


def test_doc_text_and_offsets() -> None:
    doc = Doc("d", "T", ["One.", "Two words.", "", "Three"])
    assert doc.text == "One. Two words.  Three"
    for (start, end), sentence in zip(doc.sentence_offsets(), doc.sentences, strict=True):
        assert doc.text[start:end] == sentence


def test_pool_from_ranking_insertion_rule() -> None:
    ranked = [f"d{i}" for i in range(10)]
    # No gold missing: plain top-k.
    assert pool_from_ranking(ranked, ["d1"], 4) == (["d0", "d1", "d2", "d3"], [])
    # Two gold missing: the two lowest-ranked non-gold (d2, d3) are dropped; inserted gold go
    # to the end in ranked order.
    pool, inserted = pool_from_ranking(ranked, ["d9", "d0", "d6"], 4)
    assert pool == ["d0", "d1", "d6", "d9"]
    assert inserted == ["d6", "d9"]
    # Corpus smaller than k: everything.
    assert pool_from_ranking(ranked[:3], ["d2"], 50) == (["d0", "d1", "d2"], [])
    # More gold than k: all gold, no non-gold.
    pool, _ = pool_from_ranking(ranked, ["d5", "d6", "d7"], 2)
    assert pool == ["d5", "d6", "d7"]
    with pytest.raises(ValueError, match="not in the corpus"):
        pool_from_ranking(ranked, ["nope"], 4)


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture()
def tiny_scifact(tmp_path: Path) -> tuple[Path, Path]:
    """A SciFact-format corpus where the gold doc of claim 1 does not match the query."""
    docs = [
        {"doc_id": 10, "title": "Aspirin", "abstract": ["Aspirin reduces fever.", "It is cheap."]},
        {"doc_id": 2, "title": "Aspirin", "abstract": ["Aspirin reduces fever.", "It is cheap."]},
        {"doc_id": 3, "title": "Fever", "abstract": ["Fever and aspirin trials."]},
        {"doc_id": 4, "title": "Unrelated", "abstract": ["Quantum dots emit light."]},
        {"doc_id": 5, "title": "Empty", "abstract": []},
        {"doc_id": 6, "title": "Kinase", "abstract": ["Kinases phosphorylate proteins."]},
    ]
    claims = [
        {
            "id": 1,
            "claim": "Aspirin reduces fever [<|cit|>].",
            "evidence": {"4": [{"sentences": [0], "label": "SUPPORT"}]},
            "cited_doc_ids": [4],
        },  # fmt: skip
        {"id": 2, "claim": "Kinases matter.", "evidence": {}, "cited_doc_ids": [6]},
        {
            "id": 3,
            "claim": "Fever.",
            "evidence": {
                "3": [
                    {"sentences": [0], "label": "CONTRADICT"},
                    {"sentences": [0], "label": "CONTRADICT"},
                ]
            },
            "cited_doc_ids": [3],
        },  # fmt: skip
    ]
    corpus_path, claims_path = tmp_path / "corpus.jsonl", tmp_path / "claims.jsonl"
    _write_jsonl(corpus_path, docs)
    _write_jsonl(claims_path, claims)
    return claims_path, corpus_path


def test_read_scifact_synthetic(tiny_scifact: tuple[Path, Path]) -> None:
    stats: dict = {}
    queries, corpus = read_scifact(*tiny_scifact, stats=stats)
    assert stats == {"n_claims": 3, "n_examples": 2, "n_skipped_nei": 1, "n_nei": 1}
    assert set(corpus) == {"10", "2", "3", "4", "5", "6"}
    assert corpus["5"].sentences == [] and corpus["5"].text == ""
    first = queries[0]
    assert first.qid == "1" and first.gold_doc_ids == ["4"]
    assert first.query == "Aspirin reduces fever ."
    assert first.meta["raw_claim"].endswith("[<|cit|>].")
    assert queries[1].gold_sentences == {"3": [0]}
    assert queries[1].meta["rationales"] == {"3": [[0], [0]]}
    # Docs 10 and 2 are copies of each other; neither is gold here.
    assert first.meta["gold_duplicates"] == {}
    with_nei, _ = read_scifact(*tiny_scifact, include_nei=True)
    assert [q.qid for q in with_nei] == ["1", "2", "3"] and with_nei[1].gold_doc_ids == []
    passage_level, _ = read_citation_integrity(*tiny_scifact)
    assert all(q.gold_sentences == {} for q in passage_level)
    assert passage_level[0].meta["dataset"] == "citint"


def test_pools_synthetic_insertion_ties_and_cache(
    tiny_scifact: tuple[Path, Path], tmp_path: Path
) -> None:
    queries, corpus = read_scifact(*tiny_scifact)
    k = 3
    examples, stats = build_or_load_pools("tiny", queries, corpus, k=k, cache_dir=tmp_path / "c")
    assert not stats["cached"]
    assert all(len(ex.candidates) == k for ex in examples)
    for ex in examples:
        assert set(ex.gold_doc_ids) <= {c.doc_id for c in ex.candidates}
    # Claim 1: docs "10" and "2" tie exactly; string order puts "10" first. Gold "4" scores 0
    # and is inserted last, replacing the lowest-ranked non-gold.
    ids = [c.doc_id for c in examples[0].candidates]
    assert ids == ["10", "2", "4"]
    assert examples[0].meta["inserted_gold"] == ["4"]
    assert stats["n_queries_with_insertion"] == 1 and stats["n_gold_inserted"] == 1
    assert stats["bm25_recall_at_k"] == pytest.approx(0.5)
    # The input examples are not mutated.
    assert queries[0].candidates == []
    again, stats2 = build_or_load_pools("tiny", queries, corpus, k=k, cache_dir=tmp_path / "c")
    assert stats2["cached"]
    assert [[c.doc_id for c in e.candidates] for e in again] == [
        [c.doc_id for c in e.candidates] for e in examples
    ]
    # A different k is a different cache entry.
    _, stats3 = build_or_load_pools("tiny", queries, corpus, k=2, cache_dir=tmp_path / "c")
    assert not stats3["cached"]


def test_bm25_empty_query_ranks_by_doc_id(tiny_scifact: tuple[Path, Path]) -> None:
    _, corpus = read_scifact(*tiny_scifact)
    ranked, scores = BM25Ranker(corpus).rank("the of and")
    assert ranked == sorted(corpus) and not scores.any()


def test_role_readers_synthetic(tmp_path: Path) -> None:
    cs = tmp_path / "train.jsonl"
    _write_jsonl(
        cs,
        [
            {
                "abstract_id": 0,
                "sentences": ["a", "b", "c"],
                "labels": ["objective", "result", "other"],
            },  # fmt: skip
            {"abstract_id": 0, "sentences": ["d"], "labels": ["method"]},
        ],
    )
    rows = read_csabstruct(cs)
    assert [r.doc_id for r in rows] == ["train:0", "train:1"]
    assert rows[0].labels == ["background", "result", None]
    assert rows[0].raw_labels == ["objective", "result", "other"]
    nicta = tmp_path / "dev_clean.txt"
    nicta.write_text(
        "###11\nbackground\tA .\nstudy design\tB .\noutcome\tC .\nother\tD .\n\n"
        "###12\npopulation\tE .\n\n",
        encoding="utf-8",
    )
    rows = read_nicta(nicta)
    assert [r.doc_id for r in rows] == ["dev_clean:11", "dev_clean:12"]
    assert rows[0].labels == ["background", "method", "result", None]
    assert rows[1].labels == ["method"] and rows[1].source == "nicta_piboso"


def test_pubmedqa_heading_map() -> None:
    assert pubmedqa_role("BACKGROUND") == "background"
    assert pubmedqa_role("materials and methods") == "method"
    assert pubmedqa_role("MEASUREMENTS AND MAIN RESULTS") == "result"
    assert pubmedqa_role("METHODS AND RESULTS") is None
    assert pubmedqa_role("UNLABELLED") is None


def test_strip_citation_markers() -> None:
    text = "Risk rises [<|other_cit|>] with age (<|cit|>) and sex [<|multi_cit|>]."
    assert strip_citation_markers(text) == "Risk rises with age and sex ."


def test_load_benchmark_rejects_bad_names(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown benchmark"):
        load_benchmark("nope", data_root=tmp_path)
    with pytest.raises(ValueError, match="not available"):
        load_benchmark("citint", data_root=tmp_path, split="test")
    with pytest.raises(ValueError, match="not available"):
        load_benchmark("hotpotqa", data_root=tmp_path, split="dev")
    with pytest.raises(FileNotFoundError, match="LOGRERANK_DATA"):
        load_benchmark("scifact", data_root=tmp_path / "missing")


def test_default_data_root_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("LOGRERANK_DATA", str(tmp_path))
    assert default_data_root() == tmp_path
    monkeypatch.delenv("LOGRERANK_DATA")
    assert default_data_root().parts[-2:] == ("shared", "data")


def test_benchmark_table_covers_design() -> None:
    assert set(BENCHMARKS) == {
        "scifact", "citint", "pubmedqa", "hotpotqa", "musique", "evinf", "scisumm", "scholarqa"
    }  # fmt: skip
    assert BENCHMARKS["scholarqa"] == ("test", ("test",))  # evaluation only: no train split
