"""The ``evinf`` and ``scisumm`` benchmarks on the public data (marker ``data``; skipped when
``LOGRERANK_DATA`` / ``../shared/data`` lacks them): counts, the flagged prompts, and every gold
passage inside its multi-paper pool. Synthetic-file tests: ``tests/unit/test_paper_benchmarks.py``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logrerank.data import default_data_root, load_benchmark, read_evidence_inference
from logrerank.data.evidence_inference import FLAGGED_PROMPT_IDS
from logrerank.data.paper_pools import paper_of
from logrerank.data.schema import Example


@pytest.fixture(scope="module")
def data_root() -> Path:
    root = default_data_root()
    for folder in ("evidence_inference/txt_files", "cl_scisumm/From-Training-Set-2018"):
        if not (root / folder).is_dir():
            pytest.skip(f"{folder} not found under {root} (set LOGRERANK_DATA)")
    return root


def _assert_pools(examples: list[Example], k: int = 50) -> None:
    for ex in examples:
        ids = [c.doc_id for c in ex.candidates]
        assert len(ids) == len(set(ids)) == k, ex.qid
        assert set(ex.gold_doc_ids) <= set(ids), ex.qid
        assert len({paper_of(d) for d in ids}) >= 2, ex.qid
        assert {paper_of(d) for d in ex.gold_doc_ids} == {ex.meta["paper_id"]}, ex.qid
        by_id = {c.doc_id: c for c in ex.candidates}
        for doc_id, idx in ex.gold_sentences.items():
            assert idx and all(0 <= j < len(by_id[doc_id].sentences) for j in idx), ex.qid


@pytest.mark.data
def test_flagged_list_is_the_upstream_readme(data_root: Path) -> None:
    text = (data_root / "evidence_inference" / "UPSTREAM_README.md").read_text(encoding="utf-8")
    caveat = text[text.index("### Incorrect") :]
    assert set(re.findall(r"\d+", caveat)) == FLAGGED_PROMPT_IDS


@pytest.mark.data
def test_evinf_counts_and_pools(data_root: Path, tmp_path: Path) -> None:
    stats: dict = {}
    queries, corpus = read_evidence_inference(
        data_root / "evidence_inference", "validation", stats=stats
    )
    assert stats["n_articles"] == 91 and stats["n_articles_missing"] == 1
    assert stats["n_annotations"] == 462 and stats["n_annotations_unaligned"] == 0
    assert len(queries) == 230 and len(corpus) == stats["n_passages"]
    assert not {q.qid for q in queries} & FLAGGED_PROMPT_IDS
    examples, pstats = load_benchmark("evinf", data_root=data_root, cache_dir=tmp_path)
    assert pstats["split"] == "test" and pstats["n_examples"] == 254
    assert not {q.qid for q in examples} & FLAGGED_PROMPT_IDS
    _assert_pools(examples)
    validation, vstats = load_benchmark(
        "evinf", data_root=data_root, split="validation", cache_dir=tmp_path
    )
    assert vstats["n_examples"] == 230 and vstats["papers_per_pool_min"] >= 2
    _assert_pools(validation)
    train, tstats = load_benchmark(
        "evinf", data_root=data_root, split="train", limit=40, cache_dir=tmp_path
    )
    assert tstats["n_examples"] == 40 and tstats["n_articles"] == 741
    _assert_pools(train)


@pytest.mark.data
def test_scisumm_counts_and_pools(data_root: Path, tmp_path: Path) -> None:
    examples, stats = load_benchmark("scisumm", data_root=data_root, cache_dir=tmp_path)
    assert stats["split"] == "test" and stats["n_papers"] == 40
    assert stats["n_records"] == 753 and stats["n_examples"] == 745
    assert stats["n_xml_regex_fallback"] == 0 and stats["n_files_not_utf8"] == 9
    facets = {ex.meta["facet"] for ex in examples}
    assert facets == {"Aim", "Hypothesis", "Implication", "Method", "Results"}
    assert len({(ex.query, ex.meta["paper_id"]) for ex in examples}) == len(examples)
    _assert_pools(examples)
    train, tstats = load_benchmark(
        "scisumm", data_root=data_root, split="train", limit=40, cache_dir=tmp_path
    )
    assert tstats["n_papers"] == 977 and tstats["n_examples"] == 40
    assert not {ex.meta["paper_id"] for ex in train} & {ex.meta["paper_id"] for ex in examples}
    _assert_pools(train)


@pytest.mark.data
def test_scholarqa_counts_and_pools(tmp_path: Path) -> None:
    """ScholarQA-Multi: 108 expert questions, pools of 50 over the cited passages holding every
    gold passage, titled by paper titles."""
    root = default_data_root()
    if not (root / "scholarqabench" / "scholarqa_multi" / "human_answers.json").is_file():
        pytest.skip(f"scholarqabench/scholarqa_multi not found under {root}")
    examples, stats = load_benchmark("scholarqa", data_root=root, cache_dir=tmp_path)
    assert stats["split"] == "test" and stats["n_examples"] == 108
    assert stats["n_questions_skipped"] == 0 and stats["n_ctx_skipped"] == 2
    assert stats["corpus_size"] == stats["n_passages"] == 566
    subjects = {ex.meta["subject"] for ex in examples}
    assert {"bio", "cs_nlp", "photonics"} <= subjects
    for ex in examples:
        ids = [c.doc_id for c in ex.candidates]
        assert len(ids) == len(set(ids)) == 50, ex.qid
        assert set(ex.gold_doc_ids) <= set(ids) and 2 <= len(ex.gold_doc_ids) <= 10, ex.qid
        assert not ex.gold_sentences
    titled = [c for ex in examples for c in ex.candidates]
    assert sum(bool(c.title) for c in titled) / len(titled) > 0.95
