"""logrerank.memory: heap trimming is safe to call anywhere and wired into both models."""

from __future__ import annotations

from logrerank import memory


def test_trim_heap_is_safe_and_repeatable() -> None:
    blobs = [bytearray(1 << 20) for _ in range(32)]  # 32 MB on the heap, then freed
    del blobs
    for _ in range(3):
        assert memory.trim_heap() in (True, False)


def test_encode_trims_only_when_enabled(make_tiny_model, monkeypatch) -> None:
    from logrerank import pipeline

    calls = []
    monkeypatch.setattr(pipeline, "trim_heap", lambda: calls.append(1) or True)
    model = make_tiny_model()
    model.encode("aspirin", ["Aspirin thins blood. It helps."])
    assert calls == [1]
    model.trim_memory = False
    model.encode("aspirin", ["Aspirin thins blood. It helps."])
    assert calls == [1]
