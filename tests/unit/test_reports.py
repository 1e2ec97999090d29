"""Reports over ``logrerank eval`` runs (paired test, run comparison, seed table) and the CLI
commands of the product steps (``paired-test``, ``report``, ``train --sweep``, ``tune-score``).

Everything runs on small hand-written ``results.json`` files and, for ``tune-score``, the tiny
isolated-mode checkpoint of conftest.py (``save_isolated_checkpoint``). The ``train --sweep`` plan
on the public data is in ``tests/integration/test_reports.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank.cli import main
from logrerank.evaluation.paired import format_paired, paired_test, parse_spec, per_query
from logrerank.evaluation.report import compare_runs, seed_table
from logrerank.log_checkpoint import read_meta
from logrerank.types import InputError


def _run(folder: Path, figures: dict[str, tuple[list[float], float, float | None]]) -> Path:
    """A results.json: per ranker (per-query passage nDCG, summary P, summary S or None)."""
    folder.mkdir(parents=True, exist_ok=True)
    per_query, summary = {}, {}
    for ranker, (scores, p, s) in figures.items():
        per_query[ranker] = [
            {"qid": str(i), "passage": {"ndcg@10": x}, "sentence": None}
            for i, x in enumerate(scores)
        ]
        summary[ranker] = {"passage": {"ndcg@10": p}, "sentence_queries": 0}
        if s is not None:
            summary[ranker].update(sentence={"ndcg@10": s}, sentence_queries=len(scores))
    data = {"per_query": per_query, "summary": summary}
    (folder / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_paired_test_identical_rankers_and_a_clear_win(tmp_path):
    a = {str(i): 0.5 + 0.01 * i for i in range(20)}
    same = paired_test(a, dict(a), draws=200)
    assert same["mean_difference"] == 0 and same["better"] == same["worse"] == 0
    assert same["p_value"] == 1.0
    b = {q: v - 0.1 for q, v in a.items()}
    win = paired_test(a, b, draws=200)
    assert win["mean_difference"] == pytest.approx(0.1) and win["better"] == 20
    assert win["p_value"] == pytest.approx(1 / 201)  # no sign flip reaches the observed mean
    assert win["ci95"][0] == pytest.approx(0.1) and win["ci95"][1] == pytest.approx(0.1)
    line = format_paired(win, "passage", "ndcg@10")
    assert line.startswith("passage ndcg@10: 20 queries, mean difference +10.00")
    assert paired_test(a, b, draws=200) == win  # seeded


def test_paired_inputs_are_checked(tmp_path):
    run = _run(tmp_path / "r", {"log": ([0.1, 0.2], 10.0, None)})
    assert per_query(run, "log") == {"0": 0.1, "1": 0.2}
    assert per_query(run / "results.json", "log", level="sentence") == {}
    assert parse_spec("C:/x/results.json:log") == ("C:/x/results.json", "log")
    with pytest.raises(InputError, match="no ranker 'bm25'"):
        per_query(run, "bm25")
    with pytest.raises(InputError, match="not found"):
        per_query(tmp_path / "missing", "log")
    with pytest.raises(InputError, match="RESULTS:RANKER"):
        parse_spec("results.json")
    with pytest.raises(InputError, match="share no query"):
        paired_test({"a": 1.0}, {"b": 1.0})


def test_compare_runs_and_seed_table(tmp_path):
    a = _run(tmp_path / "a", {"log": ([0.5], 80.0, 50.0), "bm25": ([0.4], 70.0, None)})
    b = _run(tmp_path / "b", {"log": ([0.5], 80.5, 49.0)})
    c = _run(tmp_path / "c", {"log": ([0.5], 81.0, 51.0)})
    assert compare_runs(a, b).splitlines() == [
        "log            passage  nDCG@10  80.00 ->  80.50 (+0.50)",
        "log            sentence nDCG@10  50.00 ->  49.00 (-1.00)",
        "largest change: 1.00",
    ]
    table = seed_table("log", ["13", "17", "23"], {"sf": [str(a), str(b), str(c)]}).splitlines()
    assert table[0] == "| seed | sf P | sf S |"
    assert table[2] == "| 13 | 80.0 | 50.0 |"
    assert table[-1] == "| mean ± sd | 80.5 ± 0.5 | 50.0 ± 1.0 |"
    with pytest.raises(InputError, match="2 folders for 3 seeds"):
        seed_table("log", ["13", "17", "23"], {"sf": [str(a), str(b)]})
    with pytest.raises(InputError, match="at least two seeds"):
        seed_table("log", ["13"], {"sf": [str(a)]})


def test_cli_reports(tmp_path, capsys):
    a = _run(tmp_path / "a", {"log": ([0.6, 0.7, 0.8], 70.0, None)})
    b = _run(tmp_path / "b", {"bm25": ([0.5, 0.6, 0.8], 65.0, None), "log": ([0.6], 71.0, None)})
    assert main(["paired-test", f"{a}:log", f"{b}/results.json:bm25", "--draws", "50"]) == 0
    assert "3 queries, mean difference +6.67" in capsys.readouterr().out
    assert main(["report", "compare", str(a), str(b)]) == 0
    assert "70.00 ->  71.00 (+1.00)" in capsys.readouterr().out
    assert main(["report", "seeds", "--seeds", "1,2", f"x={a},{b}"]) == 0
    assert "| mean ± sd | 70.5 ± 0.7 |" in capsys.readouterr().out
    assert main(["paired-test", f"{a}:nope", f"{b}:log"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("logrerank: error:") and "'nope'" in err and "\n" not in err
    assert main(["report", "seeds", "no-equals-sign"]) == 2
    assert "NAME=DIR" in capsys.readouterr().err


def test_cli_train_sweep_and_tune_score_refuse_bad_input(tmp_path, capsys):
    assert main(["train", "local", "--sweep", "--config", "configs/local.json"]) == 2
    assert "train global" in capsys.readouterr().err
    assert main(["train", "global", "--config", str(tmp_path / "none.json")]) == 2
    assert "not found" in capsys.readouterr().err
    rc = main(["train", "global", "--config", "configs/global.json", "--sweep", "--settings", "x"])
    assert rc == 2 and "unknown --settings ['x']" in capsys.readouterr().err
    assert main(["tune-score", "--checkpoint", str(tmp_path)]) == 2
    assert "no config.json" in capsys.readouterr().err


def test_cli_train_sweep_dry_run_refuses_a_misspelt_mode(capsys):
    argv = ["train", "global", "--config", "configs/global.json", "--sweep", "--dry-run"]
    assert main([*argv, "--set", "pairs=aligend"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("logrerank: error:") and "aligend" in err and "\n" not in err
    assert main(["train", "global", "--dry-run", "--set", "pairs=aligend"]) == 2  # default config
    assert "aligend" in capsys.readouterr().err


def _selection_examples() -> dict[str, list]:
    from logrerank.data.schema import Doc, Example

    def pool(i: int) -> list[Doc]:
        return [
            Doc(f"d{i}a", "Cohort", ["Statins lowered dementia risk.", "The effect was small."]),
            Doc(f"d{i}b", "Trial", ["No difference was seen.", "Adherence was high."]),
            Doc(f"d{i}c", "", ["Statins lowered dementia risk.", "Confounding remains."]),
        ]

    def ex(i: int) -> Example:
        cands = pool(i)
        return Example(
            f"q{i}", f"Do statins reduce dementia risk? ({i})", cands, [cands[i % 3].doc_id],
            {cands[i % 3].doc_id: [0]},
        )  # fmt: skip

    return {"select-scifact": [ex(0), ex(1)], "select-citint": [ex(2)]}


def test_cli_tune_score_chooses_and_writes(save_isolated_checkpoint, tmp_path, capsys, monkeypatch):
    from logrerank.config import ScoreConfig
    from logrerank.pipeline import LoGReranker
    from logrerank.training.log import score_tuning

    ckpt = save_isolated_checkpoint(tmp_path)
    before = (Path(ckpt) / "config.json").read_text()
    monkeypatch.setattr(score_tuning, "selection_sets", lambda n: _selection_examples())
    argv = ["tune-score", "--checkpoint", str(ckpt), "--cache", str(tmp_path / "rows")]
    assert main([*argv, "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["written"] is None and (Path(ckpt) / "config.json").read_text() == before
    assert set(dry["selection"]) == set(score_tuning.SELECT)
    rows = json.loads((tmp_path / "rows" / "select-scifact.json").read_text())
    assert len(rows) == 2 and len(rows[0]["sent"]) == 6
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["chosen"] == dry["chosen"] and out["written"].endswith("config.json")
    meta = read_meta(Path(ckpt))
    assert meta["model"]["score"] == out["chosen"]
    assert meta["training"]["score_selection"]["command"].startswith("logrerank ")
    assert LoGReranker.from_pretrained(str(ckpt)).config.score == ScoreConfig(**out["chosen"])


def test_cli_tune_score_lexical_dry_run_and_write(
    save_isolated_checkpoint, tmp_path, capsys, monkeypatch
):
    from logrerank.training.log import score_tuning

    ckpt = save_isolated_checkpoint(tmp_path)
    before = read_meta(Path(ckpt))
    monkeypatch.setattr(score_tuning, "selection_sets", lambda n: _selection_examples())
    argv = ["tune-score", "--checkpoint", str(ckpt), "--lexical", "--cache", str(tmp_path / "r")]
    assert main([*argv, "--dry-run"]) == 0
    dry = json.loads(capsys.readouterr().out)
    assert dry["written"] is None  # chosen on both selection sets: the weight serves every pool
    assert dry["selection_queries"] == {"select-scifact": 2, "select-citint": 1}
    assert set(dry["grid"]) == {str(w) for w in score_tuning.LEXICAL_WEIGHTS}
    assert read_meta(Path(ckpt)) == before
    for name in score_tuning.SELECT:  # the rows tune-score caches
        assert (tmp_path / "r" / f"{name}.json").exists()
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    score = json.loads((Path(ckpt) / "config.json").read_text())["model"]["score"]
    assert score == before["model"]["score"] | {"lexical_weight": out["chosen"]}
