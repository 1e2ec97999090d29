"""Reader of CL-SciSumm 2019 Task 1a: citances -> the cited sentences of a reference paper.

Files (``data/cl_scisumm/``, see the data README): one folder per reference paper, with
``Reference_XML/<paper>.xml`` (sentences ``<S sid="..">`` under ``<ABSTRACT>``, ``<SECTION
title="..">`` or directly under ``<PAPER>``; ``sid="0"`` is the title) and
``annotation/<paper>.ann.txt`` (one citance record per line, fields ``Name: value`` separated by
`` | ``). ``From-Training-Set-2018/`` holds the 40 papers annotated by hand (split ``test``,
evaluation only), ``From-ScisummNet-2019/`` the 978 papers labelled automatically (split
``train``).

**Tolerance.** Nine hand-annotated XML files are not UTF-8 (they are read as cp1252 with
replacement); a file that ``xml.etree`` still cannot parse falls back to a regular-expression
scan of its ``<SECTION>`` and ``<S>`` tags. Annotation records are found by their field names,
not by splitting at `` | `` (citances themselves contain it). Skipped records are counted in
``stats``; nothing raises on a malformed record.

**Passages.** The sentences of each section (the abstract, each ``<SECTION>``, and each run of
sentences directly under ``<PAPER>``; empty sentences and the title dropped) are cut into
``ceil(n / WINDOW)`` consecutive windows of near-equal length (:data:`WINDOW` = 5). Units are
the XML's own sentences. Passage title: ``"<paper title> — <section title>"``; id
``<paper>:<passage index>``.

**Queries.** The citance (``Citation Text``) with its XML tags removed, entities unescaped,
citation markers stripped (:func:`~logrerank.data.common.strip_citation_markers`) and
whitespace collapsed. Gold: the ``Reference Offset`` sentence ids that fall in a passage.
Citances with empty text or no such gold are skipped; identical (citance text, paper) pairs are
merged into one query (gold and facets united, first record's id kept).
"""

from __future__ import annotations

import html
import math
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from logrerank.data.common import strip_citation_markers
from logrerank.data.schema import Doc, Example

#: Split name -> folder of the public data. ``test`` (the hand-annotated papers) is evaluation only.
SPLIT_FOLDERS = {"test": "From-Training-Set-2018", "train": "From-ScisummNet-2019"}
#: Sentences per passage window (at most).
WINDOW = 5
#: Canonical discourse facets (``meta["facet"]``); spelling variants are mapped onto them.
FACETS = ("Aim", "Hypothesis", "Implication", "Method", "Results")

_TAG = re.compile(r"<[^>]*>")
_FIELD = r"\|\s*{name}\s*:\s*"
_CITANCE = re.compile(
    _FIELD.format(name="Citation Text")
    + r"(.*?)\s*"
    + _FIELD.format(name="Reference Offset")
    + r"(\[[^\]]*\])",
    re.S,
)
_FACET = re.compile(_FIELD.format(name="Discourse Facet") + r"(.*?)\s*(?:\|\s*Annotator|\|?\s*$)")
_NUMBER = re.compile(r"Citance Number\s*:\s*([^|]*?)\s*\|")
_CITING = re.compile(_FIELD.format(name="Citing Article") + r"([^|]*?)\s*\|")
_RE_SECTION = re.compile(r"<(ABSTRACT|SECTION|SUBSECTION)\b([^>]*)>|<S\b([^>]*)>(.*?)</S>", re.S)
_RE_ATTR = re.compile(r"""(\w+)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))""")


def _decode(path: Path, counts: dict[str, int]) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        counts["n_files_not_utf8"] += 1
        return data.decode("cp1252", errors="replace")


