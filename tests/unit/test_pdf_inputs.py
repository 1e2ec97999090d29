"""PDFs through every input: several files at once (a bad one skipped with a notice), the app's
upload and its 'from' column / tooltip / Explain line, ``rerank --passages`` repeated and
``rerank-batch`` lines naming PDFs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pdfminer")
pytest.importorskip("fpdf")

from logrerank.app import handlers as ui  # noqa: E402
from logrerank.app.provenance import pages_text, passage_source  # noqa: E402
from logrerank.batch.io import ranking_record, read_jsonl_questions  # noqa: E402
from logrerank.inputs.files import read_files  # noqa: E402
from logrerank.inputs.limits import Limits  # noqa: E402
from logrerank.types import InputError, Passage, Ranking, ScoredSentence  # noqa: E402
from tests import pdf_maker as pm  # noqa: E402


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    good = pm.make_paper(d / "paper.pdf", repeat=2)
    other = pm.make_paper(d / "other.pdf", columns=1)
    notes = d / "notes.json"
    notes.write_text(json.dumps([{"title": "N", "text": "A note on graphs."}]), encoding="utf-8")
    fake = d / "fake.pdf"
    fake.write_text("not a pdf at all", encoding="utf-8")
    return {"good": good, "other": other, "notes": notes, "fake": fake, "dir": d}


def test_several_files_are_read_and_a_bad_one_is_skipped(files):
    out = read_files([files["good"], files["fake"], files["notes"], files["other"]])
    sources = {(p.meta or {}).get("source") for p in out.passages}
    assert {"paper.pdf", "other.pdf", None} <= sources
    assert out.names == ["paper.pdf", "notes.json", "other.pdf"] and out.skipped == ["fake.pdf"]
    assert any(n.startswith("skipped: fake.pdf is not a PDF file") for n in out.notices)


def test_no_readable_file_is_an_error_naming_each(files, tmp_path):
    empty = tmp_path / "empty.pdf"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match=r"no file could be read: fake.pdf .*; empty.pdf is empty"):
        read_files([files["fake"], empty])


def test_size_and_page_limits_apply_to_pdfs(files):
    with pytest.raises(InputError, match="the limit is 1,000 bytes"):
        read_files([files["good"]], Limits(max_upload_bytes=1000))
    book = pm.make_pages(files["dir"] / "book.pdf", 12)
    out = read_files([book], Limits(max_pdf_pages=5))
    assert any("has 12 pages; read the first 5 (limit 5 pages per PDF)" in n for n in out.notices)


def test_app_reads_uploads_and_names_them(files):
    upload = [str(files["good"]), str(files["fake"]), str(files["other"])]
    question, passages, notices = ui.read_input("", upload)
    assert question is None and {p.meta["source"] for p in passages} == {"paper.pdf", "other.pdf"}
    assert any("fake.pdf" in n for n in notices)
    assert ui.input_source("pasted", upload).startswith(
        "Input: the uploaded files paper.pdf, fake.pdf, other.pdf; the pasted passages are ignored"
    )
    assert ui.parse_input("", str(files["notes"]))[1][0].text == "A note on graphs."


def test_provenance_text():
    meta = {"paper": "P <b>", "section": "2 Methods", "pages": [3, 4], "kind": "body"}
    assert passage_source(Passage("x", meta=meta)) == "P <b> · 2 Methods · pp. 3-4"
    assert passage_source(Passage("x", meta={**meta, "pages": [5], "kind": "caption"})).endswith(
        "p. 5 (caption)"
    )
    assert passage_source(Passage("x")) == "" and pages_text([2, 5]) == "pp. 2, 5"
    assert passage_source(Passage("x", meta={"pages": "bad"})) == ""


def _ranking() -> Ranking:
    meta = {"paper": "Paper <i>A</i>", "section": "3 Results", "pages": [2], "kind": "body"}
    p = Passage("Gains were large.", title="Paper A — 3 Results", meta=meta)
    s = ScoredSentence(0, 0, 0, "Gains were large.", 0, 17, 0.9, rank=1, role="result")
    return Ranking(query="q", passages=[p], ranker="log", sentences=[s])


def test_table_tooltip_and_explain_show_where_a_sentence_came_from():
    from logrerank.app import explain_view, graph_view, tables

    ranking = _ranking()
    table = tables.ranking_table(ranking)
    assert table["from"][0] == "Paper <i>A</i> · 3 Results · p. 2"  # a dataframe: plain text
    tip = graph_view._node_tooltip(ranking.sentences[0], ranking, {})
    assert "from: Paper <i>A</i> · 3 Results · p. 2" in tip  # set with textContent
    html = explain_view.explain_html(ranking.sentences[0], ranking, [], [], None, {})
    assert "from: Paper &lt;i&gt;A&lt;/i&gt; · 3 Results · p. 2" in html and "<i>A</i>" not in html


def test_rerank_takes_repeated_passages_flags(files, capsys):
    from logrerank import cli

    rc = cli.main(["rerank", "-p", str(files["fake"]), "-p", str(files["fake"])])
    err = capsys.readouterr().err
    assert rc == 2 and "no file could be read" in err and "not a PDF file" in err


def test_rerank_prints_pdf_notices(files, tiny_ckpt, capsys):
    from logrerank import cli

    argv = ["rerank", "-q", "How much did the graph reranker improve nDCG?"]
    argv += ["-p", str(files["good"]), "-p", str(files["fake"]), "--checkpoint", str(tiny_ckpt)]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "warning: skipped: fake.pdf is not a PDF file" in out
    assert "warning: paper.pdf: 14 passages" in out


def test_batch_lines_name_pdfs(files):
    src = files["dir"] / "questions.jsonl"
    lines = [
        {"id": "a", "question": "q?", "pdfs": ["paper.pdf", "fake.pdf"]},
        {"id": "b", "question": "q?", "pdfs": ["fake.pdf"]},
        {"id": "c", "question": "q?", "pdfs": "paper.pdf"},
        {"id": "d", "question": "q?", "passages": ["own text"], "pdfs": [str(files["other"])]},
    ]
    src.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    a, b, c, d = list(read_jsonl_questions(src))
    assert a.pids[0] == "paper#1" and a.passages[0]["meta"]["source"] == "paper.pdf"
    assert any("fake.pdf is not a PDF file" in n for n in a.notices)
    assert "not a PDF file" in b.reason and "list of PDF file names" in c.reason
    assert d.passages[0] == "own text" and d.pids[1] == 1
    ranking = Ranking(query="q?", passages=[], ranker="log", warnings=["w"])
    assert ranking_record(a, ranking)["warnings"][-1] == "w"
    assert ranking_record(a, ranking)["warnings"][0].startswith("paper.pdf: ")


def test_passage_meta_round_trips_through_json(tmp_path: Path):
    from logrerank.inputs.passages import passage_from_obj

    p = passage_from_obj({"text": "t", "meta": {"pages": [1]}}, "item 1")
    assert p.meta == {"pages": [1]}
    with pytest.raises(InputError, match="'meta' must be an object"):
        passage_from_obj({"text": "t", "meta": [1]}, "item 1")
