"""Speed benchmark: LoG end to end and per stage vs the passage-level cross-encoder and BM25.

Usage::

    python bench/speed.py --queries 50 --warmup 2 --out runs/bench/speed
    logrerank bench --queries 50 --warmup 2 --out runs/bench/speed        # same thing
    python bench/speed.py --queries 50 --quantize int8 --out runs/bench/speed-int8
    python bench/speed.py --queries 50 --device cuda --out runs/bench/speed-cuda

On ``--queries`` SciFact dev 50-candidate pools (``logrerank.data``; ``--source synthetic``
needs no data), in one process, interleaved per query (the order of the three rankers rotates
from query to query so none of them always runs first):

* **LoG** ``encode`` + ``rank_encoded`` (= ``rerank``), timed end to end and per stage
  (segment, tokenize, local, graph, global = GAT, context, and ``overhead`` = the rest:
  input validation, result assembly);
* **knob change**: ``rank_encoded`` on the cached ``Encoded`` with another ``tau_sim`` (what
  the app re-runs when a slider moves);
* **cross-encoder** at passage level (``CrossEncoderRanker``, same MiniLM backbone) on the same
  passages; neither it nor LoG memoises scores, every measured query is a pool not seen before
  in the process, and a memo (the app's ``MemoCrossEncoder._memo``) is cleared before each call;
* **BM25** over the same passages (bm25s).

``--warmup`` further pools run every ranker once untimed first (the first call pays one-off
costs: pysbd, kernels, allocator). Reported: p50 / p95 / mean seconds per query for each ranker
and stage, the ratios LoG / cross-encoder (p50 and mean), the share of graph + GAT + context in
LoG's time, the model load times (LoG, cross-encoder: what the app pays at start-up), and
memory: the process peak resident set (``ru_maxrss`` / ``VmHWM``) and per phase the peak and
``VmRSS`` after it (the peak is reset before every phase through ``/proc/self/clear_refs`` where
Linux allows it; the process peak is tracked across resets). On CUDA also the peak allocated
GPU memory per phase. The issue-6 targets are checked and printed as pass / FAIL.

Writes ``results.json`` (everything, per-query rows included) and ``results.md`` into ``--out``
and prints the markdown.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `python bench/speed.py` from a checkout without `pip install -e`
    sys.path.insert(0, str(ROOT))

LOG_STAGES = ("segment", "tokenize", "local", "graph", "global", "context", "overhead")
"""Stages of LoG's time per query (``overhead`` = end to end minus the timed stages)."""
GRAPH_STAGES = ("graph", "global", "context")
"""The stages a knob change re-runs (graph build, GAT, context)."""

TARGETS = {
    "log_over_ce_p50": 1.2,  # LoG end to end <= 1.2 x the cross-encoder
    "graph_share": 0.10,  # graph + GAT + context <= 10 % of LoG's time (50 passages)
    "peak_rss_mb": 2048.0,  # peak RSS <= 2 GB
    "knob_p95_s": 0.2,  # knob change (rank_encoded on a cached Encoded) <= 0.2 s
}
"""Issue 6.3 targets (2-core CPU, 50-passage pools)."""


# --------------------------------------------------------------------------------------
# Arguments


