"""Return freed heap memory to the operating system after a request (glibc only).

Variable-shape bf16 CPU inference leaves the glibc heap fragmented: on the speed benchmark the
resident memory of one process grew from 1.0 GB after warm-up to 2.6 GB over 50 SciFact pools,
although nothing is kept between calls. ``malloc_trim(0)`` hands free pages back (it also
releases free pages inside the heap, not only at its top). It costs about 3 ms, so the
pipeline calls it after each transformer batch of
:meth:`~logrerank.pipeline.LoGReranker.encode` (and the cross-encoder after each batch of
``predict``). Per batch rather than per call also bounds the peak of one call by the batch size:
with one trim per call, 50 / 100 / 200 passages peaked 205 / 322 / 434 MB over the call's start;
with one per batch, 157 / 198 / 199 MB (bench/README.md, "Scaling"). Elsewhere (musl, macOS,
Windows) it is a no-op.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools


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


def trim_heap() -> bool:
    """Ask glibc to return free heap memory to the OS. Returns True if memory was released."""
    lib = _libc()
    if lib is None:
        return False
    return bool(lib.malloc_trim(0))
