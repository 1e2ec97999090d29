"""logrerank.memory: heap trimming is safe to call anywhere and wired into both models."""

from __future__ import annotations

from logrerank import memory


def test_trim_heap_is_safe_and_repeatable() -> None:
    blobs = [bytearray(1 << 20) for _ in range(32)]  # 32 MB on the heap, then freed
    del blobs
    for _ in range(3):
        assert memory.trim_heap() in (True, False)


def test_encode_trims_after_every_batch_only_when_enabled(make_tiny_model, monkeypatch) -> None:
    from logrerank import pipeline

    calls = []
    monkeypatch.setattr(pipeline, "trim_heap", lambda: calls.append(1) or True)
    model = make_tiny_model()
    model.encode("aspirin", ["Aspirin thins blood. It helps."])
    assert calls == [1]  # one passage = one window = one batch
    calls.clear()
    model.config.local.max_batch_windows = 1  # three passages -> three batches
    enc = model.encode("aspirin", ["Aspirin thins blood.", "It helps.", "Doses vary."])
    assert len(calls) == 3
    assert enc.local_logits.isfinite().all()
    calls.clear()
    model.trim_memory = False
    model.encode("aspirin", ["Aspirin thins blood. It helps."])
    assert calls == []


def test_trimming_does_not_change_scores(make_tiny_model) -> None:
    model = make_tiny_model()
    model.config.local.max_batch_windows = 1
    passages = ["Aspirin thins blood. It helps.", "Doses vary. Ask a doctor.", "Rain falls."]
    on = model.encode("aspirin dose", passages).local_logits
    model.trim_memory = False
    off = model.encode("aspirin dose", passages).local_logits
    assert (on == off).all()
