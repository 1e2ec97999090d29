"""The multi-paper benchmarks ``evinf`` (Evidence Inference 2.0) and ``scisumm`` (CL-SciSumm) on
tiny synthetic files: passages, span/sentence-id gold, flagged and malformed records, and the
multi-paper pool rule. The real-data checks are in ``tests/integration/test_paper_benchmarks.py``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from logrerank.cli import main
from logrerank.data import (
    build_paper_pools,
    load_benchmark,
    read_cl_scisumm,
    read_evidence_inference,
)
from logrerank.data.evidence_inference import FLAGGED_PROMPT_IDS, parse_article
from logrerank.data.paper_pools import paper_of
from logrerank.data.pools import COVERAGE_KS
from logrerank.data.schema import Doc, Example

RESULT = "Mortality was lower with drug X than with placebo (4% vs 9%, P = 0.01)."
NEXT = "Adverse events were similar."
TABLE = ["Outcome", "Drug X", "Placebo", "Mortality", "4%", "9%"]
LONG = " ".join(f"Method step {i} was carried out with care." for i in range(20))


def _article(title: str, topic: str) -> str:
    """A small RCT article in the Evidence Inference text layout."""
    return "\n".join(
        [
            "TITLE: ",
            title,
            "",
            "",
            f"We studied {topic} in a randomised trial.",
            "ABSTRACT.RESULTS:",
            f"{RESULT} {NEXT} Nothing else differed in the {topic} group.",
            "",
            "BODY.METHODS:",
            LONG,
            "Short note.",
            *TABLE,
            "",
            "BODY.DISCUSSION:",
            f"The {topic} findings agree with earlier trials. More work is needed.",
            "",
        ]
    )


def _write_csv(path: Path, header: list[str], rows: list[list[object]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


@pytest.fixture()
def evinf_root(tmp_path: Path) -> Path:
    """Three articles in the test split, prompts on article 1 (one flagged) and article 2."""
    root = tmp_path / "evidence_inference"
    (root / "txt_files").mkdir(parents=True)
    (root / "splits").mkdir()
    topics = {"1": "drug X mortality", "2": "exercise therapy", "3": "vitamin D"}
    texts = {}
    for pmcid, topic in topics.items():
        texts[pmcid] = _article(f"Trial of {topic}", topic)
        (root / "txt_files" / f"PMC{pmcid}.txt").write_text(texts[pmcid], encoding="utf-8")
    (root / "splits" / "ev2_test_article_ids.txt").write_text("1\n2\n3\n4\n", encoding="utf-8")
    t1 = texts["1"]
    s = t1.index(RESULT)
    table_start = t1.index("Mortality\n4%")
    table_end = t1.index("9%", table_start) + 2
    ann_cols = ["UserID", "PromptID", "PMCID", "Valid Label", "Valid Reasoning", "Label"]
    ann_cols += ["Annotations", "Label Code", "In Abstract", "Evidence Start", "Evidence End"]
    label = "significantly decreased"
    rows = [
        # inclusive end (documented convention)
        [0, 500, 1, True, True, label, RESULT, -1, "UNK", s, s + len(RESULT) - 1],
        # exclusive end: text[s:e+1] takes the first letter of the next sentence
        [1, 500, 1, True, True, label, RESULT, -1, "UNK", s, s + len(RESULT) + 1],
        # a second annotator's span over table cells
        [2, 500, 1, True, True, label, "Mortality 4% 9%", -1, "UNK", table_start, table_end - 1],
        [0, 911, 1, True, True, label, RESULT, -1, "UNK", s, s + len(RESULT) - 1],  # flagged
        # -1 offsets: located by searching the annotation text
        [0, 600, 2, True, True, "no significant difference", NEXT, 0, "UNK", -1, -1],
    ]
    _write_csv(root / "v2_annotations.csv", ann_cols, rows)
    prompt_cols = ["PromptID", "PMCID", "Outcome", "Intervention", "Comparator"]
    prompts = [
        [500, 1, "Mortality", "drug X ", "placebo"],
        [911, 1, "Mortality", "drug X", "placebo"],
        [600, 2, "Adverse events", "exercise", "usual care"],
        [700, 3, "Bone density", "vitamin D", "placebo"],  # no annotation: not a query
    ]
    _write_csv(root / "prompts_merged.csv", prompt_cols, prompts)
    return root


def test_parse_article_sections_tables_and_windows() -> None:
    text = _article("Trial of A", "A")
    art = parse_article(text)
    assert art.title == "Trial of A"
    sections = [name for name, _ in art.passages]
    assert sections[0] == "" and sections[1] == "Abstract: Results"
    assert sections.count("Methods") == 4 and sections[-1] == "Discussion"
    methods = [units for name, units in art.passages if name == "Methods"]
    # 20 sentences -> 3 windows of 7/6/7; then "Short note." and the table form one passage
    assert [len(u) for u in methods] == [7, 6, 7, 2]
    assert methods[-1][0][0] == "Short note."
    assert methods[-1][1][0] == " ".join(TABLE)
    for _, units in art.passages:
        for unit, start, end in units:
            if unit != " ".join(TABLE):
                assert text[start:end] == unit
    # the first (unnamed) section's single sentence is its own passage
    assert art.passages[0][1][0][0] == "We studied A in a randomised trial."


def test_evinf_gold_from_offsets_and_flagged_prompts_dropped(evinf_root: Path) -> None:
    stats: dict = {}
    queries, corpus = read_evidence_inference(evinf_root, "test", stats=stats)
    by_id = {q.qid: q for q in queries}
    assert sorted(by_id) == ["500", "600"]
    assert stats["n_prompts_flagged"] == 1 and "911" in FLAGGED_PROMPT_IDS
    assert stats["n_articles_missing"] == 1 and stats["n_articles"] == 3
    assert stats["n_offsets_exclusive"] == 1 and stats["n_offsets_located"] == 1
    q = by_id["500"]
    assert q.query == (
        "With respect to Mortality, characterize the reported difference between drug X and "
        "placebo."
    )
    assert q.meta["paper_id"] == "PMC1" and q.meta["prompt_id"] == "500"
    gold = {corpus[d].sentences[j] for d, js in q.gold_sentences.items() for j in js}
    # the exclusive row must not pull in the next sentence; the table row adds the cells
    assert gold == {RESULT, " ".join(TABLE)}
    assert q.gold_doc_ids == list(q.gold_sentences)
    assert corpus[q.gold_doc_ids[0]].title == "Trial of drug X mortality — Abstract: Results"
    q6 = by_id["600"]
    assert {corpus[d].sentences[j] for d, js in q6.gold_sentences.items() for j in js} == {NEXT}
    assert all(paper_of(d) == "PMC2" for d in q6.gold_doc_ids)
    assert {paper_of(d) for d in corpus} == {"PMC1", "PMC2", "PMC3"}


def test_evinf_unknown_split_and_missing_files(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="split"):
        read_evidence_inference(tmp_path, "dev")
    with pytest.raises(FileNotFoundError, match="missing"):
        read_evidence_inference(tmp_path, "test")


def _paper_xml(title: str, topic: str, n: int) -> str:
    sents = [
        f'<S sid="{i + 1}" ssid="{i + 1}">{topic} sentence {i + 1} about {topic}.</S>'
        for i in range(n)
    ]
    half = n // 2
    return (
        f'<PAPER>\n<S sid="0">{title}</S>\n<ABSTRACT>\n{sents[0]}\n</ABSTRACT>\n'
        f'<SECTION title="1 Introduction" number="1">\n{"".join(sents[1:half])}\n</SECTION>\n'
        f'<SECTION title="2 Method" number="2">\n{"".join(sents[half:])}\n</SECTION>\n</PAPER>\n'
    )


def _record(num: int, text: str, offsets: str, facet: str = "Method_Citation") -> str:
    return (
        f"Citance Number: {num} | Reference Article:  P.xml | Citing Article:  C{num}.xml | "
        f"Citation Marker Offset:  ['1'] | Citation Marker:  2000 | Citation Offset:  ['1'] | "
        f"Citation Text:  {text} | Reference Offset:  {offsets} | Reference Text:  <S>x</S> | "
        f"Discourse Facet:  {facet} | Annotator:  A |\n\n"
    )


@pytest.fixture()
def scisumm_root(tmp_path: Path) -> Path:
    """Three reference papers; the third has malformed, non-UTF-8 XML."""
    root = tmp_path / "cl_scisumm"
    papers = {
        "P1": ("Parsing with grammars", "parsing"),
        "P2": ("Machine translation", "translation"),
    }
    papers["P3"] = ("Tagging & chunking", "tagging")
    for paper, (title, topic) in papers.items():
        d = root / "From-Training-Set-2018" / paper
        (d / "Reference_XML").mkdir(parents=True)
        (d / "annotation").mkdir()
        xml = _paper_xml(title, topic, 14)
        data = xml.encode("utf-8")
        if paper == "P3":  # raw '&' breaks xml.etree; a cp1252 byte breaks UTF-8
            data = xml.replace("sentence 3 ", "sentence 3 \xd7 ").encode("cp1252")
        (d / "Reference_XML" / f"{paper}.xml").write_bytes(data)
    ann = "".join(
        [
            _record(
                1,
                f'<S sid ="9" ssid = "9">We use the {"parsing"} model (Smith, 2000).</S>',
                "['2','3']",
            ),
            _record(2, "<S sid =  ssid = ></S>", "['4']"),  # empty text: skipped
            _record(3, "<S>Parsing is hard &amp; slow | really.</S>", "['13']", "Results_Citation"),
            _record(
                4,
                f'<S sid ="9" ssid = "9">We use the {"parsing"} model (Smith, 2000).</S>',
                "['7']",
                "Aim_Citation",
            ),
            _record(5, "<S>Unrelated.</S>", "['0','99']"),  # gold only the title / unknown: skipped
        ]
    )
    (root / "From-Training-Set-2018" / "P1" / "annotation" / "P1.ann.txt").write_text(ann)
    (root / "From-Training-Set-2018" / "P2" / "annotation" / "P2.ann.txt").write_text(
        _record(
            1,
            "<S>Translation sentence 5 about translation.</S>",
            "['5']",
            "['Method_Citation','Results_Citation']",
        )
    )
    (root / "From-Training-Set-2018" / "P3" / "annotation" / "P3.ann.txt").write_text(
        _record(1, "<S>tagging sentence 3 tagging</S>", "['3']", "Method Citation")
    )
    return root


def test_scisumm_reader_gold_facets_and_tolerance(scisumm_root: Path) -> None:
    stats: dict = {}
    queries, corpus = read_cl_scisumm(scisumm_root, "test", stats=stats)
    assert stats["n_papers"] == 3 and stats["n_records"] == 7
    assert stats["n_skipped_empty"] == 1 and stats["n_skipped_no_gold"] == 1
    assert stats["n_merged_duplicates"] == 1
    assert stats["n_files_not_utf8"] == 1 and stats["n_xml_regex_fallback"] == 1
    by_id = {q.qid: q for q in queries}
    assert sorted(by_id) == ["P1:1", "P1:3", "P2:1", "P3:1"]
    q = by_id["P1:1"]
    assert q.query == "We use the parsing model (Smith, 2000)."
    gold = sorted(corpus[d].sentences[j] for d, js in q.gold_sentences.items() for j in js)
    assert gold == [f"parsing sentence {i} about parsing." for i in (2, 3, 7)]  # merged duplicate
    assert q.meta["facets"] == ["Method", "Aim"] and q.meta["facet"] == "Method"
    assert q.meta["citance_numbers"] == ["1", "4"]
    assert by_id["P1:3"].query == "Parsing is hard & slow | really."
    assert by_id["P1:3"].meta["facet"] == "Results"
    assert by_id["P2:1"].meta["facets"] == ["Method", "Results"]
    assert by_id["P3:1"].meta["facet"] == "Method"
    # windows of at most 5 sentences within a section, the title kept out of the text
    assert max(len(d.sentences) for d in corpus.values()) <= 5
    p1 = [d for d in corpus.values() if paper_of(d.doc_id) == "P1"]
    assert [len(d.sentences) for d in p1] == [1, 3, 3, 4, 3]
    assert p1[0].title == "Parsing with grammars — Abstract"
    p3_text = " ".join(d.text for d in corpus.values() if paper_of(d.doc_id) == "P3")
    assert "\xd7" in p3_text and "tagging sentence 14" in p3_text
    assert all("Tagging & chunking" in d.title for d in corpus.values() if d.doc_id[:2] == "P3")


def _toy_corpus(n_papers: int = 6, n_passages: int = 12) -> dict[str, Doc]:
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma"]
    corpus = {}
    for p in range(n_papers):
        for j in range(n_passages):
            text = f"{words[p]} study passage {j} {words[(p + j) % len(words)]} results"
            corpus[f"paper{p}:{j}"] = Doc(f"paper{p}:{j}", f"Paper {p}", [text, "More text."])
    return corpus


def test_paper_pools_multi_paper_gold_inside_size_deterministic() -> None:
    corpus = _toy_corpus()
    queries = [
        Example("q1", "alpha results gamma", gold_doc_ids=["paper0:11", "paper0:3"]),
        Example("q2", "sigma delta", gold_doc_ids=["paper5:0"]),
        Example("q3", "zeta unrelated words", gold_doc_ids=["paper2:7"]),  # BM25 finds nothing
    ]
    pools, stats = build_paper_pools(queries, corpus, k=20, own_k=8)
    again, _ = build_paper_pools(queries, corpus, k=20, own_k=8)
    assert pools == again
    for ex in queries:
        ids = pools[ex.qid]["doc_ids"]
        assert len(ids) == len(set(ids)) == 20
        assert set(ex.gold_doc_ids) <= set(ids)
        own = paper_of(ex.gold_doc_ids[0])
        assert sum(paper_of(d) == own for d in ids) == 8
        assert len({paper_of(d) for d in ids}) >= 2  # multi-paper
    assert pools["q3"]["inserted"] == ["paper2:7"]  # no query term matches: id order, then insert
    assert stats["pool_size_min"] == stats["pool_size_max"] == 20 and stats["n_papers"] == 6
    assert stats["own_per_pool_mean"] == 8 and stats["papers_per_pool_min"] >= 2
    # a small paper gives all its passages; the others fill the pool
    small = {d: v for d, v in corpus.items() if paper_of(d) != "paper1" or int(d[7:]) < 3}
    p, _ = build_paper_pools([Example("q", "beta", gold_doc_ids=["paper1:0"])], small, k=20)
    assert len(p["q"]["doc_ids"]) == 20
    assert sum(paper_of(d) == "paper1" for d in p["q"]["doc_ids"]) == 3
    with pytest.raises(ValueError, match="several papers"):
        build_paper_pools([Example("x", "a", gold_doc_ids=["paper0:1", "paper1:1"])], corpus)


def test_paper_pools_order_is_bm25_order() -> None:
    from logrerank.data.first_pass import BM25Ranker

    corpus = _toy_corpus()
    ex = Example("q", "gamma results delta", gold_doc_ids=["paper2:5"])
    pools, _ = build_paper_pools([ex], corpus, k=15, own_k=5)
    ranked, _ = BM25Ranker(corpus).rank(ex.query)
    ids = pools["q"]["doc_ids"]
    assert ids == sorted(ids, key=ranked.index)


def test_load_benchmark_evinf_scisumm_pools_and_cache(
    evinf_root: Path, scisumm_root: Path, tmp_path: Path
) -> None:
    data = evinf_root.parent
    examples, stats = load_benchmark("evinf", data_root=data, k=10, cache_dir=tmp_path / "c")
    assert stats["split"] == "test" and stats["n_examples"] == 2 and not stats["cached"]
    for ex in examples:
        ids = [c.doc_id for c in ex.candidates]
        assert len(ids) == 10 and set(ex.gold_doc_ids) <= set(ids)
        assert len({paper_of(d) for d in ids}) >= 2
    again, stats2 = load_benchmark("evinf", data_root=data, k=10, cache_dir=tmp_path / "c")
    assert stats2["cached"]
    assert [[c.doc_id for c in e.candidates] for e in again] == [
        [c.doc_id for c in e.candidates] for e in examples
    ]
    ex, st = load_benchmark("scisumm", data_root=data, k=8, cache_dir=tmp_path / "c")
    assert st["n_examples"] == 4 and st["pool_size_max"] == 8
    with pytest.raises(ValueError, match="not available"):
        load_benchmark("scisumm", data_root=data, split="validation")


def test_missing_data_message_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="LOGRERANK_DATA.*--data-root.*evaluation.md"):
        load_benchmark("evinf", data_root=tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="LOGRERANK_DATA"):
        load_benchmark("scisumm", data_root=tmp_path)


def test_cli_eval_reports_coverage(
    evinf_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("LOGRERANK_CACHE", str(tmp_path / "cache"))
    assert COVERAGE_KS["evinf"] == COVERAGE_KS["scisumm"] == (3, 5, 10)
    out = tmp_path / "out"
    argv = ["eval", "--benchmark", "evinf", "--data-root", str(evinf_root.parent)]
    assert main([*argv, "--rankers", "first-pass,bm25-sent", "--quiet", "--out", str(out)]) == 0
    assert "cov@3" in capsys.readouterr().out
    result = json.loads((out / "results.json").read_text())
    assert result["meta"]["queries"] == 2
    assert "coverage@10" in result["summary"]["bm25-sent"]["passage"]
    assert result["summary"]["bm25-sent"]["sentence_queries"] == 2
    assert main([*argv[:3], "--data-root", str(tmp_path / "none"), "--rankers", "bm25"]) == 2
    assert "LOGRERANK_DATA" in capsys.readouterr().err
