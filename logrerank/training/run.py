"""One entry point for every training task: ``logrerank train TASK --config FILE [--set ...]``.

:func:`run_training` loads the task's run config, applies the ``FIELD=VALUE`` overrides (each
type-checked and checked by the config's own :meth:`~logrerank.jsonconfig.JsonConfig.check`
before anything loads), checks that the data files and input checkpoints it needs exist, and
then either returns the plan (``dry_run``) or trains and returns the run summary.

==================  ============================================  ==============================
task                config class                                  trains
==================  ============================================  ==============================
``local``           ``training.log.log_config.TrainConfig``       stage 1
                    (``stage = "local"``)                         (``training.log.local_stage``)
``global``          the same (``stage = "global"``)               stage 2
                                                                  (``training.log.global_stage``)
``passage``         ``training.log.passage_stage.                 the learned passage score
                    PassageTrainConfig``                          (``training.log.passage_stage``)
``crossencoder``    ``training.cross_encoder.ce_config.           the cross-encoder baseline
                    CrossEncoderTrainConfig``                     (``training.cross_encoder``)
``roles``           ``models.role_tagger_config.                  the role tagger
                    RoleTaggerConfig``                            (``training.roles``)
``intent``          ``training.intent.intent_train.               the question-intent classifier
                    IntentTrainConfig``                           (``training.intent``)
==================  ============================================  ==============================

(module paths under ``logrerank.``)

A ``global`` config whose ``stage`` field is ``"global-multihop"`` is a :class:`~logrerank.
training.log.graph_cv_config.GraphCVConfig`: stage 2 cross-validated on multi-passage pools
(:mod:`~logrerank.training.log.graph_cv`; ``steps`` picks ``cv``, ``final`` and ``eval``, all three
by default).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..jsonconfig import ConfigError

TASKS = ("local", "global", "passage", "crossencoder", "roles", "intent")


class MissingTrainingInputError(FileNotFoundError):
    """A data file or input checkpoint a training run needs does not exist."""


def _load(task: str, config_path: str | os.PathLike[str], overrides: list[str]) -> Any:
    """The task's config from ``config_path`` with ``overrides`` applied."""
    if task == "global":
        import json

        from .log.graph_cv_config import GraphCVConfig, is_graph_cv_config

        try:
            raw = json.loads(Path(config_path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"cannot read training config {config_path}: {exc}") from exc
        if is_graph_cv_config(raw):
            return GraphCVConfig.from_dict(raw).override(overrides)
    if task in ("local", "global"):
        from .log.log_config import TrainConfig

        cfg = TrainConfig.load(config_path).override(overrides)
        if cfg.stage != task:
            raise ConfigError(f"{config_path} is a {cfg.stage!r} config, not {task!r}")
        return cfg
    if task == "passage":
        from .log.passage_stage import PassageTrainConfig

        return PassageTrainConfig.load(config_path).override(overrides)
    if task == "crossencoder":
        from .cross_encoder.ce_config import CrossEncoderTrainConfig

        return CrossEncoderTrainConfig.load(config_path).override(overrides)
    if task == "intent":
        from .intent.intent_train import IntentTrainConfig

        return IntentTrainConfig.load(config_path).override(overrides)
    from ..models.role_tagger_config import RoleTaggerConfig

    return RoleTaggerConfig.load(config_path).override(overrides)


def _checkpoint(path: str | os.PathLike[str], what: str) -> str:
    """``path`` if it is a checkpoint folder (has ``config.json``), else an error naming it."""
    if not (Path(path) / "config.json").is_file():
        raise MissingTrainingInputError(
            f"{what} {path} is not a checkpoint folder (no config.json)"
        )
    return str(path)


def _plan(task: str, cfg: Any) -> dict[str, Any]:
    """Data files, input checkpoints, output folder and state folder of a run."""
    inputs: dict[str, str] = {}
    if _is_cv(cfg):
        return _cv_plan(cfg)
    if task == "intent":
        return _intent_plan(cfg)
    if task == "passage":
        from ..data.common import default_data_root

        inputs["init"] = _checkpoint(cfg.init, "init (the LoG checkpoint the head is added to)")
        root = default_data_root()
        if not root.is_dir():
            raise MissingTrainingInputError(
                f"data folder {root} does not exist (set LOGRERANK_DATA to the public data)"
            )
        return {"data_root": str(root), "data": [*cfg.train, *cfg.select], "inputs": inputs,
                "output": cfg.out, "state_dir": cfg.cache_dir}  # fmt: skip
    if task in ("local", "global", "crossencoder"):
        from ..data.common import default_data_root
        from .queries import train_data_files

        root = default_data_root()
        files = train_data_files(cfg.sources, root)
    if task == "local":
        if cfg.lam > 0 and cfg.role_tagger is not None:
            from ..models.role_checkpoint import default_checkpoint_dir

            path = default_checkpoint_dir() if cfg.role_tagger == "default" else cfg.role_tagger
            inputs["role_tagger"] = _checkpoint(path, "role_tagger")
        out, state = cfg.out, str(Path(cfg.state_dir) / "local")
    elif task == "global":
        if cfg.init:
            try:
                inputs["init"] = _checkpoint(cfg.init, "init (the stage-1 checkpoint)")
            except MissingTrainingInputError as exc:
                raise MissingTrainingInputError(
                    f"{exc}: train stage 1 first (logrerank train local), or --set init=DIR"
                ) from None
        out, state = cfg.out, cfg.state_dir
    elif task == "crossencoder":
        from ..local.backbone import resolve

        inputs["base"] = resolve(cfg.base)
        out, state = cfg.out, cfg.state_dir
    else:
        from ..models.role_checkpoint import default_checkpoint_dir
        from .roles.tagger_data import role_data_root, role_split_path

        root = role_data_root(cfg.data_root)
        splits = [(s, "train") for s in cfg.sources]
        splits += [(s, "dev") for s in ("csabstruct", "nicta") if s in cfg.sources]
        if not any(split == "dev" for _, split in splits):
            raise ConfigError("sources must include csabstruct or nicta (their dev splits select)")
        files = [role_split_path(s, split, root) for s, split in splits]
        files = list(dict.fromkeys(files))
        out = cfg.out_dir or str(default_checkpoint_dir())
        state = cfg.run_dir
    _check_files(task, root, files)
    return {
        "data_root": str(root),
        "data": [str(f) for f in files],
        "inputs": inputs,
        "output": str(out),
        "state_dir": str(state),
    }


def _intent_plan(cfg: Any) -> dict[str, Any]:
    """The question-intent plan: its data root (checked), role tagger and output folder."""
    from ..data.common import default_data_root
    from ..models.question_intent import default_checkpoint_dir
    from ..models.role_checkpoint import default_checkpoint_dir as tagger_dir

    root = Path(cfg.data_root) if cfg.data_root else default_data_root()
    _check_files("intent", root, [])
    return {"data_root": str(root), "data": list(cfg.sources),
            "inputs": {"role_tagger": _checkpoint(tagger_dir(), "role_tagger")},
            "output": str(cfg.out_dir or default_checkpoint_dir()), "state_dir": cfg.run_dir}  # fmt: skip


def _check_files(task: str, root: Path, files: list[Path]) -> None:
    """Every data file (or folder) a run reads exists under the data root.

    Raises:
        MissingTrainingInputError: the data root or a file is missing; the message names it
            and says how to point logrerank at the public data.
    """
    how = (
        "set LOGRERANK_DATA to the folder that holds the public datasets (default "
        "../shared/data from the working directory; README, 'Reproduce')"
    )
    if not root.is_dir():
        raise MissingTrainingInputError(
            f"train {task} needs the public training data, and the data folder {root} does not "
            f"exist: {how}"
        )
    missing = [str(f) for f in files if not f.exists()]  # files, or folders of files
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise MissingTrainingInputError(
            f"train {task} needs {missing[0]}, which is missing{more}: {how}"
        )


def _cv_plan(cfg: Any) -> dict[str, Any]:
    """The multi-hop stage-2 plan, after checking its init checkpoint, the training sources'
    data files and (unless ``encode``) their cached encodings."""
    from ..data.common import default_data_root
    from .log.encode_cache import cache_stem
    from .log.graph_cv_config import plan
    from .queries import train_data_files

    _checkpoint(cfg.init, "init (the stage-1 checkpoint)")
    root = default_data_root()
    _check_files("global", root, train_data_files([*cfg.multihop, *cfg.aux], root))
    if not cfg.encode:
        for src, n in {**cfg.multihop, **cfg.aux}.items():
            stem = cache_stem(cfg.cache_dir, src, "train", n or None, cfg.aux_offset.get(src, 0))
            if not Path(f"{stem}.safetensors").is_file():
                raise MissingTrainingInputError(
                    f"the {src} train pools are not encoded yet ({stem}.safetensors is missing): "
                    "run once with --set encode=true, which encodes them with the init model"
                )
    return {"data_root": str(root), **plan(cfg)}


def _is_cv(cfg: Any) -> bool:
    from .log.graph_cv_config import GraphCVConfig

    return isinstance(cfg, GraphCVConfig)


def run_training(
    task: str,
    config_path: str | os.PathLike[str],
    overrides: list[str] | tuple[str, ...] = (),
    dry_run: bool = False,
    steps: tuple[str, ...] = (),
    command: str = "",
) -> dict[str, Any]:
    """Train ``task`` from a JSON run config, or (``dry_run``) return what it would do.

    Args:
        task: ``"local"``, ``"global"``, ``"crossencoder"`` or ``"roles"``.
        config_path: the JSON run config.
        overrides: ``FIELD=VALUE`` items (``--set``), VALUE parsed as JSON else a string.
        dry_run: only load, check and plan; nothing trains and nothing is written.
        steps: multi-hop stage-2 configs only: any of ``"cv"``, ``"final"``, ``"eval"``
            (empty = all three, in that order).
        command: the command line recorded in the saved checkpoints (multi-hop stage 2).

    Returns:
        With ``dry_run``: the plan (``task``, ``config_file``, ``config`` as a dict with the
        overrides applied, ``data_root``, ``data`` files, input checkpoints, ``output`` folder
        and ``state_dir``). Otherwise the run summary of the task's trainer.

    Raises:
        ConfigError: unknown task, unreadable config, or an override or value the config
            refuses (the message names the field and the value).
        MissingTrainingInputError: a data file or input checkpoint is missing (named).
    """
    if task not in TASKS:
        raise ConfigError(f"unknown training task {task!r}; choose from {list(TASKS)}")
    cfg = _load(task, config_path, list(overrides))
    plan = {"task": task, "config_file": str(config_path), "config": cfg.to_dict()}
    plan.update(_plan(task, cfg))
    if dry_run:
        return {**plan, "dry_run": True}
    if _is_cv(cfg):
        from .log import graph_cv

        summary: dict[str, Any] = {}
        for step in [s for s in ("cv", "final", "eval") if s in steps or not steps]:
            if step == "cv":
                summary["cv"] = graph_cv.run_cv(cfg)
            elif step == "final":
                summary["final"] = graph_cv.run_final(cfg, command)
            else:
                summary["eval"] = graph_cv.run_dev_eval(cfg)["aggregate"]
        return summary
    if task == "local":
        from .log.local_stage import train_local

        return train_local(cfg)
    if task == "global":
        from .log.global_stage import train_global

        return train_global(cfg)
    if task == "passage":
        from .log.passage_stage import train_passage_head

        return train_passage_head(cfg, command)
    if task == "crossencoder":
        from .cross_encoder.ce_train import train_crossencoder

        return train_crossencoder(cfg)
    if task == "intent":
        from .intent.intent_train import train_intent

        return train_intent(cfg, command)
    from .roles.tagger_train import train_roles

    return train_roles(cfg)
