"""Reader of Evidence Inference 2.0: prompts about full-text RCT articles, evidence as spans.

Files (``data/evidence_inference/``, see the data README): ``txt_files/PMC<id>.txt`` (the
articles as plain text), ``v2_annotations.csv`` (one row per annotator and evidence span),
``prompts_merged.csv`` (outcome, intervention, comparator per prompt) and
``splits/ev2_{train,validation,test}_article_ids.txt``.

**Passages.** An article file starts with ``TITLE:`` and the title, then sections headed by a
line such as ``ABSTRACT.RESULTS:`` or ``BODY.METHODS:`` (text before the first heading, an
unstructured abstract, gets no section name). Within a section every line is a paragraph;
blank lines separate sections. Tables are flattened to one cell per line, so a line counts as a
*table line* when it has fewer than :data:`TABLE_LINE_WORDS` words and does not end with
``.``/``!``/``?``; a run of table lines is one block whose units join consecutive lines up to
:data:`TABLE_UNIT_CHARS` characters. A prose line is split into sentences by the project's
segmenter (:func:`logrerank.text.segment.split_sentences`, the splitter behind
:func:`logrerank.data.common.split_sentences`). Blocks of a section then become passages:
a passage collects consecutive blocks until it holds at least :data:`MIN_SENTENCES` units
(never more than :data:`MAX_SENTENCES`), and a block longer than :data:`MAX_SENTENCES` is cut
into ``ceil(n / MAX_SENTENCES)`` near-equal windows. Every passage's title is
``"<article title> — <section>"`` (the article title alone for the unnamed first section), and
its id is ``PMC<id>:<passage index>``.

**Gold.** For each prompt, the evidence spans of all its annotators (union). The
``Evidence Start``/``Evidence End`` offsets are documented as inclusive; about one in six rows
is exclusive instead (the inclusive end takes the first character of the next line or word),
so the end is taken inclusive when ``text[start:end + 1]`` matches the annotation text (after
stripping whitespace), else exclusive when ``text[start:end]`` does. Rows at ``-1`` are located
by searching the annotation text in the article (dropped when absent). A unit is gold when it
overlaps a span; a passage is gold when it holds a gold unit. The prompt ids that the upstream
README flags as incorrect, questionable or somewhat malformed (:data:`FLAGGED_PROMPT_IDS`) are
dropped, as are prompts whose article file is missing or whose spans overlap no unit.
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from logrerank.data.schema import Doc, Example
from logrerank.text.segment import split_sentences

#: Splits of the public data (by article); ``test`` is evaluation only.
SPLITS = ("train", "validation", "test")
#: A line with fewer words that does not end a sentence is a table cell (or a list item).
TABLE_LINE_WORDS = 8
#: Consecutive table lines are joined into one unit up to this many characters.
TABLE_UNIT_CHARS = 200
#: Passages gather paragraphs until they hold this many units ...
MIN_SENTENCES = 3
#: ... and never more than this many; longer paragraphs are cut into windows.
MAX_SENTENCES = 8

#: Prompt ids flagged in the upstream README (``UPSTREAM_README.md``, "Caveat"): incorrect,
#: questionable and somewhat malformed. They are dropped.
FLAGGED_PROMPT_IDS: frozenset[str] = frozenset(
    str(i)
    for i in (
        # Incorrect
        *(911, 912, 1262, 1261, 3044, 3248, 3111, 3620, 4308, 4490, 4491, 4324, 4325, 4492),
        *(4824, 5000, 5001, 5002, 5046, 5047, 4948, 5639, 5710, 5752, 5775, 5782, 5841, 5843),
        *(5861, 5862, 5863, 5964, 5965, 5966, 5975, 4807, 5776, 5777, 5778, 5779, 5780, 5781),
        *(6034, 6065, 6066, 6666, 6667, 6668, 6669, 7040, 7042, 7944, 8590, 8605, 8606, 8639),
        *(8640, 8745, 8747, 8749, 8877, 8878, 8593, 8631, 8635, 8884, 8886, 8773, 10032),
        *(10035, 8876, 8875, 8885, 8917, 8921, 8118, 10885, 10886, 10887, 10888, 10889, 10890),
        # Questionable
        *(7811, 7812, 7813, 7814, 7815, 8197, 8198, 8199, 8200, 8201, 9429, 9430, 9431, 8536),
        9432,
        # Somewhat malformed
        *(3514, 346, 5037, 4715, 8767, 9295, 9297, 8870, 9862),
    )
)

_HEADING = re.compile(r"[ \t]*((?:ABSTRACT|BODY)(?:\.[^\n]*)?):[ \t]*")
_FIELDS = ("outcome", "intervention", "comparator")
_QUESTION = "With respect to {o}, characterize the reported difference between {i} and {c}."


class Article(NamedTuple):
    """An article cut into passages.

    Attributes:
        title: The article title.
        passages: ``(section, units)`` per passage; each unit is ``(text, start, end)``, with
            ``[start, end)`` its character span in the article file.
    """

    title: str
    passages: list[tuple[str, list[tuple[str, int, int]]]]


def _lines(text: str) -> Iterator[tuple[str, int]]:
    start = 0
    for line in text.split("\n"):
        yield line, start
        start += len(line) + 1


def _section_name(heading: str) -> str:
    """``"ABSTRACT.RESULTS"`` -> ``"Abstract: Results"``, ``"BODY.STUDY DESIGN"`` -> ``"Study
    design"``."""
    part, _, rest = heading.partition(".")
    rest = rest.strip()
    if rest.isupper():
        rest = rest.capitalize()
    if part == "ABSTRACT":
        return f"Abstract: {rest}" if rest else "Abstract"
    return rest or "Body"


