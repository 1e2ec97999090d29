"""``logrerank rerank``: rerank the passages of one file for a question and print the ranking."""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from pathlib import Path
from typing import Any

from ..types import InputError, Ranking


def add_runtime_argument(parser: argparse.ArgumentParser) -> None:
    """``--runtime`` (:mod:`logrerank.runtime`), shared by ``rerank``, ``eval`` and ``app``."""
    parser.add_argument(
        "--runtime",
        default="torch",
        choices=["torch", "onnx", "onnx-int8"],
        help="transformer runtime of LoG and the cross-encoder: torch, or ONNX Runtime on CPU "
        "(onnx = float32, onnx-int8 = int8 weights); needs logrerank[onnx], else torch with a "
        "warning",
    )


LIMIT_FLAGS = {
    "max_passages": "--max-passages",
    "max_chars_per_passage": "--max-chars-per-passage",
    "max_total_chars": "--max-total-chars",
    "max_question_chars": "--max-question-chars",
    "max_upload_bytes": "--max-file-bytes",
    "max_pdf_pages": "--max-pdf-pages",
}
"""Limits fields -> ``rerank`` flags (see :class:`logrerank.inputs.limits.Limits`)."""


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def format_ranking(
    ranking: Ranking, top: int = 10, width: int | None = None, local_order: Any = None
) -> str:
    """A readable text view: model, question intent, top sentences, passage order, timings.

    The line under the model says how the pool was treated (the graph's learned share of the
    score, what it moved, and "local scores only" when the graph changed nothing:
    :func:`logrerank.ranking.treatment.headline`; ``local_order``: the sentence nodes in
    local-only rank order, None = not known).

    A line above the table names the order the sentences are shown in
    (:func:`logrerank.ranking.selection.order_note`, as the app's table header: the score order,
    or the selected order when the ranking itself was selected). The table shows ``score`` (each
    sentence's own score), the local and global stage scores, the sentence's place as ``passage.sentence`` (numbered from 1, as in the app; the
    JSON of ``--out`` and ``rerank-batch`` count ``passage_idx`` / ``sent_idx`` from 0), its role
    (the legend says whose: the role tagger's for a ranking passed through
    :func:`~logrerank.ranking.shown_roles.with_tagger_roles`, as ``logrerank rerank`` and the app
    do, else the LoG role head's) and its whole text, wrapped to ``width`` (default: the terminal's width, at least 60).
    """
    from ..config import ROLE_NAMES
    from ..ranking.selection import order_note
    from ..ranking.shown_roles import TAGGER_SOURCE, role_source

    if width is None:
        width = shutil.get_terminal_size((100, 24)).columns
    width = max(60, width)
    lines = [f"ranker: {ranking.ranker}   model: {ranking.info.get('model', '?')}"]
    if "graph_gate" in ranking.info:  # a LoG ranking: how the pool was treated
        from ..ranking.treatment import headline, pool_treatment

        treated = pool_treatment(ranking, local_order)
        lines.append(headline(treated, "LoG", len(ranking.sentences)))
    q_intent = ranking.info.get("question_intent") or {}
    if q_intent.get("probs"):
        from ..models.question_intent import accuracy_text

        shown = accuracy_text(q_intent)
        intent = ", ".join(f"{r} {p:.2f}" for r, p in zip(ROLE_NAMES, q_intent["probs"]))
        lines.append(f"question intent (classifier{'; ' + shown if shown else ''}): {intent}")
    if ranking.intent_probs:
        intent = ", ".join(f"{r} {p:.2f}" for r, p in zip(ROLE_NAMES, ranking.intent_probs))
        lines.append(f"role mixing weights of the LoG local scorer (intent head, eq. 2): {intent}")
    shown = ranking.sentences[:top]
    first = "in the selected order" if ranking.sentence_order == "selected" else "best first"
    lines.append(f"\nTop {len(shown)} sentences, {first}")
    a, b = ranking.info.get("calibration") or (1.0, 0.0)
    calibrated = (
        f"; score shown calibrated, sigmoid({a:.3g} x final logit {b:+.3g}) (the order is the "
        "logits')"
        if (a, b) != (1.0, 0.0)
        else ""
    )
    legend = (
        f"{order_note(ranking)}{calibrated}; local / global: the two stages' scores; "
        "p.s: passage and sentence, counted from 1 (in the JSON, passage_idx and sent_idx "
        "count from 0); role: "
        + (
            "the role tagger's, as in the app (the LoG role head's own reading, eq. 3, is "
            "info.log_role_head in the JSON of --out)"
            if role_source(ranking) == TAGGER_SOURCE
            else "the LoG role head's argmax (eq. 3; the app shows the more accurate role tagger's)"
        )
    )
    lines.extend(textwrap.wrap(legend, width=width))
    head = f"{'rank':>4}  {'score':>5}  {'local':>5}  {'global':>6}  {'p.s':<7}  {'role':<10}  "
    lines.append(head + "sentence")
    for s in shown:
        where = f"{s.passage_idx + 1}.{s.sent_idx + 1}"
        row = (
            f"{s.rank:>4}  {_score(s.score):>5}  {_score(s.local_score):>5}  "
            f"{_score(s.global_score):>6}  {where:<7}  {s.role or '?':<10}  "
        )
        text = " ".join(s.text.split())
        body = textwrap.wrap(text, width=max(20, width - len(head))) or [""]
        lines.append(row + body[0])
        lines.extend(" " * len(head) + more for more in body[1:])
    order = ", ".join(str(p.passage_idx + 1) for p in ranking.passages_ranked)
    lines.append(f"\nPassage order (by best sentence, counted from 1): {order}")
    if ranking.timings:
        lines.append("timings: " + ", ".join(f"{k} {v:.3f}s" for k, v in ranking.timings.items()))
    for w in ranking.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def limits_from_args(args: argparse.Namespace):
    """The :class:`~logrerank.inputs.limits.Limits` given by the ``--max-*`` flags (defaults otherwise).

    Raises:
        InputError: a flag that is not a positive integer (named in the message).
    """
    from ..inputs.limits import DEFAULT_LIMITS, Limits

    values = {}
    for field, flag in LIMIT_FLAGS.items():
        v = getattr(args, field, None)
        if v is None:
            continue
        if v < 1:
            raise InputError(f"{flag} must be a positive integer, got {v}")
        values[field] = v
    strict = bool(getattr(args, "strict_limits", False))
    return Limits(**values, strict=strict) if values or strict else DEFAULT_LIMITS


