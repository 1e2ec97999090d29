"""The autocast precision rule: "auto" picks bf16 only where it is faster than fp32 (CUDA, AMX)."""

from __future__ import annotations

import pytest
import torch

from logrerank.local import backbone as bb

CPU = torch.device("cpu")


@pytest.mark.parametrize(
    ("faster", "bf16", "precision", "expected"),
    [
        (True, True, "auto", torch.bfloat16),  # AMX
        (False, True, "auto", None),  # bf16 supported but slower than fp32 here
        (False, True, "bf16", torch.bfloat16),  # asked for explicitly: bf16 where supported
        (False, False, "bf16", None),  # unsupported: falls back to fp32
        (True, False, "auto", None),
        (True, True, "fp32", None),
    ],
)
def test_auto_needs_a_faster_bf16_on_cpu(monkeypatch, faster, bf16, precision, expected) -> None:
    monkeypatch.setattr(bb, "cpu_bf16_is_faster", lambda: faster)
    monkeypatch.setattr(bb, "bf16_supported", lambda device: bf16)
    assert bb.autocast_dtype(CPU, precision) is expected


@pytest.mark.parametrize("amx", [True, False])
def test_cpu_bf16_rule_is_amx_only(monkeypatch, amx) -> None:
    """A hardware fact, not a timing: the same decision in every process (no probe to flip)."""
    monkeypatch.setattr(bb, "amx_supported", lambda: amx)
    assert bb.cpu_bf16_is_faster() is amx
    assert not hasattr(bb, "_probe_bf16_speedup")


def test_cuda_auto_ignores_the_cpu_rule(monkeypatch) -> None:
    monkeypatch.setattr(bb, "cpu_bf16_is_faster", lambda: False)
    monkeypatch.setattr(bb, "bf16_supported", lambda device: True)
    assert bb.autocast_dtype(torch.device("cuda"), "auto") is torch.bfloat16


def test_unknown_precision_rejected() -> None:
    with pytest.raises(ValueError, match="precision"):
        bb.autocast_dtype(CPU, "fp16")


def test_amx_probe_returns_a_bool() -> None:
    assert isinstance(bb.amx_supported(), bool)
