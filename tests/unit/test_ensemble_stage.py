"""A seed ensemble of multi-passage stages (``logrerank ensemble-stage``): the global logit is
the members' mean, the checkpoint round-trips (members stored as float16), training from an
ensemble init starts one fresh stage, and bad input is refused with a clear message."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors import safe_open

from logrerank.app.result_view import stage_members, stage_note
from logrerank.cli import main
from logrerank.graph.ensemble import GlobalEnsemble
from logrerank.graph.inputs import CITING, MULTI, global_scores, graph_inputs, route
from logrerank.pipeline import LoGReranker
from logrerank.training.log.citing_stage import add_citing_stage
from logrerank.training.log.ensemble_stage import build_ensemble
from logrerank.types import Passage
from tests.unit.test_citing_stage import _model
from tests.unit.test_routing import PAPER_CITING, PAPER_QUESTION, PAPERS, _perturb

PASSAGES = [Passage(p["text"], p["title"]) for p in PAPERS]


@pytest.fixture(scope="module")
def seeds(make_tiny_model, tmp_path_factory):
    """Three checkpoints on one local stage whose multi-passage stages differ (three "seeds")."""
    root = tmp_path_factory.mktemp("ensemble")
    dirs, models = [], []
    for i, seed in enumerate((2, 3, 4)):
        m = _model(make_tiny_model, seed, citance_global_weight=0.75)
        m.save_pretrained(root / f"seed{i}", extra={"training": {"seed": 13 + i}})
        dirs.append(root / f"seed{i}")
        models.append(m)
    return dirs, models


def _global_logits(model, query: str) -> torch.Tensor:
    """``[N]`` the routed global stage's logits on the paper pool."""
    enc = model.encode(query, PASSAGES)
    data, lex = graph_inputs(model.config, enc, model.config.graph, True)
    stage = route(model.config, enc)
    module = model.global_citing if stage == CITING else model.global_model
    with torch.inference_mode():
        return global_scores(module, enc, data, lex, torch.device("cpu"))[1]


def test_ensemble_logits_are_the_members_mean(seeds):
    _, models = seeds
    ens = GlobalEnsemble.of([m.global_model for m in models])
    assert ens.config.members == 3 and not ens.training
    enc = models[0].encode(PAPER_QUESTION, PASSAGES)
    data, lex = graph_inputs(models[0].config, enc, models[0].config.graph, True)
    dev = torch.device("cpu")
    with torch.inference_mode():
        each = [global_scores(m.global_model, enc, data, lex, dev) for m in models]
        _, logits, attention = global_scores(ens, enc, data, lex, dev)
    assert torch.allclose(logits, torch.stack([e[1] for e in each]).mean(0), atol=1e-6)
    assert torch.allclose(attention[0], torch.stack([e[2][0] for e in each]).mean(0), atol=1e-6)
    with pytest.raises(ValueError, match="not trained"):
        ens(enc.h, enc.role_probs, enc.local_logits, data.edge_index, data.edge_type,
            pairs=torch.zeros(2, 1, dtype=torch.long))  # fmt: skip


