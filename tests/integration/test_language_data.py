"""The non-English notice stays silent on the real English queries and passages of the public
data (``data``; skipped without ../shared/data). The toy cases are in ``tests/unit/test_limits.py``."""

from __future__ import annotations

import random

import pytest

from logrerank.data import (
    default_data_root,
    read_citation_integrity,
    read_cl_scisumm,
    read_evidence_inference,
    read_scifact,
    read_scifact_corpus,
)
from logrerank.data.common import read_json
from logrerank.inputs.language import (
    MIN_LETTERS_PASSAGE,
    MIN_LETTERS_QUESTION,
    non_english_language,
)

ROOT = default_data_root()
SF, CI = ROOT / "scifact", ROOT / "citation_integrity"
needs_data = pytest.mark.skipif(not ROOT.is_dir(), reason="public data not found")


def _flagged(texts: list[str], min_letters: int) -> list[str]:
    return [t for t in texts if non_english_language(t, min_letters)]


@pytest.mark.data
@needs_data
def test_english_queries_of_every_training_source_are_not_flagged() -> None:
    queries = {
        "scifact": [
            e.query for e in read_scifact(SF / "claims_train.jsonl", SF / "corpus.jsonl")[0]
        ],
        "citint": [
            e.query
            for e in read_citation_integrity(CI / "claims_train.jsonl", CI / "corpus.jsonl")[0]
        ],
        "pubmedqa": [
            r["QUESTION"] for r in read_json(ROOT / "pubmedqa" / "ori_pqal.json").values()
        ],
        "evinf": [
            e.query for e in read_evidence_inference(ROOT / "evidence_inference", "validation")[0]
        ],
        "scisumm": [
            e.query for e in read_cl_scisumm(ROOT / "cl_scisumm", "train", limit_papers=40)[0]
        ],
    }
    for name, texts in queries.items():
        assert len(texts) > 100, name
        assert _flagged(texts, MIN_LETTERS_QUESTION) == [], name


@pytest.mark.data
@needs_data
def test_english_abstracts_and_their_sentences_are_not_flagged() -> None:
    corpus = list(read_scifact_corpus(SF / "corpus.jsonl").values())
    docs = random.Random(0).sample(corpus, 300)
    texts = [f"{d.title}\n{' '.join(d.sentences)}" for d in docs]
    assert _flagged(texts, MIN_LETTERS_PASSAGE) == []
    sentences = [s for d in docs[:100] for s in d.sentences]
    assert _flagged(sentences, MIN_LETTERS_PASSAGE) == []
