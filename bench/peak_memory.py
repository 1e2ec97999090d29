"""Peak resident memory per benchmark phase (Linux ``VmHWM`` reset through ``clear_refs``).

Used by the speed and scaling benchmarks (``bench/speed.py``, ``bench/scaling.py``)
to report the process peak and, per phase (model load, one ranker's calls), the peak and the
resident memory after it.
"""

from __future__ import annotations

import contextlib
import resource
import sys
from typing import Any


def _status_mb(field: str) -> float | None:
    """A ``/proc/self/status`` memory field (``VmRSS``, ``VmHWM``) in MB, None where absent."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _ru_maxrss_mb() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r / (1024 * 1024) if sys.platform == "darwin" else r / 1024  # bytes on macOS


class Memory:
    """Peak resident memory per phase, and the process peak across phases.

    ``with mem.phase("log"):`` resets the kernel's peak (``VmHWM``, which ``ru_maxrss`` follows)
    through ``/proc/self/clear_refs`` before the block, then records the block's peak and the
    ``VmRSS`` after it (max over repeated phases of one name). Without that file (not Linux, no
    permission) the phase peak is the process peak so far. On CUDA the peak allocated GPU
    memory of the phase is recorded too.

    Args:
        cuda: also record the peak allocated GPU memory of every phase.
    """

    def __init__(self, cuda: bool = False) -> None:
        self.cuda = cuda
        self.start_rss_mb = self.rss_mb()  # after imports, before any model
        self.process_peak_mb = self._peak_now()
        self.phases: dict[str, dict[str, float]] = {}
        self.can_reset = self._reset()

    @staticmethod
    def _peak_now() -> float:
        return max(_status_mb("VmHWM") or 0.0, _ru_maxrss_mb())

    @staticmethod
    def rss_mb() -> float:
        """The resident memory now, in MB."""
        return _status_mb("VmRSS") or _ru_maxrss_mb()

    def _reset(self) -> bool:
        self.process_peak_mb = max(self.process_peak_mb, self._peak_now())
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
                f.write("5")
            return True
        except OSError:
            return False

    @contextlib.contextmanager
    def phase(self, name: str):
        """Record the peak memory of the ``with`` block under ``name``."""
        self.can_reset = self._reset()
        before = self.rss_mb()
        if self.cuda:
            import torch

            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        try:
            yield
        finally:
            peak = self._peak_now()
            self.process_peak_mb = max(self.process_peak_mb, peak)
            row = self.phases.setdefault(name, {"peak_mb": 0.0, "rss_after_mb": 0.0, "runs": 0})
            row["peak_mb"] = max(row["peak_mb"], peak)
            row["rss_after_mb"] = max(row["rss_after_mb"], self.rss_mb())
            row["peak_over_start_mb"] = max(row.get("peak_over_start_mb", 0.0), peak - before)
            row["runs"] += 1
            if self.cuda:
                import torch

                gpu = torch.cuda.max_memory_allocated() / 2**20
                row["gpu_peak_alloc_mb"] = max(row.get("gpu_peak_alloc_mb", 0.0), gpu)

    def report(self) -> dict[str, Any]:
        """Process peak, start / end RSS and the per-phase rows (MB, one decimal)."""
        self.process_peak_mb = max(self.process_peak_mb, self._peak_now())
        return {
            "process_peak_rss_mb": round(self.process_peak_mb, 1),
            "rss_at_start_mb": round(self.start_rss_mb, 1),
            "ru_maxrss_mb_at_end": round(_ru_maxrss_mb(), 1),
            "rss_at_end_mb": round(self.rss_mb(), 1),
            "peak_reset_per_phase": self.can_reset,
            "phases": {
                k: {kk: round(vv, 1) if isinstance(vv, float) else vv for kk, vv in v.items()}
                for k, v in self.phases.items()
            },
        }
