"""Dataset readers -> common schema, and candidate-pool construction.

One reader module per dataset (:mod:`~logrerank.data.scifact`,
:mod:`~logrerank.data.citation_integrity`, :mod:`~logrerank.data.pubmedqa`,
:mod:`~logrerank.data.hotpotqa`, :mod:`~logrerank.data.musique`,
:mod:`~logrerank.data.evidence_inference`, :mod:`~logrerank.data.cl_scisumm`,
:mod:`~logrerank.data.role_corpora`); pools in :mod:`~logrerank.data.first_pass` (the BM25
ranking and insertion rule), :mod:`~logrerank.data.paper_pools` (the multi-paper rule) and
:mod:`~logrerank.data.pools` (building, caching, loading).

Typical use::

    from logrerank.data import load_benchmark

    examples, stats = load_benchmark("scifact")  # SciFact dev, 50 candidates per claim
"""

from logrerank.data.citation_integrity import read_citation_integrity
from logrerank.data.cl_scisumm import read_cl_scisumm
from logrerank.data.common import default_data_root
from logrerank.data.evidence_inference import read_evidence_inference
from logrerank.data.first_pass import pool_from_ranking
from logrerank.data.headings import PUBMEDQA_ROLE_MAP
from logrerank.data.hotpotqa import read_hotpotqa
from logrerank.data.musique import read_musique
from logrerank.data.paper_pools import build_paper_pools
from logrerank.data.pools import BENCHMARKS, build_or_load_pools, build_pools, load_benchmark
from logrerank.data.pubmedqa import read_pubmedqa
from logrerank.data.role_corpora import (
    CSABSTRUCT_ROLE_MAP,
    PIBOSO_ROLE_MAP,
    read_csabstruct,
    read_nicta,
)
from logrerank.data.schema import ROLES, Doc, Example, RoleExample
from logrerank.data.scifact import read_scifact, read_scifact_corpus
from logrerank.text.bm25 import BM25_PARAMS

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
    "build_paper_pools",
    "build_pools",
    "default_data_root",
    "load_benchmark",
    "pool_from_ranking",
    "read_citation_integrity",
    "read_cl_scisumm",
    "read_csabstruct",
    "read_evidence_inference",
    "read_hotpotqa",
    "read_musique",
    "read_nicta",
    "read_pubmedqa",
    "read_scifact",
    "read_scifact_corpus",
]
