"""Tests for the fast cut-point pass (logrerank.text.segment_fast), the anchor-first scans of
logrerank.text.segment_rules, and the pysbd reference splitter kept beside it."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logrerank.text import segment, segment_rules
from logrerank.text.segment import split_sentences, split_sentences_pysbd, split_with
from tests.unit.test_segment import NO_SPLIT_CASES, check_invariants


def sents(text: str) -> list[str]:
    spans = split_sentences(text)
    check_invariants(text, spans)
    return [s.text for s in spans]


# ---------------------------------------------------------------------------------------
# pysbd's rules, as the fast pass reproduces them.

PYSBD_RULE_CASES = [
    pytest.param("Rates rose.12 They fell.", ["Rates rose.12", "They fell."], id="citation"),
    pytest.param("Rates rose.[12] They fell.", ["Rates rose.[12]", "They fell."], id="cite-brk"),
    pytest.param(
        "It was 0.77 SD higher. It fell.", ["It was 0.77 SD higher.", "It fell."], id="num"
    ),
    pytest.param("It rose in Mass. then fell.", ["It rose in Mass. then fell."], id="lexicon"),
    pytest.param("The dept. head agreed. Next.", ["The dept. head agreed.", "Next."], id="dept"),
    pytest.param("It was Gen. Smith. Next.", ["It was Gen. Smith.", "Next."], id="prepositive"),
    pytest.param("It rose in the U.S. Then fell.", ["It rose in the U.S. Then fell."], id="us"),
    pytest.param(
        "It rose in the U.S. The fall.", ["It rose in the U.S.", "The fall."], id="us-the"
    ),
    pytest.param("At 5 p.m. The end came.", ["At 5 p.m.", "The end came."], id="pm"),
    pytest.param("Mice were i.p.-treated. Next.", ["Mice were i.p.-treated.", "Next."], id="ip"),
    pytest.param(
        "The complex (RISC).Ago binds.", ["The complex (RISC).", "Ago binds."], id="glued"
    ),
    pytest.param(
        'He said "it works." Then left.', ['He said "it works."', "Then left."], id="quote"
    ),
    pytest.param(
        'The "A. B" test was used. Next.', ['The "A. B" test was used.', "Next."], id="in-quote"
    ),
    pytest.param(
        "Cells (see ref. Smith. Jones) grew. Next.",
        ["Cells (see ref. Smith. Jones) grew.", "Next."],
        id="in-parens",
    ),
    pytest.param(
        "It was the “RNA world [11].” Here we go.",
        ["It was the “RNA world [11].”", "Here we go."],
        id="quote-with-brackets-inside",
    ),
    pytest.param("It rose! then fell.", ["It rose! then fell."], id="exclamation"),
    pytest.param(
        'The "Why us?" response grew. Next.',
        ['The "Why us?" response grew.', "Next."],
        id="question-in-quote",
    ),
    pytest.param(
        "It ended. (B grade) See text.",
        ["It ended.", "(B grade)", "See text."],
        id="opening-parenthesis",
    ),
    pytest.param(
        "Lewis, J., Baskaran, R. , Taagepera, S. wrote it.",
        ["Lewis, J., Baskaran, R. , Taagepera, S. wrote it."],
        id="before-comma",
    ),
    pytest.param("日本語の文。次の文。", ["日本語の文。", "次の文。"], id="full-width"),
]


@pytest.mark.parametrize(("text", "expected"), PYSBD_RULE_CASES)
def test_pysbd_rules(text: str, expected: list[str]) -> None:
    """The fast pass gives what the pysbd splitter gives."""
    assert sents(text) == expected
    assert [s.text for s in split_sentences_pysbd(text)] == expected


# ---------------------------------------------------------------------------------------
# Where the fast pass deliberately differs from pysbd (pysbd errors seen on real pools).

DIFFERS_FROM_PYSBD = [
    pytest.param(
        "Patients were assigned to 1) diet, 2) exercise, or 3) both. It worked.",
        ["Patients were assigned to 1) diet, 2) exercise, or 3) both.", "It worked."],
        id="inline-numbered-list",
    ),
    pytest.param(
        "We compared (a) TOP, (b) TOP/NIC, or (c) placebo. It worked.",
        ["We compared (a) TOP, (b) TOP/NIC, or (c) placebo.", "It worked."],
        id="inline-lettered-list",
    ),
    pytest.param(
        "Rates rose.2,3 They fell. It rose.1–3 Then it fell.",
        ["Rates rose.2,3", "They fell.", "It rose.1–3", "Then it fell."],
        id="citation-lists-and-ranges",
    ),
    pytest.param("It rose.) Then fell.", ["It rose.)", "Then fell."], id="closer-stays-left"),
    pytest.param(
        "It was given with LMWH.∗§    Routine screening was done.",
        ["It was given with LMWH.∗§", "Routine screening was done."],
        id="footnote-marks-stay-left",
    ),
    pytest.param(
        'We reject the concept of "NAD synthesis. " Our study differs.',
        ['We reject the concept of "NAD synthesis. "', "Our study differs."],
        id="lone-closing-quote",
    ),
    pytest.param(
        "See index.php?page=x for data. Next one.",
        ["See index.php?page=x for data.", "Next one."],
        id="url-query",
    ),
    pytest.param(
        "PSA under 0.4 ng./ml. was the cut-off. Next.",
        ["PSA under 0.4 ng./ml. was the cut-off.", "Next."],
        id="unit-slash",
    ),
]


@pytest.mark.parametrize(("text", "expected"), DIFFERS_FROM_PYSBD)
def test_deliberate_differences_from_pysbd(text: str, expected: list[str]) -> None:
    assert sents(text) == expected
    assert [s.text for s in split_sentences_pysbd(text)] != expected


def test_number_ending_a_sentence_is_not_a_list_item() -> None:
    # pysbd cuts before "45." (a numbered-list item); the sentence ends after it.
    text = "It targets areas 44 and 45. These findings hold."
    assert sents(text) == ["It targets areas 44 and 45.", "These findings hold."]


def test_glued_footnote_mark_opens_the_note() -> None:
    text = "It binds the complex.*Note: In the first version the label was wrong."
    assert sents(text) == [
        "It binds the complex.",
        "*Note: In the first version the label was wrong.",
    ]


def test_enumerator_with_period_joins_what_follows() -> None:
    assert sents("It worked. 3.) Use of drugs fell.") == ["It worked.", "3.) Use of drugs fell."]


def test_unbalanced_quote_protects_nothing() -> None:
    body = "It rose in the first cohort. " * 20  # > 500 chars before a later quote mark
    text = f'The "Health for All 2000\' target. {body}It was "high" then.'
    got = sents(text)
    assert got[:2] == ["The \"Health for All 2000' target.", "It rose in the first cohort."]
    assert len(got) == 22


@pytest.mark.parametrize(
    "text",
    [
        "x. [" * 5000,  # openers without closers: every scan must stop at the next opener
        "a “b. " * 5000,
        "«a. " * 5000,
        ". (" * 5000,
        '. "a' * 5000,
        "group A.  " * 5000,
        "AAA " * 5000 + ":",
        ".1 2 3 4 5 6 7 8 9" * 2000,
    ],
)
def test_pathological_inputs(text: str) -> None:
    check_invariants(text, split_sentences(text))


# ---------------------------------------------------------------------------------------
# The reference splitter and the cutter hook.


@pytest.mark.parametrize(("text", "expected"), NO_SPLIT_CASES)
def test_pysbd_reference_passes_the_scientific_cases(text: str, expected: list[str]) -> None:
    spans = split_sentences_pysbd(text)
    check_invariants(text, spans)
    assert [s.text for s in spans] == expected


def test_split_with_sanitises_any_cutter() -> None:
    text = "One here. Two here.\n\nThree here. Four."

    def wild(t: str, start: int, end: int) -> list[int]:
        return [end + 5, start, start - 3, start + 10, start + 10, start + 4, end]

    spans = split_with(text, wild)
    check_invariants(text, spans)
    none = split_with(text, lambda t, s, e: [])
    assert [s.text for s in none] == ["One here. Two here.", "Three here. Four."]
    assert split_with("  ", wild) == []


_WORDS = st.sampled_from(["cells", "grew", "the", "mice", "data", "were", "low", "in", "vivo"])
_SENTENCE = st.lists(_WORDS, min_size=2, max_size=8).map(lambda w: " ".join(w).capitalize() + ".")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_SENTENCE, min_size=1, max_size=8))
def test_plain_prose_both_splitters_agree(sentences: list[str]) -> None:
    text = " ".join(sentences)
    assert sents(text) == sentences
    assert [s.text for s in split_sentences_pysbd(text)] == sentences


# ---------------------------------------------------------------------------------------
# The anchor-first scans give exactly the matches of LABEL_CUT / HEADING.

_SCAN_TOKENS = [
    "group",
    "Group",
    "types",
    "vitamin",
    "A.",
    "B. ",
    " C. The",
    "Cells",
    "METHODS",
    "MATERIALS AND METHODS",
    "DESIGN, SETTING",
    "AUTHORS'",
    "LPS",
    "DNA",
    ":",
    "\n",
    " ",
    "  ",
    "\t",
    "-",
    "/",
    "&",
    ",",
    ". ",
    "x",
]
_SCAN_TEXT = st.lists(st.one_of(st.sampled_from(_SCAN_TOKENS), st.text(max_size=4)), max_size=30)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SCAN_TEXT.map("".join), st.integers(0, 12))
def test_anchor_scans_equal_the_regexes(text: str, offset: int) -> None:
    start = min(offset, len(text))
    end = len(text)
    label = [m.end() for m in segment_rules.LABEL_CUT.finditer(text, start, end)]
    heads = [m.span() for m in segment_rules.HEADING.finditer(text, start, end)]
    assert segment_rules.label_cuts(text, start, end) == label
    assert segment_rules.heading_spans(text, start, end) == heads


@pytest.mark.parametrize(
    "text",
    [
        "Scores in group A. The rest in Group B. Then types C.  Done.",
        "BACKGROUND: x. LPS METHODS: y\nRESULTS\nz. DESIGN, SETTING, AND PARTICIPANTS: w.",
        "MAIN OUTCOME MEASURES: Death. CONCLUSIONS: It works. The DNA: RNA ratio.",
    ],
)
def test_anchor_scans_on_hand_written_text(text: str) -> None:
    n = len(text)
    assert segment_rules.label_cuts(text, 0, n) == [
        m.end() for m in segment_rules.LABEL_CUT.finditer(text)
    ]
    assert segment_rules.heading_spans(text, 0, n) == [
        m.span() for m in segment_rules.HEADING.finditer(text)
    ]


def test_fast_pass_is_the_default_and_memoised() -> None:
    segment.clear_cache()
    text = "It rose in Mass. then fell. Next."
    assert split_sentences(text) == segment._split(text)
    assert segment._split_cached.cache_info().currsize == 1


# ---------------------------------------------------------------------------------------
# bench/segment.py on hand-made pools (the real pools need ../shared/data).


def test_segment_bench_helpers() -> None:
    from tests.helpers import load_bench_script

    bench = load_bench_script("segment")
    fast = bench.splitters("none")["fast"]
    cases = bench.test_cases()
    assert len(cases) == len(NO_SPLIT_CASES) + 20
    assert all(ok([text[s:e] for s, e in fast(text)]) for text, ok in cases)

    texts = ["It rose. It fell.", "One sentence only", "E. coli grew. Then it died."]
    pools = [[(t, [(0, len(t))]) for t in texts], [(texts[0], [(0, 8), (9, 17)])]]
    row = bench.measure(fast, pools, None, repeat=2)
    assert row["passages"] == 3 and "identical" not in row
    same = bench.measure(fast, pools, row["outputs"], repeat=1)
    assert same["identical"] == 1.0 and same["f1_pysbd"] == 1.0
    one_cut = bench._with_repairs(lambda t: [(0, 4), (5, len(t))])
    assert one_cut("E. coli grew.") == [(0, 13)]  # the repairs drop the cut after "E."


def test_segment_bench_disagreements(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers import load_bench_script

    bench = load_bench_script("segment")
    text = "Rates rose.2,3 They fell. We did 1) this, 2) that."
    fast = {text: bench.splitters("none")["fast"](text)}
    ref = {text: bench.splitters("none")["pysbd"](text)}
    assert bench.agreement(fast, fast) == (1.0, 1.0)
    same, f1 = bench.agreement(fast, ref)
    assert same == 0.0 and 0 < f1 < 1
    units = {text: [(0, 14), (15, 25), (26, len(text))]}  # cut after ".2,3", none in the list
    bench.disagreements(fast, ref, show=10, data=units)
    out = capsys.readouterr().out
    assert "1 of 1 passages differ" in out
    assert "side with the fast pass on 3 of 3 cuts" in out
    assert "citation numbers after a period" in out and "inline enumerator" in out
