"""The shared training loop: time limit, resume from the saved state, progress."""

import io
import time

import torch
from torch import nn

from logrerank.training.loop import TimeLimit, TrainLoop, make_optimizer


def _run(tmp_path, steps: int, total: int = 6):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt, sched = make_optimizer(list(model.parameters()), 0.1, 0.0, total, 0.2)
    out = io.StringIO()
    loop = TrainLoop(total, model, opt, sched, tmp_path / "state", every=2, out=out)
    step = loop.resume()
    loop.start()
    x = torch.arange(12.0).reshape(4, 3)
    for s in range(step, min(total, step + steps)):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        sched.step()
        loop.update(s + 1, float(loss.detach()))
        loop.save(s + 1, {"note": "x"})
    return model, loop, out.getvalue()


def test_resume_continues_like_one_run(tmp_path):
    whole, _, _ = _run(tmp_path / "a", 6)
    _run(tmp_path / "b", 3)
    resumed, loop, text = _run(tmp_path / "b", 6)
    assert loop.state_info()["step"] == 6 and loop.state_info()["note"] == "x"
    assert "step 6/6" in text and "step 2/6" not in text
    for p, q in zip(whole.parameters(), resumed.parameters()):
        assert torch.allclose(p, q)


def test_time_limit():
    assert not TimeLimit(0).reached()  # 0 = no limit
    assert TimeLimit(1, start=time.perf_counter() - 61).reached()
    assert not TimeLimit(1).reached()
    assert TimeLimit(deadline=time.perf_counter() - 1).reached()
    assert TrainLoop(3).state_info() == {} and TrainLoop(3).resume() == 0
