"""logrerank.local.memory: heap trimming is safe to call anywhere and wired into both models."""

from __future__ import annotations

import pytest

from logrerank.local import memory


def test_trim_heap_is_safe_and_repeatable() -> None:
    blobs = [bytearray(1 << 20) for _ in range(32)]  # 32 MB on the heap, then freed
    del blobs
    for _ in range(3):
        assert memory.trim_heap() in (True, False)


def test_encode_trims_at_the_end_and_when_over_budget(make_tiny_model, monkeypatch) -> None:
    from logrerank import pipeline

    calls = []
    monkeypatch.setattr(pipeline, "trim_heap", lambda: calls.append("end") or True)
    monkeypatch.setattr(memory, "trim_heap", lambda: calls.append("batch") or True)
    model = make_tiny_model()
    model.config.local.max_batch_windows = 1  # three passages -> three batches
    passages = ["Aspirin thins blood.", "It helps.", "Doses vary."]
    model.encode("aspirin", passages)
    assert calls == ["end"]  # a tiny call stays under the budget
    calls.clear()
    rss = iter(range(0, 10_000, 100))  # +100 MB per reading
    monkeypatch.setattr(memory, "rss_mb", lambda: float(next(rss)))
    model.trim_budget_mb = 150.0
    model.encode("aspirin", passages)
    assert calls == ["batch", "batch", "end"]  # batches 2 and 3 are over +150 MB
    calls.clear()
    model.trim_memory = False
    model.encode("aspirin", passages)
    assert calls == []


def test_heap_budget() -> None:
    assert memory.rss_mb() > 0  # Linux CI
    assert memory.HeapBudget(1e9).check() is False
    assert memory.HeapBudget(-1.0).check() is True  # always over a negative budget
    assert memory.HeapBudget(-1.0, enabled=False).check() is False


def test_trimming_does_not_change_scores(make_tiny_model) -> None:
    model = make_tiny_model()
    model.config.local.max_batch_windows = 1
    passages = ["Aspirin thins blood. It helps.", "Doses vary. Ask a doctor.", "Rain falls."]
    on = model.encode("aspirin dose", passages).local_logits
    model.trim_memory = False
    off = model.encode("aspirin dose", passages).local_logits
    assert (on == off).all()


def test_bf16_weight_copy_is_bit_identical_and_rebuilt_on_change(make_tiny_model) -> None:
    import dataclasses

    import torch

    from logrerank.local.backbone import bf16_supported

    if not bf16_supported(torch.device("cpu")):
        pytest.skip("no bf16 autocast on this CPU")
    model = make_tiny_model(precision="bf16")
    passages = ["Aspirin thins blood. It helps.", "Doses vary. Ask a doctor.", "Rain falls."]
    model.bf16_weights = False
    ref = model.encode("aspirin dose", passages).local_logits
    model.bf16_weights = True
    twin = model._inference_scorer()
    assert twin is not model.local and twin is model._inference_scorer()  # cached
    lin = [m for m in twin.modules() if isinstance(m, torch.nn.Linear)]
    assert lin and all(m.weight.dtype == torch.bfloat16 for m in lin)
    assert all(p.dtype == torch.float32 for p in model.local.parameters())  # original untouched
    assert torch.equal(model.encode("aspirin dose", passages).local_logits, ref)
    assert not any("twin" in k for k in model.state_dict())  # never saved
    with torch.no_grad():  # a weight change (training step, load_state_dict) rebuilds the copy
        next(model.local.local_head.parameters()).add_(0.5)
    assert model._inference_scorer() is not twin
    changed = model.encode("aspirin dose", passages).local_logits
    model.bf16_weights = False
    assert torch.equal(changed, model.encode("aspirin dose", passages).local_logits)
    model.config = dataclasses.replace(model.config, precision="fp32")
    model.autocast_dtype = None
    assert model._inference_scorer() is model.local  # fp32: no copy


def test_freeze_startup_objects_keeps_later_garbage_collectable() -> None:
    import gc
    import weakref

    from logrerank.local.memory import freeze_startup_objects

    class Node:
        pass

    try:
        assert freeze_startup_objects() > 0
        a, b = Node(), Node()  # a reference cycle created after the freeze
        a.other, b.other = b, a
        ref = weakref.ref(a)
        del a, b
        gc.collect()
        assert ref() is None  # collected: only start-up objects are frozen
    finally:
        gc.unfreeze()