def _check_writable(path: str) -> None:
    """Fail before the model loads when ``--out`` cannot be written (missing folder, a folder)."""
    out = Path(path)
    if out.is_dir():
        raise InputError(f"--out {path} is a folder; give a file name")
    if not out.parent.is_dir():
        raise InputError(f"--out {path}: folder {out.parent} does not exist")


def cmd_rerank(args: argparse.Namespace) -> int:
    """Read the passages, rerank them with LoG, print (and optionally write) the ranking."""
    from ..inputs.files import read_files
    from ..inputs.passages import prepare_input

    limits = limits_from_args(args)
    paths = args.passages if isinstance(args.passages, list) else [args.passages]
    files = read_files(paths, limits)
    question, passages = files.question, files.passages
    query = args.query or question
    if not query:
        raise InputError(
            "no question: pass --query, or a JSON file {'question': ..., 'passages': [...]}"
        )
    prepare_input(query, passages, limits)  # bad input fails before torch and the model load
    if args.out:
        _check_writable(args.out)
    if args.checkpoint and not Path(args.checkpoint).exists():
        raise InputError(f"--checkpoint {args.checkpoint} does not exist")
    if args.top < 1:
        raise InputError(f"--top must be a positive integer, got {args.top}")
    from ..pipeline import LoGReranker

    model = LoGReranker.from_pretrained(args.checkpoint, device=args.device, runtime=args.runtime)
    model.limits = limits
    switches = {}
    if args.local_only:
        switches["use_global"] = False
    if args.no_cross:
        switches["cross_passage"] = False
    if args.untyped:
        switches["typed"] = False
    enc = model.encode(query, passages)  # once: LoG and its local-only order (the headline)
    ranking = model.rank_encoded(enc, **switches)
    local = [s.node for s in model.rank_encoded(enc, use_global=False).sentences]
    ranking.warnings[:0] = [n for n in files.notices if n not in ranking.warnings]
    from ..models.question_intent import question_intent_info
    from ..ranking.shown_roles import with_tagger_roles

    # the roles the app shows: the role tagger's (the LoG role head's reading stays in info)
    ranking = with_tagger_roles(ranking)
    ranking.info["question_intent"] = question_intent_info(query)
    print(format_ranking(ranking, top=args.top, local_order=local))
    if args.out:
        Path(args.out).write_text(json.dumps(ranking.to_dict(), indent=1), encoding="utf-8")
        print(f"\nwrote {args.out}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Declare ``rerank`` and its options."""
    from ..inputs.limits import DEFAULT_LIMITS as L

    r = sub.add_parser(
        "rerank",
        help="rerank passages for a question and print the ranking",
        description="Rerank the passages of a file for a question with LoG and print the top "
        "sentences in the order a line above the table names (score order unless the ranking "
        "is selected), with score, the local and global scores, "
        "passage.sentence counted from 1 (the JSON of --out counts passage_idx and sent_idx from "
        "0), role and the whole sentence. The file is checked before the model loads.",
    )
    r.add_argument("--query", "-q", help="the question (optional if the JSON file has one)")
    r.add_argument(
        "--passages",
        "-p",
        required=True,
        action="append",
        help="passages: .json (a list of passages, or {'question', 'passages'}; 'query' and "
        "'ctxs' also work), .jsonl (a passage, or the question with its passages, per line), "
        ".txt (blank-line separated) or a paper .pdf (docs/pdf.md); repeat the flag for several "
        "files, ranked together (a file that cannot be read is skipped with a warning)",
    )
    r.add_argument("--out", "-o", help="write the full ranking as JSON here")
    r.add_argument("--checkpoint", help="checkpoint folder (default: bundled)")
    r.add_argument("--device", default="auto", help="auto, cpu, cuda")
    add_runtime_argument(r)
    r.add_argument("--top", type=int, default=10, help="sentences to print")
    r.add_argument("--local-only", action="store_true", help="ablation: no graph stage")
    r.add_argument("--no-cross", action="store_true", help="ablation: no cross-passage edges")
    r.add_argument("--untyped", action="store_true", help="ablation: one edge type")
    g = r.add_argument_group(
        "input limits",
        "Longer input is cut (or dropped from the end) and every cut is printed as a warning; "
        "--strict-limits rejects it instead.",
    )
    g.add_argument("--max-passages", type=int, help=f"passages ranked (default {L.max_passages:,})")
    g.add_argument(
        "--max-chars-per-passage",
        type=int,
        help=f"characters kept per passage (default {L.max_chars_per_passage:,})",
    )
    g.add_argument(
        "--max-total-chars",
        type=int,
        help=f"characters kept over all passages (default {L.max_total_chars:,})",
    )
    g.add_argument(
        "--max-question-chars",
        type=int,
        help=f"characters kept of the question (default {L.max_question_chars:,})",
    )
    g.add_argument(
        "--max-file-bytes",
        type=int,
        dest="max_upload_bytes",
        help=f"size limit of the passages file (default {L.max_upload_bytes:,})",
    )
    g.add_argument(
        "--max-pdf-pages", type=int, help=f"pages read per PDF (default {L.max_pdf_pages:,})"
    )
    g.add_argument(
        "--strict-limits", action="store_true", help="reject input over a limit instead of cutting"
    )
    r.set_defaults(func=cmd_rerank)
