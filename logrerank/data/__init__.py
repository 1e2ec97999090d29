"""Dataset readers -> common schema, and candidate-pool construction.

Typical use::

    from logrerank.data import load_benchmark

    examples, stats = load_benchmark("scifact")  # SciFact dev, 188 claims, 50 candidates each
"""

from logrerank.data.pools import (
    BENCHMARKS,
    BM25_PARAMS,
    build_or_load_pools,
    build_pools,
    load_benchmark,
    pool_from_ranking,
)
from logrerank.data.readers import (
    CSABSTRUCT_ROLE_MAP,
    PIBOSO_ROLE_MAP,
    PUBMEDQA_ROLE_MAP,
    default_data_root,
    read_citation_integrity,
    read_csabstruct,
    read_hotpotqa,
    read_musique,
    read_nicta,
    read_pubmedqa,
    read_scifact,
    read_scifact_corpus,
)
from logrerank.data.schema import ROLES, Doc, Example, RoleExample

__all__ = [
    "BENCHMARKS",
    "BM25_PARAMS",
    "CSABSTRUCT_ROLE_MAP",
    "PIBOSO_ROLE_MAP",
    "PUBMEDQA_ROLE_MAP",
    "ROLES",
    "Doc",
    "Example",
    "RoleExample",
    "build_or_load_pools",
    "build_pools",
    "default_data_root",
    "load_benchmark",
    "pool_from_ranking",
    "read_citation_integrity",
    "read_csabstruct",
    "read_hotpotqa",
    "read_musique",
    "read_nicta",
    "read_pubmedqa",
    "read_scifact",
    "read_scifact_corpus",
]
