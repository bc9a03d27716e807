"""aiohttp adapter: canonical events from an ``aiohttp.ClientResponse``.

    timeout = aiohttp.ClientTimeout(sock_connect=10, sock_read=60)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        async with session.post(url, json=body, headers=headers) as response:
            async for event in aiter_events(response, api="anthropic-messages"):
                ...

The body is read with ``response.content.iter_any()``: every piece as soon as
it arrives, decompressed. ``idle_timeout=`` (seconds) ends the stream with
``Error(kind="truncated")`` when no piece arrives for that long: aiohttp's
``sock_read`` does not fire on a malformed chunk header once the body has
started (:mod:`.idle`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from ..apis import ApiName
from ..events import Event
from ..hosts.identity import with_provider
from ..normalizer import anormalize
from ..options import NormalizerOptions
from .idle import check_idle_timeout, idle_limited
from .status import aiter_with_status

if TYPE_CHECKING:
    import aiohttp
    from typing_extensions import Unpack

__all__ = ["aiter_events"]


def aiter_events(
    response: aiohttp.ClientResponse,
    api: ApiName = "auto",
    *,
    raise_source_errors: bool = False,
    idle_timeout: float | None = None,
    **options: Unpack[NormalizerOptions],
) -> AsyncIterator[Event]:
    """Canonical events of an ``aiohttp.ClientResponse``.

    A transport error while reading (``aiohttp.ClientPayloadError``, a
    ``sock_read`` timeout, no bytes for ``idle_timeout`` seconds …) ends the
    events with ``Error(kind="truncated")`` naming it; with
    ``raise_source_errors=True`` it is re-raised after that event.
    ``options`` go to ``StreamNormalizer``; ``provider`` defaults to the host
    of ``response.url`` (:mod:`.hosts`). An error response's ``Error``
    carries its HTTP status and ``Retry-After``.
    """
    seconds = check_idle_timeout(idle_timeout)
    body = idle_limited(response.content.iter_any(), seconds)
    options = with_provider(options, response.url)
    events = anormalize(body, api, raise_source_errors=raise_source_errors, **options)
    return aiter_with_status(events, response)
