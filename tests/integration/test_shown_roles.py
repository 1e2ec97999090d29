"""The roles the app shows come from the bundled role tagger (``slow``: loads it; skipped when
the checkpoint is absent). The fake-tagger tests are in ``tests/unit/test_shown_roles.py``."""

from __future__ import annotations

import pytest

from logrerank.checkpoint import WEIGHTS_NAME
from logrerank.models.role_checkpoint import default_checkpoint_dir
from logrerank.ranking.shown_roles import TAGGER_SOURCE, log_head_reading, with_tagger_roles
from logrerank.types import Passage, Ranking, ScoredSentence

PASSAGE = [
    "Metformin is the first-line drug for type 2 diabetes.",
    "We conducted a retrospective cohort study of 5,000 patients with type 2 diabetes.",
    "Metformin users had a 20% lower cancer incidence.",
]


@pytest.mark.slow
def test_the_bundled_tagger_reads_a_plain_methods_sentence_as_method():
    """A plain methods sentence inside a short passage is shown as method, replacing the role
    the ranking carried (a hand-set "result" standing in for the LoG role head's reading).

    The sentence an outside check of the app saw shown as result, "We linked a national
    diabetes registry to cancer records.", is not the one tested: the bundled tagger reads it as
    background too (0.83 background, 0.12-0.15 method, alone and after a background sentence,
    when this test was written), a known miss (its MODEL_CARD.md reports the same for a variant
    of it). The sentence tested here is a plain methods sentence it gets right (0.92 method).
    """
    if not (default_checkpoint_dir() / WEIGHTS_NAME).is_file():
        pytest.skip(f"no bundled role tagger at {default_checkpoint_dir()}")
    text = " ".join(PASSAGE)
    starts = [text.index(t) for t in PASSAGE]
    head = {"role": "result", "role_probs": [0.2, 0.19, 0.61]}
    sents = [
        ScoredSentence(j, 0, j, t, starts[j], starts[j] + len(t), 1.0 - 0.1 * j, **head)
        for j, t in enumerate(PASSAGE)
    ]
    ranking = Ranking.from_sentence_scores("does metformin prevent cancer?", [Passage(text)],
                                           sents, "log")  # fmt: skip
    shown = with_tagger_roles(ranking)
    assert shown.info["role_source"] == TAGGER_SOURCE and not shown.warnings
    roles = {s.text: s.role for s in shown.sentences}
    assert roles == {PASSAGE[0]: "background", PASSAGE[1]: "method", PASSAGE[2]: "result"}
    method = next(s for s in shown.sentences if s.sent_idx == 1)
    assert method.role_probs[1] > 0.5 and sum(method.role_probs) == pytest.approx(1.0, abs=1e-5)
    assert log_head_reading(shown, 1)["role"] == "result"
    assert with_tagger_roles(ranking).info["role_tagger"] == shown.info["role_tagger"]
