"""The ScholarQA-Multi reader on a hand-made file: cited passages become one shared corpus
(duplicates merged, gold for every question citing them), unusable passages and questions are
skipped and counted, and bad files fail with a message."""

from __future__ import annotations

import json

import pytest

from logrerank.data.pools import load_benchmark
from logrerank.data.scholarqa import read_scholarqa

SHARED = {"title": "Statins and dementia", "text": "Statins lowered risk. The effect was small."}
RECORDS = [
    {
        "id": "bio_1",
        "input": "Do statins prevent dementia?",
        "subject": "bio",
        "annotator": "a",
        "ctxs": [SHARED, {"title": None, "text": "Cholesterol is made in the brain."}, SHARED],
    },
    {
        "id": "bio_2",
        "input": "What lowers dementia risk?",
        "subject": "bio",
        "ctxs": [{"title": "Statins and dementia", "text": " Statins lowered  risk. The effect was small."},
                 {"title": "Exercise", "text": float("nan")}, {"title": "Blank", "text": "  "}],
    },
    {"id": "cs_1", "input": "How do transformers scale?", "ctxs": [{"title": "X", "text": None}]},
]  # fmt: skip


def _write(tmp_path, records=RECORDS):
    folder = tmp_path / "scholarqabench" / "scholarqa_multi"
    folder.mkdir(parents=True)
    path = folder / "human_answers.json"
    path.write_text(json.dumps(records), encoding="utf-8")  # NaN is written as NaN, as upstream
    return path


def test_cited_passages_form_one_corpus(tmp_path):
    stats: dict = {}
    examples, corpus = read_scholarqa(_write(tmp_path), stats=stats)
    assert [ex.qid for ex in examples] == ["bio_1", "bio_2"]
    assert stats == {
        "n_questions": 2,
        "n_questions_skipped": 1,  # cs_1 has no usable passage
        "n_ctx_skipped": 3,  # NaN, blank, None
        "n_passages": 2,
    }
    # the same title and text (whitespace aside) is one document, cited once per question
    assert examples[0].gold_doc_ids == ["sqa0", "sqa1"]
    assert examples[1].gold_doc_ids == ["sqa0"]
    assert corpus["sqa0"].title == "Statins and dementia"
    assert corpus["sqa0"].sentences == ["Statins lowered risk.", "The effect was small."]
    assert corpus["sqa1"].title == ""  # a missing title
    assert examples[0].meta == {"dataset": "scholarqa", "subject": "bio", "annotator": "a"}
    assert not examples[0].gold_sentences


def test_bad_files_fail_with_a_message(tmp_path):
    with pytest.raises(ValueError, match="list of question records"):
        read_scholarqa(_write(tmp_path, {"id": "x"}))
    dup = tmp_path / "dup"
    with pytest.raises(ValueError, match="duplicate question id bio_1"):
        read_scholarqa(_write(dup, [RECORDS[0], RECORDS[0]]))


def test_load_benchmark_pools_the_cited_passages(tmp_path):
    _write(tmp_path)
    examples, stats = load_benchmark(
        "scholarqa-multi", data_root=tmp_path, cache_dir=tmp_path / "cache"
    )
    assert stats["benchmark"] == "scholarqa" and stats["split"] == "test"
    assert stats["n_examples"] == 2 and stats["corpus_size"] == 2
    for ex in examples:
        assert set(ex.gold_doc_ids) <= {c.doc_id for c in ex.candidates}
    with pytest.raises(ValueError, match="not available"):
        load_benchmark("scholarqa", data_root=tmp_path, split="train")