def test_checkpoint_round_trip_and_citing_ensemble(seeds, tmp_path):
    dirs, models = seeds
    record = build_ensemble(dirs, tmp_path / "ens", command="test")
    assert record["seeds"] == [13, 14, 15] and record["stored_half"]
    model = LoGReranker.from_pretrained(tmp_path / "ens")
    assert isinstance(model.global_model, GlobalEnsemble)
    assert model.config.global_.members == 3 and model.config.global_.store_half
    with safe_open(str(tmp_path / "ens" / "model.safetensors"), "pt") as f:
        dtypes = {k: f.get_slice(k).get_dtype() for k in f.keys()}  # noqa: SIM118
    assert {v for k, v in dtypes.items() if k.startswith("global_model.members.2.")} == {"F16"}
    assert {v for k, v in dtypes.items() if k.startswith("local.")} == {"F32"}
    # float16 storage moves the logits by rounding only
    want = torch.stack([_global_logits(m, PAPER_QUESTION) for m in models]).mean(0)
    assert torch.allclose(_global_logits(model, PAPER_QUESTION), want, atol=2e-2)
    full = build_ensemble(dirs, tmp_path / "ens32", store_half=False)
    assert not full["stored_half"]
    model32 = LoGReranker.from_pretrained(tmp_path / "ens32")
    assert torch.allclose(_global_logits(model32, PAPER_QUESTION), want, atol=1e-5)
    ranked = model.rerank(PAPER_QUESTION, PASSAGES)
    assert ranked.info["route"]["stage"] == MULTI and len(ranked.sentences) > 0
    # two ensembles on one local stage: one for questions, one for citing sentences
    build_ensemble(dirs[::-1], tmp_path / "ens-b")
    add_citing_stage(tmp_path / "ens", tmp_path / "ens-b", tmp_path / "cs")
    cs = LoGReranker.from_pretrained(tmp_path / "cs")
    assert isinstance(cs.global_citing, GlobalEnsemble)
    assert cs.rerank(PAPER_CITING, PASSAGES).info["route"]["stage"] == CITING
    info = cs.rerank(PAPER_QUESTION, PASSAGES).info
    note = stage_note(info, 0.5, stage_members(cs, info["global_stage"]))
    assert "seed ensemble of 3 stages" in note
    # a question ensemble with one citing stage (the bundled shape): the citing stage is one
    # seed's, scores as that seed's stage does (float16 storage aside)
    add_citing_stage(tmp_path / "ens", dirs[1], tmp_path / "cs1")
    one = LoGReranker.from_pretrained(tmp_path / "cs1")
    assert (one.config.global_.members, one.config.global_.citing_members) == (3, 1)
    assert not isinstance(one.global_citing, GlobalEnsemble)
    assert stage_members(one, CITING) == 1 and stage_members(one, MULTI) == 3
    assert "ensemble" not in stage_note(one.rerank(PAPER_CITING, PASSAGES).info, 0.5, 1)
    want = _global_logits(models[1], PAPER_CITING)  # seed 1 alone ranks its citing pools
    assert torch.allclose(_global_logits(one, PAPER_CITING), want, atol=2e-2)


def test_training_from_an_ensemble_starts_one_fresh_stage(seeds, tmp_path):
    from logrerank.training.log.graph_cv import with_new_graph
    from logrerank.training.log.graph_cv_config import GraphCVConfig

    dirs, _ = seeds
    build_ensemble(dirs, tmp_path / "ens")
    model = with_new_graph(LoGReranker.from_pretrained(tmp_path / "ens"), GraphCVConfig(), 13)
    assert not isinstance(model.global_model, GlobalEnsemble)
    assert model.config.global_.members == 1 and not model.config.global_.store_half


def test_bad_input_is_refused_clearly(seeds, make_tiny_model, tmp_path, capsys):
    dirs, _ = seeds
    with pytest.raises(ValueError, match="at least two"):
        build_ensemble(dirs[:1], tmp_path / "o")
    with pytest.raises(ValueError, match="twice"):
        build_ensemble([dirs[0], dirs[0]], tmp_path / "o")
    with pytest.raises(ValueError, match="new folder"):
        build_ensemble(dirs, dirs[1])
    other = _model(make_tiny_model, 5)
    _perturb(other.local.local_head, 6)
    other.save_pretrained(tmp_path / "other")
    with pytest.raises(ValueError, match="do not share their local stage"):
        build_ensemble([dirs[0], tmp_path / "other"], tmp_path / "o")
    build_ensemble(dirs[:2], tmp_path / "e2")
    with pytest.raises(ValueError, match="ensemble already"):
        build_ensemble([tmp_path / "e2", dirs[2]], tmp_path / "o")
    assert main(["ensemble-stage", "--checkpoints", str(dirs[0]), str(tmp_path / "none"),
                 "--out", str(tmp_path / "o")]) != 0  # fmt: skip
    assert "not a checkpoint folder" in capsys.readouterr().err
    assert (
        main(["ensemble-stage", "--checkpoints", str(dirs[0]), "--out", str(tmp_path / "o")]) != 0
    )
    assert "at least two" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert (
        main(["ensemble-stage", "--checkpoints", *map(str, dirs), "--out", str(tmp_path / "c")])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["written"] == str(tmp_path / "c")
