"""logrerank.data on the public datasets (``LOGRERANK_DATA`` or ``../shared/data``): counts, pools,
gold labels and role readers (marker ``data``; skipped when the data root is absent). The
synthetic-file tests are in ``tests/unit/test_data_readers.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank.data import (
    ROLES,
    Doc,
    Example,
    build_or_load_pools,
    build_pools,
    default_data_root,
    load_benchmark,
    read_csabstruct,
    read_hotpotqa,
    read_nicta,
    read_pubmedqa,
    read_scifact,
)
from logrerank.data.first_pass import BM25Ranker


@pytest.fixture(scope="module")
def data_root() -> Path:
    root = default_data_root()
    if not (root / "scifact" / "corpus.jsonl").is_file():
        pytest.skip(f"public data not found at {root} (set LOGRERANK_DATA)")
    return root


@pytest.fixture(scope="module")
def pubmedqa_test(data_root: Path) -> tuple[list[Example], dict[str, Doc]]:
    return read_pubmedqa(data_root / "pubmedqa" / "ori_pqal.json", split="test")


def _assert_valid_pools(examples: list[Example], k: int = 50) -> None:
    for ex in examples:
        ids = [c.doc_id for c in ex.candidates]
        assert len(ids) == k, ex.qid
        assert len(set(ids)) == k, ex.qid
        assert set(ex.gold_doc_ids) <= set(ids), ex.qid


@pytest.mark.data
def test_scifact_counts(data_root: Path) -> None:
    stats: dict = {}
    queries, corpus = read_scifact(
        data_root / "scifact" / "claims_dev.jsonl",
        data_root / "scifact" / "corpus.jsonl",
        stats=stats,
    )
    assert len(corpus) == 5183
    assert sum(len(d.sentences) for d in corpus.values()) == 45952
    assert len(queries) == 188 and stats["n_skipped_nei"] == 112
    assert sum(len(q.gold_doc_ids) for q in queries) == 209
    assert sum(len(s) for q in queries for s in q.gold_sentences.values()) == 366
    for q in queries:
        for doc_id, idx in q.gold_sentences.items():
            assert all(0 <= i < len(corpus[doc_id].sentences) for i in idx)
    train, _ = read_scifact(
        data_root / "scifact" / "claims_train.jsonl", data_root / "scifact" / "corpus.jsonl"
    )
    assert len(train) == 505


@pytest.mark.data
def test_scifact_pools_exact_gold_deterministic(data_root: Path, tmp_path: Path) -> None:
    examples, stats = load_benchmark("scifact", data_root=data_root, limit=25, cache_dir=tmp_path)
    assert stats["n_examples"] == 25 and stats["pool_size_min"] == stats["pool_size_max"] == 50
    _assert_valid_pools(examples)
    queries, corpus = read_scifact(
        data_root / "scifact" / "claims_dev.jsonl", data_root / "scifact" / "corpus.jsonl"
    )
    pools_a, _ = build_pools(queries[:25], corpus)
    pools_b, _ = build_pools(queries[:25], corpus)
    assert pools_a == pools_b
    assert [[c.doc_id for c in e.candidates] for e in examples] == [
        pools_a[q.qid]["doc_ids"] for q in queries[:25]
    ]
    # Candidates come in BM25 order (non-increasing score, ties by doc_id string).
    ranker = BM25Ranker(corpus)
    position = {d: i for i, d in enumerate(ranker.doc_ids)}
    for ex in examples[:5]:
        scores = ranker.scores(ex.query)
        keys = [(-scores[position[c.doc_id]], c.doc_id) for c in ex.candidates]
        assert keys == sorted(keys)
    cached, stats2 = load_benchmark("scifact", data_root=data_root, limit=25, cache_dir=tmp_path)
    assert stats2["cached"]
    assert [[c.doc_id for c in e.candidates] for e in cached] == [
        [c.doc_id for c in e.candidates] for e in examples
    ]


@pytest.mark.data
def test_citint_passage_level(data_root: Path, tmp_path: Path) -> None:
    examples, stats = load_benchmark("citint", data_root=data_root, limit=30, cache_dir=tmp_path)
    assert stats["n_claims"] == 316 and stats["n_skipped_nei"] == 24
    assert stats["corpus_size"] == 3063
    _assert_valid_pools(examples)
    for ex in examples:
        assert len(ex.gold_doc_ids) == 1 and ex.gold_sentences == {}
        assert "<|" not in ex.query
        # The degenerate labels: always sentence 0 (kept only in meta).
        assert ex.meta["rationales"][ex.gold_doc_ids[0]] == [[0]]


@pytest.mark.data
def test_pubmedqa_test_split(
    data_root: Path, pubmedqa_test: tuple[list[Example], dict[str, Doc]], tmp_path: Path
) -> None:
    queries, corpus = pubmedqa_test
    assert len(queries) == 500 and len(corpus) == 1000
    truth = json.loads((data_root / "pubmedqa" / "test_ground_truth.json").read_text())
    assert {q.qid for q in queries} == set(truth)
    for q in queries:
        assert q.gold_doc_ids == [q.qid] and q.meta["final_decision"] == truth[q.qid]
        doc = corpus[q.qid]
        assert doc.title == "" and doc.sentences
        assert len(q.roles[q.qid]) == len(doc.sentences)
        assert set(q.roles[q.qid]) <= {*ROLES, None}
    mapped = sum(r is not None for q in queries for r in q.roles[q.qid])
    assert mapped / sum(len(q.roles[q.qid]) for q in queries) > 0.95
    examples, _ = build_or_load_pools("pubmedqa", queries[:20], corpus, cache_dir=tmp_path)
    _assert_valid_pools(examples)
    train, _ = read_pubmedqa(data_root / "pubmedqa" / "ori_pqal.json", split="train")
    assert len(train) == 500 and not {q.qid for q in train} & set(truth)


@pytest.mark.data
def test_hotpotqa_gold_sentences_resolve(data_root: Path) -> None:
    examples = read_hotpotqa(data_root / "hotpotqa" / "hotpotqa_train.json")
    assert len(examples) == 100
    assert sorted(len(e.candidates) for e in examples)[:2] == [4, 10]
    for ex in examples:
        assert ex.meta["fixed_pool"] is True
        assert len(ex.gold_doc_ids) == 2
        by_id = {c.doc_id: c for c in ex.candidates}
        n_facts = 0
        for doc_id, idx in ex.gold_sentences.items():
            for i in idx:
                assert by_id[doc_id].sentences[i].strip()
                n_facts += 1
        assert 2 <= n_facts <= 5
        assert n_facts == len({tuple(f) for f in ex.meta["supporting_facts"]})


@pytest.mark.data
def test_musique_fixed_pools(data_root: Path) -> None:
    examples, stats = load_benchmark("musique", data_root=data_root)
    assert stats["n_examples"] == 100 and stats["fixed_pool"]
    for ex in examples:
        ids = [c.doc_id for c in ex.candidates]
        assert len(ids) == 20 == len(set(ids))
        assert 2 <= len(ex.gold_doc_ids) <= 4
        assert set(ex.meta["hops"]) == set(ex.gold_doc_ids)
        assert all(c.sentences for c in ex.candidates)


@pytest.mark.data
def test_role_readers_label_sets(data_root: Path) -> None:
    expected = {"train": 1668, "dev": 295, "test": 226}
    for split, n in expected.items():
        rows = read_csabstruct(data_root / "csabstruct" / f"{split}.jsonl")
        assert len(rows) == n
        assert {r for x in rows for r in x.raw_labels} == {
            "background",
            "objective",
            "method",
            "result",
            "other",
        }
        assert {r for x in rows for r in x.labels} == {*ROLES, None}
    expected = {"train": (720, 6979), "dev": (80, 801), "test": (200, 1991)}
    for split, (n_abs, n_sent) in expected.items():
        rows = read_nicta(data_root / "nicta_piboso" / f"{split}_clean.txt")
        assert len(rows) == n_abs and sum(len(x.sentences) for x in rows) == n_sent
        assert {r for x in rows for r in x.raw_labels} == {
            "background",
            "population",
            "intervention",
            "study design",
            "outcome",
            "other",
        }
        assert {r for x in rows for r in x.labels} == {*ROLES, None}
        assert all(len(x.labels) == len(x.sentences) for x in rows)
