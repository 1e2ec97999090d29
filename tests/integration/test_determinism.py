"""Same input, same settings, two processes: identical rankings and scores (to 1e-6).

Each check runs two fresh subprocesses with different ``PYTHONHASHSEED`` values (the order in
which sets and dicts of strings iterate) and the machine's default torch thread count. Causes
this guards against: a timing probe that chose bf16 or fp32 for ``precision: "auto"`` per
process (:func:`logrerank.local.backbone.cpu_bf16_is_faster` now reads the hardware only), and the
shared-term link weights summed in a hash-seed dependent order (:mod:`logrerank.graph.links`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "logrerank" / "app" / "examples" / "vitamin_d_fractures.json"

LINKS_SCRIPT = """
import json
from logrerank.graph.links import shared_term_edges
from logrerank.text.match import normalize_tokens
words = (
    "cholecalciferol parathyroid osteomalacia ergocalciferol hypercalcaemia bisphosphonate "
    "teriparatide denosumab calcitriol osteoclast sarcopenia romosozumab alendronate "
    "zoledronate vertebroplasty kyphoplasty fibroblast chondrocyte collagen periosteum "
    "trabecular cortical densitometry fracture femoral vertebral radius tibia fibula pelvis"
).split()
texts = []
for p in range(12):  # passages 2j and 2j + 1 share five rare words, no other passage has them
    j = p // 2
    texts.append(" ".join(words[5 * j : 5 * j + 5]) + f" measured in cohort{p} patients")
toks = [normalize_tokens(t) for t in texts]
edges, weights = shared_term_edges(toks, list(range(12)), top_k=3, bg_idf=0.0)
print(json.dumps([edges.tolist(), weights.tolist()]))
"""


def _env(hash_seed: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONHASHSEED"] = str(hash_seed)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    return env


def test_shared_term_links_do_not_depend_on_the_hash_seed() -> None:
    """Rare-term weights are sums over a vocabulary; its order must not follow the hash seed."""
    outs = [
        subprocess.run(
            [sys.executable, "-c", LINKS_SCRIPT],
            env=_env(seed),
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for seed in (1, 2, 3, 4, 5)
    ]
    edges, weights = json.loads(outs[0])
    assert edges[0], "the texts share rare terms across passages"
    assert all(out == outs[0] for out in outs[1:])


@pytest.mark.slow
def test_rerank_is_identical_in_two_processes(tmp_path: Path) -> None:
    """``logrerank rerank`` twice on an app example: the same order and scores to 1e-6."""
    results = []
    for seed in (1, 2):
        out = tmp_path / f"ranking{seed}.json"
        cmd = [sys.executable, "-m", "logrerank.cli", "rerank", "-p", str(EXAMPLE), "-o", str(out)]
        proc = subprocess.run(
            cmd, env=_env(seed), capture_output=True, text=True, timeout=600, cwd=tmp_path
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        results.append(json.loads(out.read_text(encoding="utf-8")))
    a, b = results
    assert a["info"]["precision"] == b["info"]["precision"]
    order = [[(s["passage_idx"], s["sent_idx"]) for s in r["sentences"]] for r in results]
    assert order[0] == order[1]
    assert [p["passage_idx"] for p in a["passages_ranked"]] == [
        p["passage_idx"] for p in b["passages_ranked"]
    ]
    for x, y in zip(a["sentences"], b["sentences"]):
        for key in ("score", "local_score", "global_score"):
            if x[key] is None:
                assert y[key] is None
            else:
                assert abs(x[key] - y[key]) <= 1e-6, (key, x, y)
