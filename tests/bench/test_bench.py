"""Smoke tests of the benchmark tooling: the speed benchmark (``bench/speed.py`` and its
repo-only shortcut ``logrerank bench``) and ``bench/scaling.py`` on the tiny model.

Everything runs on the tiny random BERT of conftest.py (``tiny_ckpt`` is the tiny LoG model
saved) with a handful of short synthetic passages. The scaling run in fresh subprocesses and the
real-data pools are in ``tests/bench/test_bench_subprocess.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import scaling  # bench/ scripts and their siblings (tests/bench/conftest.py puts bench/ on sys.path)
import scaling_report
import speed
from peak_memory import Memory
from speed_inputs import synthetic_pools
from speed_report import LOG_STAGES, TARGETS, analyse, check_targets, summary
from speed_runs import clear_memos, run_log, timed_method

from logrerank.cli import build_parser, main
from logrerank.cli.bench import bench_dir

ROOT = Path(__file__).resolve().parents[2]
QUERY = "Do statins reduce the risk of dementia?"
PASSAGES = [
    {"title": "Cohort", "text": "Statin users had a lower risk of dementia. The effect was small."},
    {"title": "Trial", "text": "No difference was seen in the trial. Adherence was high."},
    "Healthy-user bias may explain the association. Confounding remains possible.",
]


@pytest.fixture(scope="module")
def tiny_ce(tiny_dir):
    from logrerank.models.cross_encoder import CrossEncoder

    return CrossEncoder(str(tiny_dir), device="cpu", precision="fp32")


def _tiny_args(tiny_ckpt: Path, tiny_dir: Path, out: Path) -> list[str]:
    return [
        "--source", "synthetic", "--queries", "1", "--warmup", "1", "--passages", "3",
        "--checkpoint", str(tiny_ckpt), "--cross-encoder", str(tiny_dir),
        "--precision", "fp32", "--device", "cpu", "--out", str(out),
    ]  # fmt: skip


# --------------------------------------------------------------------------------------
# the speed benchmark (bench/speed.py)


def test_summary_percentiles():
    s = summary([4.0, 1.0, 3.0, 2.0])
    assert s["p50"] == pytest.approx(2.5) and s["mean"] == pytest.approx(2.5)
    assert s["p95"] == pytest.approx(3.85) and s["n"] == 4
    assert summary([])["n"] == 0


def test_synthetic_pools_are_distinct():
    pools = synthetic_pools(3, passages=5, sentences=2)
    assert len(pools) == 3 and len({q for q, _ in pools}) == 3
    for _, ps in pools:
        assert len(ps) == 5 and len({p["title"] for p in ps}) == 5


def test_memory_phases_record_peaks():
    mem = Memory()
    with mem.phase("alloc"):
        buf = bytearray(64 * 2**20)
        buf[::4096] = b"x" * len(buf[::4096])  # touch every page
        del buf
    rep = mem.report()
    row = rep["phases"]["alloc"]
    assert row["runs"] == 1 and row["peak_mb"] >= row["rss_after_mb"] - 1
    if rep["peak_reset_per_phase"]:
        assert row["peak_over_start_mb"] >= 50
    assert rep["process_peak_rss_mb"] >= row["peak_mb"] - 1


def test_clear_memos_makes_repeats_pay(tiny_ce):
    class Memo:
        _memo = {"x": 1.0}
        cache_key, cache_value = "k", "v"

    m = Memo()
    clear_memos(m)
    assert m._memo == {} and m.cache_key is None and m.cache_value is None


def test_timed_method_adds_the_call_time_and_restores_the_method():
    class Prior:
        def logits(self, pairs):
            return [float(len(p)) for p in pairs]

    p, clock = Prior(), [0.0]
    with timed_method(p, "logits", clock):
        assert p.logits([("a", "bb")]) == [2.0]
        first = clock[0]
        p.logits([("a", "bb")])
    assert 0 < first < clock[0]  # two calls, each added
    assert "logits" not in vars(p) and p.logits([("a",)]) == [1.0]  # the class method again
    with timed_method(None, "logits", clock):  # a model without a prior: nothing timed
        pass


def test_report_splits_the_prior_pass_from_the_cross_encoder():
    log = [
        dict(
            e2e=2.0,
            knob=0.01,
            graph_stages=0.1,
            passages=5,
            sentences=9,
            edges=3,
            tokens=10,
            padded_tokens=12,
            windows=1,
            **{k: 0.1 for k in LOG_STAGES},
        )
    ]
    ce = [{"e2e": 2.0, "model": 2.0, "prior": 1.0, "tokens": 8, "padded_tokens": 8}]
    rows = {"log": log, "ce": ce, "ce_full": ce, "bm25": [{"e2e": 0.01}]}
    r = analyse(rows)["ratios"]
    assert r["log_over_ce_p50"] == pytest.approx(1.0)
    assert r["log_over_ce_pairs_p50"] == pytest.approx(2.0)  # 2 s against the 1 s cross pass
    assert r["log_over_ce_full_pairs_p50"] == pytest.approx(2.0)


def test_measure_on_tiny_models(tiny_model, tiny_ce):
    pools = synthetic_pools(3, passages=4, sentences=2)
    out = speed.measure(pools, tiny_model, tiny_ce, warmup=1)
    rows = out["rows"]
    assert {k: len(v) for k, v in rows.items()} == {"log": 2, "ce": 2, "ce_full": 2, "bm25": 2}
    for r in rows["log"]:
        assert r["e2e"] >= sum(r[k] for k in LOG_STAGES if k != "overhead")
        assert r["knob"] > 0 and r["passages"] == 4 and r["tokens"] <= r["padded_tokens"]
    assert all(r["pairs"] == 4 and r["model"] > 0 for r in rows["ce"])
    assert all(r["prior"] == 0.0 for r in rows["ce"])  # a plain cross-encoder has no prior pass
    # the synthetic passages fit one window: the full-text row reads as many pairs, and never
    # fewer tokens than the truncated one
    for r, f in zip(rows["ce"], rows["ce_full"]):
        assert f["pairs"] >= 4 and f["tokens"] >= r["tokens"]
    a = analyse(rows)
    assert 0 < a["graph_share"] < 1
    assert sum(a["stage_share_of_log"].values()) == pytest.approx(1.0, rel=1e-6)
    assert a["ratios"]["log_over_ce_p50"] > 0 and a["ratios"]["log_over_ce_full_p50"] > 0
    mem = out["memory"].report()
    assert {"log", "ce", "ce_full", "bm25", "warmup"} <= set(mem["phases"])
    targets = check_targets(a, mem["process_peak_rss_mb"])
    assert set(targets) == set(TARGETS)
    assert targets["graph_share"]["ok"] in (True, False)


def test_run_log_with_the_pool_in_the_passage_cache(tokenizer, tiny_config, make_tiny_encoder):
    """``--passage-cache pool``: the pool's passages are cached untimed, then the timed call
    hits the cache for every sentence and ranks as a cold call does."""
    from logrerank.config import LocalConfig
    from logrerank.pipeline import LoGReranker
    from logrerank.types import InputError

    cfg = tiny_config(None, local=LocalConfig(head_hidden=16, role_proj_dim=4, isolated_layers=1))
    model = LoGReranker(
        cfg, encoder=make_tiny_encoder(len(tokenizer), layers=2), tokenizer=tokenizer
    )
    with pytest.raises(InputError, match="passage cache is off"):
        model.cache_passages(PASSAGES)
    cold = run_log(model, QUERY, PASSAGES)
    model.passage_cache_mb = 16
    warm = run_log(model, QUERY, PASSAGES, prefill=True)
    cache = model.caches.passages[1]
    # computed once each: every sentence and the placeholder question (cache_passages), then
    # only the timed call's question; every window of both calls read its segments from the store
    assert cache.misses == warm["sentences"] + 2
    assert cache.hits == 2 * (warm["sentences"] + len(PASSAGES))  # one window per passage here
    assert warm["sentences"] == cold["sentences"] and warm["e2e"] > 0
    model.clear_passage_cache()
    assert not cache.store and cache.nbytes == 0


def test_speed_script_and_cli_bench(tiny_ckpt, tiny_dir, tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["bench", *_tiny_args(tiny_ckpt, tiny_dir, out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert res["meta"]["queries"] == 1 and res["meta"]["precision"] == "float32"
    assert set(res["load_s"]) == {"log", "cross_encoder"}
    assert res["analysis"]["stats"]["log"]["n"] == 1
    md = (out / "results.md").read_text()
    for needle in ("| log.local |", "| knob (rank_encoded) |", "| cross-encoder |", "| bm25 |"):
        assert needle in md
    assert "LoG / cross-encoder" in capsys.readouterr().out

    out8 = tmp_path / "int8"
    assert speed.main([*_tiny_args(tiny_ckpt, tiny_dir, out8), "--quantize", "int8"]) == 0
    res8 = json.loads((out8 / "results.json").read_text())
    assert res8["meta"]["quantize"] == "int8"
    assert res8["quantize"]["log"]["quantized_linear"] > 0
    assert res8["quantize"]["cross_encoder"]["float_linear_left"] == 0


def test_speed_int8_refuses_gpu(tiny_ckpt, tiny_dir, tmp_path, capsys):
    args = _tiny_args(tiny_ckpt, tiny_dir, tmp_path)
    args[args.index("--device") + 1] = "cuda"
    assert speed.main([*args, "--quantize", "int8"]) == 2
    assert "CPU only" in capsys.readouterr().err


def test_speed_pack_length_is_applied_and_recorded(tiny_ckpt, tiny_dir, tmp_path, capsys):
    out = tmp_path / "pack"
    assert speed.main([*_tiny_args(tiny_ckpt, tiny_dir, out), "--pack-length", "0"]) == 0
    assert json.loads((out / "results.json").read_text())["meta"]["pack_length"] == 0
    assert speed.main([*_tiny_args(tiny_ckpt, tiny_dir, out), "--pack-length", "-1"]) == 2
    assert "--pack-length must be >= 0" in capsys.readouterr().err


def test_cli_bench_passes_every_argument_to_the_script(monkeypatch, tmp_path, capsys):
    args = build_parser().parse_args(["bench", "--queries", "3", "--help"])
    assert args.bench_args == ["--queries", "3", "--help"]  # parsed by bench/speed.py alone
    assert bench_dir() == ROOT / "bench"  # the tests run from the repository root
    with pytest.raises(SystemExit) as exc:
        main(["bench", "--help"])
    assert exc.value.code == 0 and "--pack-length" in capsys.readouterr().out
    monkeypatch.chdir(tmp_path)  # outside a checkout: one line, exit 2
    assert main(["bench", "--queries", "1"]) == 2
    err = capsys.readouterr().err
    assert "bench/speed.py not found" in err and len(err.strip().splitlines()) == 1


def test_runtime_flags_of_the_benchmark():
    from logrerank.types import InputError

    assert speed.build_parser().parse_args(["--runtime", "onnx-int8"]).runtime == "onnx-int8"
    assert speed.parse_runtimes("torch,onnx,onnx-int8") == ["torch", "onnx", "onnx-int8"]
    for bad in ("onnx,onnx", "openvino", ""):
        with pytest.raises(InputError):
            speed.parse_runtimes(bad)
    with pytest.raises(InputError, match="onnx-int8"):
        speed.parse_runtimes("onnx", quantize="int8")


def test_bench_scripts_do_not_import_tests():
    for path in sorted((ROOT / "bench").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "import tests" not in text and "from tests" not in text, path.name


# --------------------------------------------------------------------------------------
# bench/scaling.py and bench/scaling_report.py


def test_linear_fit():
    f = scaling_report.linear_fit([1.0, 2.0, 3.0], [3.0, 5.0, 7.0])
    assert f["a"] == pytest.approx(1.0) and f["b"] == pytest.approx(2.0)
    assert f["r2"] == pytest.approx(1.0)
    nan = scaling_report.linear_fit([1.0], [2.0])["b"]
    assert nan != nan  # NaN


def test_scaling_worker_in_process(tiny_ckpt, tiny_dir, tmp_path):
    inputs = [list(p) for p in synthetic_pools(2, passages=3, sentences=2)]
    for ranker in ("log", "ce"):
        spec = {
            "ranker": ranker, "inputs": inputs, "warmup": 1, "checkpoint": str(tiny_ckpt),
            "cross_encoder": str(tiny_dir), "precision": "fp32", "threads": 0,
            "quantize": "none", "device": "cpu",
        }  # fmt: skip
        path = tmp_path / f"{ranker}.json"
        path.write_text(json.dumps(spec))
        r = scaling.worker(str(path))
        assert r["ranker"] == ranker and r["median"]["e2e"] > 0 and len(r["e2e_all"]) == 1
        assert (
            r["process_peak_rss_mb"] > 0 and "log" in r["load_s"] or "cross_encoder" in r["load_s"]
        )
        if ranker == "log":
            assert r["median"]["passages"] == 3 and r["median"]["local"] > 0


def test_scaling_figure_png_or_html_fallback(tmp_path):
    pytest.importorskip("plotly")
    row = {
        "ranker": "log", "sweep": "passages", "passages": 2, "sentences": None,
        "median": {"e2e": 1.0, "local": 0.8, "graph": 0.05, "global": 0.1, "context": 0.01},
        "inference_mb": 10.0,
    }  # fmt: skip
    res = {
        "meta": {"length_passages": 50, "device": "cpu", "cpus": 2, "source": "synthetic"},
        "results": [row, {**row, "passages": 4, "median": {**row["median"], "e2e": 2.0}}],
    }
    path = scaling_report.figure(res, tmp_path / "fig.png")
    assert path is not None and path.is_file() and path.suffix in (".png", ".html")
