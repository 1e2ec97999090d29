"""The autocast precision rule: "auto" picks bf16 only where it is faster than fp32."""

from __future__ import annotations

import pytest
import torch

from logrerank import backbone as bb

CPU = torch.device("cpu")


@pytest.mark.parametrize(
    ("amx", "bf16", "precision", "expected"),
    [
        (True, True, "auto", torch.bfloat16),  # AMX CPU: bf16 is the fast path
        (False, True, "auto", None),  # AVX512-BF16 without AMX: fp32 is faster
        (False, True, "bf16", torch.bfloat16),  # asked for explicitly: bf16 where supported
        (False, False, "bf16", None),  # unsupported: falls back to fp32
        (True, True, "fp32", None),
    ],
)
def test_auto_needs_amx_on_cpu(monkeypatch, amx, bf16, precision, expected) -> None:
    monkeypatch.setattr(bb, "amx_supported", lambda: amx)
    monkeypatch.setattr(bb, "bf16_supported", lambda device: bf16)
    assert bb.autocast_dtype(CPU, precision) is expected


def test_cuda_auto_ignores_amx(monkeypatch) -> None:
    monkeypatch.setattr(bb, "amx_supported", lambda: False)
    monkeypatch.setattr(bb, "bf16_supported", lambda device: True)
    assert bb.autocast_dtype(torch.device("cuda"), "auto") is torch.bfloat16


def test_unknown_precision_rejected() -> None:
    with pytest.raises(ValueError, match="precision"):
        bb.autocast_dtype(CPU, "fp16")


def test_amx_probe_returns_a_bool() -> None:
    assert isinstance(bb.amx_supported(), bool)
