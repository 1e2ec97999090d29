"""Reading passages from text and files (shared by the CLI and the app).

Accepted forms:

* plain text: passages separated by blank lines; a passage whose first line starts with
  ``Title:`` takes that line as its title;
* JSON: a list of strings or ``{"title", "text"}`` objects (the question then comes from
  ``--query``), or one question with its passages: ``{"question", "passages": [...]}``, with
  ``"query"`` accepted for ``"question"`` and ``"ctxs"`` for ``"passages"`` (DPR / FiD files),
  also as the only item of a list;
* JSONL: one string or ``{"title", "text"}`` object per line, or a line holding one question
  with its passages as above (``rerank-batch``'s input with a single question).

Anything else (an object without a passages list, several questions in one file) is refused with
a message naming the accepted forms; ``rerank-batch`` ranks files of many questions.

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
        meta = obj.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise InputError(f"{where}: 'meta' must be an object")
        return Passage(
            text=text,
            title=title,
            pid=None if pid is None else str(pid),
            sentences=sentences,
            meta=meta,
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


QUESTION_KEYS = ("question", "query")
"""Keys of a question in a passages file, in the order they are looked up."""
PASSAGES_KEYS = ("passages", "ctxs")
"""Keys of the passages list of a question object, in the order they are looked up."""
JSON_FORMS = (
    "a list of passages (strings or {'title', 'text'} objects), or "
    "{'question': ..., 'passages': [...]} ('query' for 'question', 'ctxs' for 'passages' also work)"
)
"""The accepted JSON forms, as error messages name them."""


def is_question_object(obj: Any) -> bool:
    """Whether ``obj`` is a question with its passages (it has a ``passages`` or ``ctxs`` key)."""
    return isinstance(obj, dict) and any(k in obj for k in PASSAGES_KEYS)


def _question_object(data: dict[str, Any], where: str) -> tuple[str | None, list[Any]]:
    """The question and the raw passages list of a question object (``where`` names it)."""
    key = next(k for k in PASSAGES_KEYS if k in data)
    items = data[key]
    if not isinstance(items, list):
        raise InputError(f"{where}: '{key}' must be a list of passages, got {type(items).__name__}")
    qkey = next((k for k in QUESTION_KEYS if data.get(k) is not None), None)
    question = None if qkey is None else data[qkey]
    if question is not None and not isinstance(question, str):
        raise InputError(f"{where}: '{qkey}' must be a string, got {type(question).__name__}")
    return question, items


def parse_passages_json(data: Any, where: str = "JSON") -> tuple[str | None, list[Passage]]:
    """Passages (and a question, if given) from parsed JSON.

    Accepted: a list of passages (strings or ``{"title", "text"}`` objects);
    ``{"question" | "query": str, "passages" | "ctxs": [...]}``; and a one-item list holding
    such an object.

    Args:
        data: the parsed JSON.
        where: what to call it in error messages (e.g. the file name, or a JSONL line).

    Returns:
        ``(question, passages)``; ``question`` is ``None`` when the JSON has none.

    Raises:
        InputError: not one of the accepted forms (the message names them), several questions,
            or a malformed passage (the message names the item).
    """
    question = None
    if isinstance(data, list) and data and any(is_question_object(o) for o in data):
        if len(data) > 1:
            raise InputError(
                f"{where} holds {len(data)} questions with their passages; rank one question per "
                "file here, or all of them with logrerank rerank-batch"
            )
        data = data[0]
    if isinstance(data, dict):
        if not is_question_object(data):
            keys = ", ".join(repr(k) for k in list(data)[:6]) or "none"
            raise InputError(
                f"{where}: a JSON object must hold a question's passages under 'passages' or "
                f"'ctxs' (keys found: {keys}); accepted: {JSON_FORMS}"
            )
        question, data = _question_object(data, where)
    if not isinstance(data, list):
        raise InputError(f"{where} must be {JSON_FORMS}; got {type(data).__name__}")
    passages = [passage_from_obj(o, f"{where} item {i + 1}") for i, o in enumerate(data)]
    if not passages:
        raise InputError(f"{where} holds no passages")
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
        return parse_passages_json(_loads(raw, path.name), path.name)
    if suffix == ".jsonl":
        question, passages, question_line = None, [], 0
        for n, line in enumerate(raw.split("\n"), 1):  # not splitlines: U+2028 may sit in strings
            if not line.strip():
                continue
            obj = _loads(line, path.name, n)
            if is_question_object(obj):
                if question_line:
                    raise InputError(
                        f"{path.name}: line {n} is a second question (the first is on line "
                        f"{question_line}); rank one question per file here, or all of them "
                        "with logrerank rerank-batch"
                    )
                question, ps = parse_passages_json(obj, f"{path.name} line {n}")
                question_line = n
                passages += ps
            else:
                passages.append(passage_from_obj(obj, f"{path.name} line {n}"))
        if not passages:
            raise InputError(f"{path.name} holds no passages")
        return question, passages
    return None, parse_passages_text(raw)
