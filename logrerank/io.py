"""Reading passages from text and files (shared by the CLI and the app).

Accepted forms:

* plain text: passages separated by blank lines; a passage whose first line starts with
  ``Title:`` takes that line as its title;
* JSON: a list of strings or ``{"title", "text"}`` objects, or ``{"question", "ctxs": [...]}``;
* JSONL: one string or object per line (``{"title", "text"}``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .types import InputError, Passage

_BLANK = re.compile(r"\n[ \t\r\f\v]*\n")


def parse_passages_text(text: str) -> list[Passage]:
    """Split blank-line-separated text into passages (optional ``Title:`` first line).

    Raises:
        InputError: no non-empty passage.
    """
    if not isinstance(text, str):
        raise InputError("passages must be text")
    out = []
    for block in _BLANK.split(text.replace("\r\n", "\n")):
        block = block.strip()
        if not block:
            continue
        title = ""
        first, _, rest = block.partition("\n")
        if first.lower().startswith("title:"):
            title, block = first[6:].strip(), rest.strip()
        if block:
            out.append(Passage(text=block, title=title))
    if not out:
        raise InputError("no passages found: paste passages separated by blank lines")
    return out


def passage_from_obj(obj: Any, where: str) -> Passage:
    """A :class:`Passage` from a string, a ``{"title", "text"}`` dict or a Passage.

    Raises:
        InputError: wrong type or no string text (``where`` names the item).
    """
    if isinstance(obj, Passage):
        if not isinstance(obj.text, str) or not isinstance(obj.title, str):
            raise InputError(f"{where}: Passage text and title must be strings")
        return obj
    if isinstance(obj, str):
        return Passage(text=obj)
    if isinstance(obj, dict):
        text = obj.get("text", obj.get("contents"))
        sentences = obj.get("sentences")
        if sentences is not None:
            if not isinstance(sentences, list) or not all(isinstance(x, str) for x in sentences):
                raise InputError(f"{where}: 'sentences' must be a list of strings")
            joined = " ".join(sentences)
            if text is None:
                text = joined
            elif text != joined:
                raise InputError(f"{where}: 'text' must equal the 'sentences' joined by spaces")
        if not isinstance(text, str):
            raise InputError(f"{where}: object needs a string 'text' field")
        title = obj.get("title") or ""
        if not isinstance(title, str):
            raise InputError(f"{where}: 'title' must be a string")
        pid = obj.get("id", obj.get("pid"))
        return Passage(
            text=text, title=title, pid=None if pid is None else str(pid), sentences=sentences
        )
    raise InputError(f"{where}: expected a string or an object, got {type(obj).__name__}")


def normalize_passages(passages: Any) -> list[Passage]:
    """Accept strings, ``{"title", "text"}`` dicts or :class:`Passage` objects.

    Raises:
        InputError: not a list, or an item of the wrong type / without text.
    """
    if isinstance(passages, (str, bytes)) or not isinstance(passages, (list, tuple)):
        raise InputError("passages must be a list of strings or {'title', 'text'} objects")
    if not passages:
        raise InputError("no passages given: pass at least one passage")
    return [passage_from_obj(p, f"passage {i + 1}") for i, p in enumerate(passages)]


def parse_passages_json(data: Any) -> tuple[str | None, list[Passage]]:
    """Passages (and a question, if given) from parsed JSON.

    Raises:
        InputError: the structure is not one of the accepted forms.
    """
    question = None
    if isinstance(data, dict):
        if not isinstance(data.get("ctxs"), list):
            raise InputError("a JSON object must look like {'question': ..., 'ctxs': [...]}")
        question = data.get("question")
        if question is not None and not isinstance(question, str):
            raise InputError("'question' must be a string")
        data = data["ctxs"]
    if not isinstance(data, list):
        raise InputError("JSON must be a list of passages or {'question', 'ctxs'}")
    passages = [passage_from_obj(o, f"item {i + 1}") for i, o in enumerate(data)]
    if not passages:
        raise InputError("the file holds no passages")
    return question, passages


def read_passages_file(
    path: str | Path, max_bytes: int = 50_000_000
) -> tuple[str | None, list[Passage]]:
    """Read ``.json``, ``.jsonl`` or ``.txt`` passages.

    Raises:
        InputError: unreadable, too large, not UTF-8, or malformed (the message says where).
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > max_bytes:
        raise InputError(f"{path.name} is {size:,} bytes; the limit is {max_bytes:,}")
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path.name} is not UTF-8 text") from exc
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path.name}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
        return parse_passages_json(data)
    if suffix == ".jsonl":
        question, passages = None, []
        for n, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path.name}: invalid JSON on line {n}: {exc.msg}") from exc
            if isinstance(obj, dict) and "ctxs" in obj:
                q, ps = parse_passages_json(obj)
                question = question or q
                passages += ps
            else:
                passages.append(passage_from_obj(obj, f"line {n}"))
        if not passages:
            raise InputError(f"{path.name} holds no passages")
        return question, passages
    return None, parse_passages_text(raw)