def add_arguments(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The benchmark's options (``logrerank bench`` declares the same ones)."""
    ap.add_argument("--queries", type=int, default=20, help="timed pools (default 20)")
    ap.add_argument("--warmup", type=int, default=2, help="untimed pools first (default 2)")
    ap.add_argument("--checkpoint", default=None, help="LoG checkpoint (default: bundled)")
    ap.add_argument("--cross-encoder", default=None, help="cross-encoder folder (default: bundled)")
    ap.add_argument("--precision", default="auto", choices=["auto", "bf16", "fp32"])
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    ap.add_argument(
        "--quantize",
        default="none",
        choices=["none", "int8"],
        help="int8: dynamic int8 Linear layers in LoG's encoder and the cross-encoder (CPU)",
    )
    ap.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1, ...")
    ap.add_argument(
        "--segment-cache",
        default="off",
        choices=["on", "off"],
        help="on: LoG's frozen isolated layers once per segment (LoGReranker.segment_cache)",
    )
    ap.add_argument(
        "--pack-length",
        type=int,
        default=None,
        help="LoG's LocalConfig.pack_length: frozen layers on packed rows of N tokens "
        "(0 = window layout; default: the checkpoint's)",
    )
    ap.add_argument(
        "--passage-cache",
        default="off",
        choices=["off", "pool"],
        help="pool: each pool's passages are put in LoG's cross-call passage cache first, "
        "untimed (an indexed corpus: LoGReranker.cache_passages), then the question is timed",
    )
    ap.add_argument(
        "--source",
        default="scifact",
        choices=["scifact", "synthetic"],
        help="SciFact dev pools (needs ../shared/data) or synthetic passages (no data)",
    )
    ap.add_argument("--passages", type=int, default=50, help="passages per query (default 50)")
    ap.add_argument("--data-root", default=None, help="data folder (default ../shared/data)")
    ap.add_argument("--out", default="runs/bench/speed", help="folder for results.json / .md")
    return ap


def build_parser() -> argparse.ArgumentParser:
    return add_arguments(argparse.ArgumentParser(description=__doc__.splitlines()[0]))


# --------------------------------------------------------------------------------------
# Statistics and memory


def summary(xs: list[float]) -> dict[str, float]:
    """p50 / p95 (linear interpolation) / mean / max of ``xs`` (seconds)."""
    if not xs:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "mean": float("nan")}
    s = sorted(xs)

    def pct(q: float) -> float:
        k = (len(s) - 1) * q
        lo = int(k)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)

    return {
        "n": len(s),
        "p50": pct(0.50),
        "p95": pct(0.95),
        "mean": sum(s) / len(s),
        "max": s[-1],
    }


def _status_mb(field: str) -> float | None:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in MB, None where absent."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _ru_maxrss_mb() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024  # bytes on macOS


class Memory:
    """Peak resident memory per phase, and the process peak across phases.

    ``with mem.phase("log"):`` resets the kernel's peak (``VmHWM``, which ``ru_maxrss`` follows)
    through ``/proc/self/clear_refs`` before the block, then records the block's peak and the
    ``VmRSS`` after it (max over repeated phases of one name). Without that file (not Linux, no
    permission) the phase peak is the process peak so far. On CUDA the peak allocated GPU
    memory of the phase is recorded too.
    """

    def __init__(self, cuda: bool = False) -> None:
        self.cuda = cuda
        self.start_rss_mb = self.rss_mb()  # after imports, before any model
        self.process_peak_mb = self._peak_now()
        self.phases: dict[str, dict[str, float]] = {}
        self.can_reset = self._reset()

    @staticmethod
    def _peak_now() -> float:
        return max(_status_mb("VmHWM") or 0.0, _ru_maxrss_mb())

    @staticmethod
    def rss_mb() -> float:
        return _status_mb("VmRSS") or _ru_maxrss_mb()

    def _reset(self) -> bool:
        self.process_peak_mb = max(self.process_peak_mb, self._peak_now())
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
                f.write("5")
            return True
        except OSError:
            return False

    @contextlib.contextmanager
    def phase(self, name: str):
        self.can_reset = self._reset()
        before = self.rss_mb()
        if self.cuda:
            import torch

            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        try:
            yield
        finally:
            peak = self._peak_now()
            self.process_peak_mb = max(self.process_peak_mb, peak)
            row = self.phases.setdefault(name, {"peak_mb": 0.0, "rss_after_mb": 0.0, "runs": 0})
            row["peak_mb"] = max(row["peak_mb"], peak)
            row["rss_after_mb"] = max(row["rss_after_mb"], self.rss_mb())
            row["peak_over_start_mb"] = max(row.get("peak_over_start_mb", 0.0), peak - before)
            row["runs"] += 1
            if self.cuda:
                import torch

                gpu = torch.cuda.max_memory_allocated() / 2**20
                row["gpu_peak_alloc_mb"] = max(row.get("gpu_peak_alloc_mb", 0.0), gpu)

    def report(self) -> dict[str, Any]:
        self.process_peak_mb = max(self.process_peak_mb, self._peak_now())
        return {
            "process_peak_rss_mb": round(self.process_peak_mb, 1),
            "rss_at_start_mb": round(self.start_rss_mb, 1),
            "ru_maxrss_mb_at_end": round(_ru_maxrss_mb(), 1),
            "rss_at_end_mb": round(self.rss_mb(), 1),
            "peak_reset_per_phase": self.can_reset,
            "phases": {
                k: {kk: round(vv, 1) if isinstance(vv, float) else vv for kk, vv in v.items()}
                for k, v in self.phases.items()
            },
        }


