"""Return freed heap memory to the operating system (glibc only), and bound one call's growth.

Variable-shape bf16 CPU inference leaves the glibc heap fragmented: the resident memory of one
process grows over many calls although nothing is kept between them. ``malloc_trim(0)`` hands
free pages back (it also releases free pages inside the heap, not only at its top), so the
pipeline calls it at the end of each :meth:`~logrerank.pipeline.LoGReranker.encode` (and the
cross-encoder at the end of ``predict``).

Within one call the heap also grows with the input (each differently shaped batch leaves free
blocks the next one cannot reuse). Trimming after *every* batch bounds that but costs time,
because the next batch page-faults its memory back in. :class:`HeapBudget` trims after a batch
only when the call has grown more than a budget over its start, so the usual 50-passage call
pays nothing and a large one stays bounded (figures in bench/README.md, "Scaling").
Elsewhere (musl, macOS, Windows) trimming is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import os

TRIM_BUDGET_MB = 256.0
"""Default growth (MB) of one call's resident memory above which it trims after a batch."""


@functools.lru_cache(maxsize=1)
def _libc():
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        lib = ctypes.CDLL(name)
        return lib if hasattr(lib, "malloc_trim") else None
    except OSError:
        return None


def freeze_startup_objects() -> int:
    """Collect once, then move every object alive now out of the garbage collector's reach
    (``gc.freeze``). Call it in a long-running process after its start-up (imports, models):
    a full collection otherwise re-traverses all those objects, a pause that lands in whatever
    request triggers it (bench/README.md: the knob-change p95). Objects created later are
    collected as usual.

    Returns:
        Number of objects frozen.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


def trim_heap() -> bool:
    """Ask glibc to return free heap memory to the OS. Returns True if memory was released."""
    lib = _libc()
    if lib is None:
        return False
    return bool(lib.malloc_trim(0))


def rss_mb() -> float:
    """This process's resident memory in MB (``/proc/self/statm``; 0.0 where unavailable)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


class HeapBudget:
    """Trim the heap during a call only when its RSS has grown more than ``budget_mb``.

    Args:
        budget_mb: allowed growth of the resident memory over the call's start, in MB.
        enabled: False makes :meth:`check` a no-op.
    """

    def __init__(self, budget_mb: float, enabled: bool = True):
        self.budget_mb, self.enabled = float(budget_mb), enabled
        self.start = rss_mb() if enabled else 0.0

    def check(self) -> bool:
        """Call after each batch; trims (and returns True) when over the budget."""
        if not self.enabled or rss_mb() - self.start <= self.budget_mb:
            return False
        trim_heap()
        return True
