"""On-disk cache of frozen local-stage encodings (:class:`~logrerank.ranking.results.Encoded`) for
stage-2 training and cross-validation (:mod:`logrerank.training.log.graph_cv`).

One cache per benchmark split, two files, no pickle:

* ``<source>-<split>-<limit>.safetensors``: the tensors of every pool, keyed ``"<i>.<name>"``
  (``h``, ``role_probs``, ``local_logits``, ``passage_of``, ``intent_by_passage`` and, when
  present, ``prior_logits``);
* ``<source>-<split>-<limit>.json``: the strings and ids: the ``qids`` in order and, per pool,
  the query, the passages (:class:`~logrerank.types.Passage` fields), the sentences
  (:class:`~logrerank.types.ScoredSentence` fields), warnings, timings and cached windows.

Loading reads the tensors with :func:`safetensors.torch.load_file` and the sidecar with
:mod:`json`, so a cache file cannot run code. :func:`encode_cached` resumes a partly written
cache (the pools whose qids match the split's first ones are kept).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from ...data.schema import Example, example_passages
from ...ranking.results import Encoded
from ...types import Passage, ScoredSentence

TENSORS = ("h", "role_probs", "local_logits", "passage_of", "intent_by_passage", "prior_logits")


def cache_stem(
    cache_dir: str | Path, source: str, split: str, limit: int | None, offset: int = 0
) -> Path:
    """``cache_dir/<source>-<split>[-from<offset>]-<limit or all>`` (add ``.safetensors`` /
    ``.json``)."""
    skip = f"-from{offset}" if offset else ""
    return Path(cache_dir) / f"{source}-{split}{skip}-{limit or 'all'}"


def local_digest(model) -> str:
    """sha256 of the local stage's weights (``model.local``): what an encoding depends on. A
    cache written by another local stage is never reused for this one."""
    import hashlib

    h = hashlib.sha256()
    for name, t in sorted(model.local.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def read_digest(stem: str | Path) -> str | None:
    """The ``local_digest`` recorded in a cache's sidecar (None: absent or written without)."""
    js = Path(stem).with_suffix(".json")
    try:
        return json.loads(js.read_text(encoding="utf-8")).get("local_digest")
    except (OSError, ValueError):
        return None