# --------------------------------------------------------------------------------------
# Inputs


def scifact_pools(
    n: int, passages: int = 50, data_root: str | None = None
) -> list[tuple[str, list[dict[str, str]]]]:
    """The first ``n`` SciFact dev queries with (the first ``passages`` of) their BM25 pools.

    Raises:
        InputError: the public data is not there.
    """
    from logrerank.data.pools import load_benchmark
    from logrerank.types import InputError

    try:
        examples, _ = load_benchmark("scifact", data_root=data_root, limit=n)
    except (FileNotFoundError, ValueError) as exc:
        raise InputError(
            f"SciFact data not found ({exc}); set LOGRERANK_DATA / --data-root, "
            "or run with --source synthetic"
        ) from exc
    return [
        (ex.query, [{"title": d.title, "text": d.text} for d in ex.candidates[:passages]])
        for ex in examples
    ]


def example_sentences() -> tuple[list[str], list[str]]:
    """Sentences and questions of the built-in examples (``assets/examples``, in the repo)."""
    from logrerank.segment import split_sentences

    sents, questions = [], []
    for path in sorted((ROOT / "assets" / "examples").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        questions.append(data["question"])
        for c in data["ctxs"]:
            text = c["text"] if isinstance(c, dict) else c
            sents += [s.text.strip() for s in split_sentences(text) if s.text.strip()]
    if not sents:
        raise SystemExit(f"no example passages under {ROOT / 'assets' / 'examples'}")
    return sents, questions


def synthetic_passages(
    bank: list[str], n: int, sentences: int, offset: int = 0
) -> list[dict[str, str]]:
    """``n`` passages of ``sentences`` sentences each, drawn deterministically from ``bank``.

    Passage ``i`` takes consecutive sentences starting at ``(i * sentences + 7 * offset)``
    (wrapping around); titles are unique, so no passage duplicates another.
    """
    out = []
    for i in range(n):
        start = i * sentences + 7 * offset
        body = " ".join(bank[(start + j) % len(bank)] for j in range(sentences))
        out.append({"title": f"Passage {offset}-{i + 1}", "text": body})
    return out


def synthetic_pools(
    n: int, passages: int = 50, sentences: int = 8
) -> list[tuple[str, list[dict[str, str]]]]:
    """``n`` distinct (question, passages) inputs built from the built-in examples."""
    bank, questions = example_sentences()
    return [
        (
            f"{questions[q % len(questions)]} (variant {q + 1})",
            synthetic_passages(bank, passages, sentences, offset=q),
        )
        for q in range(n)
    ]


# --------------------------------------------------------------------------------------
# Models


def _sync(device: Any) -> None:
    if getattr(device, "type", str(device)).startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def load_models(
    checkpoint: str | None = None,
    cross_encoder: str | None = None,
    device: str = "auto",
    precision: str = "auto",
    quantize: str = "none",
    mem: Memory | None = None,
    which: tuple[str, ...] = ("log", "ce"),
) -> dict[str, Any]:
    """Load LoG and/or the cross-encoder, timed (what the app pays at start-up).

    Returns:
        ``{"log": model, "ce": CrossEncoder, "load_s": {...}, "quantize": {...}}``.
    """
    from logrerank.backbone import pick_device

    mem = mem or Memory()
    dev = pick_device(device)
    if quantize == "int8":
        if dev.type != "cpu":
            from logrerank.types import InputError

            raise InputError("--quantize int8 runs on CPU only: pass --device cpu")
        precision = "fp32"  # quantised kernels take float32 activations
    out: dict[str, Any] = {"load_s": {}, "quantize": {}}
    if "log" in which:
        from logrerank.pipeline import LoGReranker

        with mem.phase("load_log"):
            t0 = time.perf_counter()
            model = LoGReranker.from_pretrained(checkpoint, device=device, precision=precision)
            _sync(model.device_)
            out["load_s"]["log"] = time.perf_counter() - t0
            if quantize == "int8":
                from logrerank.quantize import quantize_log_reranker

                t0 = time.perf_counter()
                out["quantize"]["log"] = quantize_log_reranker(model)
                out["load_s"]["log_quantize"] = time.perf_counter() - t0
        out["log"] = model
    if "ce" in which:
        from logrerank.baselines.cross_encoder import CrossEncoder

        with mem.phase("load_ce"):
            t0 = time.perf_counter()
            ce = CrossEncoder(cross_encoder, device=device, precision=precision)
            _sync(ce.device)
            out["load_s"]["cross_encoder"] = time.perf_counter() - t0
            if quantize == "int8":
                from logrerank.quantize import quantize_cross_encoder

                t0 = time.perf_counter()
                out["quantize"]["cross_encoder"] = quantize_cross_encoder(ce)
                out["load_s"]["cross_encoder_quantize"] = time.perf_counter() - t0
        out["ce"] = ce
    return out


def clear_memos(*objs: Any) -> None:
    """Drop any score memo so that a repeated input is never free (``MemoCrossEncoder``'s
    ``_memo``, an ``lru_cache``'d ``predict``, ``rankers.Models``' encoding cache)."""
    for obj in objs:
        memo = getattr(obj, "_memo", None)
        if isinstance(memo, dict):
            memo.clear()
        for name in ("predict", "encode"):
            fn = getattr(obj, name, None)
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()
        if hasattr(obj, "cache_key"):
            obj.cache_key, obj.cache_value = None, None


def knob_graph(model: Any, i: int) -> Any:
    """A changed graph setting for query ``i`` (what a τ_sim slider move sends)."""
    g = model.config.graph
    taus = (0.6, 0.7, 0.8, 0.9)
    tau = taus[i % len(taus)]
    if abs(tau - g.tau_sim) < 1e-9:
        tau = taus[(i + 1) % len(taus)]
    return dataclasses.replace(g, tau_sim=tau)


# --------------------------------------------------------------------------------------
# The measured loop


def log_tokens(model: Any, enc: Any) -> dict[str, int]:
    """Tokens LoG's encoder reads for ``enc`` (real and padded as batched), recomputed untimed
    with the same settings as :meth:`~logrerank.pipeline.LoGReranker.encode`."""
    from logrerank.local import batches, tokenize

    cfg = model.config
    per_passage: list[list[str]] = [[] for _ in enc.passages]
    for s in enc.sentences:
        per_passage[s.passage_idx].append(s.text)
    tok = tokenize(
        model.tokenizer,
        enc.query,
        per_passage,
        min(cfg.backbone.max_length, model._max_positions()),
        cfg.backbone.max_query_tokens,
        isolated=cfg.local.isolated_layers > 0,
    )
    lengths = [len(w.input_ids) for w in tok.windows]
    groups = batches(tok.windows, cfg.local.batch_tokens, cfg.local.max_batch_windows)
    padded = sum(len(g) * max(lengths[i] for i in g) for g in groups)
    return {"windows": len(lengths), "tokens": sum(lengths), "padded_tokens": padded}


def ce_tokens(ce: Any, query: str, passages: list[Any], max_chars: int) -> dict[str, int]:
    """Tokens the cross-encoder reads for the passage pairs (real and padded as batched)."""
    from logrerank.baselines.cross_encoder import pair_text
    from logrerank.io import normalize_passages

    texts = [pair_text(p, max_chars) for p in normalize_passages(passages)]
    enc = ce.tokenizer(
        [query] * len(texts), texts, truncation="longest_first", max_length=ce.max_length
    )
    lengths = sorted(len(x) for x in enc["input_ids"])
    b = ce.batch_size
    padded = sum(
        len(lengths[i : i + b]) * lengths[i : i + b][-1] for i in range(0, len(lengths), b)
    )
    return {"pairs": len(lengths), "tokens": sum(lengths), "padded_tokens": padded}


def run_log(
    model: Any, query: str, passages: list[Any], i: int = 0, prefill: bool = False
) -> dict[str, Any]:
    """One LoG rerank (encode + rank_encoded) timed end to end and per stage, then a knob change.

    ``prefill``: first (untimed) empty the passage cache and put this pool's passages in it.
    Otherwise the call starts cold: the sentence-split memo is emptied first (pools share
    passages, and a memo hit would time a lookup instead of segmentation).
    """
    from logrerank.segment import clear_cache

    clear_cache()
    if prefill:
        model.clear_passage_cache()
        model.cache_passages(passages)
    t0 = time.perf_counter()
    enc = model.encode(query, passages)
    ranking = model.rank_encoded(enc)
    _sync(model.device_)
    e2e = time.perf_counter() - t0
    t = ranking.timings
    row = {"e2e": e2e, **{k: float(t.get(k, 0.0)) for k in LOG_STAGES if k != "overhead"}}
    row["overhead"] = max(0.0, e2e - sum(row[k] for k in LOG_STAGES if k != "overhead"))
    row["graph_stages"] = sum(row[k] for k in GRAPH_STAGES)
    t0 = time.perf_counter()
    model.rank_encoded(enc, graph=knob_graph(model, i))
    _sync(model.device_)
    row["knob"] = time.perf_counter() - t0
    row["sentences"] = len(enc.sentences)
    row["passages"] = len(enc.passages)
    row["edges"] = int(sum(ranking.info.get("edge_counts", {}).values()))
    row.update(log_tokens(model, enc))
    row["warnings"] = [w for w in ranking.warnings if not w.startswith("model is untrained")]
    return row


def run_ce(ranker: Any, query: str, passages: list[Any]) -> dict[str, Any]:
    """One passage-level cross-encoder ranking, timed end to end (model time separately)."""
    clear_memos(ranker.model)
    t0 = time.perf_counter()
    r = ranker.rank(query, passages)
    _sync(ranker.model.device)
    row = {"e2e": time.perf_counter() - t0, "model": float(r.timings.get("cross_encoder", 0.0))}
    row.update(ce_tokens(ranker.model, query, passages, ranker.max_chars))
    return row


def run_bm25(ranker: Any, query: str, passages: list[Any]) -> dict[str, Any]:
    t0 = time.perf_counter()
    ranker.rank(query, passages)
    return {"e2e": time.perf_counter() - t0}


def measure(
    pools: list[tuple[str, list[Any]]],
    log_model: Any,
    ce: Any,
    warmup: int = 1,
    mem: Memory | None = None,
    prefill: bool = False,
) -> dict[str, Any]:
    """Run the interleaved benchmark on ``pools`` (the first ``warmup`` untimed).

    Args:
        pools: ``(query, passages)`` inputs, all distinct.
        log_model: a :class:`~logrerank.pipeline.LoGReranker`.
        ce: a loaded :class:`~logrerank.baselines.cross_encoder.CrossEncoder`.
        warmup: leading pools run once per ranker, untimed.
        mem: memory tracker (a new one when None).
        prefill: put each pool's passages in LoG's passage cache before timing it.

    Returns:
        ``{"rows": {"log": [...], "ce": [...], "bm25": [...]}, "warmup_s": {...}, "memory"}``.
    """
    from logrerank.baselines.bm25 import BM25Reranker
    from logrerank.baselines.cross_encoder import CrossEncoderRanker

    mem = mem or Memory()
    ce_ranker = CrossEncoderRanker(ce, level="passage")
    bm25 = BM25Reranker("passage")
    runners = {
        "log": lambda q, p, i: run_log(log_model, q, p, i, prefill),
        "ce": lambda q, p, i: run_ce(ce_ranker, q, p),
        "bm25": lambda q, p, i: run_bm25(bm25, q, p),
    }
    names = list(runners)
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in names}
    warm: dict[str, list[float]] = {k: [] for k in names}
    for i, (query, passages) in enumerate(pools):
        timed = i >= warmup
        order = names[i % len(names) :] + names[: i % len(names)]  # rotate: no fixed first
        for name in order:
            with mem.phase(name if timed else "warmup"):
                row = runners[name](query, passages, i)
            if timed:
                rows[name].append(row)
            else:
                warm[name].append(row["e2e"])
    return {"rows": rows, "warmup_s": warm, "memory": mem}


