"""The HTTP status of the response an adapter reads, put on its ``Error``.

A provider that refuses a request answers with an HTTP error status and an
error body; the body becomes ``Error(kind="upstream")`` with the provider's
code, and the status and ``Retry-After`` that only the HTTP response holds
are added here (``Error.status``, ``Error.retry_after``, and Bedrock's
exception name from its ``x-amzn-ErrorType`` header as the code), so that
``Error.category`` and ``Error.retryable`` can use them. A successful
response (status below 400) is passed through untouched: the events of a
normal stream are not wrapped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import replace
from typing import Any

from ..errors import aws_error_type, retry_after_of
from ..events import Error, Event

__all__ = ["aiter_with_status", "iter_with_status", "status_of"]


def status_of(response: Any) -> tuple[int | None, Mapping[str, str]]:
    """``(status, headers)`` of an httpx, requests or aiohttp response, or
    of the HTTP response under an SDK raw response; ``(None, {})`` when it
    has none."""
    for obj in (response, getattr(response, "http_response", None)):
        if obj is None:
            continue
        status = getattr(obj, "status_code", None)
        if status is None:
            status = getattr(obj, "status", None)
        if isinstance(status, int) and not isinstance(status, bool):
            headers = getattr(obj, "headers", None)
            return status, headers if isinstance(headers, Mapping) else {}
    return None, {}


def _known(status: int, headers: Mapping[str, str]) -> dict[str, Any]:
    """What only the HTTP response says about its error: the status, the
    ``Retry-After`` wait, and Bedrock's exception name, which it sends in the
    ``x-amzn-ErrorType`` header (``ValidationException:http://…``) and not in
    the body."""
    known: dict[str, Any] = {"status": status}
    retry_after = retry_after_of(headers)
    if retry_after is not None:  # else the body may have named one (Gemini's RetryInfo)
        known["retry_after"] = retry_after
    aws_type = aws_error_type(headers)
    if aws_type:
        known["code"] = known["error_type"] = aws_type
    return known


def _stamped(event: Event, known: dict[str, Any]) -> Event:
    """``event`` with what the response said; a header's code and type go
    on its message too, as the body's would have."""
    if type(event) is not Error:
        return event
    if event.code is not None:  # the body's own code and type come first
        known = {k: v for k, v in known.items() if k not in ("code", "error_type")}
    elif "code" in known:
        error = {"error_code": known["code"], "error_type": known["error_type"]}
        known = {**known, "message": replace(event.message, **error)}
    return replace(event, **known)


def iter_with_status(events: Iterator[Event], response: Any) -> Iterator[Event]:
    """``events``, with the response's error status on their ``Error``."""
    status, headers = status_of(response)
    if status is None or status < 400:
        return events
    known = _known(status, headers)
    return (_stamped(event, known) for event in events)


def aiter_with_status(events: AsyncIterator[Event], response: Any) -> AsyncIterator[Event]:
    """:func:`iter_with_status` for async events."""
    status, headers = status_of(response)
    if status is None or status < 400:
        return events
    return _astamped(events, _known(status, headers))


async def _astamped(events: AsyncIterator[Event], known: dict[str, Any]) -> AsyncIterator[Event]:
    async for event in events:
        yield _stamped(event, known)
