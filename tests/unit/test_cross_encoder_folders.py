"""Any cross-encoder folder the user has: plain Hugging Face sequence-classification folders
(1 or 2 labels), sentence-transformers-style folders, folders with a missing head, and the app's
choice of cross-encoder (``--cross-encoder DIR`` / ``$LOGRERANK_CROSS_ENCODER``) with its badge.

Every folder is a tiny randomly initialised BERT written by the test (no real backbone).
"""

from __future__ import annotations

import argparse
import html
import json
import sys
import types
from pathlib import Path

import pytest
import torch

from logrerank.app import state, viz
from logrerank.baselines.bm25_ranker import BM25Reranker
from logrerank.baselines.cross_encoder_ranker import CrossEncoderRanker
from logrerank.baselines.cross_encoder_stage import CrossEncoderStage
from logrerank.models.cross_encoder import CrossEncoder, CrossEncoderError, pair_text
from logrerank.types import Passage

QUERY = "do statins reduce dementia risk?"
PASSAGES = [
    Passage(text="Statins lowered dementia risk in a large cohort.", title="Cohort"),
    Passage(text="Cholesterol is made in the brain.", title="Biology"),
    Passage(text="Trials showed no cognitive effect of statins.", title="Trials"),
    Passage(text="The weather was sunny.", title=""),
]
PAIRS = [(QUERY, pair_text(p)) for p in PASSAGES]


