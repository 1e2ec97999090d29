"""The comparison menu says what each bundled cross-encoder was trained on, read from its
training record (``logrerank.app.ce_choice.trained_on``)."""

from __future__ import annotations

import json

from logrerank.app import ce_choice


def test_bundled_entries_name_their_training_sources() -> None:
    menu = {value: text for text, value in ce_choice.options("", {})}
    assert menu["bundled"].startswith("cross-encoder (bundled) · trained on SciFact, ")
    assert (
        "Evidence Inference" in menu["bundled"] and "CL-SciSumm hand-annotated" in menu["bundled"]
    )
    assert menu["twin"] == "cross-encoder twin · trained on SciFact, Citation-Integrity"


def test_a_missing_or_broken_record_gives_no_claim(tmp_path, monkeypatch) -> None:
    from logrerank.models import cross_encoder

    monkeypatch.setattr(cross_encoder, "default_checkpoint_dir", lambda: tmp_path)
    assert ce_choice.trained_on("bundled") == ""  # no record
    (tmp_path / "logrerank_delta.json").write_text(json.dumps({"training": {}}))
    assert ce_choice.trained_on("bundled") == ""  # no sources
    (tmp_path / "logrerank_delta.json").write_text("{not json")
    assert ce_choice.trained_on("bundled") == ""
    assert ce_choice.trained_on(str(tmp_path)) == ""  # a user folder: nothing claimed
    record = {"training": {"config": {"sources": ["scifact", "newsource"]}}}
    (tmp_path / "logrerank_delta.json").write_text(json.dumps(record))
    assert ce_choice.trained_on("bundled") == "trained on SciFact, newsource"
