"""The question-intent classifier: head, checkpoint round trip, weak-label weighting and
accuracy (hand-computed), and how the app and the CLI show it (labels, escaping)."""

from __future__ import annotations

import json

import pytest
import torch

from logrerank.app import explain_view, labels
from logrerank.cli.rerank import format_ranking
from logrerank.models.question_intent import (
    SOURCE_NAME,
    IntentCheckpointError,
    IntentHead,
    QuestionIntent,
)
from logrerank.training.intent.intent_data import IntentText, split_part
from logrerank.training.intent.intent_train import (
    IntentTrainConfig,
    _identity_,
    _weights,
    accuracy_by_source,
    balanced_accuracy,
)
from logrerank.types import Passage, Ranking, ScoredSentence


class _Embedder:
    """A fixed 4-d embedding: a text's length, its question mark and two letter counts."""

    def embed(self, texts: list[str]) -> torch.Tensor:
        return torch.tensor(
            [[len(t) / 10, float("?" in t), t.count("a"), t.count("e")] for t in texts]
        )


def _model(hidden: int = 0) -> QuestionIntent:
    torch.manual_seed(0)
    return QuestionIntent(IntentHead(4, hidden), {"heldout_accuracy": 0.75}, _Embedder())


@pytest.mark.parametrize("hidden", [0, 8])
def test_head_gives_three_probabilities_per_question(hidden):
    probs = _model(hidden).predict(["What was measured?", "Why?"])
    assert probs.shape == (2, 3)
    assert torch.allclose(probs.sum(1), torch.ones(2))
    assert _model(hidden).predict([]).shape == (0, 3)


def test_logistic_head_is_hand_computable():
    model = _model(0)
    with torch.no_grad():
        model.head.net.weight.zero_()
        model.head.net.bias.copy_(torch.tensor([0.0, 0.0, torch.log(torch.tensor(2.0))]))
    # logits (0, 0, ln 2) -> softmax (1/4, 1/4, 1/2) whatever the text
    info = model.describe("anything")
    assert info["probs"] == pytest.approx([0.25, 0.25, 0.5])
    assert info["label"] == "result"
    assert info["source"] == SOURCE_NAME and info["heldout_accuracy"] == 0.75


def test_checkpoint_round_trip(tmp_path):
    model = _model(8)
    model.save_pretrained(tmp_path, {"heldout_accuracy": 0.5, "training": {"x": 1}})
    assert {p.name for p in tmp_path.iterdir()} == {"model.safetensors", "config.json"}
    back = QuestionIntent.from_pretrained(tmp_path, embedder=_Embedder())
    qs = ["How was it measured?", "What was the effect?"]
    assert torch.allclose(back.predict(qs), model.predict(qs))
    assert back.heldout_accuracy == 0.5 and back.source == str(tmp_path)