def _is_table_line(line: str) -> bool:
    return len(line.split()) < TABLE_LINE_WORDS and not line.rstrip().endswith((".", "!", "?"))


def _table_units(lines: list[tuple[str, int]]) -> list[tuple[str, int, int]]:
    units: list[tuple[str, int, int]] = []
    cur: list[tuple[str, int]] = []
    for line, start in lines:
        if cur and sum(len(t) + 1 for t, _ in cur) + len(line) > TABLE_UNIT_CHARS:
            units.append(_join_unit(cur))
            cur = []
        cur.append((line, start))
    if cur:
        units.append(_join_unit(cur))
    return units


def _join_unit(lines: list[tuple[str, int]]) -> tuple[str, int, int]:
    first, first_start = lines[0]
    last, last_start = lines[-1]
    start = first_start + len(first) - len(first.lstrip())
    end = last_start + len(last.rstrip())
    return " ".join(t.strip() for t, _ in lines), start, end


def _windows(units: list[Any], size: int) -> list[list[Any]]:
    """Cut ``units`` into ``ceil(n / size)`` consecutive windows of near-equal length."""
    n_win = max(1, math.ceil(len(units) / size))
    bounds = [round(i * len(units) / n_win) for i in range(n_win + 1)]
    return [units[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def _section_passages(blocks: list[list[Any]]) -> list[list[Any]]:
    """Gather a section's blocks into passages of MIN..MAX units (see the module docstring)."""
    passages: list[list[Any]] = []
    cur: list[Any] = []
    for block in blocks:
        if len(block) > MAX_SENTENCES:
            if cur:
                passages.append(cur)
                cur = []
            passages.extend(_windows(block, MAX_SENTENCES))
            continue
        if cur and (len(cur) >= MIN_SENTENCES or len(cur) + len(block) > MAX_SENTENCES):
            passages.append(cur)
            cur = []
        cur = cur + block
    if cur:
        passages.append(cur)
    return passages


def parse_article(text: str) -> Article:
    """Cut an article file's text into titled passages of sentence units with offsets.

    Args:
        text: The whole ``PMC<id>.txt`` file, read as UTF-8.

    Returns:
        The :class:`Article` (rules in the module docstring).
    """
    lines = list(_lines(text))
    title_lines: list[str] = []
    i = 0
    if lines and lines[0][0].startswith("TITLE:"):
        first = lines[0][0][len("TITLE:") :].strip()
        title_lines = [first] if first else []
        i = 1
        while i < len(lines) and lines[i][0].strip():
            title_lines.append(lines[i][0].strip())
            i += 1
    title = " ".join(title_lines)
    sections: list[tuple[str, list[list[tuple[str, int, int]]]]] = [("", [])]
    table: list[tuple[str, int]] = []

    def flush_table() -> None:
        if table:
            sections[-1][1].append(_table_units(table))
            table.clear()

    for line, start in lines[i:]:
        heading = _HEADING.fullmatch(line)
        if heading or not line.strip():
            flush_table()
            if heading:
                sections.append((_section_name(heading.group(1)), []))
            continue
        if _is_table_line(line):
            table.append((line, start))
            continue
        flush_table()
        spans = [(s.text, start + s.start, start + s.end) for s in split_sentences(line)]
        if spans:
            sections[-1][1].append(spans)
    flush_table()
    passages = [(name, units) for name, blocks in sections for units in _section_passages(blocks)]
    return Article(title=title, passages=passages)


def _read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _span(text: str, row: dict[str, str], counts: dict[str, int]) -> tuple[int, int] | None:
    """The evidence span ``[start, end)`` of one annotation row (rules in the module docstring)."""
    ann = (row.get("Annotations") or "").strip()
    try:
        start, end = int(row["Evidence Start"]), int(row["Evidence End"])
    except (KeyError, ValueError):
        start = end = -1
    if start >= 0 and end >= start:
        if text[start : end + 1].strip() == ann or text[start:end].strip() != ann:
            return start, end + 1
        counts["n_offsets_exclusive"] += 1
        return start, end
    found = text.find(ann) if ann else -1
    if found < 0:
        counts["n_annotations_unaligned"] += 1
        return None
    counts["n_offsets_located"] += 1
    return found, found + len(ann)


def read_evidence_inference(
    root: str | os.PathLike[str],
    split: str = "test",
    *,
    stats: dict[str, Any] | None = None,
) -> tuple[list[Example], dict[str, Doc]]:
    """Read one split of Evidence Inference 2.0 as prompts and the split's passage corpus.

    Args:
        root: The ``evidence_inference`` folder.
        split: ``train``, ``validation`` or ``test``.
        stats: If given, filled with counts: ``n_articles``, ``n_articles_missing``,
            ``n_passages``, ``n_prompts`` (kept), ``n_prompts_flagged``,
            ``n_prompts_no_gold``, ``n_annotations``, ``n_offsets_exclusive``,
            ``n_offsets_located``, ``n_annotations_unaligned``.

    Returns:
        ``(queries, corpus)``: one Example per prompt (qid = prompt id, in prompt-file order;
        no candidates yet) with ``gold_doc_ids`` (passages holding a gold unit, in article
        order), ``gold_sentences`` and ``meta`` = ``dataset``, ``paper_id`` (``PMC<id>``),
        ``prompt_id``, ``pmcid``, ``outcome``, ``intervention``, ``comparator``, ``labels``
        (the annotators' labels); and the corpus of every passage of the split's articles,
        article by article, ids ``PMC<id>:<j>``.

    Raises:
        ValueError: For an unknown split.
        FileNotFoundError: When a required file is missing.
    """
    if split not in SPLITS:
        raise ValueError(f"evidence inference split {split!r}: choose from {SPLITS}")
    root = Path(root)
    ids_path = root / "splits" / f"ev2_{split}_article_ids.txt"
    for path in (ids_path, root / "prompts_merged.csv", root / "v2_annotations.csv"):
        if not path.is_file():
            raise FileNotFoundError(f"Evidence Inference file {path} is missing")
    lines = ids_path.read_text(encoding="utf-8").split()
    article_ids = list(dict.fromkeys(ln.strip() for ln in lines if ln.strip()))
    counts = dict.fromkeys(
        ("n_articles_missing", "n_prompts_flagged", "n_prompts_no_gold", "n_annotations"), 0
    )
    counts.update(n_offsets_exclusive=0, n_offsets_located=0, n_annotations_unaligned=0)
    texts: dict[str, str] = {}
    articles: dict[str, Article] = {}
    corpus: dict[str, Doc] = {}
    for pmcid in article_ids:
        path = root / "txt_files" / f"PMC{pmcid}.txt"
        if not path.is_file():
            counts["n_articles_missing"] += 1
            continue
        texts[pmcid] = path.read_text(encoding="utf-8")
        articles[pmcid] = parse_article(texts[pmcid])
        for j, (section, units) in enumerate(articles[pmcid].passages):
            title = articles[pmcid].title
            title = f"{title} — {section}" if section and title else title or section
            corpus[f"PMC{pmcid}:{j}"] = Doc(f"PMC{pmcid}:{j}", title, [u[0] for u in units])
    spans: dict[str, list[tuple[int, int]]] = {}
    labels: dict[str, list[str]] = {}
    for row in _read_csv(root / "v2_annotations.csv"):
        pmcid, pid = row["PMCID"].strip(), row["PromptID"].strip()
        if pmcid not in texts:
            continue
        counts["n_annotations"] += 1
        labels.setdefault(pid, []).append(row.get("Label", ""))
        span = _span(texts[pmcid], row, counts)
        if span is not None:
            spans.setdefault(pid, []).append(span)
    queries: list[Example] = []
    for row in _read_csv(root / "prompts_merged.csv"):
        pmcid, pid = row["PMCID"].strip(), row["PromptID"].strip()
        if pmcid not in texts or pid not in labels:
            continue
        if pid in FLAGGED_PROMPT_IDS:
            counts["n_prompts_flagged"] += 1
            continue
        gold: dict[str, list[int]] = {}
        for j, (_, units) in enumerate(articles[pmcid].passages):
            hit = [
                u
                for u, (_, a, b) in enumerate(units)
                if any(s < b and a < e for s, e in spans.get(pid, ()))
            ]
            if hit:
                gold[f"PMC{pmcid}:{j}"] = hit
        if not gold:
            counts["n_prompts_no_gold"] += 1
            continue
        fields = {k: " ".join(row[k.capitalize()].split()) for k in _FIELDS}
        query = _QUESTION.format(
            o=fields["outcome"], i=fields["intervention"], c=fields["comparator"]
        )
        meta = {"dataset": "evinf", "paper_id": f"PMC{pmcid}", "prompt_id": pid}
        meta.update(pmcid=pmcid, labels=labels[pid], **fields)
        queries.append(Example(pid, query, [], list(gold), gold, {}, meta))
    if stats is not None:
        stats.update(n_articles=len(articles), n_passages=len(corpus), n_prompts=len(queries))
        stats.update(counts)
    return queries, corpus
