"""Faults: checkpoints that are missing, truncated, mismatched or unsafe give a clear error from
the API and the CLI; a failing cross-encoder stage degrades visibly to the first-pass order (and
the evidence-graph selector to BM25 relevance); concurrent reranks on one model agree.

The basic checkpoint cases (missing / truncated / garbage files, bad JSON, unknown fields, wrong
types, shape mismatches, unknown and missing tensors) live in ``test_pipeline.py``; this file
fills the gaps around them.
"""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from logrerank import cli
from logrerank.baselines.bm25_ranker import BM25Reranker
from logrerank.baselines.cross_encoder_stage import CrossEncoderStage
from logrerank.checkpoint import CONFIG_NAME, WEIGHTS_NAME, CheckpointError
from logrerank.local.backbone import BackboneError
from logrerank.models.cross_encoder import CrossEncoder
from logrerank.pipeline import LoGReranker
from logrerank.rankers import Models, build_rankers
from logrerank.types import Passage

QUERY = "does aspirin lower heart attack risk"
PASSAGES = [
    Passage("Aspirin reduces the risk of heart attack in adults.", title="Aspirin"),
    Passage("Statins lower cholesterol. They are widely prescribed."),
    Passage("The weather in Paris is mild in spring."),
    Passage("Low-dose aspirin is used after a heart attack to prevent another one."),
    Passage("Python is a programming language."),
]


@pytest.fixture(scope="module")
def checkpoint(tiny_model, tmp_path_factory) -> Path:
    return tiny_model.save_pretrained(tmp_path_factory.mktemp("faults") / "log")


def _copy(checkpoint: Path, tmp_path: Path) -> Path:
    path = tmp_path / "ckpt"
    shutil.copytree(checkpoint, path)
    return path


class _Exploit:
    """Unpickling this writes a marker file: proof that a pickle was loaded."""

    marker: Path | None = None

    def __reduce__(self):
        return (Path.write_text, (self.marker, "pwned"))


# --------------------------------------------------------------------------------------
# Safe loading: safetensors only


def test_pickle_weights_are_never_loaded(checkpoint, tmp_path) -> None:
    path = _copy(checkpoint, tmp_path)
    (path / WEIGHTS_NAME).unlink()
    marker = tmp_path / "marker"
    exploit = _Exploit()
    exploit.marker = marker
    for name in ("pytorch_model.bin", "model.pt", "model.ckpt"):
        (path / name).write_bytes(pickle.dumps(exploit))
    with pytest.raises(CheckpointError, match="missing model.safetensors"):
        LoGReranker.from_pretrained(path)
    assert not marker.exists()


def test_pickle_disguised_as_safetensors_is_rejected(checkpoint, tmp_path) -> None:
    path = _copy(checkpoint, tmp_path)
    marker = tmp_path / "marker"
    exploit = _Exploit()
    exploit.marker = marker
    (path / WEIGHTS_NAME).write_bytes(pickle.dumps(exploit))
    with pytest.raises(CheckpointError, match="cannot read"):
        LoGReranker.from_pretrained(path)
    assert not marker.exists()


# --------------------------------------------------------------------------------------
# Configs that name unknown fields or wrong shapes / types


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda m: m.update(bogus=1), r"unknown config field 'bogus'"),
        (lambda m: m["local"].update(not_a_knob=2), "not_a_knob"),
        (lambda m: m.update(backbone=5), "'backbone' must be an object"),
        (lambda m: m["global"].update(hidden=48), "shape"),  # weights are hidden 32
        (lambda m: m["local"].update(head_hidden=64), "shape"),
        (lambda m: m["global"].update(layers=3), "missing tensors"),
    ],
)
def test_config_with_unknown_fields_or_wrong_shapes(checkpoint, tmp_path, edit, match) -> None:
    path = _copy(checkpoint, tmp_path)
    meta = json.loads((path / CONFIG_NAME).read_text())
    edit(meta["model"])
    (path / CONFIG_NAME).write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=match) as info:
        LoGReranker.from_pretrained(path)
    assert str(path) in str(info.value)  # the message says which checkpoint


@pytest.mark.parametrize("model", [[1], "x", None])
def test_config_model_section_not_an_object(checkpoint, tmp_path, model) -> None:
    path = _copy(checkpoint, tmp_path)
    meta = json.loads((path / CONFIG_NAME).read_text())
    meta["model"] = model
    (path / CONFIG_NAME).write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="must be a JSON object"):
        LoGReranker.from_pretrained(path)


def test_empty_config_and_weights_folder(checkpoint, tmp_path) -> None:
    path = _copy(checkpoint, tmp_path)
    (path / CONFIG_NAME).write_text("")
    with pytest.raises(CheckpointError, match="not valid JSON"):
        LoGReranker.from_pretrained(path)
    path = _copy(checkpoint, tmp_path / "b")
    (path / WEIGHTS_NAME).unlink()
    (path / WEIGHTS_NAME).mkdir()
    with pytest.raises(CheckpointError, match=r"missing model.safetensors|cannot read"):
        LoGReranker.from_pretrained(path)


