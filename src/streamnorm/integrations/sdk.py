"""Adapters for the official ``openai`` and ``anthropic`` Python SDKs.

The SDKs parse the stream themselves; to normalize it, ask them for the raw
streaming response and hand its bytes to streamnorm:

    client = openai.OpenAI()
    with client.chat.completions.with_streaming_response.create(
        model="gpt-5", messages=messages, stream=True,
        stream_options={"include_usage": True},
    ) as raw:
        for event in iter_events(raw):
            ...

    client = anthropic.Anthropic()
    with client.messages.with_streaming_response.create(
        model="claude-sonnet-4-5", max_tokens=1024, messages=messages, stream=True,
    ) as raw:
        for event in iter_events(raw, model="claude-sonnet-4-5"):
            ...

Accepted objects, tried in this order: anything with ``iter_bytes()`` (the
``APIResponse`` of ``with_streaming_response``), anything with an
``http_response`` (``with_raw_response``), and the SDKs' ``Stream`` /
``AsyncStream`` objects (their ``response``) as long as nobody has iterated
them yet. The SDKs are not imported here: any object of those shapes works.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any

from ..events import Event
from ..normalizer import anormalize, normalize

__all__ = ["aiter_events", "iter_events"]


def _sync_bytes(raw: Any) -> Iterable[bytes]:
    if callable(getattr(raw, "iter_bytes", None)):
        chunks: Iterable[bytes] = raw.iter_bytes()
        return chunks
    for attr in ("http_response", "response"):
        inner = getattr(raw, attr, None)
        if inner is not None and callable(getattr(inner, "iter_bytes", None)):
            inner_chunks: Iterable[bytes] = inner.iter_bytes()
            return inner_chunks
    raise TypeError(
        f"cannot read raw bytes from a {type(raw).__name__}: expected an SDK raw response "
        "(with_streaming_response / with_raw_response) or an unread Stream"
    )


def _async_bytes(raw: Any) -> AsyncIterable[bytes] | Iterable[bytes]:
    if callable(getattr(raw, "iter_bytes", None)):
        chunks: AsyncIterable[bytes] | Iterable[bytes] = raw.iter_bytes()
        return chunks
    for attr in ("http_response", "response"):
        inner = getattr(raw, attr, None)
        if inner is not None and callable(getattr(inner, "aiter_bytes", None)):
            inner_chunks: AsyncIterable[bytes] = inner.aiter_bytes()
            return inner_chunks
    raise TypeError(
        f"cannot read raw bytes from a {type(raw).__name__}: expected an SDK async raw "
        "response (with_streaming_response / with_raw_response) or an unread AsyncStream"
    )


def iter_events(
    raw_response: Any,
    api: str = "auto",
    *,
    raise_source_errors: bool = False,
    **options: Any,
) -> Iterator[Event]:
    """Canonical events of an SDK raw streaming response (sync client).

    Raises ``TypeError`` at once for an object that gives no raw bytes.
    Transport errors while reading end the events with
    ``Error(kind="truncated")`` naming them (re-raised after that event with
    ``raise_source_errors=True``). ``options`` go to ``StreamNormalizer``.
    """
    chunks = _sync_bytes(raw_response)
    if isinstance(chunks, AsyncIterable):
        raise TypeError("an async SDK response: use aiter_events() with `async for`")
    return normalize(chunks, api, raise_source_errors=raise_source_errors, **options)


def aiter_events(
    raw_response: Any,
    api: str = "auto",
    *,
    raise_source_errors: bool = False,
    **options: Any,
) -> AsyncIterator[Event]:
    """Canonical events of an SDK raw streaming response (async client)."""
    chunks = _async_bytes(raw_response)
    return anormalize(chunks, api, raise_source_errors=raise_source_errors, **options)
