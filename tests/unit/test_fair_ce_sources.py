"""The cross-encoder trained on LoG's sources: the hand-annotated CL-SciSumm papers train only
cross-validated by reference paper, and the fair config names the same sources as LoG."""

from __future__ import annotations

from pathlib import Path

import pytest

from logrerank.data.schema import Doc, Example
from logrerank.jsonconfig import ConfigError
from logrerank.training.cross_encoder.ce_config import CrossEncoderTrainConfig
from logrerank.training.cross_encoder.ce_data import split_cv
from logrerank.training.cv import fold_of, grouped_folds
from logrerank.training.queries import HAND_SCISUMM, train_data_files

REPO = Path(__file__).resolve().parents[2]


def citance(qid: str, paper: str, gold: str, source: str = HAND_SCISUMM) -> Example:
    ex = Example(qid, f"citing sentence {qid}", [Doc(gold, "", ["x."])], [gold])
    ex.meta.update(source=source, paper_id=paper)
    return ex


def test_hand_annotated_folds_are_folds_of_papers() -> None:
    # P1's citances share no gold window, yet one fold; P2 is its own group
    exs = [
        citance("P1:1", "P1", "P1:3"),
        citance("P1:2", "P1", "P1:9"),
        citance("P2:1", "P2", "P2:4"),
        citance("P1:3", "P1", "P1:40"),
    ]
    folds = grouped_folds(exs, 5)
    assert folds[0] == folds[1] == folds[3] == fold_of(HAND_SCISUMM, "P1:1", 5)
    assert folds[2] == fold_of(HAND_SCISUMM, "P2:1", 5)
    # ScisummNet citances (another source) keep the gold-passage grouping
    net = [citance("A:1", "A", "A:1", "scisumm"), citance("A:2", "A", "A:2", "scisumm")]
    assert grouped_folds(net, 50) == [fold_of("scisumm", "A:1", 50), fold_of("scisumm", "A:2", 50)]


def test_hand_annotated_papers_never_hash_held_out() -> None:
    with pytest.raises(ConfigError, match="cv_sources"):
        CrossEncoderTrainConfig(sources=["scifact", HAND_SCISUMM]).check()
    cfg = CrossEncoderTrainConfig(
        sources=["scifact", HAND_SCISUMM], cv_sources=[HAND_SCISUMM], cv_folds=2, cv_fold=0
    ).check()
    exs = [citance(f"P{i}:1", f"P{i}", f"P{i}:1") for i in range(12)]
    held = [exs.pop()]  # a hash-held-out hand-annotated citance trains or is out of fold
    train, held_out, oof = split_cv(exs, held, cfg)
    assert held_out == [] and len(train) + len(oof) == 12
    papers_in = {e.meta["paper_id"] for e in train}
    assert papers_in.isdisjoint({e.meta["paper_id"] for e in oof}) and oof


def test_fair_config_trains_on_logs_sources() -> None:
    cfg = CrossEncoderTrainConfig.load(REPO / "configs" / "crossencoder-fair.json")
    assert set(cfg.sources) == {"scifact", "citint", "evinf", "scisumm", HAND_SCISUMM,
                                "hotpotqa", "musique"}  # fmt: skip
    assert set(cfg.cv_sources) == {HAND_SCISUMM, "hotpotqa", "musique"}
    assert cfg.max_queries["evinf"] == 450 and cfg.grad_accum == 1
    files = {p.as_posix().split("/data/")[-1] for p in train_data_files([HAND_SCISUMM], "/x/data")}
    assert files == {"cl_scisumm/From-Training-Set-2018"}
