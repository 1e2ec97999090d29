"""Reading passages from text and files (shared by the CLI and the app).

Accepted forms:

* plain text: passages separated by blank lines; a passage whose first line starts with
  ``Title:`` takes that line as its title;
* JSON: a list of strings or ``{"title", "text"}`` objects, or ``{"question", "ctxs": [...]}``;
* JSONL: one string or object per line (``{"title", "text"}``).

Files must be UTF-8 (a UTF-8 byte-order mark is allowed) and at most
``Limits.max_upload_bytes``; binary files, UTF-16 and malformed JSON are rejected with a message
that says where. :func:`prepare_input` validates a (question, passages) pair and applies the
:class:`~logrerank.inputs.limits.Limits` (every cut reported), for the API, the CLI and the app.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..types import InputError, Passage
from .language import non_english_notice, non_latin_notice
from .limits import DEFAULT_LIMITS, Limits, apply_limits, limit_question

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


def prepare_input(
    question: Any, passages: Any, limits: Limits | None = None
) -> tuple[str, list[Passage], list[str]]:
    """Validate a question and passages and apply ``limits`` (see :mod:`logrerank.inputs.limits`).

    Args:
        question: the question (a non-empty string).
        passages: strings, ``{"title", "text"}`` dicts or :class:`Passage` objects.
        limits: the limits (default :data:`~logrerank.inputs.limits.DEFAULT_LIMITS`).

    Returns:
        ``(question, passages, notices)``: the cleaned (possibly cut) question, the passages to
        rank (a prefix of the input, each text a cleaned prefix of its input text, so indices and
        character offsets are the caller's), and one notice per thing cut, dropped, replaced or
        duplicated.

    Raises:
        InputError: empty question, no passages, a malformed passage, or (``limits.strict``)
            input over a limit. Every passage being empty is left to the caller (the pipeline
            raises it after segmentation).
    """
    limits = limits or DEFAULT_LIMITS
    question, notices = limit_question(question, limits)
    plist, more = apply_limits(normalize_passages(passages), limits)
    script = non_latin_notice(question, plist)
    language = non_english_notice(question, plist)
    return question, plist, notices + more + [n for n in (script, language) if n]


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


def _mb(n: int) -> str:
    return f"{n / 1_000_000:,.1f} MB"


def decode_upload(raw: bytes, name: str) -> str:
    """Decode an uploaded file as UTF-8 (BOM allowed), refusing binary data and UTF-16.

    Raises:
        InputError: the bytes are not UTF-8 text (the message says why and where).
    """
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{name} is UTF-16 text; save it as UTF-8 and upload it again")
    if b"\x00" in raw:
        raise InputError(
            f"{name} looks like a binary file (it holds NUL bytes), not UTF-8 text: "
            "upload .json, .jsonl or .txt"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        raise InputError(
            f"{name} is not UTF-8 text (invalid byte 0x{bad:02x} at byte {exc.start:,}); "
            "save it as UTF-8"
        ) from exc


def _loads(text: str, name: str, line: int | None = None) -> Any:
    """``json.loads`` with one-line errors (``line``: the JSONL line number)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"on line {line}" if line else f"at line {exc.lineno}"
        raise InputError(f"{name}: invalid JSON {at}: {exc.msg}") from exc
    except RecursionError as exc:
        at = f" on line {line}" if line else ""
        raise InputError(f"{name}: JSON nested too deeply{at}") from exc


def read_passages_file(
    path: str | Path, max_bytes: int | None = None
) -> tuple[str | None, list[Passage]]:
    """Read ``.json``, ``.jsonl`` or ``.txt`` passages.

    Args:
        path: the file (any other suffix is read as plain text).
        max_bytes: size limit (default ``DEFAULT_LIMITS.max_upload_bytes``, 10 MB).

    Raises:
        InputError: unreadable, empty, too large, binary, not UTF-8, or malformed (the message
            says where).
    """
    path = Path(path)
    max_bytes = DEFAULT_LIMITS.max_upload_bytes if max_bytes is None else max_bytes
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if path.is_dir():
        raise InputError(f"{path} is a folder, not a passages file")
    if size > max_bytes:
        raise InputError(
            f"{path.name} is {size:,} bytes ({_mb(size)}); the limit is {max_bytes:,} bytes "
            f"({_mb(max_bytes)})"
        )
    if size == 0:
        raise InputError(f"{path.name} is empty")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    raw = decode_upload(data, path.name)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return parse_passages_json(_loads(raw, path.name))
    if suffix == ".jsonl":
        question, passages = None, []
        for n, line in enumerate(raw.split("\n"), 1):  # not splitlines: U+2028 may sit in strings
            if not line.strip():
                continue
            obj = _loads(line, path.name, n)
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