def test_dtype_changed_tensor_loads_or_fails_clearly(checkpoint, tmp_path) -> None:
    path = _copy(checkpoint, tmp_path)
    state = load_file(str(path / WEIGHTS_NAME))
    state = {k: v.half() for k, v in state.items()}
    save_file(state, str(path / WEIGHTS_NAME))
    model = LoGReranker.from_pretrained(path)  # fp16 tensors are cast on load
    r = model.rerank(QUERY, PASSAGES)
    assert all(0.0 <= s.score <= 1.0 for s in r.sentences)


def test_non_finite_weights_are_rejected(checkpoint, tmp_path) -> None:
    path = _copy(checkpoint, tmp_path)
    state = load_file(str(path / WEIGHTS_NAME))
    key = next(k for k in state if k.startswith("local."))
    state[key] = torch.full_like(state[key], float("nan"))
    save_file(state, str(path / WEIGHTS_NAME))
    with pytest.raises(CheckpointError, match="NaN|finite"):
        LoGReranker.from_pretrained(path)


def test_missing_or_truncated_backbone(checkpoint, tiny_dir, tmp_path) -> None:
    # The checkpoint names a backbone folder that is gone ...
    path = _copy(checkpoint, tmp_path)
    meta = json.loads((path / CONFIG_NAME).read_text())
    meta["model"]["backbone"]["name_or_path"] = str(tmp_path / "no-such-backbone")
    (path / CONFIG_NAME).write_text(json.dumps(meta))
    with pytest.raises(BackboneError, match="no-such-backbone"):
        LoGReranker.from_pretrained(path)
    # ... or whose weights are truncated.
    backbone = tmp_path / "backbone"
    shutil.copytree(tiny_dir, backbone)
    weights = next(backbone.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:1000])
    meta["model"]["backbone"]["name_or_path"] = str(backbone)
    (path / CONFIG_NAME).write_text(json.dumps(meta))
    with pytest.raises((BackboneError, CheckpointError), match="backbone|encoder"):
        LoGReranker.from_pretrained(path)


def test_backbone_errors_say_what_and_how_to_fix(tmp_path) -> None:
    from logrerank.local.backbone import load_encoder, load_tokenizer, resolve

    gone = tmp_path / "gone"
    for load in (resolve, load_tokenizer, load_encoder):
        with pytest.raises(BackboneError, match="neither a folder.*nothing is downloaded"):
            load(str(gone))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BackboneError, match="has no config.json; set backbone.name_or_path"):
        resolve(str(empty))
    afile = tmp_path / "file.bin"
    afile.write_bytes(b"x")
    with pytest.raises(BackboneError, match="is a file, not a folder"):
        resolve(str(afile))
    with pytest.raises(BackboneError, match="local Hugging Face cache"):
        resolve("no-such-org/no-such-model")


# --------------------------------------------------------------------------------------
# CLI: one clear line, exit status 2


