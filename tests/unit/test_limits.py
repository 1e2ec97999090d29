"""Input validation and limits: the API, file reading and the CLI.

Every documented limit case is covered: empty question, no passages, empty / whitespace passages,
one passage, one-sentence passages, exact duplicates, 500+ passages, a 200k-character passage,
binary / control characters, non-English and mixed scripts, malformed or oversized uploads.
Nothing is dropped silently: each cut or rejection must be reported.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logrerank import cli
from logrerank.inputs.limits import DEFAULT_LIMITS, Limits, apply_limits, clean_text, limit_question
from logrerank.inputs.passages import decode_upload, prepare_input, read_passages_file
from logrerank.types import InputError, Passage

Q = "Does aspirin prevent heart attacks?"
P = "Aspirin inhibits platelets. It reduced myocardial infarction by 18%."


def _texts(ps):
    return [p.text for p in ps]


# --------------------------------------------------------------------------------------
# Limits itself


def test_defaults_are_documented_values() -> None:
    d = DEFAULT_LIMITS
    assert (d.max_passages, d.max_chars_per_passage, d.max_total_chars) == (500, 20_000, 400_000)
    assert d.max_upload_bytes == 10_000_000 and d.max_question_chars == 2_000
    assert d.strict is False
    text = d.describe()
    for s in ("500 passages", "20,000 characters per passage", "400,000 in total", "10.0 MB"):
        assert s in text
    assert "rejected" in Limits(strict=True).describe()
    assert Limits.from_dict(d.to_dict()) == d
    json.dumps(d.to_dict())


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"max_passages": 0}, "max_passages must be a positive integer"),
        ({"max_total_chars": -5}, "max_total_chars"),
        ({"max_chars_per_passage": 2.5}, "max_chars_per_passage"),
        ({"max_question_chars": True}, "max_question_chars"),
        ({"strict": "yes"}, "strict"),
    ],
)
def test_bad_limits_are_rejected(kwargs, match) -> None:
    with pytest.raises(InputError, match=match):
        Limits(**kwargs)


def test_from_dict_rejects_unknown_fields() -> None:
    with pytest.raises(InputError, match=r"unknown field\(s\) \['max_pasages'\]"):
        Limits.from_dict({"max_pasages": 3})
    assert Limits.from_dict(None) == DEFAULT_LIMITS
    assert Limits.from_dict({"max_passages": 3}).max_passages == 3


# --------------------------------------------------------------------------------------
# Cleaning


def test_clean_text_is_length_preserving() -> None:
    raw = "a\x00b\x07c\td\ne\rf\x0bg\x0ch\x85i\x7fj\x9fk\x1fl\ud800m"
    out, n_ctl, n_sur = clean_text(raw)
    assert len(out) == len(raw)
    assert n_ctl == 5 and n_sur == 1
    assert out == "a b c\td\ne\rf\x0bg\x0ch\x85i j k l\ufffdm"
    assert clean_text("plain") == ("plain", 0, 0)


def test_control_characters_replaced_and_reported() -> None:
    ps, notes = apply_limits([Passage("ok\x00 text\x01."), Passage("fine."), Passage("x\x02")])
    assert _texts(ps) == ["ok  text .", "fine.", "x "]
    assert len(notes) == 1
    assert "passages 1 and 3" in notes[0] and "3 control character(s)" in notes[0]
    assert "replaced by spaces" in notes[0]


def test_lone_surrogates_replaced_and_reported() -> None:
    ps, notes = apply_limits([Passage("bad \udcff byte", title="t\ud800")])
    assert ps[0].text == "bad \ufffd byte" and ps[0].title == "t\ufffd"
    assert any("2 invalid character(s)" in n and "U+FFFD" in n for n in notes)
    ps[0].text.encode("utf-8")  # now encodable


def test_given_sentences_stay_consistent_after_cleaning() -> None:
    p = Passage("A\x00b. C d.", sentences=["A\x00b.", "C d."])
    (q,), _ = apply_limits([p])
    assert q.sentences == ["A b.", "C d."] and q.text == " ".join(q.sentences)


def test_question_checks() -> None:
    for bad in ("", "   \n", None, 3, "\x00\x01"):
        with pytest.raises(InputError, match="question is empty"):
            limit_question(bad)
    q, notes = limit_question("why\x00?")
    assert q == "why ?" and "control character" in notes[0]
    long = "word " * 999 + "words"  # 5,000 chars
    q, notes = limit_question(long)
    assert len(q) <= 2_000 and long.startswith(q)
    assert "5,000 characters" in notes[0] and "kept the first" in notes[0]
    with pytest.raises(InputError, match="5,000 characters; the limit is 2,000"):
        limit_question(long, Limits(strict=True))
    assert limit_question("fine?") == ("fine?", [])
    padded = " " * 3000 + "why?" + "\n" * 10
    assert limit_question(padded) == ("why?", [])  # whitespace alone is never "cut"
    assert limit_question(" why? ") == (" why? ", [])  # short questions are left as given


# --------------------------------------------------------------------------------------
# Cuts and drops


def test_too_many_passages_keeps_the_first_and_says_so() -> None:
    ps, notes = apply_limits([Passage(f"Passage number {i}.") for i in range(612)])
    assert len(ps) == 500 and ps[-1].text == "Passage number 499."
    assert any("got 612 passages; ranked the first 500" in n and "501-612" in n for n in notes)
    with pytest.raises(InputError, match="612 passages; the limit is 500"):
        apply_limits([Passage("x")] * 612, Limits(strict=True))


def test_long_passage_is_cut_at_a_word_gap_and_reported() -> None:
    text = ("The cohort was followed for ten years. " * 6000)[:200_000]
    (p,), notes = apply_limits([Passage(text)])
    assert len(p.text) <= 20_000 and len(p.text) > 19_900
    assert text.startswith(p.text) and not p.text[-1].isspace()
    assert text[len(p.text)].isspace()  # cut at a word gap
    assert notes == [
        f"passage 1 has 200,000 characters; kept the first {len(p.text):,} "
        "(limit 20,000 per passage)"
    ]
    with pytest.raises(InputError, match="200,000 characters; the limit is 20,000"):
        apply_limits([Passage(text)], Limits(strict=True))


def test_unbroken_long_passage_is_cut_at_the_limit() -> None:
    (p,), _ = apply_limits([Passage("x" * 50)], Limits(max_chars_per_passage=10))
    assert p.text == "x" * 10


def test_many_long_passages_are_summarised() -> None:
    ps, notes = apply_limits(
        [Passage("y" * 30) for _ in range(8)], Limits(max_chars_per_passage=20)
    )
    assert all(len(p.text) == 20 for p in ps)
    assert sum("kept the first 20" in n for n in notes) == 5
    assert any("3 more passage(s)" in n and "passages 6, 7 and 8" in n for n in notes)


def test_given_sentences_are_cut_at_sentence_boundaries() -> None:
    sents = ["First sentence here.", "Second one.", "Third sentence is long."]
    p = Passage(" ".join(sents), sentences=sents)
    (q,), _ = apply_limits([p], Limits(max_chars_per_passage=35))
    assert q.sentences == sents[:2] and q.text == "First sentence here. Second one."
    (q,), _ = apply_limits([p], Limits(max_chars_per_passage=10))  # first sentence too long
    assert q.sentences is None and q.text == "First"


def test_total_budget_cuts_one_passage_and_drops_the_rest() -> None:
    ps = [Passage("a" * 400) for _ in range(10)]
    out, notes = apply_limits(ps, Limits(max_total_chars=1_000))
    assert [len(p.text) for p in out] == [400, 400, 200]
    (note,) = notes[:1]
    assert "4,000 characters in all (limit 1,000)" in note
    assert "passage 3 was cut to its first 200 characters" in note
    assert "passages 4-10 (7) were dropped" in note
    with pytest.raises(InputError, match="4,000 characters in all; the limit is 1,000"):
        apply_limits(ps, Limits(max_total_chars=1_000, strict=True))


def test_total_budget_exactly_used_drops_without_cut() -> None:
    out, notes = apply_limits([Passage("b" * 500)] * 3, Limits(max_total_chars=1_000))
    assert len(out) == 2
    assert "passage 3 was dropped" in notes[0] and "cut" not in notes[0]


def test_long_title_is_cut() -> None:
    (p,), notes = apply_limits([Passage("body", title="T" * 1500)])
    assert p.title == "T" * 1000 and "title of passage 1" in notes[0]


def test_duplicates_are_kept_and_reported() -> None:
    ps = [Passage(t) for t in ["same.", "other.", " same. ", "same.", "", "  ", "other."]]
    out, notes = apply_limits(ps)
    assert _texts(out) == _texts(ps)  # nothing merged or dropped
    (note,) = notes
    assert note.startswith("3 exact duplicate passage(s)")
    assert "passages 3 and 4 repeat passage 1" in note and "passage 7 repeats passage 2" in note
    assert "all are kept and ranked" in note


def test_clean_input_gives_no_notices() -> None:
    ps = [Passage(P), Passage("Другой текст. 另一段文字。")]
    out, notes = apply_limits(ps)
    assert out == ps and notes == []


# --------------------------------------------------------------------------------------
# prepare_input (the API's front door)


@pytest.mark.parametrize(
    ("question", "passages", "match"),
    [
        ("", [P], "question is empty"),
        ("\t ", [P], "question is empty"),
        (Q, [], "no passages"),
        (Q, None, "list"),
        (Q, "one string", "list"),
        (Q, [b"bytes"], "passage 1"),
        (Q, [P, {"text": None}], "passage 2"),
    ],
)
def test_prepare_input_rejections(question, passages, match) -> None:
    with pytest.raises(InputError, match=match):
        prepare_input(question, passages)


def test_prepare_input_uses_limits() -> None:
    q, ps, notes = prepare_input(Q, [P] * 3, Limits(max_passages=2))
    assert q == Q and len(ps) == 2
    assert any("ranked the first 2" in n for n in notes)
    assert any("exact duplicate" in n for n in notes)


# --------------------------------------------------------------------------------------
# Through the model (tiny fixtures)


def _check(r, passages) -> None:
    n = len(r.sentences)
    assert sorted(s.rank for s in r.sentences) == list(range(1, n + 1))
    assert sorted(s.node for s in r.sentences) == list(range(n))
    for s in r.sentences:
        assert 0.0 <= s.score <= 1.0
        assert r.passages[s.passage_idx].text[s.start : s.end] == s.text
    assert sorted(r.passage_order()) == list(range(len(r.passages)))
    json.dumps(r.to_dict())


def test_model_empty_and_whitespace_inputs(tiny_model) -> None:
    with pytest.raises(InputError, match="question is empty"):
        tiny_model.rerank("", [P])
    with pytest.raises(InputError, match="no passages"):
        tiny_model.rerank(Q, [])
    with pytest.raises(InputError, match="every passage is empty"):
        tiny_model.rerank(Q, ["", "   ", "\n\t", "\x00\x01"])
    r = tiny_model.rerank(Q, [P, "  ", ""])
    _check(r, 3)
    assert r.passage_order()[1:] == [1, 2]
    assert any("no text" in w for w in r.warnings)


def test_model_one_passage_one_sentence(tiny_model) -> None:
    r = tiny_model.rerank(Q, ["Only one sentence."])
    _check(r, 1)
    assert len(r.sentences) == 1 and r.sentences[0].rank == 1
    r = tiny_model.rerank(Q, ["One.", "Two here.", "Three now."])  # one-sentence passages
    _check(r, 3)
    assert len(r.sentences) == 3


def test_model_duplicates(tiny_model) -> None:
    r = tiny_model.rerank(Q, [P, "Unrelated text about rocks.", P])
    _check(r, 3)
    assert len(r.passages) == 3
    assert any("passage 3 repeats passage 1" in w for w in r.warnings)
    a = sorted(s.local_score for s in r.sentences if s.passage_idx == 0)
    b = sorted(s.local_score for s in r.sentences if s.passage_idx == 2)
    assert a == pytest.approx(b, abs=1e-6)  # same text, same local scores


def test_model_more_than_500_passages(tiny_model) -> None:
    passages = [f"Finding {i} was significant." for i in range(503)]
    r = tiny_model.rerank(Q, passages)
    assert len(r.passages) == 500 and len(r.passages_ranked) == 500
    assert any("got 503 passages; ranked the first 500" in w for w in r.warnings)
    assert max(s.passage_idx for s in r.sentences) == 499


def test_model_200k_character_passage(tiny_model) -> None:
    long = ("Plasma levels rose after treatment in the cohort. " * 4000)[:200_000]
    r = tiny_model.rerank(Q, [P, long])
    _check(r, 2)
    assert len(r.passages[1].text) <= 20_000 and long.startswith(r.passages[1].text)
    assert any("passage 2 has 200,000 characters; kept the first" in w for w in r.warnings)


def test_model_binary_and_control_characters(tiny_model) -> None:
    binary = bytes(range(256)).decode("latin-1") + " Then a real sentence."
    original = ["Clean text here.", binary]
    r = tiny_model.rerank("what\x00 now?", original)
    _check(r, 2)
    assert r.query == "what  now?"
    assert any("control character" in w and "passage 2" in w for w in r.warnings)
    # spans still index the caller's original text (one-for-one replacement)
    for s in r.sentences:
        orig = original[s.passage_idx][s.start : s.end]
        assert len(orig) == len(s.text)
        assert all(a == b or b == " " for a, b in zip(orig, s.text))


def test_model_non_english_and_mixed_scripts(tiny_model) -> None:
    passages = [
        "Аспирин снижает риск инфаркта. Это подтверждено в исследованиях.",
        "阿司匹林可以预防心脏病。研究表明效果显著。",
        "الأسبرين يقلل من خطر النوبات القلبية. وقد ثبت ذلك.",
        "Aspirin (アスピリン) reduced MI by 18% — p < 0.05. Δ = 0.3 ± 0.1 🙂.",
        "हृदय रोग के लिए एस्पिरिन। Mixed עברית and English text.",
    ]
    r = tiny_model.rerank("Аспирин 心脏病 aspirin?", passages)
    _check(r, 5)
    assert {s.passage_idx for s in r.sentences} == set(range(5))
    assert not any("control" in w or "invalid" in w for w in r.warnings)


def test_model_limits_are_configurable(make_tiny_model) -> None:
    model = make_tiny_model()
    model.limits = Limits(max_passages=2, max_chars_per_passage=30)
    r = model.rerank(Q, [P, P + " More.", "Third."])
    assert len(r.passages) == 2 and all(len(p.text) <= 30 for p in r.passages)
    assert any("ranked the first 2" in w for w in r.warnings)
    model.limits = Limits(max_passages=2, strict=True)
    with pytest.raises(InputError, match="3 passages; the limit is 2"):
        model.rerank(Q, [P, P, P])


# --------------------------------------------------------------------------------------
# Files and uploads


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("name", "data", "match"),
    [
        ("x.txt", b"", "x.txt is empty"),
        ("x.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary file"),
        ("x.txt", "Hello. World.".encode("utf-16"), "UTF-16"),
        ("x.txt", b"caf\xe9 au lait", r"not UTF-8 text \(invalid byte 0xe9 at byte 3\)"),
        ("x.json", b"[1, 2", "invalid JSON at line 1"),
        ("x.json", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        ("x.json", b'{"a": 1}', "question"),
        ("x.json", b"[]", "no passages"),
        ("x.json", b"[3]", "item 1"),
        ("x.jsonl", b'"ok"\n{bad\n', "invalid JSON on line 2"),
        ("x.jsonl", b"\n\n", "holds no passages"),
        ("x.txt", b"   \n\n  \n", "no passages"),
    ],
)
def test_malformed_files(tmp_path, name, data, match) -> None:
    with pytest.raises(InputError, match=match):
        read_passages_file(_write(tmp_path, name, data))


def test_oversized_file_and_folder(tmp_path) -> None:
    path = _write(tmp_path, "big.txt", "word " * 300)
    with pytest.raises(InputError, match=r"big.txt is 1,500 bytes \(0.0 MB\); the limit is 1,000"):
        read_passages_file(path, max_bytes=1_000)
    assert read_passages_file(path, max_bytes=2_000)[1]
    with pytest.raises(InputError, match="folder"):
        read_passages_file(tmp_path)
    with pytest.raises(InputError, match="cannot read"):
        read_passages_file(tmp_path / "missing.json")


def test_default_upload_limit(tmp_path) -> None:
    path = tmp_path / "huge.txt"
    with path.open("wb") as f:
        f.truncate(DEFAULT_LIMITS.max_upload_bytes + 1)  # sparse file, no real disk use
    with pytest.raises(InputError, match="10,000,001 bytes"):
        read_passages_file(path)


def test_utf8_bom_and_unicode_line_separators(tmp_path) -> None:
    q, ps = read_passages_file(_write(tmp_path, "a.txt", b"\xef\xbb\xbfTitle: T\nBody here."))
    assert ps[0].title == "T" and ps[0].text == "Body here."
    line = json.dumps({"text": "one\u2028two"}, ensure_ascii=False)
    _, ps = read_passages_file(_write(tmp_path, "b.jsonl", line + "\n" + json.dumps("x")))
    assert _texts(ps) == ["one\u2028two", "x"]


def test_decode_upload_direct() -> None:
    assert decode_upload("ünïcode".encode(), "f") == "ünïcode"
    with pytest.raises(InputError, match="f is not UTF-8"):
        decode_upload(b"\xff\xfa", "f")


# --------------------------------------------------------------------------------------
# CLI


@pytest.fixture(scope="module")
def tiny_checkpoint(tiny_model, tmp_path_factory) -> Path:
    return tiny_model.save_pretrained(tmp_path_factory.mktemp("cli-ckpt") / "log")


def _run(argv, capsys):
    rc = cli.main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize(
    ("extra", "content", "match"),
    [
        ([], "", "is empty"),
        (["--max-passages", "0"], "A. B.", "--max-passages must be a positive integer, got 0"),
        (["--max-file-bytes", "3"], "Some passage.", "the limit is 3 bytes"),
        (["--strict-limits", "--max-passages", "1"], "A.\n\nB.", "2 passages; the limit is 1"),
        (["--strict-limits", "--max-chars-per-passage", "5"], "Long text.", "the limit is 5"),
        (["--max-question-chars", "-1"], "A.", "--max-question-chars must be"),
    ],
)
def test_cli_limit_errors_are_one_line(tmp_path, capsys, extra, content, match) -> None:
    path = _write(tmp_path, "p.txt", content)
    rc, out, err = _run(["rerank", "-q", Q, "-p", str(path), *extra], capsys)
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("logrerank: error: ") and match in err, err
    assert out == ""


def test_cli_empty_question_in_file(tmp_path, capsys) -> None:
    path = _write(tmp_path, "p.json", json.dumps({"question": "  ", "ctxs": ["A."]}))
    rc, _, err = _run(["rerank", "-p", str(path)], capsys)
    assert rc == 2 and "question" in err and err.count("\n") == 1


def test_cli_reports_cuts(tmp_path, capsys, tiny_checkpoint) -> None:
    path = _write(tmp_path, "p.txt", "\n\n".join([P, "Second passage.", "Third one here."]))
    out_json = tmp_path / "r.json"
    argv = ["rerank", "-q", Q, "-p", str(path), "--checkpoint", str(tiny_checkpoint)]
    argv += ["--device", "cpu", "--max-passages", "2", "--max-chars-per-passage", "30"]
    rc, out, err = _run([*argv, "-o", str(out_json)], capsys)
    assert rc == 0, err
    assert "warning: got 3 passages; ranked the first 2 (limit 2); passage 3 was dropped" in out
    assert "warning: passage 1 has 68 characters; kept the first" in out
    data = json.loads(out_json.read_text())
    assert len(data["passages"]) == 2
    assert any("ranked the first 2" in w for w in data["warnings"])


def test_cli_help_shows_limits(capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["rerank", "--help"])
    out = capsys.readouterr().out
    for flag in (
        "--max-passages",
        "--max-chars-per-passage",
        "--max-total-chars",
        "--strict-limits",
    ):
        assert flag in out
    assert "default 500" in out


def test_non_latin_input_gets_a_notice_and_english_science_does_not() -> None:
    from logrerank.inputs.language import non_latin_share
    from logrerank.inputs.passages import prepare_input

    assert non_latin_share("abc αβ") == (0.4, 5)
    _, _, notes = prepare_input("阿司匹林有效吗", ["Aspirin lowers the risk of stroke."])
    assert notes == [
        "the question looks mostly non-English (not Latin script); the models were trained on "
        "English scientific text, so the scores may be unreliable"
    ]
    _, _, notes = prepare_input("Aspirin?", ["Аспирин снижает риск инфаркта."])
    assert len(notes) == 1 and notes[0].startswith("the passages (100% of their letters) look ")
    _, _, notes = prepare_input(
        "Does IL-β bind α-synuclein?", ["The β-cells and α-helix were seen."]
    )
    assert notes == []
    _, _, notes = prepare_input(
        "Café au lait spots?", ["Naïve patients showed café-au-lait macules."]
    )
    assert notes == []


def test_latin_script_non_english_input_gets_a_notice() -> None:
    from logrerank.inputs.passages import prepare_input

    english = "Aspirin lowers the risk of stroke in older adults, a randomised trial of 19,114 people found."
    german = (
        "Die Wirkung von Aspirin auf das Herzinfarktrisiko wurde in einer randomisierten Studie "
        "mit älteren Patienten untersucht."
    )
    spanish = (
        "La aspirina reduce el riesgo de infarto en pacientes mayores según un ensayo "
        "aleatorizado con miles de participantes."
    )
    _, _, notes = prepare_input(
        "L'aspirine réduit-elle le risque d'infarctus chez les patients âgés ?", [english]
    )
    assert notes == [
        "the question looks non-English (fr); the models were trained on English scientific "
        "text, so the scores may be unreliable"
    ]
    _, passages, notes = prepare_input(
        "Does aspirin lower stroke risk?", [german, english, spanish]
    )
    assert len(passages) == 3  # nothing is dropped, the user is told
    assert notes == [
        "2 of 3 passages look non-English (de 1, es 1); the models were trained on English "
        "scientific text, so the scores may be unreliable"
    ]


def test_short_or_function_word_rich_english_is_not_judged() -> None:
    from logrerank.inputs.language import en_function_share, non_english_language

    # 2 of the 5 words ("is", "in") are English function words
    assert en_function_share("Aspirin is tested in trials.") == 0.4
    assert en_function_share("") == 0.0
    # the n-gram profiles alone read this claim as Catalan; the function word keeps it English
    assert non_english_language("Natriuretic peptides protect against diabetes.", 25) is None
    # below the letter minimum nothing is judged, even clear French
    assert non_english_language("Le risque d'infarctus ?") is None
    # one repeated token (e.g. a pasted filler) is not judged; langdetect alone says Afrikaans
    assert non_english_language("word " * 200, 80) is None
    # non-Latin text is left to the script notice
    assert non_english_language("Аспирин снижает риск инфаркта у пожилых пациентов.", 10) is None
