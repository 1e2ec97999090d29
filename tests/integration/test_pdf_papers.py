"""The two real CC BY papers of ../shared/data/pdfs (``data``; skipped when absent): one clean
two-column paper (S2ORC, ACL 2020) and one whose words run together under pdfminer's default
extraction (the Literature Graph, NAACL 2018). Their titles and section headings are found, no
passage is a run of joined words, no glyph id or ligature is left, the reference list is kept
apart, and (``slow``: the bundled LoG model) a question about each paper ranks a sentence that
answers it in the top 5."""

from __future__ import annotations

import re

import pytest

from logrerank.resources import data_root

PDFS = data_root() / "pdfs"
pytest.importorskip("pdfminer")
needs_pdfs = pytest.mark.skipif(
    not (PDFS / "N18-3011.pdf").is_file(), reason="../shared/data/pdfs not found"
)
pytestmark = [pytest.mark.data, needs_pdfs]

PAPERS = {
    "2020.acl-main.447.pdf": {
        "title": "S2ORC: The Semantic Scholar Open Research Corpus",
        "headings": ["Abstract", "1 Introduction", "2.1 Processing PDFs", "4 Evaluation",
                     "7 Related work", "8 Conclusion", "References", "B PDF filters"],
        "question": "How many papers does the S2ORC corpus contain?",
        "answer": "81.1M",
        "reference": "Riaz Ahmad and Muhammad Tanvir Afzal",
    },
    "N18-3011.pdf": {
        "title": "Construction of the Literature Graph in Semantic Scholar",
        "headings": ["Abstract", "1 Introduction", "2.1 Node Types", "3 Extracting Metadata",
                     "4.3 Knowledge Bases", "6 Conclusion and Future Work", "References"],
        "question": "What data was the ScienceParse metadata extraction model trained on?",
        "answer": "trained on a snapshot of the data at PubMed Central",
        "reference": "Ammar, Matthew E. Peters",
    },
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+")


@pytest.fixture(scope="module")
def papers():
    from logrerank.pdf import read_pdf

    return {name: read_pdf(PDFS / name) for name in PAPERS}


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_title_and_section_headings_are_found(papers, name):
    paper, want = papers[name], PAPERS[name]
    assert paper.title == want["title"]
    for heading in want["headings"]:
        assert heading in paper.headings
    sections = {p.meta["section"] for p in paper.passages}
    assert "" not in sections and "References" not in sections
    assert all(p.title == f"{want['title']} — {p.meta['section']}" for p in paper.passages)


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_no_passage_is_a_run_of_joined_words(papers, name):
    paper = papers[name]
    words = [w for p in paper.passages for w in _WORD.findall(p.text)]
    long_ = [w for w in words if len(w) > 25]
    assert len(words) > 3000 and len(long_) / len(words) < 0.001, long_[:5]
    text = " ".join(p.text for p in paper.passages)
    assert "(cid:" not in text and not re.search("[\ufb00-\ufb06]", text)
    assert PAPERS[name]["reference"] not in text  # the reference list is kept apart
    assert any(PAPERS[name]["reference"] in r for r in paper.references)


@pytest.mark.slow
def test_a_question_about_each_paper_ranks_its_answer_in_the_top_5(papers):
    from logrerank import LoGReranker

    model = LoGReranker.from_pretrained()
    for name, want in PAPERS.items():
        ranking = model.rerank(want["question"], papers[name].passages)
        top = [s.text for s in ranking.sentences[:5]]
        assert any(want["answer"] in t for t in top), (name, top)


@pytest.mark.slow
def test_the_app_and_the_cli_give_the_same_order(tmp_path):
    """Both papers at once: the app's upload handler and ``logrerank rerank -p A -p B`` rank the
    same sentences in the same order."""
    import json

    from logrerank import cli
    from logrerank.app import handlers as ui
    from logrerank.app.state import Backend

    paths = [str(PDFS / n) for n in sorted(PAPERS)]
    question = "How is structured full text extracted from paper PDFs?"
    out = tmp_path / "ranking.json"
    argv = ["rerank", "-q", question, "-p", paths[0], "-p", paths[1], "-o", str(out)]
    assert cli.main(argv) == 0
    by_cli = [(s["passage_idx"], s["sent_idx"]) for s in json.loads(out.read_text())["sentences"]]
    res = ui.run_rerank(Backend.load(), None, question, "", paths)
    assert res.ok, res.error
    by_app = [(s.passage_idx, s.sent_idx) for s in res.session.ranking.sentences]
    assert len(by_app) > 300
    assert by_app == by_cli
