"""Bounded load test of the Gradio app on loopback.

Usage::

    python bench/load_test.py                          # 8 clients x 25 requests, 10 passages each
    python bench/load_test.py --clients 2 --requests 2 # a quick check

What it does:

1. starts the app (``logrerank.app.main.demo``) in a child process on ``127.0.0.1`` and a free
   port (no share link, analytics off, outbound sockets blocked in the child by
   ``logrerank.evaluation.netguard``);
2. **reference**: one gradio_client client sends each distinct input once (``--inputs`` inputs of
   10 passages, built from the app's examples in ``logrerank/app/examples``); this is also the
   first warm-up;
3. **warm-up burst**: ``--clients`` clients x 2 requests, untimed; the server's resident memory
   (RSS) after it is the baseline;
4. **measured**: ``--clients`` concurrent clients x ``--requests`` requests each to the
   ``/rerank`` endpoint, every answer compared with the reference answer for the same input
   (stage timings masked out), latency timed per request, server RSS sampled every 0.25 s;
5. writes ``load_test.json`` and ``load_test.md`` to ``--out`` and prints the summary.

Pass criteria (exit status 1 otherwise): zero failed requests, every answer identical to the
single-client answer, and RSS flat after warm-up (end minus baseline, and the median of the last
third of samples minus that of the first third, both within ``--rss-tolerance-mb``).

The server process and the RSS sampling are in ``bench/load_server.py``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from load_server import RSSSampler, free_port, rss_bytes, start_server, wait_ready

from logrerank.resources import package_path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = package_path("app", "examples")
_TIMING = re.compile(r"\d+(?:\.\d+)?\s*(?:ms|s)\b")
APP_ERROR = re.compile(r"(?:internal error|Input error)[^<\"]{0,200}")
"""An error box in an answer: counted as a failed request even though HTTP succeeded."""


# --------------------------------------------------------------------------------------
# Inputs


def build_inputs(n_inputs: int, n_passages: int = 10) -> list[tuple[str, str]]:
    """``n_inputs`` deterministic (question, passages text) pairs of ``n_passages`` passages.

    Passages are drawn (by rotation, no randomness) from the pooled passages of the built-in
    examples, so every input is realistic scientific text with titles.
    """
    questions, pool = [], []
    for path in sorted(EXAMPLES.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        questions.append(data["question"])
        for c in data["ctxs"]:
            c = c if isinstance(c, dict) else {"text": c}
            pool.append(((c.get("title") or "").strip(), c["text"].strip()))
    if not pool:
        raise SystemExit(f"no examples under {EXAMPLES}")
    out = []
    for i in range(n_inputs):
        start = (i * 7) % len(pool)
        chosen = [pool[(start + j) % len(pool)] for j in range(n_passages)]
        text = "\n\n".join((f"Title: {t}\n" if t else "") + body for t, body in chosen)
        out.append((questions[i % len(questions)], text))
    return out


def normalise(answer: Any) -> str:
    """The answer as canonical JSON with stage timings and download file names masked (they
    differ run to run; a file's content still counts through gradio's content-hash folder)."""

    def clean(x: Any) -> Any:
        if isinstance(x, str):
            lines = [ln for ln in x.splitlines() if "timing" not in ln.lower()]
            return _TIMING.sub("<t>", "\n".join(lines))
        if isinstance(x, dict):
            out = {}
            for k, v in x.items():
                if "timing" in str(k).lower():
                    continue
                if k in ("path", "url") and isinstance(v, str):
                    v = v.rsplit("/", 1)[0]  # gradio's cache folder is a content hash;
                elif k == "orig_name":  # the file name may hold a random part
                    v = "<name>"
                out[k] = clean(v)
            return out
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    return json.dumps(clean(answer), sort_keys=True, default=str)


# --------------------------------------------------------------------------------------
# Clients


def make_client(url: str):
    from gradio_client import Client

    return Client(url, verbose=False, analytics_enabled=False, download_files=False)


def call(client, question: str, passages: str) -> Any:
    """One request to ``/rerank``: question and passages text; any other parameter of the
    endpoint (the upload, options the app may add) keeps its default, or None if it has none."""
    params = getattr(client, "_rerank_params", None)
    if params is None:
        info = client.view_api(return_format="dict", print_info=False)
        params = info["named_endpoints"]["/rerank"]["parameters"]
        client._rerank_params = params
    kwargs: dict[str, Any] = {}
    for p in params:
        name = p.get("parameter_name") or p.get("label")
        if name == "question":
            kwargs[name] = question
        elif name == "passages":
            kwargs[name] = passages
        elif not p.get("parameter_has_default"):
            kwargs[name] = None
    return client.predict(api_name="/rerank", **kwargs)


def run_clients(
    url: str,
    inputs: list[tuple[str, str]],
    n_clients: int,
    n_requests: int,
    reference: dict,
    diff_dir: Path | None = None,
) -> dict[str, Any]:
    """``n_clients`` threads, each with its own client, ``n_requests`` requests each."""
    lock = threading.Lock()
    latencies: list[float] = []
    failures: list[str] = []
    mismatches: list[str] = []
    start = threading.Barrier(n_clients + 1)

    def worker(c: int) -> None:
        try:
            client = make_client(url)
        except Exception as exc:  # noqa: BLE001 - counted as failures
            with lock:
                failures.extend([f"client {c}: connect: {exc!r}"] * n_requests)
            start.wait()
            return
        start.wait()
        for r in range(n_requests):
            k = (c * n_requests + r) % len(inputs)
            t0 = time.perf_counter()
            try:
                answer = call(client, *inputs[k])
            except Exception as exc:  # noqa: BLE001 - any failure is counted
                with lock:
                    failures.append(f"client {c} request {r}: {exc!r}"[:300])
                continue
            dt = time.perf_counter() - t0
            got = normalise(answer)
            with lock:
                latencies.append(dt)
                if APP_ERROR.search(got):  # the app answered, but with an error box
                    failures.append(f"client {c} request {r}: {APP_ERROR.search(got)[0]}")
                if got != reference.get(k):
                    mismatches.append(f"client {c} request {r} (input {k})")
                    if diff_dir is not None and len(mismatches) <= 3:
                        diff = difflib.unified_diff(
                            reference.get(k, "").split(", "), got.split(", "), lineterm="", n=1
                        )
                        (diff_dir / f"mismatch_{len(mismatches)}.diff").write_text(
                            "\n".join(diff), encoding="utf-8"
                        )

    threads = [threading.Thread(target=worker, args=(c,), daemon=True) for c in range(n_clients)]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    return {"latencies": latencies, "failures": failures, "mismatches": mismatches, "wall": wall}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in [0, 100])."""
    if not values:
        return float("nan")
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(-(-q * len(v) // 100)) - 1))
    return v[k]


# --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    ap.add_argument("--requests", type=int, default=25, help="requests per client (default 25)")
    ap.add_argument("--passages", type=int, default=10, help="passages per input (default 10)")
    ap.add_argument("--inputs", type=int, default=6, help="distinct inputs (default 6)")
    ap.add_argument("--port", type=int, default=0, help="server port (0 = a free one)")
    ap.add_argument("--startup-timeout", type=float, default=600.0)
    ap.add_argument("--rss-tolerance-mb", type=float, default=64.0)
    ap.add_argument("--no-guard", action="store_true", help="do not block outbound sockets")
    ap.add_argument("--out", default=str(ROOT / "runs" / "load_test"), help="result folder")
    args = ap.parse_args(argv)
    if args.clients < 1 or args.requests < 1 or args.inputs < 1 or args.passages < 1:
        ap.error("--clients, --requests, --inputs and --passages must be >= 1")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.no_guard:
        from logrerank.evaluation import netguard

        netguard.install(allow_loopback=True)  # the clients talk to loopback only
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    inputs = build_inputs(args.inputs, args.passages)
    port = args.port or free_port()
    url = f"http://127.0.0.1:{port}"
    log = out / "server.log"
    t_start = time.perf_counter()
    proc = start_server(port, not args.no_guard, log)
    try:
        wait_ready(url, proc, args.startup_timeout, log)
        startup_s = time.perf_counter() - t_start
        print(f"server up on {url} in {startup_s:.1f} s (pid {proc.pid})", flush=True)

        # 1. reference answers, one client, one request per distinct input
        client = make_client(url)
        reference: dict[int, str] = {}
        single_lat = []
        for k, inp in enumerate(inputs):
            t0 = time.perf_counter()
            reference[k] = normalise(call(client, *inp))
            single_lat.append(time.perf_counter() - t0)
        # same input twice from one client: deterministic?
        repeat_same = normalise(call(client, *inputs[0])) == reference[0]
        ref_errors = [
            f"input {k}: {APP_ERROR.search(v)[0]}"
            for k, v in reference.items()
            if APP_ERROR.search(v)
        ]
        print(f"reference: {len(inputs)} inputs, deterministic repeat: {repeat_same}", flush=True)

        # 2. warm-up burst (untimed)
        warm = run_clients(url, inputs, args.clients, 2, reference, out)
        time.sleep(1.0)
        rss_base = rss_bytes(proc.pid)

        # 3. measured run
        sampler = RSSSampler(proc.pid)
        sampler.start()
        res = run_clients(url, inputs, args.clients, args.requests, reference, out)
        time.sleep(1.0)
        sampler.stop()
        rss_end = rss_bytes(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()

    total = args.clients * args.requests
    lat = res["latencies"]
    mb = 1024 * 1024
    rss = [b for _, b in sampler.samples] or [rss_end]
    third = max(1, len(rss) // 3)
    drift = statistics.median(rss[-third:]) - statistics.median(rss[:third])
    tol = args.rss_tolerance_mb * mb
    growth = rss_end - rss_base
    result = {
        "command": "python bench/load_test.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "clients": args.clients,
        "requests_per_client": args.requests,
        "passages_per_input": args.passages,
        "distinct_inputs": args.inputs,
        "requests": total,
        "completed": len(lat),
        "failed": len(res["failures"]),
        "mismatched": len(res["mismatches"]),
        "warmup_failed": len(warm["failures"]),
        "warmup_mismatched": len(warm["mismatches"]),
        "deterministic_repeat": repeat_same,
        "reference_errors": ref_errors,
        "wall_s": round(res["wall"], 2),
        "throughput_rps": round(len(lat) / res["wall"], 3) if res["wall"] > 0 else None,
        "latency_s": {
            "p50": round(percentile(lat, 50), 3),
            "p95": round(percentile(lat, 95), 3),
            "max": round(max(lat), 3) if lat else None,
            "single_client_mean": round(statistics.mean(single_lat), 3),
        },
        "rss_mb": {
            "after_warmup": round(rss_base / mb, 1),
            "end": round(rss_end / mb, 1),
            "growth": round(growth / mb, 1),
            "peak": round(max(rss) / mb, 1),
            "drift_last_vs_first_third": round(drift / mb, 1),
            "samples": len(sampler.samples),
            "tolerance": args.rss_tolerance_mb,
        },
        "startup_s": round(startup_s, 1),
        "cpu_count": os.cpu_count(),
        "failures": res["failures"][:20] + warm["failures"][:5],
        "mismatches": res["mismatches"][:20] + warm["mismatches"][:5],
    }
    flat = growth <= tol and drift <= tol
    ok = (
        result["failed"] == 0
        and result["mismatched"] == 0
        and result["warmup_failed"] == 0
        and result["warmup_mismatched"] == 0
        and repeat_same
        and not ref_errors
        and flat
    )
    result["rss_flat"] = flat
    result["passed"] = ok
    (out / "load_test.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    md = [
        "# Load test",
        "",
        f"`{result['command']}` on {os.cpu_count()} CPU cores, loopback only.",
        "",
        "| clients x requests | passages | completed | failed | answers differing | "
        "throughput (req/s) | p50 (s) | p95 (s) | RSS after warm-up / end / peak (MB) | passed |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {args.clients} x {args.requests} | {args.passages} | {len(lat)}/{total} | "
        f"{result['failed']} | {result['mismatched']} | {result['throughput_rps']} | "
        f"{result['latency_s']['p50']} | {result['latency_s']['p95']} | "
        f"{result['rss_mb']['after_warmup']} / {result['rss_mb']['end']} / "
        f"{result['rss_mb']['peak']} | {'yes' if ok else 'NO'} |",
        "",
    ]
    (out / "load_test.md").write_text("\n".join(md), encoding="utf-8")
    print("\n".join(md[2:]))
    print(json.dumps({k: result[k] for k in ("failures", "mismatches") if result[k]}, indent=1))
    print(f"wrote {out / 'load_test.json'} and {out / 'load_test.md'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
