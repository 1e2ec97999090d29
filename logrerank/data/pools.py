"""Candidate pools (the LoG-Reranker paper, App. A) and one-call benchmark loading.

Each query's pool is its BM25 top ``k`` over the benchmark's corpus with missed gold docs
inserted (the rule is in :mod:`logrerank.data.first_pass`); the multi-paper benchmarks
(``evinf``, ``scisumm``) take part of the pool from the gold paper and the rest from other
papers of the split (:mod:`logrerank.data.paper_pools`).

Pools are cached as JSON (doc ids only) under ``<repo>/.cache/pools/`` (gitignored), in a file
named by the benchmark and a hash of everything that determines the pool: the queries (ids,
text, gold ids), the corpus (ids and indexed text), ``k``, the BM25 parameters and
:data:`POOL_VERSION`. Hashing the content, not file times, means a changed reader or sentence
splitter can never serve a stale pool.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from logrerank.data.citation_integrity import read_citation_integrity
from logrerank.data.cl_scisumm import read_cl_scisumm
from logrerank.data.common import default_data_root
from logrerank.data.evidence_inference import read_evidence_inference
from logrerank.data.first_pass import BM25Ranker, doc_index_text, pool_from_ranking
from logrerank.data.hotpotqa import read_hotpotqa
from logrerank.data.musique import read_musique
from logrerank.data.paper_pools import OWN_K, build_paper_pools
from logrerank.data.pubmedqa import read_pubmedqa
from logrerank.data.schema import Doc, Example
from logrerank.data.scholarqa import read_scholarqa
from logrerank.data.scifact import read_scifact
from logrerank.resources import cache_dir
from logrerank.text.bm25 import BM25_PARAMS

logger = logging.getLogger(__name__)

#: Bump when the pool rule changes, to invalidate old cache files.
POOL_VERSION = 1
#: Default pool size (paper, App. A).
DEFAULT_K = 50

#: Benchmark name -> (default split, splits available in the public data).
BENCHMARKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "scifact": ("dev", ("dev", "train")),
    "citint": ("dev", ("dev", "train")),
    "pubmedqa": ("test", ("test", "train")),
    "hotpotqa": ("train", ("train",)),
    "musique": ("train", ("train",)),
    "evinf": ("test", ("test", "validation", "train")),
    "scisumm": ("test", ("test", "train")),
    "scholarqa": ("test", ("test",)),
}
_ALIASES = {
    "citation_integrity": "citint",
    "citation-integrity": "citint",
    "pqal": "pubmedqa",
    "evidence_inference": "evinf",
    "evidence-inference": "evinf",
    "cl_scisumm": "scisumm",
    "cl-scisumm": "scisumm",
    "scholarqa-multi": "scholarqa",
    "scholarqabench": "scholarqa",
}
#: Benchmark -> coverage@k cut-offs that ``logrerank eval`` reports (queries with several gold
#: passages: multi-hop, and the multi-paper benchmarks, whose gold spans 1-5 passages).
COVERAGE_KS: dict[str, tuple[int, ...]] = {
    "hotpotqa": (2, 3, 5),
    "musique": (2, 3, 5),
    "evinf": (3, 5, 10),
    "scisumm": (3, 5, 10),
    "scholarqa": (3, 5, 10),
}
#: Benchmarks whose pools follow the multi-paper rule (:mod:`logrerank.data.paper_pools`).
PAPER_POOLED = ("evinf", "scisumm")
#: Data folder of each benchmark under the data root.
_FOLDERS = {
    "scifact": "scifact",
    "citint": "citation_integrity",
    "pubmedqa": "pubmedqa",
    "hotpotqa": "hotpotqa",
    "musique": "musique",
    "evinf": "evidence_inference",
    "scisumm": "cl_scisumm",
    "scholarqa": "scholarqabench",
}
_DATA_HINT = (
    "set $LOGRERANK_DATA or pass --data-root (data_root) to the folder of the public datasets; "
    "docs/evaluation.md (section 1) lists them and shared/data/README.md describes the files"
)


def default_cache_dir() -> Path:
    """Directory for cached pools.

    Returns:
        ``$LOGRERANK_CACHE/pools`` when that variable is set, else ``.cache/pools`` in the
        working directory.
    """
    return cache_dir()


def _digest(
    name: str,
    queries: Sequence[Example],
    corpus: dict[str, Doc],
    k: int,
    extra: dict[str, Any] | None = None,
) -> str:
    h = hashlib.sha256()
    header: dict[str, Any] = {"name": name, "k": k, "bm25": BM25_PARAMS, "version": POOL_VERSION}
    if extra:
        header["extra"] = extra
    h.update(json.dumps(header, sort_keys=True).encode())
    for ex in queries:
        h.update(json.dumps([ex.qid, ex.query, ex.gold_doc_ids]).encode())
        h.update(b"\n")
    h.update(b"\x00corpus\x00")
    for doc_id, doc in corpus.items():
        h.update(json.dumps([doc_id, doc_index_text(doc)]).encode())
        h.update(b"\n")
    return h.hexdigest()


def build_pools(
    queries: Sequence[Example], corpus: dict[str, Doc], k: int = DEFAULT_K
) -> tuple[dict[str, dict[str, list[str]]], dict[str, Any]]:
    """Build pools for ``queries`` over ``corpus`` (no cache).

    Args:
        queries: Examples with ``gold_doc_ids`` set.
        corpus: ``doc_id -> Doc``.
        k: Pool size.

    Returns:
        ``(pools, stats)``. ``pools[qid] = {"doc_ids": [...], "inserted": [...]}``. ``stats``
        has ``n_queries``, ``k``, ``corpus_size``, ``n_queries_with_insertion``,
        ``n_gold_inserted``, ``n_gold_total``, ``bm25_recall_at_k`` (macro average over queries
        of the fraction of gold docs in the BM25 top ``k`` before insertion),
        ``bm25_recall_at_k_micro``, ``pool_size_min``/``max``, ``build_seconds``.

    Raises:
        ValueError: On duplicate query ids or gold ids missing from the corpus.
    """
    start = time.perf_counter()
    ranker = BM25Ranker(corpus)
    pools: dict[str, dict[str, list[str]]] = {}
    recalls: list[float] = []
    n_gold_total = n_found = 0
    for ex in queries:
        if ex.qid in pools:
            raise ValueError(f"duplicate query id {ex.qid}")
        ranked, _ = ranker.rank(ex.query)
        pool, inserted = pool_from_ranking(ranked, ex.gold_doc_ids, k)
        pools[ex.qid] = {"doc_ids": pool, "inserted": inserted}
        n_gold = len(set(ex.gold_doc_ids))
        n_gold_total += n_gold
        n_found += n_gold - len(inserted)
        if n_gold:
            recalls.append((n_gold - len(inserted)) / n_gold)
    sizes = [len(p["doc_ids"]) for p in pools.values()]
    stats = {
        "n_queries": len(pools),
        "k": k,
        "corpus_size": len(corpus),
        "n_queries_with_insertion": sum(1 for p in pools.values() if p["inserted"]),
        "n_gold_inserted": sum(len(p["inserted"]) for p in pools.values()),
        "n_gold_total": n_gold_total,
        "bm25_recall_at_k": float(np.mean(recalls)) if recalls else float("nan"),
        "bm25_recall_at_k_micro": n_found / n_gold_total if n_gold_total else float("nan"),
        "pool_size_min": min(sizes, default=0),
        "pool_size_max": max(sizes, default=0),
        "build_seconds": round(time.perf_counter() - start, 3),
    }
    return pools, stats


def _attach(
    queries: Sequence[Example], corpus: dict[str, Doc], pools: dict[str, dict[str, list[str]]]
) -> list[Example]:
    out = []
    for ex in queries:
        pool = pools[ex.qid]
        meta = {**ex.meta, "fixed_pool": False, "inserted_gold": list(pool["inserted"])}
        candidates = [corpus[d] for d in pool["doc_ids"]]
        out.append(dataclasses.replace(ex, candidates=candidates, meta=meta))
    return out


def build_or_load_pools(
    name: str,
    queries: Sequence[Example],
    corpus: dict[str, Doc],
    k: int = DEFAULT_K,
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    builder: Callable[..., tuple[dict[str, dict[str, list[str]]], dict[str, Any]]] | None = None,
    key_extra: dict[str, Any] | None = None,
) -> tuple[list[Example], dict[str, Any]]:
    """Pools for ``queries``, from the on-disk cache when it matches, else built and cached.

    Args:
        name: Benchmark name (part of the cache file name and key).
        queries: Examples with ``gold_doc_ids``; their ``candidates`` are ignored.
        corpus: ``doc_id -> Doc``.
        k: Pool size.
        cache_dir: Cache directory; defaults to :func:`default_cache_dir`. The cache is
            skipped (built, not written) when the directory cannot be created.
        builder: ``builder(queries, corpus, k) -> (pools, stats)``; defaults to
            :func:`build_pools`.
        key_extra: Settings of ``builder`` that change the pools (part of the cache key).

    Returns:
        ``(examples, stats)``: copies of ``queries`` with ``candidates`` set to the pool (BM25
        order) and ``meta["inserted_gold"]`` / ``meta["fixed_pool"] = False``; the stats of
        :func:`build_pools` plus ``cached`` (whether they came from disk), ``cache_file``
        and ``bm25_params``. ``build_seconds`` is the time of the original build.
    """
    key = _digest(name, queries, corpus, k, key_extra)
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = directory / f"{name}-k{k}-{key[:16]}.json"
    if path.is_file():
        try:
            with open(path, encoding="utf-8") as f:
                cached = json.load(f)
            pools = cached["pools"]
            valid = cached.get("key") == key and all(
                ex.qid in pools and all(d in corpus for d in pools[ex.qid]["doc_ids"])
                for ex in queries
            )
        except (OSError, ValueError, KeyError, TypeError):
            valid = False
        if valid:
            stats = {**cached["stats"], "cached": True, "cache_file": str(path)}
            return _attach(queries, corpus, pools), stats
        logger.warning("ignoring invalid pool cache %s", path)
    pools, stats = (builder or build_pools)(queries, corpus, k)
    stats["bm25_params"] = dict(BM25_PARAMS)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        payload = {
            "version": POOL_VERSION,
            "name": name,
            "key": key,
            "stats": stats,
            "pools": pools,
        }
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(payload, f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)  # atomic: concurrent builders never see half a file
        cache_file: str | None = str(path)
    except OSError as err:
        logger.warning("could not write pool cache %s: %s", path, err)
        cache_file = None
    return _attach(queries, corpus, pools), {**stats, "cached": False, "cache_file": cache_file}


def load_benchmark(
    name: str,
    data_root: str | os.PathLike[str] | None = None,
    split: str | None = None,
    limit: int | None = None,
    *,
    k: int = DEFAULT_K,
    cache_dir: str | os.PathLike[str] | None = None,
) -> tuple[list[Example], dict[str, Any]]:
    """Load a benchmark as Examples with candidates filled.

    ============  ===============  =========================================================
    name          default split    candidates
    ============  ===============  =========================================================
    ``scifact``   ``dev``          BM25 pool of ``k`` over the 5,183 abstracts; claims
                                   without evidence skipped (dev: 188 of 300 kept)
    ``citint``    ``dev``          BM25 pool over the 3,063 passages; passage-level gold
                                   only (see :func:`~logrerank.data.scifact.read_scifact`)
    ``pubmedqa``  ``test``         BM25 pool over the 1,000 PQA-L abstracts; gold = own
    ``hotpotqa``  ``train``        the question's fixed 10 paragraphs (100-question sample)
    ``musique``   ``train``        the question's fixed 20 paragraphs (100-question sample)
    ``evinf``     ``test``         multi-paper pool of ``k`` passages of the split's RCT
                                   articles (``validation`` for choices, ``train``)
    ``scisumm``   ``test``         multi-paper pool of ``k`` 5-sentence windows of the 40
                                   hand-annotated papers (``train``: ScisummNet)
    ``scholarqa`` ``test``         BM25 pool over the 108 ScholarQA-Multi questions' cited
                                   passages (evaluation only; gold = the expert's citations)
    ============  ===============  =========================================================

    The Citation-Integrity test and HotpotQA dev splits are withheld from the public data and
    cannot be loaded; the SciFact test split has no labels. The Evidence Inference test split
    the CL-SciSumm hand-annotated papers and ScholarQA-Multi are evaluation only.

    Args:
        name: Benchmark name (``citation_integrity`` is accepted for ``citint``).
        data_root: Data directory; defaults to :func:`~logrerank.data.common.default_data_root`.
        split: Split; defaults to the table above.
        limit: Keep only the first ``limit`` queries (file order) before pooling (the
            multi-paper pools still draw on every passage of the split).
        k: Pool size for pooled benchmarks.
        cache_dir: Pool cache directory (see :func:`build_or_load_pools`).

    Returns:
        ``(examples, stats)``; ``stats`` has ``benchmark``, ``split``, ``n_examples``, the
        reader's counts and, for pooled benchmarks, the pool statistics.

    Raises:
        ValueError: For an unknown benchmark or unavailable split.
        FileNotFoundError: When the data directory or a file is missing.
    """
    name = _ALIASES.get(name.lower(), name.lower())
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; choose from {sorted(BENCHMARKS)}")
    default_split, splits = BENCHMARKS[name]
    split = split or default_split
    if split not in splits:
        raise ValueError(
            f"{name} split {split!r} is not available in the public data (choose from {splits})"
        )
    root = Path(data_root) if data_root is not None else default_data_root()
    if not root.is_dir():
        raise FileNotFoundError(f"data directory {root} does not exist: {_DATA_HINT}")
    if not (root / _FOLDERS[name]).is_dir():
        raise FileNotFoundError(f"{name}: folder {root / _FOLDERS[name]} is missing: {_DATA_HINT}")
    try:
        return _load(name, root, split, limit, k, cache_dir)
    except FileNotFoundError as err:
        raise FileNotFoundError(f"{name}: {err}; {_DATA_HINT}") from err


def _load(
    name: str,
    root: Path,
    split: str,
    limit: int | None,
    k: int,
    cache_dir: str | os.PathLike[str] | None,
) -> tuple[list[Example], dict[str, Any]]:
    """The body of :func:`load_benchmark` once the name, split and folder are checked."""
    stats: dict[str, Any] = {"benchmark": name, "split": split}
    corpus: dict[str, Doc] | None = None
    if name == "scifact":
        reader_stats: dict[str, Any] = {}
        queries, corpus = read_scifact(
            root / "scifact" / f"claims_{split}.jsonl",
            root / "scifact" / "corpus.jsonl",
            stats=reader_stats,
        )
        stats.update(reader_stats)
    elif name == "citint":
        reader_stats = {}
        queries, corpus = read_citation_integrity(
            root / "citation_integrity" / f"claims_{split}.jsonl",
            root / "citation_integrity" / "corpus.jsonl",
            stats=reader_stats,
        )
        stats.update(reader_stats)
    elif name == "pubmedqa":
        queries, corpus = read_pubmedqa(
            root / "pubmedqa" / "ori_pqal.json",
            root / "pubmedqa" / "test_ground_truth.json",
            split=split,
        )
    elif name in PAPER_POOLED:
        reader_stats = {}
        reader = read_evidence_inference if name == "evinf" else read_cl_scisumm
        queries, corpus = reader(root / _FOLDERS[name], split, stats=reader_stats)
        stats.update(reader_stats)
    elif name == "scholarqa":
        reader_stats = {}
        queries, corpus = read_scholarqa(
            root / "scholarqabench" / "scholarqa_multi" / "human_answers.json", stats=reader_stats
        )
        stats.update(reader_stats)
    elif name == "hotpotqa":
        queries = read_hotpotqa(root / "hotpotqa" / f"hotpotqa_{split}.json")
    else:
        queries = read_musique(root / "musique" / f"musique_{split}.json")
    if limit is not None:
        queries = queries[: max(0, limit)]
    if corpus is None:
        sizes = [len(ex.candidates) for ex in queries]
        stats.update(
            n_examples=len(queries),
            fixed_pool=True,
            pool_size_min=min(sizes, default=0),
            pool_size_max=max(sizes, default=0),
            n_gold_total=sum(len(ex.gold_doc_ids) for ex in queries),
        )
        return list(queries), stats
    extra: dict[str, Any] = {}
    if name in PAPER_POOLED:  # pools of the split, not of a benchmark-wide corpus
        extra = {"builder": build_paper_pools, "key_extra": {"rule": "paper", "own_k": OWN_K}}
    examples, pool_stats = build_or_load_pools(
        f"{name}-{split}" if name in PAPER_POOLED else name,
        queries,
        corpus,
        k=k,
        cache_dir=cache_dir,
        **extra,
    )
    stats.update(pool_stats)
    stats.update(n_examples=len(examples), fixed_pool=False)
    return examples, stats
