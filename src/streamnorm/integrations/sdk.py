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

When all you have is already-parsed chunk objects — an SDK ``Stream`` someone
iterates elsewhere, LiteLLM's ``ModelResponseStream`` chunks, dicts —
``iter_chunk_events`` / ``aiter_chunk_events`` serialize each one back into an
SSE event and normalize that. It is a bridge: whatever the parsing library
dropped or renamed cannot come back, so prefer the raw bytes when you can.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from ..apis import ApiName
from ..events import Event
from ..normalizer import anormalize, normalize
from ..options import NormalizerOptions

if TYPE_CHECKING:
    from typing_extensions import Unpack
from ..hosts.identity import with_provider
from .idle import check_idle_timeout, idle_limited
from .status import aiter_with_status, iter_with_status

__all__ = ["aiter_chunk_events", "aiter_events", "iter_chunk_events", "iter_events"]

T = TypeVar("T")


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


def _source_url(raw: Any) -> object:
    """The URL of the HTTP response under an SDK object, if it has one."""
    for obj in (getattr(raw, "http_response", None), getattr(raw, "response", None), raw):
        try:
            url = getattr(obj, "url", None) if obj is not None else None
        except RuntimeError:  # an httpx.Response without its request
            url = None
        if url is not None:
            return url
    return None


def iter_events(
    raw_response: Any,
    api: ApiName = "auto",
    *,
    raise_source_errors: bool = False,
    **options: Unpack[NormalizerOptions],
) -> Iterator[Event]:
    """Canonical events of an SDK raw streaming response (sync client).

    Raises ``TypeError`` at once for an object that gives no raw bytes.
    Transport errors while reading end the events with
    ``Error(kind="truncated")`` naming them (re-raised after that event with
    ``raise_source_errors=True``). ``options`` go to ``StreamNormalizer``;
    ``provider`` defaults to the host the SDK talked to (:mod:`.hosts`).
    """
    chunks = _sync_bytes(raw_response)
    if isinstance(chunks, AsyncIterable):
        raise TypeError("an async SDK response: use aiter_events() with `async for`")
    options = with_provider(options, _source_url(raw_response))
    events = normalize(chunks, api, raise_source_errors=raise_source_errors, **options)
    return iter_with_status(events, raw_response)


def aiter_events(
    raw_response: Any,
    api: ApiName = "auto",
    *,
    raise_source_errors: bool = False,
    idle_timeout: float | None = None,
    **options: Unpack[NormalizerOptions],
) -> AsyncIterator[Event]:
    """Canonical events of an SDK raw streaming response (async client); an
    async body that gives no bytes for ``idle_timeout`` seconds ends them with
    ``Error(kind="truncated")`` naming it (:mod:`.idle`)."""
    seconds = check_idle_timeout(idle_timeout)
    chunks = _idle(_async_bytes(raw_response), seconds)
    options = with_provider(options, _source_url(raw_response))
    events = anormalize(chunks, api, raise_source_errors=raise_source_errors, **options)
    return aiter_with_status(events, raw_response)


def _idle(
    source: AsyncIterable[T] | Iterable[T], seconds: float | None
) -> AsyncIterable[T] | Iterable[T]:
    """An async ``source`` under the idle timeout; a blocking one as it is
    (its reads block the loop: only the client's own timeout can end them)."""
    if seconds is None or not isinstance(source, AsyncIterable):
        return source
    return idle_limited(source, seconds)


def _model_json(model: Any) -> Any:
    """A pydantic model as the JSON the wire carried.

    pydantic writes ``bytes`` fields (google-genai's ``thought_signature``,
    inline data) in URL-safe base64, while the API sends them in the standard
    alphabet: the signature would no longer equal the one read from the raw
    bytes. Bytes are written back in the standard alphabet; everything else is
    pydantic's JSON form. Cost: two dumps and one walk, linear in the chunk.
    """
    data = model.model_dump(mode="json", by_alias=True, exclude_none=True, warnings=False)
    native = model.model_dump(mode="python", by_alias=True, exclude_none=True, warnings=False)
    return _standard_base64(data, native)


