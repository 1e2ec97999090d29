"""Plain helpers shared by the unit and integration tests (fixtures live in conftest.py).

* :func:`check_ranking`: the invariants every LoG ranking must satisfy.
* :func:`scores` / :func:`texts`: a ranking's ``(node, score)`` list, the passages' bodies.
* :func:`make_questions`: small generated batch-reranking questions (JSONL rows).
* :func:`load_bench_script`: a ``bench/`` script loaded as a module (``bench/`` is not a package).
* :class:`FakeEmbedder`: a recording embedder with hand-checkable rows (dense-prior tests).
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import torch

from logrerank.config import ROLE_NAMES
from logrerank.text.segment import split_sentences
from logrerank.types import Passage, Ranking

REPO_ROOT = Path(__file__).resolve().parents[1]


def texts(passages) -> list[str]:
    out = []
    for p in passages:
        if isinstance(p, Passage):
            out.append(p.text)
        elif isinstance(p, dict):
            out.append(p["text"])
        else:
            out.append(p)
    return out


def scores(r: Ranking) -> list[tuple[int, float]]:
    return [(s.node, s.score) for s in r.sentences]


def check_ranking(r: Ranking, passages) -> None:
    """The invariants every LoG ranking must satisfy."""
    body = texts(passages)
    expected = [(p, j) for p, t in enumerate(body) for j, _ in enumerate(split_sentences(t))]
    n = len(expected)
    # Every sentence of every passage exactly once; node ids 0..N-1 in document order.
    assert sorted((s.passage_idx, s.sent_idx) for s in r.sentences) == expected
    assert sorted(s.node for s in r.sentences) == list(range(n))
    by_node = r.sentence_by_node()
    assert [(by_node[i].passage_idx, by_node[i].sent_idx) for i in range(n)] == expected
    # Ranks 1..N in order, scores in [0, 1] and non-increasing.
    assert [s.rank for s in r.sentences] == list(range(1, n + 1))
    sc = [s.score for s in r.by_score()]  # the shown order may be selected (selection.py)
    assert all(0.0 <= x <= 1.0 and math.isfinite(x) for x in sc)
    assert sc == sorted(sc, reverse=True)
    for s in r.sentences:
        assert s.text == body[s.passage_idx][s.start : s.end]
        assert s.text == s.text.strip() and s.text
        assert s.role in ROLE_NAMES
        assert s.role_probs is not None and abs(sum(s.role_probs) - 1) < 1e-5
        assert s.role == ROLE_NAMES[max(range(3), key=lambda k: s.role_probs[k])]
        assert s.local_score is not None and 0.0 <= s.local_score <= 1.0
    # Passage order from each passage's best sentence; passages without sentences last.
    assert sorted(r.passage_order()) == list(range(len(body)))
    assert [p.rank for p in r.passages_ranked] == list(range(1, len(body) + 1))
    first_seen = list(dict.fromkeys(s.passage_idx for s in r.sentences))
    empty = [i for i in range(len(body)) if i not in first_seen]
    assert r.passage_order() == first_seen + empty
    for p in r.passages_ranked:
        mine = [s for s in r.sentences if s.passage_idx == p.passage_idx]
        if mine:
            assert p.best_node == mine[0].node
            assert p.score == max(s.score for s in mine)
        else:
            assert p.best_node is None
    # Edges refer to real nodes; JSON export works.
    for e in r.edges:
        assert 0 <= e.source < n and 0 <= e.target < n and e.source != e.target
    json.dumps(r.to_dict())
    assert r.intent_probs is not None and abs(sum(r.intent_probs) - 1) < 1e-5


def load_bench_script(name: str):
    """A bench/ script as a module (bench/ is not a package; its scripts import their
    siblings by name, so the folder goes on ``sys.path`` as when a script runs)."""
    if str(REPO_ROOT / "bench") not in sys.path:
        sys.path.insert(0, str(REPO_ROOT / "bench"))
    spec = importlib.util.spec_from_file_location(
        f"bench_{name}", REPO_ROOT / "bench" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BATCH_WORDS = [
    "cell",
    "protein",
    "gene",
    "rain",
    "cloud",
    "river",
    "cat",
    "dog",
    "heart",
    "lung",
    "blood",
    "sugar",
    "insulin",
    "virus",
]


def make_questions(n: int, with_ids: bool = True, words: list[str] | None = None) -> list[dict]:
    """``n`` small generated questions; odd ones have plain-string passages (no ids)."""
    WORDS = words or BATCH_WORDS  # noqa: N806
    out = []
    for i in range(n):
        passages = []
        for j in range(3 + i % 3):
            a, b, c = (WORDS[(i + j + k) % len(WORDS)] for k in (0, 3, 7))
            text = f"The {a} binds the {b}. A {c} study found more {a} in {b} tissue."
            passages.append({"id": f"d{i}-{j}", "title": f"{a} {c}", "text": text})
        if i % 2:
            passages = [p["text"] for p in passages]
        q = {"question": f"does the {WORDS[i % len(WORDS)]} bind {WORDS[(i + 3) % len(WORDS)]}?"}
        if with_ids:
            q["id"] = f"q{i}"
        out.append({**q, "passages": passages})
    return out


class FakeEmbedder:
    """An embedder of hand-checkable unit rows ``normalize([len(text), 1])`` that records every
    text it was asked to embed (``seen``), for the dense-prior tests."""

    def __init__(self):
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen += texts
        rows = [[float(len(t)), 1.0] for t in texts]
        return torch.nn.functional.normalize(torch.tensor(rows), dim=-1)
