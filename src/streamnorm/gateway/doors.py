"""The front doors: which client API a path belongs to, and what it asks for.

Each of the four request APIs has its own paths, its own credential header
and its own place for the model and the streaming flag:

==================  ===========================================  ==============================
api                 paths                                        client key
==================  ===========================================  ==============================
anthropic-messages  ``POST /v1/messages``                        ``x-api-key``, ``Authorization``
openai-responses    ``POST /v1/responses``                       ``Authorization: Bearer``
openai-completions  ``POST /v1/chat/completions``                ``Authorization: Bearer``
google-generative   ``POST /v1beta/models/{m}:generateContent``  ``x-goog-api-key``, ``?key=``
                    and ``:streamGenerateContent`` (also v1)
==================  ===========================================  ==============================

Each API's token count endpoint is a door of that API too (``Door.count``):
``POST /v1/messages/count_tokens``, ``POST /v1/responses/input_tokens`` and
``POST /v1beta/models/{m}:countTokens``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._json import loads
from .errors import GatewayError

__all__ = [
    "ClientCall",
    "Door",
    "client_api",
    "duplicate_key",
    "find_door",
    "parse_call",
    "presented_keys",
]

_JSON_DOORS = {
    "/v1/messages": "anthropic-messages",
    "/v1/responses": "openai-responses",
    "/v1/chat/completions": "openai-completions",
}
_COUNT_DOORS = {
    "/v1/messages/count_tokens": "anthropic-messages",
    "/v1/responses/input_tokens": "openai-responses",
}
_GEMINI_PATH = re.compile(
    r"/(v1|v1beta)/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)"
)
#: What a model name may be where it becomes part of a URL path (bounded:
#: a URL has a maximum length, and no model's name is near it).
PATH_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]{0,255}")


@dataclass(frozen=True, slots=True)
class Door:
    """A matched front door; Gemini doors carry the model and method of the path."""

    api: str
    version: str | None = None
    path_model: str | None = None
    path_stream: bool | None = None
    count: bool = False


@dataclass(frozen=True, slots=True)
class ClientCall:
    """A client request once read: its API, model, streaming mode and body."""

    door: Door
    model: str
    stream: bool
    body: dict[str, Any]
    raw: bytes
    sse: bool = True

    @property
    def api(self) -> str:
        return self.door.api


def find_door(method: str, path: str) -> Door | None:
    """The door at ``method path`` (query excluded); None: not a front door."""
    if method != "POST":
        return None
    api = _JSON_DOORS.get(path)
    if api is not None:
        return Door(api)
    api = _COUNT_DOORS.get(path)
    if api is not None:
        return Door(api, count=True)
    m = _GEMINI_PATH.fullmatch(path)
    if m is None:
        return None
    method = m[3]
    count = method == "countTokens"
    return Door("google-generative-ai", m[1], m[2], method == "streamGenerateContent", count)


def client_api(path: str, headers: dict[str, str], query: dict[str, str]) -> str:
    """The API a request off the front doors most likely speaks, for its answer's
    shape: Gemini by path or key, Anthropic by ``anthropic-version`` or
    ``x-api-key``, OpenAI otherwise."""
    if path.startswith("/v1beta/") or "x-goog-api-key" in headers or "key" in query:
        return "google-generative-ai"
    if "anthropic-version" in headers or "x-api-key" in headers:
        return "anthropic-messages"
    return "openai-completions"


def presented_keys(api: str, headers: dict[str, str], query: dict[str, str]) -> list[str]:
    """The client keys a request carries in its API's own places."""
    keys: list[str] = []
    auth = headers.get("authorization", "")
    bearer = auth[7:].strip() if auth[:7].lower() == "bearer " else ""
    if api == "anthropic-messages":
        keys += [headers.get("x-api-key", ""), bearer]
    elif api == "google-generative-ai":
        keys += [headers.get("x-goog-api-key", ""), query.get("key", "")]
    else:
        keys.append(bearer)
    return [k for k in keys if k]


def parse_call(door: Door, raw: bytes, query: dict[str, str]) -> ClientCall:
    """Read the body far enough to route it; ``GatewayError(400)`` names the field."""
    try:
        body = loads(raw) if raw.strip() else None
    except ValueError as exc:
        raise GatewayError(400, f"body: not valid JSON ({exc})", param="body") from None
    if not isinstance(body, dict):
        raise GatewayError(400, "body: a JSON object is required", param="body")
    twice = duplicate_key(raw, body)
    if twice is not None:  # the gateway would route on one and the upstream may read the other
        name = twice[:64]
        raise GatewayError(400, f"{name}: given more than once in the body", param=name)
    if door.api == "google-generative-ai":
        assert door.path_model is not None and door.path_stream is not None
        if not PATH_MODEL.fullmatch(door.path_model):
            raise GatewayError(
                400, f"model: {door.path_model!r} is not a model name", param="model"
            )
        sse = query.get("alt") == "sse"
        return ClientCall(door, door.path_model, door.path_stream, body, raw, sse)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise GatewayError(400, "model: a non-empty string is required", param="model")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise GatewayError(400, "stream: must be true or false", param="stream")
    return ClientCall(door, model, stream, body, raw)


def duplicate_key(raw: bytes, body: dict[str, Any]) -> str | None:
    """A key the top level of the JSON object ``raw`` (parsed: ``body``)
    names more than once; None when each is named once.

    Without ``\\u`` escapes a plain key can only be written one way, so a
    key whose quoted form occurs once in the bytes is named once: that scan
    decides most bodies. Otherwise the top level is read again with every
    pair kept."""
    if b"\\u" not in raw:
        quoted = [_quoted(k) for k in body]
        if all(q is not None and raw.count(q) == 1 for q in quoted):
            return None
    pairs: list[list[tuple[str, Any]]] = []

    def keep(found: list[tuple[str, Any]]) -> None:
        pairs[:] = [found]  # the top-level object comes last

    try:
        json.loads(raw, object_pairs_hook=keep)
    except (ValueError, RecursionError):  # pragma: no cover - the body parsed once already
        return None
    seen: set[str] = set()
    for name, _ in pairs[0] if pairs else []:
        if name in seen:
            return name
        seen.add(name)
    return None


def _quoted(key: str) -> bytes | None:
    """``key`` as JSON can only write it, or None when it has other spellings."""
    if not key.isascii() or any(c in key for c in '"\\/') or not key.isprintable():
        return None
    return b'"' + key.encode() + b'"'
