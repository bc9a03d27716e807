"""Errors in the client's own API (encoding.md §10).

Before the stream an error is an HTTP status with that API's error body
(§10.2); after the 200 it is that API's in-stream error event (§10.1), and
then the stream closes. ``GatewayError`` carries a status and a message from
wherever it is raised to the one place that renders it for the client.

The upstream's message is kept (clients recognise context overflow and rate
limits from it), with every secret the gateway holds cut out first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .._json import dumps_bytes, loads
from ..errors import aws_error_type
from ..providers.wire_writer import frame

__all__ = [
    "UNKNOWN_URL",
    "GatewayError",
    "Redactor",
    "error_body",
    "redact",
    "stream_error",
    "upstream_message",
]

#: Longest upstream error text kept when its body is not JSON.
_MAX_TEXT = 500


#: The OpenAI error code of a path no endpoint serves (what api.openai.com says).
UNKNOWN_URL = "unknown_url"


class GatewayError(Exception):
    """A request that ends in an HTTP error; ``param`` names the field at fault,
    ``code`` replaces the OpenAI error code the status implies, ``headers``
    go out with the error (``retry-after``)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.headers = dict(headers or {})


#: status → Anthropic error type (anthropic/types/*_error_object.py).
_ANTHROPIC_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
    504: "timeout_error",
    529: "overloaded_error",
}

#: status → OpenAI (type, code).
_OPENAI_TYPES = {
    400: ("invalid_request_error", None),
    401: ("authentication_error", "invalid_api_key"),
    403: ("permission_error", None),
    404: ("invalid_request_error", "model_not_found"),
    413: ("invalid_request_error", "request_too_large"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}

#: status → google.rpc status name.
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


def _anthropic_type(status: int) -> str:
    return _ANTHROPIC_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def _openai_type(status: int) -> tuple[str, str | None]:
    default = ("server_error", None) if status >= 500 else ("invalid_request_error", None)
    return _OPENAI_TYPES.get(status, default)


def _google_status(status: int) -> str:
    return _GOOGLE_STATUS.get(status, "INTERNAL" if status >= 500 else "FAILED_PRECONDITION")


def error_object(
    api: str, status: int, message: str, *, param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    """The JSON error body of ``api`` for an HTTP ``status`` (encoding.md §10.2)."""
    if api == "anthropic-messages":
        return {"type": "error", "error": {"type": _anthropic_type(status), "message": message}}
    if api == "google-generative-ai":
        return {"error": {"code": status, "message": message, "status": _google_status(status)}}
    kind, implied = _openai_type(status)
    return {"error": {"message": message, "type": kind, "param": param, "code": code or implied}}


def error_body(
    api: str,
    status: int,
    message: str,
    *,
    param: str | None = None,
    code: str | None = None,
    request_id: str | None = None,
) -> bytes:
    body = error_object(api, status, message, param=param, code=code)
    if request_id is not None and api == "anthropic-messages":
        body["request_id"] = request_id
    return dumps_bytes(body)


def stream_error(api: str, status: int, message: str, *, sequence_number: int = 0) -> bytes:
    """The in-stream error event of ``api`` (encoding.md §10.1).

    Used where the gateway forwards an upstream's bytes unchanged and the
    upstream connection fails part-way; a translated stream gets its error
    event from the client API's stream encoder instead.
    """
    if api == "anthropic-messages":
        return frame(error_object(api, status, message), "error")
    if api == "google-generative-ai":
        return frame(error_object(api, status, message), crlf=True)
    kind, code = _openai_type(status)
    if api == "openai-responses":
        event = {
            "type": "error",
            "code": code or kind,
            "message": message,
            "param": None,
            "sequence_number": sequence_number,
        }
        return frame(event, "error")
    return frame(error_object(api, status, message))


def upstream_message(body: bytes, status: int, headers: Mapping[str, str] | None = None) -> str:
    """The message an upstream error body carries, in any of the four APIs
    or Bedrock's, after the exception's name when AWS's ``x-amzn-ErrorType``
    header gives it (``ThrottlingException: Too many requests``).
    """
    kind = aws_error_type(headers or {})
    message = _body_message(body, status)
    return f"{kind}: {message}" if kind and not message.startswith(kind) else message


def _body_message(body: bytes, status: int) -> str:
    """The message of an error body: at ``error.message`` in the four APIs
    (Gemini sometimes wraps the object in a one-element array), at
    ``message`` in Bedrock's; anything else kept as bounded text."""
    try:
        data = loads(body)
    except ValueError:
        data = None
    if isinstance(data, list) and data:
        data = data[0]
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if isinstance(data.get("message"), str):
            return str(data["message"])
    text = body[:_MAX_TEXT].decode("utf-8", "replace").strip()
    return text or f"upstream answered HTTP {status}"


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret replaced by ``***`` (longest first)."""
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return text


class Redactor:
    """Cut every secret out of a byte stream, wherever the chunks split it.

    ``feed`` returns the bytes that can go out: every secret in them is
    ``***``, and only a tail that could still be the start of a secret is
    held back (a few bytes, usually none, so events are not delayed);
    ``close`` returns that tail. Each byte is looked at a bounded number of
    times per secret, so the cost is linear in the bytes.
    """

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = sorted({s.encode() for s in secrets if s}, key=len, reverse=True)
        self._held = b""

    def feed(self, chunk: bytes) -> bytes:
        if not self._secrets:
            return chunk
        data = self._held + chunk
        for secret in self._secrets:
            data = data.replace(secret, b"***")
        keep = max(_partial_at_end(data, s) for s in self._secrets)
        self._held = data[len(data) - keep :] if keep else b""
        return data[: len(data) - keep]

    def close(self) -> bytes:
        held, self._held = self._held, b""
        return held

    def whole(self, data: bytes) -> bytes:
        """``data`` as one piece, every secret cut out."""
        return self.feed(data) + self.close()


def _partial_at_end(data: bytes, secret: bytes) -> int:
    """The length of the longest end of ``data`` that begins ``secret`` (shorter than it)."""
    start = max(0, len(data) - len(secret) + 1)
    first = secret[:1]
    while (at := data.find(first, start)) >= 0:
        if secret.startswith(data[at:]):
            return len(data) - at
        start = at + 1
    return 0