def _clean(text: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", text)).split())


def _xml_sections(text: str, counts: dict[str, int]) -> tuple[str, list[tuple[str, list]]]:
    """``(title, [(section title, [(sid, sentence), ...]), ...])`` of a reference XML."""
    title = ""
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    try:
        root = ET.fromstring(text)
        items: list[tuple[str, str, str]] = []  # (kind, attr or sid, text)

        def walk(el: ET.Element, section: str) -> None:
            for child in el:
                if child.tag == "S":
                    items.append(("S", (child.get("sid") or "").strip(), "".join(child.itertext())))
                elif child.tag in ("ABSTRACT", "SECTION", "SUBSECTION"):
                    name = "Abstract" if child.tag == "ABSTRACT" else child.get("title") or ""
                    name = " ".join(name.split())
                    items.append(("open", name, ""))
                    walk(child, name)
                    items.append(("open", section, ""))

        items.append(("open", "", ""))
        walk(root, "")
    except ET.ParseError:
        counts["n_xml_regex_fallback"] += 1
        items = [("open", "", "")]
        for m in _RE_SECTION.finditer(text):
            if m.group(1):
                attrs = {a[0]: a[1] or a[2] or a[3] for a in _RE_ATTR.findall(m.group(2))}
                name = "Abstract" if m.group(1) == "ABSTRACT" else attrs.get("title", "")
                items.append(("open", " ".join(html.unescape(name).split()), ""))
            else:
                attrs = {a[0]: a[1] or a[2] or a[3] for a in _RE_ATTR.findall(m.group(3))}
                items.append(("S", attrs.get("sid", "").strip(), html.unescape(m.group(4))))
    for kind, value, sentence in items:
        if kind == "open":
            sections.append((value, []))
        elif kind == "S":
            sentence = " ".join(_TAG.sub(" ", sentence).split())
            if value == "0" and not title:
                title = sentence
            elif sentence:
                sections[-1][1].append((value, sentence))
    return title, [(name, sents) for name, sents in sections if sents]


def _windows(items: list[Any], size: int) -> list[list[Any]]:
    n_win = max(1, math.ceil(len(items) / size))
    bounds = [round(i * len(items) / n_win) for i in range(n_win + 1)]
    return [items[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def _facets(raw: str) -> list[str]:
    out = []
    for part in re.findall(r"[A-Za-z]+", raw):
        for facet in FACETS:
            if part.lower().startswith(facet.lower()[:4]) and facet not in out:
                out.append(facet)
    return out


def read_paper(
    xml_path: str | os.PathLike[str], paper_id: str, counts: dict[str, int] | None = None
) -> tuple[list[Doc], dict[str, tuple[str, int]]]:
    """The passages of one reference paper and where each sentence id landed.

    Args:
        xml_path: ``Reference_XML/<paper>.xml``.
        paper_id: The paper's id (folder name), the prefix of the passage ids.
        counts: Optional counters (``n_files_not_utf8``, ``n_xml_regex_fallback``) to increase.

    Returns:
        ``(passages, where)``: the passages in document order, and ``sid -> (passage id,
        sentence index)``.
    """
    counts = counts if counts is not None else {}
    counts.setdefault("n_files_not_utf8", 0)
    counts.setdefault("n_xml_regex_fallback", 0)
    title, sections = _xml_sections(_decode(Path(xml_path), counts), counts)
    passages: list[Doc] = []
    where: dict[str, tuple[str, int]] = {}
    for name, sentences in sections:
        for window in _windows(sentences, WINDOW):
            doc_id = f"{paper_id}:{len(passages)}"
            full = f"{title} — {name}" if title and name else title or name or paper_id
            passages.append(Doc(doc_id, full, [s for _, s in window]))
            for j, (sid, _) in enumerate(window):
                where.setdefault(sid, (doc_id, j))
    return passages, where


def _records(text: str) -> list[str]:
    """The citance records of an annotation file (each starts with ``Citance Number``)."""
    return [r for r in re.split(r"(?=Citance Number\s*:)", text) if r.strip()]


def read_cl_scisumm(
    root: str | os.PathLike[str],
    split: str = "test",
    *,
    limit_papers: int | None = None,
    stats: dict[str, Any] | None = None,
) -> tuple[list[Example], dict[str, Doc]]:
    """Read one split of CL-SciSumm 2019 Task 1a as citance queries and the split's passages.

    Args:
        root: The ``cl_scisumm`` folder.
        split: ``test`` (the 40 hand-annotated papers) or ``train`` (ScisummNet).
        limit_papers: Read only the first N paper folders (sorted), e.g. for quick trials.
        stats: If given, filled with counts: ``n_papers``, ``n_papers_skipped``,
            ``n_passages``, ``n_records``, ``n_queries``, ``n_skipped_empty``,
            ``n_skipped_no_gold``, ``n_skipped_malformed``, ``n_merged_duplicates``,
            ``n_gold_outside``, ``n_files_not_utf8``, ``n_xml_regex_fallback``.

    Returns:
        ``(queries, corpus)``: Examples (qid ``<paper>:<citance number>``, paper by paper in
        file order; no candidates yet) with ``gold_doc_ids`` in passage order,
        ``gold_sentences`` and ``meta`` = ``dataset``, ``paper_id``, ``facet`` (first
        canonical facet of :data:`FACETS` or ``None``: ScisummNet has none), ``facets``,
        ``raw_facet``, ``citing_articles``, ``citance_numbers``; and every passage of the
        split's papers, ids ``<paper>:<j>``.

    Raises:
        ValueError: For an unknown split.
        FileNotFoundError: When the split's folder is missing.
    """
    if split not in SPLIT_FOLDERS:
        raise ValueError(f"CL-SciSumm split {split!r}: choose from {tuple(SPLIT_FOLDERS)}")
    folder = Path(root) / SPLIT_FOLDERS[split]
    if not folder.is_dir():
        raise FileNotFoundError(f"CL-SciSumm folder {folder} is missing")
    names = (
        "n_papers_skipped", "n_records", "n_skipped_empty", "n_skipped_no_gold",
        "n_skipped_malformed", "n_merged_duplicates", "n_gold_outside",
        "n_files_not_utf8", "n_xml_regex_fallback",
    )  # fmt: skip
    counts = dict.fromkeys(names, 0)
    corpus: dict[str, Doc] = {}
    queries: list[Example] = []
    papers = sorted(p for p in folder.iterdir() if p.is_dir())[:limit_papers]
    n_papers = 0
    seen_qids: set[str] = set()
    for paper_dir in papers:
        paper = paper_dir.name
        xml_path = paper_dir / "Reference_XML" / f"{paper}.xml"
        ann_paths = sorted((paper_dir / "annotation").glob("*.txt"))
        if not xml_path.is_file() or not ann_paths:
            counts["n_papers_skipped"] += 1
            continue
        passages, where = read_paper(xml_path, paper, counts)
        if not passages:
            counts["n_papers_skipped"] += 1
            continue
        n_papers += 1
        corpus.update((d.doc_id, d) for d in passages)
        by_text: dict[str, Example] = {}
        for record in _records(_decode(ann_paths[0], counts)):
            counts["n_records"] += 1
            m = _CITANCE.search(record)
            if m is None:
                counts["n_skipped_malformed"] += 1
                continue
            query = strip_citation_markers(_clean(m.group(1)))
            if not query:
                counts["n_skipped_empty"] += 1
                continue
            gold: dict[str, set[int]] = {}
            for sid in re.findall(r"\d+", m.group(2)):
                if sid in where:
                    gold.setdefault(where[sid][0], set()).add(where[sid][1])
                else:
                    counts["n_gold_outside"] += 1
            if not gold:
                counts["n_skipped_no_gold"] += 1
                continue
            number = _NUMBER.search(record)
            citing = _CITING.search(record)
            facet_m = _FACET.search(record)
            raw_facet = facet_m.group(1).strip() if facet_m else ""
            ex = by_text.get(query)
            if ex is None:
                qid = f"{paper}:{number.group(1) if number else counts['n_records']}"
                while qid in seen_qids:
                    qid += "+"
                seen_qids.add(qid)
                meta = {"dataset": "scisumm", "paper_id": paper, "raw_facet": raw_facet}
                meta.update(facets=[], citing_articles=[], citance_numbers=[])
                ex = by_text[query] = Example(qid, query, [], [], {}, {}, meta)
                queries.append(ex)
            else:
                counts["n_merged_duplicates"] += 1
            for doc_id, idx in gold.items():
                ex.gold_sentences[doc_id] = sorted(set(ex.gold_sentences.get(doc_id, ())) | idx)
            order = {d.doc_id: i for i, d in enumerate(passages)}
            ex.gold_doc_ids = sorted(ex.gold_sentences, key=order.__getitem__)
            ex.meta["facets"] += [f for f in _facets(raw_facet) if f not in ex.meta["facets"]]
            ex.meta["facet"] = ex.meta["facets"][0] if ex.meta["facets"] else None
            if citing:
                ex.meta["citing_articles"].append(citing.group(1).strip())
            if number:
                ex.meta["citance_numbers"].append(number.group(1).strip())
    if stats is not None:
        stats.update(n_papers=n_papers, n_passages=len(corpus), n_queries=len(queries))
        stats.update(counts)
    return queries, corpus
