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
from ..hosts.identity import with_provider
from ..normalizer import anormalize, normalize
from ..options import NormalizerOptions
from .idle import check_idle_timeout, idle_limited
from .status import aiter_with_status, iter_with_status

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
    it is re-raised after that event. ``options`` go to ``StreamNormalizer``;
    ``provider`` defaults to the request's host (:mod:`.hosts`). An error
    response's ``Error`` carries its HTTP status and ``Retry-After``.
    """
    options = with_provider(options, _url(response))
    events = normalize(
        response.iter_bytes(), api, raise_source_errors=raise_source_errors, **options
    )
    return iter_with_status(events, response)


def aiter_events(
    response: httpx.Response,
    api: ApiName = "auto",
    *,
    raise_source_errors: bool = False,
    idle_timeout: float | None = None,
    **options: Unpack[NormalizerOptions],
) -> AsyncIterator[Event]:
    """Canonical events of a streamed ``httpx.Response`` (``AsyncClient``);
    no bytes for ``idle_timeout`` seconds ends them with
    ``Error(kind="truncated")`` naming it (:mod:`.idle`)."""
    seconds = check_idle_timeout(idle_timeout)
    body = idle_limited(response.aiter_bytes(), seconds)
    options = with_provider(options, _url(response))
    events = anormalize(body, api, raise_source_errors=raise_source_errors, **options)
    return aiter_with_status(events, response)


def _url(response: httpx.Response) -> object:
    """The URL the body came from (the last request, after redirects)."""
    try:
        return response.request.url
    except RuntimeError:  # a Response built without a request
        return None