def save_encodings(
    stem: str | Path, qids: list[str], encs: list[Encoded], digest: str | None = None
) -> None:
    """Write ``encs`` (one per qid) as ``stem.safetensors`` + ``stem.json`` (atomically), with
    the encoding model's :func:`local_digest` when given."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    tensors: dict[str, torch.Tensor] = {}
    meta: list[dict[str, Any]] = []
    for i, enc in enumerate(encs):
        for name in TENSORS:
            v = getattr(enc, name)
            if v is not None:
                tensors[f"{i}.{name}"] = v.detach().cpu().contiguous().clone()
        meta.append(
            {
                "query": enc.query,
                "passages": [dataclasses.asdict(p) for p in enc.passages],
                "sentences": [dataclasses.asdict(s) for s in enc.sentences],
                "warnings": list(enc.warnings),
                "timings": dict(enc.timings),
                "cached_windows": list(enc.cached_windows),
            }
        )
    st, js = stem.with_suffix(".safetensors"), stem.with_suffix(".json")
    tmp_st, tmp_js = st.with_suffix(".safetensors.tmp"), js.with_suffix(".json.tmp")
    save_file(tensors, str(tmp_st))
    side = {"qids": list(qids), "local_digest": digest, "pools": meta}
    tmp_js.write_text(json.dumps(side), encoding="utf-8")
    tmp_st.replace(st)
    tmp_js.replace(js)


def load_encodings(stem: str | Path) -> tuple[list[str], list[Encoded]]:
    """``(qids, encodings)`` of a cache written by :func:`save_encodings` (``[]`` if absent)."""
    stem = Path(stem)
    st, js = stem.with_suffix(".safetensors"), stem.with_suffix(".json")
    if not (st.is_file() and js.is_file()):
        return [], []
    tensors = load_file(str(st))
    side = json.loads(js.read_text(encoding="utf-8"))
    encs = []
    for i, m in enumerate(side["pools"]):
        t = {name: tensors.get(f"{i}.{name}") for name in TENSORS}
        encs.append(
            Encoded(
                query=m["query"],
                passages=[Passage(**p) for p in m["passages"]],
                sentences=[ScoredSentence(**s) for s in m["sentences"]],
                passage_of=t["passage_of"],
                h=t["h"],
                role_probs=t["role_probs"],
                local_logits=t["local_logits"],
                intent_by_passage=t["intent_by_passage"],
                warnings=list(m["warnings"]),
                timings=dict(m["timings"]),
                prior_logits=t["prior_logits"],
                cached_windows=tuple(m["cached_windows"]),
            )
        )
    return list(side["qids"])[: len(encs)], encs


def load_examples(
    source: str, split: str, limit: int | None = None, offset: int = 0
) -> list[Example]:
    """Examples of a benchmark split (its pools) after the first ``offset`` queries (file
    order), each tagged ``meta["source"]``."""
    from ...data.pools import load_benchmark

    exs, _ = load_benchmark(source, split=split, limit=offset + limit if limit else None)
    exs = exs[offset:]
    for ex in exs:
        ex.meta["source"] = source
    return exs


def cached_prefix(
    source: str, split: str, limit: int | None, cache_dir: str | Path, offset: int = 0
) -> tuple[list[Example], list[Encoded]]:
    """The examples and encodings already cached for a split (a prefix of its queries)."""
    exs = load_examples(source, split, limit, offset)
    qids, encs = load_encodings(cache_stem(cache_dir, source, split, limit, offset))
    n = 0
    while n < min(len(qids), len(exs)) and qids[n] == exs[n].qid:
        n += 1
    return exs[:n], encs[:n]


def trainable(enc: Encoded) -> Encoded:
    """``enc`` with its tensors copied out of inference mode (``LoGReranker.encode`` runs under
    ``torch.inference_mode``), so that a fresh encoding can feed a graph stage in training like
    one read from the cache."""
    fields = {n: getattr(enc, n).clone() for n in TENSORS if getattr(enc, n) is not None}
    return dataclasses.replace(enc, **fields)


def encode_cached(
    model,
    source: str,
    split: str,
    limit: int | None,
    cache_dir: str | Path,
    log=sys.stdout,
    every: int = 10,
    offset: int = 0,
) -> tuple[list[Example], list[Encoded]]:
    """``(examples, encodings)`` of a split, encoding what the cache lacks (resumable: the
    cache is rewritten every ``every`` pools and encoding continues where it stopped). Fresh
    and cached encodings alike hold ordinary tensors that training can use."""
    exs = load_examples(source, split, limit, offset)
    stem = cache_stem(cache_dir, source, split, limit, offset)
    digest = local_digest(model)
    _, encs = cached_prefix(source, split, limit, cache_dir, offset)
    if read_digest(stem) not in (None, digest):  # written by another local stage: start over
        print(f"{stem}: written by another local stage; encoding anew", file=log)
        encs = []
    t0 = time.perf_counter()
    for i in range(len(encs), len(exs)):
        encs.append(trainable(model.encode(exs[i].query, example_passages(exs[i]))))
        if (i + 1) % every == 0 or i + 1 == len(exs):
            save_encodings(stem, [e.qid for e in exs[: len(encs)]], encs, digest)
            minutes = (time.perf_counter() - t0) / 60
            print(f"{source}-{split}: encoded {i + 1}/{len(exs)} ({minutes:.1f} min)", file=log)
            log.flush()
    return exs, encs


def encodings_for(model, cache_dir: str | Path, prefix: str) -> tuple[dict, dict[str, Any]]:
    """Every cached pool under ``cache_dir`` whose file starts with ``prefix`` (a benchmark name)
    and that this model's local stage wrote, keyed for :class:`logrerank.rankers.Models`.

    A cache written by another local stage (its :func:`local_digest` differs) is skipped; one
    written before digests were recorded is used, and named in the returned info so that the
    results say so.

    Returns:
        ``(encodings, info)``: ``{(query, ((title, text), ...)): Encoded}`` and ``{"files":
        [...], "skipped_other_model": [...], "without_digest": [...], "pools": n}``.
    """
    digest = local_digest(model)
    out: dict = {}
    info: dict[str, Any] = {"files": [], "skipped_other_model": [], "without_digest": []}
    for js in sorted(Path(cache_dir).glob(f"{prefix}-*.json")):
        stem = js.with_suffix("")
        found = read_digest(stem)
        if found not in (None, digest):
            info["skipped_other_model"].append(stem.name)
            continue
        if found is None:
            info["without_digest"].append(stem.name)
        _, encs = load_encodings(stem)
        for enc in encs:
            out[(enc.query, tuple((p.title, p.text) for p in enc.passages))] = enc
        info["files"].append(stem.name)
    info["pools"] = len(out)
    return out, info


def append_encodings(model, cache_dir: str | Path, name: str, encs: list[Encoded]) -> Path:
    """Add ``encs`` to the cache ``cache_dir/<name>`` (created; pools already in it, by query
    and passages, are not added twice) and return its stem. The stem's name starts with the
    benchmark name, so :func:`encodings_for` finds it."""
    stem = Path(cache_dir) / name
    digest = local_digest(model)
    qids, old = load_encodings(stem) if read_digest(stem) in (None, digest) else ([], [])
    seen = {(e.query, tuple((p.title, p.text) for p in e.passages)) for e in old}
    new = [e for e in encs if (e.query, tuple((p.title, p.text) for p in e.passages)) not in seen]
    all_encs = old + new
    save_encodings(
        stem, [*qids, *(f"pool{len(qids) + i}" for i in range(len(new)))], all_encs, digest
    )
    return stem
