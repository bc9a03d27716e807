"""httpx adapter: canonical events from an ``httpx.Response``.

    with httpx.Client(timeout=60) as client:
        with client.stream("POST", url, json=body, headers=headers) as response:
            for event in iter_events(response, api="openai-responses"):
                ...

    async with client.stream("POST", url, json=body) as response:   # AsyncClient
        async for event in aiter_events(response):
            ...

The body is read with ``iter_bytes()`` / ``aiter_bytes()``: decompressed,
in whatever pieces the network delivers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from ..apis import ApiName
from ..events import Event
from ..normalizer import anormalize, normalize
from ..options import NormalizerOptions

if TYPE_CHECKING:
    import httpx
    from typing_extensions import Unpack

__all__ = ["aiter_events", "iter_events"]


def iter_events(
    response: httpx.Response,
    api: ApiName = "auto",
    *,
    raise_source_errors: bool = False,
    **options: Unpack[NormalizerOptions],
) -> Iterator[Event]:
    """Canonical events of a streamed ``httpx.Response`` (sync client).

    A transport error while reading (``httpx.ReadTimeout``,
    ``httpx.RemoteProtocolError`` …) ends the events with
    ``Error(kind="truncated")`` naming it; with ``raise_source_errors=True``
    it is re-raised after that event. ``options`` go to ``StreamNormalizer``.
    """
    return normalize(response.iter_bytes(), api, raise_source_errors=raise_source_errors, **options)


def aiter_events(
    response: httpx.Response,
    api: ApiName = "auto",
    *,
    raise_source_errors: bool = False,
    **options: Unpack[NormalizerOptions],
) -> AsyncIterator[Event]:
    """Canonical events of a streamed ``httpx.Response`` (``AsyncClient``)."""
    return anormalize(
        response.aiter_bytes(), api, raise_source_errors=raise_source_errors, **options
    )
