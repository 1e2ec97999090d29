"""Citation markers (logrerank/text/citations.py), one of the graph gate's pool features."""

from __future__ import annotations

import pytest

from logrerank.text.citations import has_citation_marker

CITING = [
    "The sentences were tagged using TnT (Brants, 2000) trained on the Brown Corpus.",
    "POS-tagged using TnT (Brants,2000).",
    "There exist stack decoders (Berger et al., 1996; Wang and Waibel, 1997).",
    "Berger et al. (1996) proposed a stack decoder.",
    "Pantel et al, (2004) proposed a pattern-based approach.",
    "as presented in Tillmann and Ney (2000)",
    "a reordering method proposed by Kogure [1990].",
    "redundant copying as it is called by [Kogure 90].",
    "Long noncoding RNAs are targets of p53 [7].",
    "as shown before [3, 7] and [4-6]",
]
NOT_CITING = [
    "Did metformin lower cancer incidence (HR 0.85, 95% CI 0.78-0.93)?",
    "Patients enrolled in 2010 (n = 2010) were followed up.",
    "What happened to incidence after 2019?",
    "The cohort (Sweden, 2001-2010) was large.",
    "What is the role of IL-6 [in mice]?",
    "With respect to mortality, what is the effect of aspirin versus placebo?",
    "",
]


@pytest.mark.parametrize("text", CITING)
def test_citing_sentences_have_a_marker(text):
    assert has_citation_marker(text)


@pytest.mark.parametrize("text", NOT_CITING)
def test_questions_and_figures_are_not_markers(text):
    assert not has_citation_marker(text)
