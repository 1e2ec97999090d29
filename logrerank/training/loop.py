"""The training loop's mechanics, shared by every ``logrerank train`` task.

AdamW with linear warmup/decay, fixed seeds, progress with ETA, a time limit, and resumable
state saved as safetensors + JSON (never pickle): trainable parameters, optimizer moments and
the step. :class:`TrainLoop` bundles the last three for one run; each trainer keeps its own
step body (what it computes) and calls the loop for resume, state, time limit and progress.
"""

from __future__ import annotations

import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from torch import nn


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and torch."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def make_optimizer(
    params: list[nn.Parameter] | list[dict[str, Any]],
    lr: float,
    weight_decay: float,
    total_steps: int,
    warmup: float,
) -> tuple[torch.optim.AdamW, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW + linear warmup (``warmup`` fraction of steps) then linear decay to 0.

    ``params`` may be parameter groups (dicts with their own ``lr``).
    """
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    warm = max(1, int(round(warmup * total_steps)))

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return max(0.0, (total_steps - step) / max(1, total_steps - warm))

    return opt, torch.optim.lr_scheduler.LambdaLR(opt, factor)


class Progress:
    """Prints ``step/total, loss, elapsed, ETA`` every ``every`` steps (and at the end)."""

    def __init__(self, total: int, every: int = 20, start: int = 0, out=sys.stdout):
        self.total, self.every, self.start, self.out = total, every, start, out
        self.t0 = time.perf_counter()
        self.losses: list[float] = []

    def update(self, step: int, loss: float, **extra: float) -> None:
        self.losses.append(loss)
        if step % self.every and step != self.total:
            return
        done = step - self.start
        el = time.perf_counter() - self.t0
        eta = el / max(done, 1) * (self.total - step)
        avg = sum(self.losses[-self.every :]) / len(self.losses[-self.every :])
        more = " ".join(f"{k} {v:.4g}" for k, v in extra.items())
        print(
            f"step {step}/{self.total} loss {avg:.4f} {more} elapsed {el / 60:.1f} min "
            f"ETA {eta / 60:.1f} min",
            file=self.out,
            flush=True,
        )


def save_state(
    path: Path, model: nn.Module, opt: torch.optim.Optimizer, sched: Any, step: int, meta: dict
) -> None:
    """Resumable state: trainable params, AdamW moments and the step (safetensors + JSON)."""
    path.mkdir(parents=True, exist_ok=True)
    tensors = {}
    names = {id(p): n for n, p in model.named_parameters()}
    for n, p in model.named_parameters():
        if p.requires_grad:
            tensors[f"param/{n}"] = p.detach().cpu().contiguous()
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p, {})
            for k in ("exp_avg", "exp_avg_sq"):
                if k in st:
                    tensors[f"{k}/{names[id(p)]}"] = st[k].detach().cpu().contiguous()
    steps = {
        names[id(p)]: float(opt.state[p]["step"])
        for g in opt.param_groups
        for p in g["params"]
        if p in opt.state and "step" in opt.state[p]
    }
    tmp = path / "state.safetensors.tmp"
    save_file(tensors, str(tmp))
    tmp.replace(path / "state.safetensors")
    info = {"step": step, "sched": sched.state_dict(), "adam_steps": steps, **meta}
    (path / "state.json").write_text(json.dumps(info, indent=1), encoding="utf-8")


def load_state(path: Path, model: nn.Module, opt: torch.optim.Optimizer, sched: Any) -> int:
    """Restore :func:`save_state`; returns the step to resume from (0 if there is no state)."""
    if not (path / "state.json").exists():
        return 0
    info = json.loads((path / "state.json").read_text(encoding="utf-8"))
    tensors = load_file(str(path / "state.safetensors"))
    params = dict(model.named_parameters())
    with torch.no_grad():
        for k, v in tensors.items():
            kind, name = k.split("/", 1)
            if kind == "param":
                params[name].copy_(v)
    for name, p in params.items():
        if f"exp_avg/{name}" in tensors:
            opt.state[p] = {
                "step": torch.tensor(info["adam_steps"].get(name, 0.0)),
                "exp_avg": tensors[f"exp_avg/{name}"].clone(),
                "exp_avg_sq": tensors[f"exp_avg_sq/{name}"].clone(),
            }
    sched.load_state_dict(info["sched"])
    for group, lr in zip(opt.param_groups, sched.get_last_lr()):
        group["lr"] = lr  # the scheduler's state alone does not restore the current rate
    return int(info["step"])


class TimeLimit:
    """A wall-clock limit: ``minutes`` after ``start`` (0 = none), or an absolute ``deadline``."""

    def __init__(
        self, minutes: float = 0.0, start: float | None = None, deadline: float | None = None
    ):
        self.start = time.perf_counter() if start is None else start
        if deadline is not None:
            self.deadline = deadline
        else:
            self.deadline = self.start + minutes * 60.0 if minutes else math.inf

    def reached(self) -> bool:
        """True once the limit has passed."""
        return time.perf_counter() > self.deadline


class TrainLoop:
    """Resume, state, time limit and progress of one training run.

    Args:
        total: optimizer steps of the whole run.
        model, opt, sched: what :func:`save_state` / :func:`load_state` cover.
        state_dir: folder of the resumable state (``None``: no state is read or written).
        limit: the run's :class:`TimeLimit` (default: none).
        every: progress print interval in steps.
        out: where progress goes.
    """

    def __init__(
        self,
        total: int,
        model: nn.Module | None = None,
        opt: torch.optim.Optimizer | None = None,
        sched: Any = None,
        state_dir: Path | None = None,
        limit: TimeLimit | None = None,
        every: int = 20,
        out=sys.stdout,
    ):
        self.total, self.model, self.opt, self.sched = total, model, opt, sched
        self.state_dir = None if state_dir is None else Path(state_dir)
        self.limit = limit or TimeLimit()
        self.every, self.out = every, out
        self.step = 0
        self.progress = Progress(total, every=every, out=out)

    def state_info(self) -> dict[str, Any]:
        """The JSON part of the saved state (``{}`` when there is none)."""
        if self.state_dir is None or not (self.state_dir / "state.json").is_file():
            return {}
        return json.loads((self.state_dir / "state.json").read_text(encoding="utf-8"))

    def resume(self) -> int:
        """Restore the saved state (if any); returns the step to continue from (0 when fresh)."""
        if self.state_dir is not None:
            self.step = load_state(self.state_dir, self.model, self.opt, self.sched)
        return self.step

    def start(self) -> None:
        """Start the progress clock at the current step (call right before the first step)."""
        self.progress = Progress(self.total, every=self.every, start=self.step, out=self.out)

    def update(self, step: int, loss: float, **extra: float) -> None:
        """Record step ``step`` (1-based) and its loss; prints progress every ``every`` steps."""
        self.step = step
        self.progress.update(step, loss, **extra)

    def save(self, step: int, meta: dict[str, Any] | None = None) -> None:
        """Write the resumable state at ``step`` (no-op without ``state_dir``)."""
        if self.state_dir is not None:
            save_state(self.state_dir, self.model, self.opt, self.sched, step, meta or {})

    def out_of_time(self) -> bool:
        """True once the run's time limit has passed."""
        return self.limit.reached()
