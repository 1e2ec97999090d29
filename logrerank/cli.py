"""Command line: ``logrerank rerank | app``.

Errors in the user's input print a one-line message and exit with status 2; nothing crashes
with a traceback on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from .types import InputError, Ranking


def format_ranking(ranking: Ranking, top: int = 10, width: int = 100) -> str:
    """A readable text view: model status, top sentences, passage order, timings, warnings."""
    lines = [f"ranker: {ranking.ranker}   model: {ranking.info.get('model', '?')}"]
    if ranking.intent_probs:
        intent = ", ".join(f"{r} {p:.2f}" for r, p in zip(("bg", "mt", "rs"), ranking.intent_probs))
        lines.append(f"query intent: {intent}")
    lines.append(f"\nTop {min(top, len(ranking.sentences))} sentences:")
    for s in ranking.sentences[:top]:
        g = f"{s.global_score:.3f}" if s.global_score is not None else "  -  "
        head = f"{s.rank:>3}. [p{s.passage_idx + 1}.s{s.sent_idx + 1} {s.role or '?':<10}] "
        head += f"local {s.local_score:.3f} global {g}  "
        body = textwrap.shorten(s.text.replace("\n", " "), width=max(20, width - len(head)))
        lines.append(head + body)
    order = ", ".join(str(p.passage_idx + 1) for p in ranking.passages_ranked)
    lines.append(f"\nPassage order (by best sentence): {order}")
    if ranking.timings:
        lines.append("timings: " + ", ".join(f"{k} {v:.3f}s" for k, v in ranking.timings.items()))
    for w in ranking.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines)


def _cmd_rerank(args: argparse.Namespace) -> int:
    from .io import read_passages_file
    from .pipeline import LoGReranker

    question, passages = read_passages_file(args.passages)
    query = args.query or question
    if not query:
        raise InputError("no question: pass --query (or a {'question', 'ctxs'} JSON file)")
    model = LoGReranker.from_pretrained(args.checkpoint, device=args.device)
    switches = {}
    if args.local_only:
        switches["use_global"] = False
    if args.no_cross:
        switches["cross_passage"] = False
    if args.untyped:
        switches["typed"] = False
    ranking = model.rerank(query, passages, **switches)
    print(format_ranking(ranking, top=args.top))
    if args.out:
        Path(args.out).write_text(json.dumps(ranking.to_dict(), indent=1), encoding="utf-8")
        print(f"\nwrote {args.out}")
    return 0


def _cmd_app(args: argparse.Namespace) -> int:
    import runpy

    app_path = Path(__file__).resolve().parents[1] / "app.py"
    if not app_path.exists():
        raise InputError(f"app.py not found next to the package ({app_path})")
    sys.argv = [str(app_path), "--port", str(args.port)]
    runpy.run_path(str(app_path), run_name="__main__")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and docs)."""
    parser = argparse.ArgumentParser(prog="logrerank", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    r = sub.add_parser("rerank", help="rerank passages for a question and print the ranking")
    r.add_argument("--query", "-q", help="the question (optional if the JSON file has one)")
    r.add_argument("--passages", "-p", required=True, help="passages: .json, .jsonl or .txt")
    r.add_argument("--out", "-o", help="write the full ranking as JSON here")
    r.add_argument("--checkpoint", help="checkpoint folder (default: bundled)")
    r.add_argument("--device", default="auto", help="auto, cpu, cuda")
    r.add_argument("--top", type=int, default=10, help="sentences to print")
    r.add_argument("--local-only", action="store_true", help="ablation: no graph stage")
    r.add_argument("--no-cross", action="store_true", help="ablation: no cross-passage edges")
    r.add_argument("--untyped", action="store_true", help="ablation: one edge type")
    r.set_defaults(func=_cmd_rerank)

    a = sub.add_parser("app", help="start the Gradio app on 127.0.0.1")
    a.add_argument("--port", type=int, default=7860)
    a.set_defaults(func=_cmd_app)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``logrerank`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as exc:
        print(f"logrerank: error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # checkpoint / backbone problems: one clear line, not a traceback
        from .backbone import BackboneError
        from .pipeline import CheckpointError

        if isinstance(exc, (CheckpointError, BackboneError)):
            print(f"logrerank: error: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