# --------------------------------------------------------------------------------------
# Report


def analyse(rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per-ranker / per-stage statistics, ratios and the issue-6 target checks."""
    log, ce, bm = rows["log"], rows["ce"], rows["bm25"]
    stats: dict[str, dict[str, float]] = {
        "log": summary([r["e2e"] for r in log]),
        **{f"log.{k}": summary([r[k] for r in log]) for k in LOG_STAGES},
        "log.graph+global+context": summary([r["graph_stages"] for r in log]),
        "knob (rank_encoded)": summary([r["knob"] for r in log]),
        "cross-encoder": summary([r["e2e"] for r in ce]),
        "cross-encoder.model": summary([r["model"] for r in ce]),
        "bm25": summary([r["e2e"] for r in bm]),
    }
    log_total = sum(r["e2e"] for r in log) or float("nan")
    share = {k: sum(r[k] for r in log) / log_total for k in LOG_STAGES}
    graph_share = sum(r["graph_stages"] for r in log) / log_total
    per_query_ratio = [a["e2e"] / b["e2e"] for a, b in zip(log, ce) if b["e2e"] > 0]
    ratios = {
        "log_over_ce_p50": stats["log"]["p50"] / stats["cross-encoder"]["p50"],
        "log_over_ce_mean": stats["log"]["mean"] / stats["cross-encoder"]["mean"],
        "log_over_ce_per_query_p50": summary(per_query_ratio)["p50"],
        "log_over_bm25_p50": stats["log"]["p50"] / max(stats["bm25"]["p50"], 1e-12),
    }
    return {
        "stats": stats,
        "stage_share_of_log": share,
        "graph_share": graph_share,
        "ratios": ratios,
        "mean_passages": summary([r["passages"] for r in log])["mean"],
        "mean_sentences": summary([r["sentences"] for r in log])["mean"],
        "mean_edges": summary([r["edges"] for r in log])["mean"],
        "mean_tokens": {
            "log": summary([r["tokens"] for r in log])["mean"],
            "log_padded": summary([r["padded_tokens"] for r in log])["mean"],
            "log_windows": summary([r["windows"] for r in log])["mean"],
            "ce": summary([r["tokens"] for r in ce])["mean"],
            "ce_padded": summary([r["padded_tokens"] for r in ce])["mean"],
        },
    }


def check_targets(a: dict[str, Any], peak_rss_mb: float) -> dict[str, dict[str, Any]]:
    """Issue 6.3 targets against the measured values (``ok`` None = not measurable)."""
    vals = {
        "log_over_ce_p50": a["ratios"]["log_over_ce_p50"],
        "graph_share": a["graph_share"],
        "peak_rss_mb": peak_rss_mb,
        "knob_p95_s": a["stats"]["knob (rank_encoded)"]["p95"],
    }
    out = {}
    for k, limit in TARGETS.items():
        v = vals[k]
        out[k] = {"value": v, "limit": limit, "ok": None if v != v else bool(v <= limit)}
    return out


def _f(x: float, nd: int = 3) -> str:
    return "–" if x != x else f"{x:.{nd}f}"


def markdown(res: dict[str, Any]) -> str:
    """The results as markdown (tables + target checks)."""
    a, m, meta = res["analysis"], res["memory"], res["meta"]
    lines = [
        f"Speed benchmark: {meta['queries']} queries ({meta['source']}, "
        f"{_f(a['mean_passages'], 1)} passages, {_f(a['mean_sentences'], 0)} sentences, "
        f"{_f(a['mean_edges'], 0)} edges on average), {meta['warmup']} warm-up; "
        f"device {meta['device']}, precision {meta['precision']}, quantize {meta['quantize']}, "
        f"segment cache {meta.get('segment_cache', 'off')}, "
        f"passage cache {meta.get('passage_cache', 'off')}, "
        f"{meta['threads']} torch threads, {meta['cpus']} CPUs.",
        "",
        "| ranker / stage | p50 s | p95 s | mean s | share of LoG |",
        "|---|---|---|---|---|",
    ]
    share = a["stage_share_of_log"]
    for k, s in a["stats"].items():
        sh = ""
        if k.startswith("log."):
            stage = k.removeprefix("log.")
            sh = _f(100 * (share[stage] if stage in share else a["graph_share"]), 1) + " %"
        lines.append(f"| {k} | {_f(s['p50'])} | {_f(s['p95'])} | {_f(s['mean'])} | {sh} |")
    r, tk = a["ratios"], a["mean_tokens"]
    lines += [
        "",
        f"LoG / cross-encoder: p50 {_f(r['log_over_ce_p50'], 2)}x, mean "
        f"{_f(r['log_over_ce_mean'], 2)}x (per-query p50 {_f(r['log_over_ce_per_query_p50'], 2)}x); "
        f"graph + GAT + context = {_f(100 * a['graph_share'], 1)} % of LoG's time.",
        "",
        f"Tokens per query read by the transformer: LoG {_f(tk['log'], 0)} "
        f"({_f(tk['log_padded'], 0)} padded, {_f(tk['log_windows'], 0)} windows), cross-encoder "
        f"{_f(tk['ce'], 0)} ({_f(tk['ce_padded'], 0)} padded; title + first characters of each "
        "passage, capped at its max_length).",
        "",
        "| model load (start-up) | s |",
        "|---|---|",
        *[f"| {k} | {_f(v, 2)} |" for k, v in res["load_s"].items()],
        "",
        f"Peak RSS (process): {_f(m['process_peak_rss_mb'], 0)} MB (RSS before any model "
        f"loaded, after imports: {_f(m['rss_at_start_mb'], 0)} MB).",
        "",
    ]
    gpu = any("gpu_peak_alloc_mb" in v for v in m["phases"].values())
    head = "| phase | runs | peak RSS MB | peak over start MB | RSS after MB |"
    lines += [head + (" GPU peak alloc MB |" if gpu else ""), "|---" * (6 if gpu else 5) + "|"]
    for k, v in m["phases"].items():
        row = (
            f"| {k} | {v['runs']} | {_f(v['peak_mb'], 0)} | {_f(v.get('peak_over_start_mb', 0.0), 0)}"
            f" | {_f(v['rss_after_mb'], 0)} |"
        )
        if gpu:
            row += f" {_f(v.get('gpu_peak_alloc_mb', float('nan')), 0)} |"
        lines.append(row)
    if not m["peak_reset_per_phase"]:
        lines.append("\n(per-phase peaks could not be reset here: each is the process peak so far)")
    lines += ["", "| target (issue 6.3) | value | limit | |", "|---|---|---|---|"]
    for k, t in res["targets"].items():
        ok = "–" if t["ok"] is None else ("pass" if t["ok"] else "FAIL")
        lines.append(f"| {k} | {_f(t['value'], 3)} | {t['limit']} | {ok} |")
    if res.get("warnings"):
        lines += ["", *[f"warning: {w}" for w in res["warnings"]]]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the benchmark as configured by ``args`` (see :func:`add_arguments`)."""
    import torch

    from logrerank.types import InputError

    if args.queries < 1 or args.warmup < 0 or args.passages < 1:
        raise InputError("--queries and --passages must be >= 1, --warmup >= 0")
    if args.threads:
        torch.set_num_threads(args.threads)
    n = args.queries + args.warmup
    t0 = time.perf_counter()
    if args.source == "scifact":
        pools = scifact_pools(n, args.passages, args.data_root)
    else:
        pools = synthetic_pools(n, args.passages)
    if len(pools) < n:
        raise InputError(f"only {len(pools)} pools available, {n} asked for")
    data_s = time.perf_counter() - t0

    from logrerank.backbone import pick_device

    mem = Memory(cuda=pick_device(args.device).type == "cuda")
    models = load_models(
        args.checkpoint,
        args.cross_encoder,
        args.device,
        args.precision,
        args.quantize,
        mem,
    )
    log_model, ce = models["log"], models["ce"]
    log_model.segment_cache = args.segment_cache == "on"
    if args.pack_length is not None:
        if args.pack_length < 0:
            raise InputError("--pack-length must be >= 0")
        log_model.config.local.pack_length = args.pack_length
    from logrerank.memory import freeze_startup_objects

    frozen = freeze_startup_objects()  # as app.py does after start-up: no full-GC pauses
    prefill = args.passage_cache == "pool"
    if prefill:
        log_model.passage_cache_mb = 256.0
    out = measure(pools, log_model, ce, args.warmup, mem, prefill)
    a = analyse(out["rows"])
    memory = mem.report()
    warnings = sorted({w for r in out["rows"]["log"] for w in r["warnings"]})
    if not log_model.config.trained:
        warnings.append(f"LoG model: {log_model.source} (speed is unaffected)")
    if not ce.trained:
        warnings.append(f"cross-encoder: {ce.source}")
    res = {
        "meta": {
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "queries": args.queries,
            "warmup": args.warmup,
            "source": args.source,
            "device": str(log_model.device_),
            "precision": str(log_model.autocast_dtype or torch.float32).replace("torch.", ""),
            "ce_precision": str(ce.autocast or torch.float32).replace("torch.", ""),
            "quantize": args.quantize,
            "segment_cache": args.segment_cache,
            "pack_length": log_model.config.local.pack_length,
            "passage_cache": args.passage_cache,
            "gc_frozen_objects": frozen,
            "threads": torch.get_num_threads(),
            "cpus": os.cpu_count(),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "log_model": log_model.source,
            "cross_encoder": ce.source,
            "data_load_s": data_s,
            "batch_tokens": log_model.config.local.batch_tokens,
            "ce_batch_size": ce.batch_size,
        },
        "load_s": models["load_s"],
        "quantize": models["quantize"],
        "warmup_s": out["warmup_s"],
        "analysis": a,
        "memory": memory,
        "targets": check_targets(a, memory["process_peak_rss_mb"]),
        "rows": out["rows"],
        "warnings": warnings,
    }
    md = markdown(res)
    dest = Path(args.out)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "results.json").write_text(json.dumps(res, indent=1, default=str), encoding="utf-8")
    (dest / "results.md").write_text(md + "\n", encoding="utf-8")
    print(md)
    print(f"\nwrote {dest / 'results.json'} and {dest / 'results.md'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from logrerank.types import InputError

    try:
        return run(args)
    except InputError as exc:
        print(f"speed.py: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
