"""Batch reranking on Ray Data: the same rankings as the local engine and ``LoGReranker.rerank``.

Runs a local single-node Ray cluster (2 CPUs; Ray 2.60 no longer has ``local_mode``) with two
actors, each loading the tiny LoG fixture saved as a checkpoint folder. Skipped without Ray
(``pip install 'ray[data]'``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")

from logrerank.batch import rerank_batch  # noqa: E402
from logrerank.batch.io import Question, ranking_record, read_jsonl_questions  # noqa: E402
from tests.helpers import make_questions as _make_questions  # noqa: E402

WORDS = ["cell", "protein", "gene", "rain", "cloud", "river", "cat", "dog", "heart", "lung"]


def make_questions(n: int) -> list[dict]:
    return _make_questions(n, words=WORDS)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def close(a, b, tol: float = 1e-5) -> bool:
    """Equal structures, floats equal up to ``tol`` (thread counts may move the last digits)."""
    if isinstance(a, float) or isinstance(b, float):
        return (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and math.isclose(a, b, rel_tol=tol, abs_tol=tol)
        )
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(close, a, b))
    return a == b


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=150 * 2**20)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def tiny_checkpoint(make_tiny_model, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tiny-ckpt-ray")
    make_tiny_model().save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def batch_input(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("batch-in") / "in.jsonl"
    rows = [json.dumps(r) for r in make_questions(7)]
    rows.insert(3, '{"id": "bad", "question": ')  # line 4: malformed
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_ray_equals_local_and_rerank(cluster, tiny_checkpoint, batch_input, tmp_path):
    from logrerank.pipeline import LoGReranker

    common = {"checkpoint": str(tiny_checkpoint), "device": "cpu", "progress": False}
    local = rerank_batch(tmp_path / "local.jsonl", batch_input, batch_size=2, **common)
    remote = rerank_batch(
        tmp_path / "ray.jsonl", batch_input, engine="ray", workers=2, batch_size=2, **common
    )
    assert (local.written, local.errors) == (remote.written, remote.errors) == (7, 1)
    assert remote.facts["workers"] == 2 and remote.facts["files"] == 4
    assert not (tmp_path / "ray.jsonl.ray-staging").exists()
    by_id_local = {r["id"]: r for r in read_jsonl(tmp_path / "local.jsonl")}
    by_id_ray = {r["id"]: r for r in read_jsonl(tmp_path / "ray.jsonl")}
    assert by_id_local.keys() == by_id_ray.keys() == {f"q{i}" for i in range(7)}
    model = LoGReranker.from_pretrained(tiny_checkpoint, device="cpu")
    for q in read_jsonl_questions(batch_input):
        if not isinstance(q, Question):
            continue
        direct = json.loads(json.dumps(ranking_record(q, model.rerank(q.question, q.passages))))
        for rec in (by_id_local[q.qid], by_id_ray[q.qid]):
            assert rec["passage_order"] == direct["passage_order"]
            assert [s["text"] for s in rec["top_sentences"]] == [
                s["text"] for s in direct["top_sentences"]
            ]
            assert close(rec, direct)
    err_local = read_jsonl(tmp_path / "local.jsonl.errors.jsonl")
    err_ray = read_jsonl(tmp_path / "ray.jsonl.errors.jsonl")
    assert err_local == err_ray and err_ray[0]["line"] == 4


def test_ray_resumes(cluster, tiny_checkpoint, batch_input, tmp_path):
    common = {"checkpoint": str(tiny_checkpoint), "device": "cpu", "progress": False}
    out = tmp_path / "ray.trec"
    first = rerank_batch(out, batch_input, engine="ray", workers=2, batch_size=3, **common)
    assert first.written == 7
    lines = out.read_text().splitlines(keepends=True)
    qids = list(dict.fromkeys(line.split()[0] for line in lines))
    kept = [line for line in lines if line.split()[0] in qids[:3]]
    out.write_text("".join(kept) + "q9 Q0 d")  # three queries, then a cut write
    again = rerank_batch(out, batch_input, engine="ray", workers=2, batch_size=3, **common)
    # the three complete queries are kept (a query is complete when it has one line per
    # passage of its question), only the cut one and the rest are ranked
    assert (again.skipped, again.written) == (3, 4)
    assert sorted(out.read_text().splitlines()) == sorted(line.rstrip("\n") for line in lines)
