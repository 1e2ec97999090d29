"""Where logrerank finds its files: package data, bundled checkpoints, datasets and caches.

Package data (the bundled checkpoints, the app's examples and graph template) is read through
:mod:`importlib.resources`, so an installed wheel finds it as a source checkout does. The
datasets and the pool cache live outside the package; environment variables override every
default.

======================  =====================================  ==================================
what                    default                                override
======================  =====================================  ==================================
bundled checkpoints     ``logrerank/checkpoints/<name>``       ``$LOGRERANK_CHECKPOINTS/<name>``
public datasets         ``../shared/data`` (from the cwd)      ``$LOGRERANK_DATA``
built pools             ``.cache/pools`` (in the cwd)          ``$LOGRERANK_CACHE/pools``
exported ONNX models    ``~/.cache/logrerank/onnx``            ``$LOGRERANK_CACHE/onnx``
======================  =====================================  ==================================
"""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

CHECKPOINTS_ENV_VAR = "LOGRERANK_CHECKPOINTS"
DATA_ENV_VAR = "LOGRERANK_DATA"
CACHE_ENV_VAR = "LOGRERANK_CACHE"


def _env_path(var: str) -> Path | None:
    value = os.environ.get(var, "").strip()
    return Path(value).expanduser() if value else None


def package_path(*parts: str) -> Path:
    """A file or folder shipped inside the package, e.g. ``package_path("app", "examples")``."""
    return Path(str(files("logrerank").joinpath(*parts)))


def checkpoint_dir(name: str) -> Path:
    """Folder of the bundled checkpoint ``name`` (``log-reranker``, ``cross-encoder``, ...).

    ``$LOGRERANK_CHECKPOINTS/<name>`` when that variable is set and non-empty, else the copy
    shipped in the package. The path is returned whether or not it exists.
    """
    root = _env_path(CHECKPOINTS_ENV_VAR)
    return root / name if root else package_path("checkpoints", name)


def data_root() -> Path:
    """Where the public datasets live: ``$LOGRERANK_DATA``, else ``../shared/data`` from the
    working directory (a checkout with the shared folder beside it). Not checked for existence."""
    return _env_path(DATA_ENV_VAR) or (Path.cwd().parent / "shared" / "data").resolve()


def cache_dir() -> Path:
    """Folder for built benchmark pools: ``$LOGRERANK_CACHE/pools``, else ``.cache/pools`` in the
    working directory."""
    root = _env_path(CACHE_ENV_VAR)
    return (root or Path.cwd() / ".cache") / "pools"


def model_cache_dir(kind: str = "onnx") -> Path:
    """Folder for models derived from the weights on first use (the ONNX runtime's graphs).

    ``$LOGRERANK_CACHE/<kind>`` when the variable is set, else ``$XDG_CACHE_HOME/logrerank/<kind>``
    (default ``~/.cache/logrerank/<kind>``): unlike the pools they do not depend on the working
    directory, so one export serves every checkout and the installed package. Not created here.
    """
    root = _env_path(CACHE_ENV_VAR)
    if root:
        return root / kind
    xdg = _env_path("XDG_CACHE_HOME") or Path.home() / ".cache"
    return xdg / "logrerank" / kind
