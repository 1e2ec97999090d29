"""A multi-passage stage of its own for citing queries (``logrerank citing-stage``): the route
sends citing queries in paper pools to it and nothing else; the written checkpoint holds the
base model as is, the donor's stage, its citing cells and a float16 single-passage stage."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from safetensors import safe_open

from logrerank.app.result_view import stage_note
from logrerank.checkpoint import CheckpointError
from logrerank.cli import main
from logrerank.config import LoGConfig, ScoreConfig
from logrerank.graph.inputs import CITING, MULTI, SINGLE, stage_module
from logrerank.log_checkpoint import read_meta, write_checkpoint
from logrerank.pipeline import LoGReranker
from logrerank.ranking.routing import pool_route
from logrerank.training.log.citing_stage import add_citing_stage
from logrerank.training.log.graph_cv import attach_single_stage, single_stage_of
from logrerank.types import Passage
from tests.unit.test_routing import (
    MULTI_STAGE,
    PAPER_CITING,
    PAPER_QUESTION,
    PAPERS,
    QUERY,
    TITLED,
    UNTITLED,
    _perturb,
)

PAPER_ROUTE = dict(paper_title_words=7.0, paper_global_weight=0.25, citance_route=True)


def _model(make_tiny_model, seed: int, **score) -> LoGReranker:
    """A routed tiny model (single stage attached, untitled route local only) whose multi-passage
    stage is perturbed by ``seed``; all models share the local stage."""
    model = make_tiny_model(**MULTI_STAGE)
    single = make_tiny_model()
    _perturb(single.global_model, 1)
    attach_single_stage(model, single_stage_of(single, 0.5))
    _perturb(model.global_model, seed)
    model.config.score = dataclasses.replace(
        model.config.score, untitled_global_weight=0.0, **PAPER_ROUTE, **score
    )
    model.config.trained = True
    return model


@pytest.fixture(scope="module")
def pair(make_tiny_model, tmp_path_factory):
    """``(base dir, citing dir, base, citing)``: two checkpoints on one local stage."""
    root = tmp_path_factory.mktemp("citing")
    base = _model(make_tiny_model, 2, citance_global_weight=1.0)
    citing = _model(make_tiny_model, 3, citance_global_weight=0.5, citance_sentence_weight=0.0)
    extra = {"training": {"seed": 13, "paper_route": {"chosen": {}, "macro": {}}}}
    base.save_pretrained(root / "base", extra=extra)
    citing.save_pretrained(root / "citing", extra=extra)
    return root / "base", root / "citing", base, citing


def test_route_sends_only_citing_queries_in_paper_pools_to_the_citing_stage():
    papers = [Passage(p["text"], p["title"]) for p in PAPERS]
    entities = [Passage(p["text"], p["title"]) for p in TITLED]
    on = LoGConfig(score=ScoreConfig(**PAPER_ROUTE, citance_stage=True))
    off = LoGConfig(score=ScoreConfig(**PAPER_ROUTE))
    assert pool_route(on, papers, PAPER_CITING).stage == CITING
    assert (
        "multi-passage stage of citing queries" in pool_route(on, papers, PAPER_CITING).describe()
    )
    assert pool_route(on, papers, PAPER_QUESTION).stage == MULTI
    assert pool_route(on, entities, "As shown in [3], he directed it.").stage == MULTI
    assert pool_route(off, papers, PAPER_CITING).stage == MULTI


def test_combined_checkpoint_ranks_questions_as_base_and_citances_as_the_donor(pair, tmp_path):
    base_dir, citing_dir, base, citing = pair
    record = add_citing_stage(base_dir, citing_dir, tmp_path / "cs", command="test")
    assert record["citing_cells"]["citance_global_weight"] == 0.5
    model = LoGReranker.from_pretrained(tmp_path / "cs")
    sc = model.config.score
    assert sc.citance_stage and sc.citance_global_weight == 0.5 and sc.citance_sentence_weight == 0
    assert sc.paper_global_weight == base.config.score.paper_global_weight
    assert stage_module(model, CITING) is model.global_citing
    assert stage_module(model, SINGLE) is model.global_single
    for k, v in citing.global_model.state_dict().items():
        assert torch.equal(model.global_citing.state_dict()[k], v)
    # questions and entity pools: the base model; citing queries in paper pools: the donor
    for query, passages, ref in (
        (PAPER_QUESTION, PAPERS, base),
        (QUERY, TITLED, base),
        (PAPER_CITING, PAPERS, citing),
    ):
        got, want = model.rerank(query, passages), ref.rerank(query, passages)
        assert [s.score for s in got.sentences] == pytest.approx(
            [s.score for s in want.sentences], abs=1e-6
        )
    info = model.rerank(PAPER_CITING, PAPERS).info
    assert info["route"]["stage"] == CITING
    assert "citing-query stage" in stage_note(info, model.config.single.min_titled)
    assert "citing" not in stage_note(model.rerank(PAPER_QUESTION, PAPERS).info, 0.5)
    # the single-passage stage is stored as float16, read back into float32; its weight is 0
    with safe_open(str(tmp_path / "cs" / "model.safetensors"), "pt") as f:
        dtypes = {k: f.get_slice(k).get_dtype() for k in f.keys()}  # noqa: SIM118
    assert {v for k, v in dtypes.items() if k.startswith("global_single.")} == {"F16"}
    assert {v for k, v in dtypes.items() if k.startswith("global_citing.")} == {"F32"}
    assert {p.dtype for p in model.global_single.parameters()} == {torch.float32}
    got, want = model.rerank(QUERY, UNTITLED), base.rerank(QUERY, UNTITLED)
    assert [s.score for s in got.sentences] == pytest.approx(
        [s.score for s in want.sentences], abs=1e-9
    )
    meta = read_meta(tmp_path / "cs")
    assert meta["training"]["seed"] == 13  # the base's records are kept
    assert meta["training"]["citing_stage"]["citing"] == str(citing_dir)


def test_a_fresh_stage_two_drops_the_inits_citing_stage(pair, tmp_path):
    """Training a new multi-passage stage from a two-stage checkpoint gives one stage for every
    pool (the init's citing stage would otherwise rank citances silently)."""
    from logrerank.training.log.graph_cv import with_new_graph
    from logrerank.training.log.graph_cv_config import GraphCVConfig

    base_dir, citing_dir, _, _ = pair
    add_citing_stage(base_dir, citing_dir, tmp_path / "cs")
    model = with_new_graph(LoGReranker.from_pretrained(tmp_path / "cs"), GraphCVConfig(), 13)
    assert model.global_citing is None and not model.config.score.citance_stage
    papers = [Passage(p["text"], p["title"]) for p in PAPERS]
    assert pool_route(model.config, papers, PAPER_CITING).stage == MULTI
    model.save_pretrained(tmp_path / "fresh")
    assert LoGReranker.from_pretrained(tmp_path / "fresh").global_citing is None


def test_checkpoints_with_other_local_stages_are_refused(pair, make_tiny_model, tmp_path):
    base_dir, _, _, _ = pair
    other = _model(make_tiny_model, 4)
    _perturb(other.local.local_head, 5)
    other.save_pretrained(tmp_path / "other")
    with pytest.raises(ValueError, match="do not share their local stage"):
        add_citing_stage(base_dir, tmp_path / "other", tmp_path / "out")
    with pytest.raises(ValueError, match="new folder"):
        add_citing_stage(base_dir, tmp_path / "other", base_dir)


def test_cli_reports_bad_input_clearly(pair, tmp_path, capsys):
    base_dir, citing_dir, _, _ = pair
    assert main(["citing-stage", "--checkpoint", str(tmp_path / "none"), "--citing",
                 str(citing_dir), "--out", str(tmp_path / "o")]) != 0  # fmt: skip
    assert "not a checkpoint folder" in capsys.readouterr().err
    assert main(["citing-stage", "--checkpoint", str(base_dir), "--citing", str(citing_dir),
                 "--out", str(tmp_path / "o")]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["written"] == str(tmp_path / "o")


def test_half_storage_refuses_tensors_float16_cannot_hold(tmp_path):
    state = {"global_single.w": torch.tensor([1.0, 1e6]), "other": torch.tensor([1e6])}
    with pytest.raises(CheckpointError, match="float16"):
        write_checkpoint(tmp_path / "c", state, {}, {}, half=("global_single.",))
    write_checkpoint(tmp_path / "ok", {"other": torch.tensor([1e6])}, {}, {}, half=("x.",))


def _tune(best: str, second: str, second_score: float) -> dict:
    """A tune result over the whole grid: 10 everywhere, 20 at ``best``, ``second_score`` at
    ``second``."""
    from logrerank.training.log.route_tuning import candidates, cell

    table = {cell(*p): 10.0 for p in candidates()}
    table[best], table[second] = 20.0, second_score
    a, w, v, u = (float(x) for x in best.split("|"))
    chosen = dict(
        citance_global_weight=a, citance_lexical_weight=w, citance_dense_weight=v,
        citance_sentence_weight=u,
    )  # fmt: skip
    return {"chosen": chosen, "macro": {"citance": table, "question": {}}}


def test_pooled_cells_give_every_seed_the_best_mean_cell(pair, tmp_path, capsys):
    """Seed 1 peaks at a=1 (20) with 0.75|0|0|2 at 19; seed 2 peaks at 0.5|0|0|2 (20) with
    0.75|0|0|2 at 19: means 15 / 15 / 19, so the pooled cell is 0.75|0|0|2, neither seed's own."""
    from logrerank.training.log.route_tuning import pooled_macro

    base_dir, citing_dir, _, _ = pair
    t1, t2 = _tune("1|0|0|2", "0.75|0|0|2", 19.0), _tune("0.5|0|0|2", "0.75|0|0|2", 19.0)
    assert pooled_macro([t1, t2], "citance")["1|0|0|2"] == pytest.approx(15.0)
    paths = [tmp_path / "t1.json", tmp_path / "t2.json"]
    for path, tune in zip(paths, (t1, t2), strict=True):
        path.write_text(json.dumps(tune))
    record = add_citing_stage(base_dir, citing_dir, tmp_path / "cs", citing_tunes=paths)
    want = dict(
        citance_global_weight=0.75, citance_lexical_weight=0.0, citance_dense_weight=0.0,
        citance_sentence_weight=2.0,
    )  # fmt: skip
    assert record["citing_cells"] == want
    assert record["citing_cells_pooled"]["pooled_macro"] == pytest.approx(19.0)
    assert record["citing_cells_pooled"]["own_cells"][0]["citance_global_weight"] == 1.0
    sc = LoGReranker.from_pretrained(tmp_path / "cs").config.score
    assert (sc.citance_global_weight, sc.citance_sentence_weight) == (0.75, 2.0)
    # results that cannot be pooled are refused with a clear message, from the CLI too
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "q.json").write_text(json.dumps({"macro": {"question": {"0|0|0|0": 1.0}}}))
    with pytest.raises(ValueError, match="cannot read"):
        add_citing_stage(base_dir, citing_dir, tmp_path / "x", citing_tunes=[tmp_path / "bad.json"])
    with pytest.raises(ValueError, match="no 'citance' macro"):
        add_citing_stage(base_dir, citing_dir, tmp_path / "x", citing_tunes=[tmp_path / "q.json"])
    partial = {"macro": {"citance": {"0|0|0|0": 1.0}}}
    (tmp_path / "p.json").write_text(json.dumps(partial))
    with pytest.raises(ValueError, match="different cells"):
        add_citing_stage(
            base_dir, citing_dir, tmp_path / "x", citing_tunes=[paths[0], tmp_path / "p.json"]
        )
    with pytest.raises(ValueError, match="current grid"):
        add_citing_stage(base_dir, citing_dir, tmp_path / "x", citing_tunes=[tmp_path / "p.json"])
    assert main(["citing-stage", "--checkpoint", str(base_dir), "--citing", str(citing_dir),
                 "--out", str(tmp_path / "y"), "--citing-tunes", str(tmp_path / "bad.json")]) != 0  # fmt: skip
    assert "cannot read the tune result" in capsys.readouterr().err
    assert not (tmp_path / "y").exists()
