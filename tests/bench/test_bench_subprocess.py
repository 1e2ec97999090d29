"""The benchmark tooling beyond one process: ``bench/scaling.py`` running its sweep in fresh
subprocesses on the tiny model (``tiny_ckpt`` of conftest.py), and the real SciFact pools of the
speed benchmark (``data``; skipped without ../shared/data). The in-process tests are in
``tests/bench/test_bench.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
import scaling  # bench/ on sys.path: tests/bench/conftest.py
from speed_inputs import scifact_pools

from logrerank.data.common import default_data_root


def test_scaling_run_fresh_subprocesses(tiny_ckpt, tiny_dir, tmp_path):
    args = scaling.build_parser().parse_args(
        [
            "--passages", "2,3", "--sentences", "2", "--length-passages", "2",
            "--repeats", "1", "--warmup", "0", "--rankers", "log",
            "--source", "synthetic", "--checkpoint", str(tiny_ckpt),
            "--precision", "fp32", "--device", "cpu", "--out", str(tmp_path),
            "--figure", str(tmp_path / "fig.html"),
        ]
    )  # fmt: skip
    res = scaling.run(args)
    assert [(r["sweep"], r["passages"], r["sentences"]) for r in res["results"]] == [
        ("passages", 2, None),
        ("passages", 3, None),
        ("length", 2, 2),
    ]
    assert "passages.log.seconds" in res["fits"]
    assert (tmp_path / "results.json").is_file()
    assert "| passages | 3 |" in (tmp_path / "results.md").read_text()
    assert res["figure"] and Path(res["figure"]).is_file()


needs_data = pytest.mark.skipif(
    not default_data_root().is_dir(), reason="public data not found (set LOGRERANK_DATA)"
)


@pytest.mark.data
@needs_data
def test_scifact_pools_have_50_candidates():
    pools = scifact_pools(2)
    assert len(pools) == 2
    assert all(len(p) == 50 and q for q, p in pools)
