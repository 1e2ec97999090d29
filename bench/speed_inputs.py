"""Inputs of the speed and scaling benchmarks: SciFact dev pools or synthetic passages.

Synthetic passages are drawn from the sentences of the app's bundled examples
(``logrerank/app/examples``), so they need no data download.
"""

from __future__ import annotations

import json

from logrerank.resources import package_path


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
    """Sentences and questions of the app's bundled examples (``logrerank/app/examples``)."""
    from logrerank.text.segment import split_sentences

    folder = package_path("app", "examples")
    sents, questions = [], []
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        questions.append(data["question"])
        for c in data["ctxs"]:
            text = c["text"] if isinstance(c, dict) else c
            sents += [s.text.strip() for s in split_sentences(text) if s.text.strip()]
    if not sents:
        raise SystemExit(f"no example passages under {folder}")
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
    """``n`` distinct (question, passages) inputs built from the bundled examples."""
    bank, questions = example_sentences()
    return [
        (
            f"{questions[q % len(questions)]} (variant {q + 1})",
            synthetic_passages(bank, passages, sentences, offset=q),
        )
        for q in range(n)
    ]