def test_checkpoint_errors_name_the_problem(tmp_path):
    with pytest.raises(IntentCheckpointError, match="does not exist"):
        QuestionIntent.from_pretrained(tmp_path / "missing")
    _model(8).save_pretrained(tmp_path)
    raw = json.loads((tmp_path / "config.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps({**raw, "head": {**raw["head"], "hidden": 4}}))
    with pytest.raises(IntentCheckpointError, match="tensors do not match"):
        QuestionIntent.from_pretrained(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({**raw, "roles": ["a", "b", "c"]}))
    with pytest.raises(IntentCheckpointError, match="role order"):
        QuestionIntent.from_pretrained(tmp_path)


def test_split_part_is_deterministic_and_roughly_proportional():
    parts = [split_part(f"src:{i}", 0.1, 0.2) for i in range(2000)]
    assert parts == [split_part(f"src:{i}", 0.1, 0.2) for i in range(2000)]
    assert 0.16 < parts.count("heldout") / 2000 < 0.24
    assert 0.07 < parts.count("val") / 2000 < 0.13
    assert all(split_part(f"k{i}", 0.0, 0.0) == "train" for i in range(50))


def _texts(rows):
    return [IntentText(f"t{i}", list(t), s, "train") for i, (s, t) in enumerate(rows)]


def test_each_source_weighs_the_same_then_classes_are_balanced():
    # scifact: 2 result questions; hotpotqa: 1 background question; csabstruct: 1 method.
    rows = [("scifact", (0, 0, 1)), ("scifact", (0, 0, 1)), ("hotpotqa", (1, 0, 0)),
            ("csabstruct", (0, 1, 0))]  # fmt: skip
    texts = _texts(rows)
    targets = torch.tensor([t.target for t in texts])
    plain = _weights(texts, targets, IntentTrainConfig(balance_classes=False))
    # per source 1/n -> (0.5, 0.5, 1, 1), rescaled to sum to 4: (2/3, 2/3, 4/3, 4/3)
    assert plain.tolist() == pytest.approx([2 / 3, 2 / 3, 4 / 3, 4 / 3])
    half = _weights(texts, targets, IntentTrainConfig(balance_classes=False, sentence_weight=0.5))
    # (0.5, 0.5, 1, 0.5) sum 2.5 -> x 4 / 2.5
    assert half.tolist() == pytest.approx([0.8, 0.8, 1.6, 0.8])
    # every class already carries weight 1 before balancing, so balancing changes nothing
    balanced = _weights(texts, targets, IntentTrainConfig(balance_classes=True))
    assert balanced.tolist() == pytest.approx(plain.tolist())
    # two result sources against one background source: result is halved, background not
    rows2 = [("scifact", (0, 0, 1)), ("evinf", (0, 0, 1)), ("hotpotqa", (1, 0, 0))]
    texts2 = _texts(rows2)
    w2 = _weights(texts2, torch.tensor([t.target for t in texts2]), IntentTrainConfig())
    # masses bg 1, result 2 of 3 -> class factors 1 and 0.5 -> (0.5, 0.5, 1) -> x 3 / 2
    assert w2.tolist() == pytest.approx([0.75, 0.75, 1.5])


def test_accuracy_by_source_hand_computed():
    rows = [("scifact", (0, 0, 1)), ("scifact", (0.6, 0.4, 0)), ("nicta", (0, 1, 0))]
    texts = _texts(rows)
    targets = torch.tensor([t.target for t in texts])
    probs = torch.tensor([[0.1, 0.2, 0.7], [0.2, 0.5, 0.3], [0.1, 0.8, 0.1]])
    acc = accuracy_by_source(probs, texts, targets)
    assert acc["scifact"]["n"] == 2 and acc["scifact"]["accuracy"] == 0.5
    assert acc["scifact"]["majority"] == 0.5
    assert acc["scifact"]["target_counts"] == {"background": 1, "method": 0, "result": 1}
    assert acc["nicta"]["accuracy"] == 1.0


def test_intent_title_and_role_note():
    assert labels.intent_title(None) == "" and labels.intent_title({"probs": []}) == ""
    title = labels.intent_title({"probs": [0.2, 0.3, 0.5], "heldout_accuracy": 0.7349})
    assert title == "question intent (classifier: 73 % on weakly labelled held-out questions)"
    info = {
        "probs": [0.2, 0.3, 0.5],
        "heldout_accuracy": 0.5,
        "handwritten_test": {"correct": 9, "n": 12},
    }
    assert labels.intent_title(info) == (
        "question intent (classifier: 9 of 12 hand-written test questions right (background, "
        "method and result), 50 % on weakly labelled held-out questions)"
    )
    info = {"probs": [0.2, 0.3, 0.5], "handwritten_test": {"correct": 41, "n": 42},
            "heldout_result_questions": {"correct": 543, "n": 552}}  # fmt: skip
    assert labels.intent_title(info) == (
        "question intent (classifier: 41 of 42 hand-written test questions right (background, "
        "method and result), 543 of 552 held-out result questions (PubMedQA, Evidence Inference))"
    )
    assert labels.intent_title({"probs": [1, 0, 0]}) == "question intent (classifier)"
    note = labels.role_note()  # the shown role is the role tagger's
    assert note.startswith("Role = argmax of the role tagger") and "role head (eq. 3)" in note
    acc = labels.role_tagger_test_accuracy()
    assert set(acc) == {"CSAbstruct", "NICTA-PIBOSO", "PubMedQA"}
    for name, a in acc.items():  # the figures come from the bundled tagger's config.json
        assert f"{name} {100 * a:.1f} %" in note
    assert "CSAbstruct 57.0 %, NICTA-PIBOSO 66.0 %, PubMedQA 72.7 %" in note  # the LoG head's
    assert labels.role_note(tagger=False).startswith("Role = argmax of the LoG local scorer")


def _ranking(info: dict) -> Ranking:
    p = Passage("One sentence here.")
    s = ScoredSentence(0, 0, 0, "One sentence here.", 0, 18, 0.9, rank=1,
                       role_probs=[0.1, 0.2, 0.7], role="result")  # fmt: skip
    return Ranking("q <b>?", [p], "log", sentences=[s], intent_probs=[0.97, 0.02, 0.01],
                   intent_by_passage=[[0.97, 0.02, 0.01]], info=info)  # fmt: skip


def test_explain_shows_the_classifier_intent_and_names_gamma_for_what_it_is():
    info = {"question_intent": {"probs": [0.1, 0.7, 0.2], "label": "method",
                                "source": SOURCE_NAME, "heldout_accuracy": 0.8}}  # fmt: skip
    r = _ranking(info)
    out = explain_view.explain_html(r.sentences[0], r, [], [], r.intent_by_passage[0])
    assert "question intent (classifier: 80 % on weakly labelled held-out questions): method" in out
    assert "role mixing weights the local scorer used" in out
    assert "lr-role-note" in out and "role tagger" in out
    assert "role (LoG role head, eq. 3; test accuracy CSAbstruct 57.0 %" in out  # not retagged
    bare = explain_view.explain_html(r.sentences[0], _ranking({}), [], [], None)
    assert "question intent: not available" in bare


def test_cli_text_view_shows_both_lines():
    info = {"question_intent": {"probs": [0.1, 0.7, 0.2], "heldout_accuracy": 0.8}}
    text = format_ranking(_ranking(info))
    want = "question intent (classifier; 80 % on weakly labelled held-out questions): background"
    assert want in text
    assert (
        "role mixing weights of the LoG local scorer (intent head, eq. 2): background 0.97" in text
    )


def test_balanced_accuracy_hand_computed():
    targets = torch.tensor([[0, 0, 1], [0, 0, 1], [0, 0, 1], [1, 0, 0]], dtype=torch.float)
    probs = torch.tensor([[0, 0, 1], [0, 0, 1], [1, 0, 0], [0, 0, 1]], dtype=torch.float)
    # result recall 2/3, background recall 0 (method absent): (2/3 + 0) / 2
    assert balanced_accuracy(probs, targets) == pytest.approx(1 / 3)


def test_identity_head_returns_the_tagger_probabilities():
    head = IntentHead(3, 0)
    assert _identity_(head)
    p = torch.tensor([[0.2, 0.3, 0.5], [0.7, 0.1, 0.2]])
    assert torch.allclose(head(p.log()).softmax(-1), p)
    assert not _identity_(IntentHead(3, 8)) and not _identity_(IntentHead(4, 0))


def test_shipped_run_config_loads_and_bad_values_are_refused():
    from pathlib import Path

    from logrerank.jsonconfig import ConfigError

    path = Path(__file__).resolve().parents[2] / "configs" / "intent.json"
    cfg = IntentTrainConfig.load(path).check()
    # issue 50: question-shaped result supervision and hand-written seeds train too
    assert {"pubmedqa_result", "evinf_result", "seed"} <= set(cfg.train_on)
    assert cfg.select_on == "mixed" and cfg.feature_set == "tagger-states"
    with pytest.raises(ConfigError, match="feature_set"):
        cfg.override(["feature_set=words"])
    with pytest.raises(ConfigError, match="select_on"):
        cfg.override(["select_on=test"])
    with pytest.raises(ConfigError, match="train_on"):
        cfg.override(['train_on=["qasa"]'])