def raw_logits(folder: Path, num_labels: int) -> torch.Tensor:
    """The folder's logits for PAIRS, computed with transformers directly (fp32, CPU)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(
        folder, local_files_only=True, num_labels=num_labels
    ).eval()
    enc = tok(
        [q for q, _ in PAIRS],
        [t for _, t in PAIRS],
        truncation="longest_first",
        max_length=256,
        padding=True,
        return_tensors="pt",
    )
    with torch.inference_mode():
        return model(**enc).logits.float()


def load(folder: Path) -> CrossEncoder:
    return CrossEncoder(folder, device="cpu", precision="fp32")


def edit_config(folder: Path, **changes) -> None:
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))


# --------------------------------------------------------------------------------------
# Folder layouts through CrossEncoder(path).


def test_plain_hf_one_label_folder(tmp_path, save_tiny_bert):
    folder = save_tiny_bert(tmp_path / "hf1", seed=11, max_positions=512, num_labels=1)
    ce = load(folder)
    assert ce.trained is True and ce.positive is None
    assert ce.source == f"checkpoint {folder}"
    scores = ce.predict(PAIRS)
    assert scores == pytest.approx(raw_logits(folder, 1)[:, 0].tolist(), abs=1e-5)
    assert len({round(x, 6) for x in scores}) > 1


def test_plain_hf_two_label_folder_scores_the_positive_class(tmp_path, save_tiny_bert):
    folder = save_tiny_bert(tmp_path / "hf2", seed=12, max_positions=512, num_labels=2)
    ce = load(folder)
    assert ce.trained is True and ce.positive == 1  # LABEL_0 / LABEL_1: label 1 is relevant
    logits = raw_logits(folder, 2)
    want = (logits[:, 1] - logits[:, 0]).tolist()  # the positive class's log-odds
    assert ce.predict(PAIRS) == pytest.approx(want, abs=1e-5)
    probs = torch.softmax(logits, dim=-1)[:, 1].tolist()
    from logrerank.models.cross_encoder import sigmoid

    assert [sigmoid(x) for x in ce.predict(PAIRS)] == pytest.approx(probs, abs=1e-5)


def test_two_label_folder_with_named_labels(tmp_path, save_tiny_bert):
    folder = save_tiny_bert(tmp_path / "named", seed=12, max_positions=512, num_labels=2)
    edit_config(folder, id2label={"0": "relevant", "1": "irrelevant"})
    ce = load(folder)
    assert ce.positive == 0
    logits = raw_logits(folder, 2)
    assert ce.predict(PAIRS) == pytest.approx((logits[:, 0] - logits[:, 1]).tolist(), abs=1e-5)


def test_more_than_two_labels_is_refused_clearly(tmp_path, save_tiny_bert):
    folder = save_tiny_bert(tmp_path / "nli", seed=12, max_positions=512, num_labels=3)
    with pytest.raises(CrossEncoderError, match="3-label classifier"):
        load(folder)


@pytest.mark.parametrize(
    "st_file, key",
    [
        ("sentence_bert_config.json", "max_seq_length"),
        ("config_sentence_transformers.json", "max_length"),
    ],
)
def test_sentence_transformers_layout(tmp_path, save_tiny_bert, st_file, key):
    """HF model at the root plus sentence-transformers files: loads as is, same scores, the
    declared length caps the pairs."""
    plain = save_tiny_bert(tmp_path / "plain", seed=21, max_positions=512, num_labels=1)
    folder = save_tiny_bert(tmp_path / "st", seed=21, max_positions=512, num_labels=1)
    edit_config(
        folder,
        sentence_transformers={"activation_fn": "torch.nn.modules.activation.Sigmoid"},
    )
    (folder / st_file).write_text(json.dumps({key: 48, "do_lower_case": False}))
    (folder / "README.md").write_text("---\nlibrary_name: sentence-transformers\n---\n")
    (folder / "onnx").mkdir()
    (folder / "onnx" / "model.onnx").write_bytes(b"ignored")
    ce = load(folder)
    assert ce.trained is True and ce.positive is None
    assert ce.max_length == 48
    # Every pair is under 48 tokens: the same scores as the plain folder.
    assert ce.predict(PAIRS) == pytest.approx(load(plain).predict(PAIRS), abs=1e-5)
    assert load(folder).max_length == 48 and CrossEncoder(folder, max_length=32).max_length == 32


def test_folder_with_missing_head_weights_is_untrained(tmp_path, save_tiny_bert):
    from safetensors.torch import load_file, save_file

    folder = save_tiny_bert(tmp_path / "nohead", seed=31, max_positions=512, num_labels=1)
    weights = folder / "model.safetensors"
    tensors = {k: v for k, v in load_file(str(weights)).items() if not k.startswith("classifier")}
    save_file(tensors, str(weights), metadata={"format": "pt"})
    ce = load(folder)
    assert ce.trained is False
    assert ce.source == f"UNTRAINED head on {folder}"
    assert ce.predict(PAIRS) == load(folder).predict(PAIRS)  # the fresh head is seeded


def test_user_folder_reranks(tmp_path, save_tiny_bert):
    folder = save_tiny_bert(tmp_path / "hf2", seed=12, max_positions=512, num_labels=2)
    ce = load(folder)
    scores = ce.predict(PAIRS)
    ranking = CrossEncoderRanker(ce, level="passage").rank(QUERY, PASSAGES)
    order = [p.passage_idx for p in ranking.passages_ranked]
    assert sorted(order) == list(range(len(PASSAGES)))
    assert order == sorted(range(len(PASSAGES)), key=lambda i: (-scores[i], i))
    stage = CrossEncoderStage(BM25Reranker("passage"), ce).rank(QUERY, PASSAGES)
    assert sorted(p.passage_idx for p in stage.passages_ranked) == list(range(len(PASSAGES)))
    assert not any("unavailable" in w for w in stage.warnings)


def test_eval_uses_the_same_loader(tmp_path, save_tiny_bert):
    """``logrerank eval --cross-encoder DIR`` goes through Models -> CrossEncoder(DIR)."""
    from logrerank.cli import build_parser
    from logrerank.rankers import Models, build_rankers

    folder = save_tiny_bert(tmp_path / "hf2", seed=12, max_positions=512, num_labels=2)
    args = build_parser().parse_args(
        ["eval", "--benchmark", "scifact", "--cross-encoder", str(folder)]
    )
    models = Models(cross_encoder_path=args.cross_encoder, device="cpu")
    assert isinstance(models.cross_encoder, CrossEncoder)
    assert models.cross_encoder.positive == 1 and models.cross_encoder.path == str(folder)
    ranker = build_rankers(["cross-encoder"], models)["cross-encoder"]
    assert len(ranker.rank(QUERY, PASSAGES).passages) == len(PASSAGES)


# --------------------------------------------------------------------------------------
# The app's choice of cross-encoder.


def rows_html(backend: state.Backend) -> str:
    return viz.status_html(backend.model_rows(), "cpu", "fp32", backend.startup_warnings(), {})


def test_backend_picks_up_the_environment_variable(
    tmp_path, save_tiny_bert, make_tiny_model, monkeypatch
):
    folder = save_tiny_bert(tmp_path / "mine", seed=12, max_positions=512, num_labels=2)
    monkeypatch.setenv(state.CROSS_ENCODER_ENV, str(folder))
    backend = state.Backend.load(make_tiny_model())
    assert backend.cross_encoder_choice == str(folder)
    assert backend.cross_encoder.path == str(folder) and backend.cross_encoder.positive == 1
    what, source, trained = backend.model_rows()[1]
    assert what == "cross-encoder (mine)" and source == f"checkpoint {folder}" and trained
    assert "trained" in rows_html(backend) and backend.startup_warnings() == []


def test_backend_use_cross_encoder_folder_and_untrained_badge(
    tmp_path, save_tiny_bert, make_tiny_model, monkeypatch
):
    """What ``--cross-encoder DIR`` does: the folder replaces the cross-encoder of the
    comparison; a bare encoder folder (no head) shows the UNTRAINED badge."""
    monkeypatch.delenv(state.CROSS_ENCODER_ENV, raising=False)
    bare = save_tiny_bert(tmp_path / "bare", seed=5, max_positions=512)
    backend = state.Backend.load(make_tiny_model(), cross_encoder=None)
    assert backend.cross_encoder is None
    backend.use_cross_encoder(str(bare))
    assert backend.cross_encoder is not None and backend.cross_encoder.trained is False
    assert backend.model_rows()[1][2] is False
    assert "UNTRAINED" in rows_html(backend)
    assert "cross-encoder-sent" in backend.rankers()


def test_unavailable_folder_gives_badge_and_warning_not_a_crash(
    tmp_path, make_tiny_model, monkeypatch
):
    from logrerank.app import handlers as ui

    missing = tmp_path / "no-such-model"
    monkeypatch.setenv(state.CROSS_ENCODER_ENV, str(missing))
    with pytest.warns(RuntimeWarning, match="unavailable"):
        backend = state.Backend.load(make_tiny_model())
    assert backend.cross_encoder is None and "does not exist" in backend.cross_encoder_error
    what, _, trained = backend.model_rows()[1]
    assert what == "cross-encoder (no-such-model)" and trained is None
    page = html.unescape(rows_html(backend))
    assert "UNAVAILABLE" in page and "lr-warning" in page and str(missing) in page
    res = ui.run_rerank(backend, None, QUERY, "\n\n".join(p.text for p in PASSAGES))
    status = html.unescape(res.status)
    assert res.ok and "UNAVAILABLE" in status and f"cross-encoder folder {missing}" in status


def test_cli_app_passes_cross_encoder_before_the_app_loads(monkeypatch, tmp_path):
    """``logrerank app --cross-encoder DIR`` sets ``$LOGRERANK_CROSS_ENCODER`` before the app
    module (which loads the models at import) is imported."""
    from logrerank.cli import app as cli_app
    from logrerank.cli import build_parser

    seen = {}
    fake = types.ModuleType("logrerank.app.main")

    def fake_main(argv):
        seen["argv"] = argv
        seen["env"] = __import__("os").environ.get(state.CROSS_ENCODER_ENV)

    fake.main = fake_main
    monkeypatch.setitem(sys.modules, "logrerank.app.main", fake)
    monkeypatch.setenv(state.CROSS_ENCODER_ENV, "")  # restored after the test
    args = build_parser().parse_args(["app", "--cross-encoder", str(tmp_path), "--port", "7999"])
    assert isinstance(args, argparse.Namespace) and args.cross_encoder == str(tmp_path)
    assert cli_app.cmd_app(args) == 0
    assert seen == {"argv": ["--port", "7999"], "env": str(tmp_path)}