def _standard_base64(data: Any, native: Any) -> Any:
    """``data`` with every value that is ``bytes`` in ``native`` (the same
    tree in pydantic's python form) base64-encoded in the standard alphabet."""
    if isinstance(native, (bytes, bytearray)):
        return base64.b64encode(native).decode("ascii")
    if isinstance(data, dict) and isinstance(native, dict):
        return {k: _standard_base64(v, native.get(k)) for k, v in data.items()}
    if isinstance(data, list) and isinstance(native, (list, tuple)) and len(data) == len(native):
        return [_standard_base64(v, n) for v, n in zip(data, native, strict=True)]
    return data


def _chunk_to_sse(chunk: Any) -> bytes:
    """One parsed chunk (pydantic model, dict, or JSON text) as an SSE event."""
    if isinstance(chunk, (bytes, bytearray)):
        text = bytes(chunk).decode("utf-8")
    elif isinstance(chunk, str):
        text = chunk
    elif isinstance(chunk, dict):
        text = json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))
    elif callable(getattr(chunk, "model_dump", None)):
        text = json.dumps(_model_json(chunk), ensure_ascii=False, separators=(",", ":"))
    elif callable(getattr(chunk, "to_dict", None)):
        text = json.dumps(chunk.to_dict(), ensure_ascii=False, separators=(",", ":"))
    else:
        raise TypeError(f"cannot serialize a {type(chunk).__name__} chunk as JSON")
    return b"data: " + text.replace("\r", " ").replace("\n", " ").encode("utf-8") + b"\n\n"


def _sse_from_chunks(chunks: Iterable[Any], done_marker: bool) -> Iterator[bytes]:
    for chunk in chunks:
        yield _chunk_to_sse(chunk)
    if done_marker:
        yield b"data: [DONE]\n\n"


async def _asse_from_chunks(chunks: AsyncIterable[Any], done_marker: bool) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        yield _chunk_to_sse(chunk)
    if done_marker:
        yield b"data: [DONE]\n\n"


def iter_chunk_events(
    chunks: Iterable[Any],
    api: ApiName = "auto",
    *,
    done_marker: bool = False,
    raise_source_errors: bool = False,
    **options: Unpack[NormalizerOptions],
) -> Iterator[Event]:
    """Canonical events from already-parsed stream chunks.

    Each chunk (a pydantic model such as ``ChatCompletionChunk`` or LiteLLM's
    ``ModelResponseStream``, a dict, or JSON text) becomes one SSE event.

    Parsing libraries swallow the Chat Completions ``data: [DONE]`` and some
    end their iteration quietly when the connection drops, so the stream's
    end is judged by its ``finish_reason``: a stream that ends after one is
    ``Done``, one that ends without is ``Error(kind="truncated")``. Pass
    ``done_marker=True`` to append ``[DONE]`` for hosts that never send a
    ``finish_reason`` (then the end is trusted, with a
    ``missing_stop_reason`` diagnostic).
    """
    return normalize(
        _sse_from_chunks(chunks, done_marker),
        api,
        raise_source_errors=raise_source_errors,
        **options,
    )


def aiter_chunk_events(
    chunks: AsyncIterable[Any],
    api: ApiName = "auto",
    *,
    done_marker: bool = False,
    raise_source_errors: bool = False,
    idle_timeout: float | None = None,
    **options: Unpack[NormalizerOptions],
) -> AsyncIterator[Event]:
    """Async twin of :func:`iter_chunk_events`; no chunk for ``idle_timeout``
    seconds ends the events with ``Error(kind="truncated")`` naming it."""
    chunks = idle_limited(chunks, check_idle_timeout(idle_timeout))
    return anormalize(
        _asse_from_chunks(chunks, done_marker),
        api,
        raise_source_errors=raise_source_errors,
        **options,
    )
