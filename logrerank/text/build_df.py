"""Build the background document-frequency table of scientific text
(:mod:`logrerank.text.background_df`) from the training corpora.

Run ``logrerank build-df`` (or ``python -m logrerank.text.build_df``). Documents are read from the
public datasets (``$LOGRERANK_DATA`` or ``../shared/data``), **training splits only**:

===========================  ================================================================
corpus                       one document =
===========================  ================================================================
SciFact corpus               an abstract (title + sentences)
CSAbstruct train             an abstract
NICTA-PIBOSO train           an abstract
PubMedQA PQA-L               the contexts of one question outside the 500 official test ids
Evidence Inference train     a paragraph (a text line of 8+ tokens) of a train-split article
CL-SciSumm ScisummNet 2019   the abstract or a window of 8 sentences of a section
HotpotQA train corpus        a paragraph
MuSiQue train corpus         a paragraph
===========================  ================================================================

Each document's tokens are normalised as in the graph's links
(:func:`~logrerank.text.match.normalize_tokens`); a token's df is the number of documents that
contain it. The table keeps the tokens in at least ``min_df`` (3) documents, at most ``top`` of
them by df (ties: alphabetical), with at least 2 characters and not all digits, and the
document count; it is derived statistics, no text.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from .match import normalize_tokens

#: Tokens kept in the shipped table at most (the rest count as rare).
DEFAULT_TOP = 60000
#: Tokens in fewer documents are left out (their idf, >= ln(N / 3), is far above any threshold).
DEFAULT_MIN_DF = 3
_S = re.compile(r"<S [^>]*>(.*?)</S>", re.S)
_BLOCK = re.compile(r"<(ABSTRACT|SECTION)[^>]*>(.*?)</\1>", re.S)
_WINDOW = 8


def _jsonl(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _scifact(root: Path) -> Iterator[str]:
    for d in _jsonl(root / "scifact" / "corpus.jsonl"):
        yield " ".join([d.get("title", ""), *d["abstract"]])


def _csabstruct(root: Path) -> Iterator[str]:
    for d in _jsonl(root / "csabstruct" / "train.jsonl"):
        yield " ".join(d["sentences"])


def _nicta(root: Path) -> Iterator[str]:
    doc: list[str] = []
    with open(root / "nicta_piboso" / "train_clean.txt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("###") or not line.strip():
                if doc:
                    yield " ".join(doc)
                doc = []
            else:
                doc.append(line.split("\t", 1)[-1])
    if doc:
        yield " ".join(doc)


def _pubmedqa(root: Path) -> Iterator[str]:
    base = root / "pubmedqa"
    test = set(json.loads((base / "test_ground_truth.json").read_text(encoding="utf-8")))
    for pmid, rec in json.loads((base / "ori_pqal.json").read_text(encoding="utf-8")).items():
        if pmid not in test:
            yield " ".join(rec["CONTEXTS"])


def _evidence_inference(root: Path) -> Iterator[str]:
    base = root / "evidence_inference"
    ids = (base / "splits" / "ev2_train_article_ids.txt").read_text(encoding="utf-8").split()
    for pmc in ids:
        path = base / "txt_files" / f"PMC{pmc}.txt"
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if len(line.split()) >= 8:
                yield line


def _cl_scisumm(root: Path) -> Iterator[str]:
    for xml in sorted((root / "cl_scisumm" / "From-ScisummNet-2019").glob("*/Reference_XML/*.xml")):
        text = xml.read_text(encoding="utf-8", errors="replace")
        for _, block in _BLOCK.findall(text):
            sents = _S.findall(block)
            for i in range(0, len(sents), _WINDOW):
                yield " ".join(sents[i : i + _WINDOW])


def _hotpotqa(root: Path) -> Iterator[str]:
    corpus = json.loads((root / "hotpotqa" / "hotpotqa_train_corpus.json").read_text("utf-8"))
    for title, sents in corpus.items():
        yield " ".join([title, *sents])


def _musique(root: Path) -> Iterator[str]:
    for p in json.loads((root / "musique" / "musique_train_corpus.json").read_text("utf-8")):
        yield f"{p['title']} {p['text']}"


SOURCES = {
    "scifact": _scifact,
    "csabstruct": _csabstruct,
    "nicta": _nicta,
    "pubmedqa": _pubmedqa,
    "evidence_inference": _evidence_inference,
    "cl_scisumm": _cl_scisumm,
    "hotpotqa": _hotpotqa,
    "musique": _musique,
}
"""Training corpora of the table, each a generator of document texts from the data root."""


def count_df(root: Path) -> tuple[Counter[str], int, dict[str, int]]:
    """Document frequencies over every source.

    Returns:
        ``(df, documents, documents per source)``.
    """
    df: Counter[str] = Counter()
    per: dict[str, int] = {}
    for name, read in SOURCES.items():
        n = 0
        for text in read(root):
            df.update(set(normalize_tokens(text)))
            n += 1
        per[name] = n
    return df, sum(per.values()), per


def write_table(
    df: Counter[str],
    documents: int,
    out: Path,
    top: int = DEFAULT_TOP,
    min_df: int = DEFAULT_MIN_DF,
) -> int:
    """Write the gzipped table: ``#documents<TAB>N`` then ``token<TAB>df`` by falling df
    (at most ``top`` tokens, each in at least ``min_df`` documents).

    Returns:
        The number of tokens written.
    """
    rows = sorted(
        ((t, c) for t, c in df.items() if c >= min_df and len(t) >= 2 and not t.isdigit()),
        key=lambda tc: (-tc[1], tc[0]),
    )[:top]
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"#documents\t{documents}"] + [f"{t}\t{c}" for t, c in rows]
    # no name, mtime 0: the same counts give a byte-identical file wherever it is written
    with open(out, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))
    return len(rows)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the ``build-df`` command."""
    from .background_df import default_table_path

    parser.add_argument(
        "--data-root", help="data folder (default $LOGRERANK_DATA or ../shared/data)"
    )
    parser.add_argument("--out", default=str(default_table_path()), help="table file (.tsv.gz)")
    parser.add_argument("--top", type=int, default=DEFAULT_TOP, help="tokens kept at most, by df")
    parser.add_argument("--min-df", type=int, default=DEFAULT_MIN_DF, help="least df kept")


def run(args: argparse.Namespace) -> int:
    """Build the table; prints the document counts and the table size."""
    from ..resources import data_root
    from ..types import InputError

    root = Path(args.data_root) if args.data_root else data_root()
    if not root.is_dir():
        raise InputError(f"data folder {root} not found (set --data-root or $LOGRERANK_DATA)")
    if args.top < 1:
        raise InputError("--top must be at least 1")
    try:
        df, documents, per = count_df(root)
    except FileNotFoundError as exc:
        raise InputError(f"missing training corpus file: {exc.filename}") from exc
    kept = write_table(df, documents, Path(args.out), args.top, args.min_df)
    print(", ".join(f"{k} {v}" for k, v in per.items()))
    size = Path(args.out).stat().st_size
    print(
        f"{documents} documents, {len(df)} distinct tokens; kept {kept} in {args.out} ({size} bytes)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m logrerank.text.build_df``."""
    parser = argparse.ArgumentParser(prog="logrerank build-df", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
