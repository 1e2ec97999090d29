"""Plain-HTTP calls of ``/rerank``: the request body checked and completed before Gradio reads it.

Gradio answers a malformed body of its own routes badly: a ``data`` list that is too short is
an ``error`` event with ``null`` for a message, an extra value is dropped without a word, and a
named body on ``/gradio_api/call/v2/rerank`` that misses an argument or names an unknown one is
a bare 500. :class:`RerankBodyCheck` (an ASGI middleware, installed through
:func:`logrerank.app.main.launch_kwargs`) answers those with ``400 {"error": "..."}`` naming the
argument, and fills omitted optional arguments with ``null`` (= the default), so the handler's
own checks (:mod:`logrerank.app.api_args`) see every value. A direct call
(``/gradio_api/run/rerank``) whose argument is bad answers 400 with the message, not Gradio's
500; only an internal error stays a 500. A result request without an event id
(``GET /gradio_api/call/rerank/``: what the API page's cURL snippet sends in bash, where
``| read EVENT_ID`` sets nothing) is a 400 that says so (:data:`NO_EVENT_ID`), not a 405.
"""

from __future__ import annotations

import json
from typing import Any

from .api_args import PARAMS, REQUIRED, ApiArgError

API_NAME = "rerank"

ROUTES = {
    f"/gradio_api/call/{API_NAME}": "data",
    f"/gradio_api/run/{API_NAME}": "data",
    f"/gradio_api/api/{API_NAME}": "data",
    f"/gradio_api/call/v2/{API_NAME}": "named",
}
"""The routes of ``/rerank`` that take a body: ``{"data": [...]}`` or, for v2, named fields."""

NO_EVENT_ID = (
    "no event id in the URL: GET /gradio_api/call/rerank/EVENT_ID, with the event_id the POST "
    "answered. In bash, '| read EVENT_ID' (as in the API page's cURL snippet) sets nothing, "
    "since read runs in a subshell; take it with EVENT_ID=$(curl -s -X POST ... | awk -F'\"' "
    "'{ print $4}') first (docs/api.md)"
)
"""The answer to a result request without an event id (Gradio's own is 405 Method Not Allowed)."""

ENVELOPE = ("data", "session_hash", "event_data", "fn_index", "trigger_id", "oauth_token")
"""Gradio's own keys of a ``{"data": ...}`` body (left as they are)."""


def _named(values: dict[str, Any]) -> list[Any]:
    """Named arguments as the full positional list (omitted optional ones = null)."""
    unknown = [k for k in values if k not in PARAMS]
    if unknown:
        raise ApiArgError(f"unknown argument {unknown[0]!r}; the arguments are {', '.join(PARAMS)}")
    missing = [k for k in REQUIRED if k not in values]
    if missing:
        raise ApiArgError(f"{missing[0]} is missing: /rerank needs question and passages")
    return [values.get(name) for name in PARAMS]


def complete_data(data: Any) -> list[Any]:
    """A ``data`` value (a positional list, or an object of named arguments) as the full
    positional list of :data:`~logrerank.app.api_args.PARAMS`.

    Raises:
        ApiArgError: not a list or object, too many values, a required argument missing, an
            unknown name.
    """
    if isinstance(data, dict):
        return _named(data)
    if not isinstance(data, list):
        raise ApiArgError(
            f'"data" must be a list of the arguments in order ({", ".join(PARAMS)}) or an '
            f"object of named arguments, got {type(data).__name__}"
        )
    if len(data) > len(PARAMS):
        raise ApiArgError(
            f"too many values: /rerank takes at most {len(PARAMS)} ({', '.join(PARAMS)}), "
            f"got {len(data)}"
        )
    if len(data) < len(REQUIRED):
        raise ApiArgError(f"{REQUIRED[len(data)]} is missing: /rerank needs question and passages")
    return list(data) + [None] * (len(PARAMS) - len(data))


def complete_body(raw: bytes, kind: str) -> bytes:
    """The request body, checked and completed (see the module docstring).

    Raises:
        ApiArgError: not JSON, not an object, or a malformed ``data`` (the message says what).
    """
    try:
        body = json.loads(raw or b"null")
    except ValueError as exc:
        raise ApiArgError(f"the request body is not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise ApiArgError(
            'the request body must be a JSON object, {"data": [question, passages, ...]}'
        )
    if kind == "named":
        named = {k: v for k, v in body.items() if k != "oauth_token"}
        full = dict(zip(PARAMS, _named(named)))
        return json.dumps({**full, **{k: v for k, v in body.items() if k not in full}}).encode()
    if "data" not in body:
        extra = [k for k in body if k not in ENVELOPE]
        hint = f" (got {', '.join(map(repr, extra))}: send them inside data)" if extra else ""
        raise ApiArgError(
            'the request body must be {"data": [question, passages, ...]} or {"data": '
            '{"question": ..., "passages": ...}}' + hint
        )
    return json.dumps({**body, "data": complete_data(body["data"])}).encode()


class RerankBodyCheck:
    """ASGI middleware: checks and completes the bodies of ``/rerank``'s routes (:data:`ROUTES`).

    Args:
        app: the ASGI app (Gradio's FastAPI app).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        path = scope.get("path", "").rstrip("/") if scope.get("type") == "http" else ""
        kind = next((k for r, k in ROUTES.items() if path.endswith(r)), None)
        if kind == "data" and "/call/" in path and scope.get("method") == "GET":
            await _answer(send, 400, {"error": NO_EVENT_ID})  # .../call/rerank/ without an id
            return
        if kind is None or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        raw, more = b"", True
        while more:
            message = await receive()
            raw += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            body = complete_body(raw, kind)
        except ApiArgError as exc:
            await _answer(send, 400, {"error": str(exc)})
            return
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        direct = "/gradio_api/run/" in path or "/gradio_api/api/" in path
        await self.app(scope, replay, _client_errors(send) if direct else send)


def _client_errors(send: Any) -> Any:
    """``send`` that turns Gradio's 500 for a handler's named error into a 400 (an error whose
    message starts with ``internal error`` stays a 500)."""
    start: dict | None = None

    async def wrapped(message: dict) -> None:
        nonlocal start
        if message["type"] == "http.response.start" and message.get("status") == 500:
            start = message
            return
        if start is not None and message["type"] == "http.response.body":
            body = message.get("body", b"")
            try:
                error = json.loads(body).get("error")
            except (ValueError, AttributeError):
                error = None
            named = isinstance(error, str) and not error.startswith("internal error")
            await send({**start, "status": 400 if named else 500})
            start = None
        await send(message)

    return wrapped


async def _answer(send: Any, status: int, payload: dict) -> None:
    body = json.dumps(payload).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


__all__ = ["NO_EVENT_ID", "ROUTES", "RerankBodyCheck", "complete_body", "complete_data"]
