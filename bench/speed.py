"""Speed benchmark: LoG end to end and per stage vs the passage-level cross-encoder and BM25.

The benchmark lives in the package (:mod:`logrerank.evaluation.speed`); this script is the same
as ``logrerank bench`` with the same options::

    python bench/speed.py --queries 50 --warmup 2 --out runs/bench/speed
    logrerank bench --queries 50 --warmup 2 --out runs/bench/speed        # same thing
"""

from __future__ import annotations

import sys

from logrerank.evaluation.speed import main

if __name__ == "__main__":
    sys.exit(main())
