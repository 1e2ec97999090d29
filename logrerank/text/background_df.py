"""Background document frequencies of scientific text: how rare a term is in science, not in one
pool.

The table ``logrerank/lexicon/background_df.tsv.gz`` ships with the package (read through
:mod:`importlib.resources`, offline). It is built by ``logrerank build-df``
(:mod:`logrerank.text.build_df`) from training corpora only and holds the number of documents ``N``
and the document frequency ``df`` of the most frequent tokens (normalised as in
:func:`~logrerank.text.match.normalize_tokens`). A token's background idf is ``ln(N / df)``; a
token missing from the table occurs in fewer documents than the table's rarest entry and gets
``ln(N)`` (df = 1): it counts as rare.
"""

from __future__ import annotations

import functools
import gzip
import math
from dataclasses import dataclass
from pathlib import Path

from ..resources import package_path

TABLE_PARTS = ("lexicon", "background_df.tsv.gz")


def default_table_path() -> Path:
    """The shipped table's path inside the package."""
    return package_path(*TABLE_PARTS)


@dataclass(frozen=True)
class BackgroundDF:
    """A document-frequency table: ``documents`` (N) and ``df`` per token."""

    documents: int
    df: dict[str, int]

    @property
    def min_df(self) -> int:
        """The smallest df in the table (tokens below it were left out)."""
        return min(self.df.values(), default=1)

    def idf(self, token: str) -> float:
        """``ln(N / df)``; ``ln(N)`` for a token missing from the table."""
        return math.log(self.documents / self.df.get(token, 1))


def read_table(path: str | Path) -> BackgroundDF:
    """Read a table written by :func:`logrerank.text.build_df.write_table`.

    Raises:
        ValueError: the file is not such a table.
    """
    with gzip.open(path, "rt", encoding="utf-8") as f:
        head = f.readline().rstrip("\n").split("\t")
        if len(head) != 2 or head[0] != "#documents":
            raise ValueError(f"{path}: not a background df table (first line {head!r})")
        df = {}
        for line in f:
            token, _, count = line.rstrip("\n").partition("\t")
            if token:
                df[token] = int(count)
    return BackgroundDF(int(head[1]), df)


@functools.lru_cache(maxsize=1)
def background_df() -> BackgroundDF:
    """The shipped table, read once."""
    return read_table(default_table_path())