@pytest.mark.parametrize("how", ["missing-folder", "missing-weights", "truncated", "bad-field"])
def test_cli_checkpoint_errors_are_one_line(checkpoint, tmp_path, capsys, how) -> None:
    path = _copy(checkpoint, tmp_path)
    if how == "missing-folder":
        path = tmp_path / "nowhere"
    elif how == "missing-weights":
        (path / WEIGHTS_NAME).unlink()
    elif how == "truncated":
        data = (path / WEIGHTS_NAME).read_bytes()
        (path / WEIGHTS_NAME).write_bytes(data[: len(data) // 3])
    else:
        meta = json.loads((path / CONFIG_NAME).read_text())
        meta["model"]["graph"]["tau"] = 0.5
        (path / CONFIG_NAME).write_text(json.dumps(meta))
    passages = tmp_path / "p.txt"
    passages.write_text("Aspirin works.\n\nStatins too.", encoding="utf-8")
    rc = cli.main(["rerank", "-q", QUERY, "-p", str(passages), "--checkpoint", str(path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("logrerank: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


# --------------------------------------------------------------------------------------
# A failing cross-encoder stage degrades to the first pass: BM25 order, visible warning
# (``tiny_ce_dir`` of conftest.py is the working cross-encoder)


def _bm25_order() -> list[int]:
    return BM25Reranker("passage").rank(QUERY, PASSAGES).passage_order()


def _assert_degraded(r, reason: str) -> None:
    assert r.passage_order() == _bm25_order()
    assert r.info["degraded"] is True and r.info["first_pass"] == "bm25"
    msgs = [w for w in r.warnings if w.startswith("cross-encoder unavailable")]
    assert msgs and reason in msgs[0] and "showing first-pass order" in msgs[0], r.warnings
    json.dumps(r.to_dict())


def test_ce_stage_from_registry_with_missing_model_degrades(tmp_path) -> None:
    rankers = build_rankers(["ce-stage"], Models(cross_encoder_path=str(tmp_path / "gone")))
    stage = rankers["ce-stage"]
    _assert_degraded(stage.rank(QUERY, PASSAGES), "does not exist")
    _assert_degraded(stage.rank(QUERY, PASSAGES), "does not exist")  # every call, not once


def test_ce_stage_with_broken_weights_degrades(tiny_ce_dir, tmp_path) -> None:
    broken = tmp_path / "ce"
    shutil.copytree(tiny_ce_dir, broken)
    weights = next(broken.glob("*.safetensors"))
    weights.write_bytes(weights.read_bytes()[:500])
    stage = CrossEncoderStage(BM25Reranker("passage"), broken)
    _assert_degraded(stage.rank(QUERY, PASSAGES), "failed to load")


def test_ce_stage_transient_scoring_failure_recovers(tiny_ce_dir, monkeypatch) -> None:
    model = CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32")
    stage = CrossEncoderStage(BM25Reranker("passage"), model)
    healthy = stage.rank(QUERY, PASSAGES)
    assert healthy.info["degraded"] is False and healthy.info["reranked"] == len(PASSAGES)
    real = model.predict
    monkeypatch.setattr(model, "predict", lambda pairs: (_ for _ in ()).throw(MemoryError("oom")))
    _assert_degraded(stage.rank(QUERY, PASSAGES), "MemoryError: oom")
    monkeypatch.setattr(model, "predict", real)
    again = stage.rank(QUERY, PASSAGES)
    assert again.info["degraded"] is False
    assert again.passage_order() == healthy.passage_order()


def test_ce_stage_wrong_score_count_degrades(tiny_ce_dir, monkeypatch) -> None:
    model = CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32")
    monkeypatch.setattr(model, "predict", lambda pairs: [0.5])
    stage = CrossEncoderStage(BM25Reranker("passage"), model)
    _assert_degraded(stage.rank(QUERY, PASSAGES), "got 1 scores")


def test_evidence_graph_ce_with_missing_model_degrades_to_bm25(tmp_path) -> None:
    from logrerank.baselines.evidence_graph import EvidenceGraphSelector

    rankers = build_rankers(
        ["evidence-graph-ce"], Models(cross_encoder_path=str(tmp_path / "gone"))
    )
    r = rankers["evidence-graph-ce"].rank(QUERY, PASSAGES)
    plain = EvidenceGraphSelector().rank(QUERY, PASSAGES)  # BM25 relevance
    assert r.passage_order() == plain.passage_order()
    assert r.info["degraded"] is True and "does not exist" in r.info["degraded_reason"]
    assert r.warnings[0].startswith("relevance ranker 'cross-encoder' failed")
    assert "BM25 relevance instead" in r.warnings[0]
    assert plain.info["degraded"] is False
    json.dumps(r.to_dict())


def test_evidence_graph_ce_transient_failure_recovers(tiny_ce_dir, monkeypatch) -> None:
    from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
    from logrerank.baselines.evidence_graph import EvidenceGraphSelector

    model = CrossEncoder(tiny_ce_dir, device="cpu", precision="fp32")
    selector = EvidenceGraphSelector(relevance_ranker=CrossEncoderRanker(model))
    healthy = selector.rank(QUERY, PASSAGES)
    assert healthy.info["degraded"] is False
    assert healthy.info["relevance_source"] == "cross-encoder"
    real = model.predict
    monkeypatch.setattr(model, "predict", lambda pairs: (_ for _ in ()).throw(MemoryError("oom")))
    bad = selector.rank(QUERY, PASSAGES)
    assert bad.info["degraded"] is True and "MemoryError: oom" in bad.warnings[0]
    monkeypatch.setattr(model, "predict", real)
    assert selector.rank(QUERY, PASSAGES).passage_order() == healthy.passage_order()


def test_evidence_graph_ce_bad_input_still_raises(tmp_path) -> None:
    from logrerank.types import InputError

    rankers = build_rankers(
        ["evidence-graph-ce"], Models(cross_encoder_path=str(tmp_path / "gone"))
    )
    with pytest.raises(InputError):
        rankers["evidence-graph-ce"].rank("  ", PASSAGES)


# --------------------------------------------------------------------------------------
# Concurrency: the app serves requests from several threads on one model


def test_concurrent_reranks_match_sequential(tiny_model) -> None:
    from concurrent.futures import ThreadPoolExecutor

    passages = [
        f"Finding {i} concerns aspirin and platelets. Bleeding rose in arm {i}. Deaths fell."
        for i in range(10)
    ]
    expected = [(s.node, s.score) for s in tiny_model.rerank(QUERY, passages).sentences]

    def one(_):
        try:
            return [(s.node, s.score) for s in tiny_model.rerank(QUERY, passages).sentences]
        except Exception as exc:  # noqa: BLE001 - reported below
            return repr(exc)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(one, range(40)))
    bad = [r for r in results if r != expected]
    assert not bad, f"{len(bad)}/40 concurrent calls differ, e.g. {str(bad[0])[:200]}"
