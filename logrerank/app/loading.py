"""The app's models, loaded once per process on first use, not when the app module is imported.

``python app.py --help`` and ``import logrerank.app.main`` therefore never load a model: the
page's first request (or :func:`logrerank.app.main.main`, once its arguments are parsed) does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .state import Backend


def bundled_log_config() -> Any:
    """The bundled LoG's :class:`~logrerank.config.LoGConfig` from its ``config.json`` alone
    (no weights, no backbone); the defaults while no checkpoint is bundled (as
    :meth:`LoGReranker.from_pretrained` with no path)."""
    from .. import log_checkpoint as ckpt
    from ..config import LoGConfig

    path = ckpt.default_checkpoint_dir()
    return ckpt.read_log_config(path) if ckpt.has_checkpoint(path) else LoGConfig()


class LazyBackend:
    """A :class:`~logrerank.app.state.Backend` built on the first :meth:`get` (thread-safe:
    concurrent first requests load the models once).

    Args:
        load: builds the backend (keyword arguments of :meth:`load` are passed on).
        after_load: called once after loading (e.g. freezing start-up objects for the GC).
    """

    def __init__(
        self,
        load: Callable[..., Backend] = Backend.load,
        after_load: Callable[[], None] | None = None,
    ) -> None:
        self._load = load
        self._after_load = after_load
        self._backend: Backend | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the models are loaded."""
        return self._backend is not None

    def load(self, **kwargs: Any) -> Backend:
        """The backend, loaded now with ``kwargs`` (e.g. ``cross_encoder``) unless it already is."""
        if self._backend is None:
            with self._lock:
                if self._backend is None:
                    backend = self._load(**kwargs)
                    if self._after_load is not None:
                        self._after_load()
                    self._backend = backend
        return self._backend

    def get(self) -> Backend:
        """The backend (loaded on the first call)."""
        return self._backend if self._backend is not None else self.load()


__all__ = ["LazyBackend", "bundled_log_config"]
