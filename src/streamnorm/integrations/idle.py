"""An idle timeout for async byte sources: no piece for N seconds ends it.

A client's own read timeout does not always fire: aiohttp 3.14 waits forever
on a malformed chunk header once the body has started (its ``sock_read``
timer is not armed there), and a server that stalls between pieces of a
chunked body can hold a total-timeout-free client indefinitely. The async
adapters take ``idle_timeout=`` (seconds): when the source yields nothing for
that long it raises :class:`IdleTimeout`, which the normalizer turns into
``Error(kind="truncated")`` naming it, with everything received so far.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterable, AsyncIterator
from typing import TypeVar

__all__ = ["IdleTimeout", "check_idle_timeout", "idle_limited"]

T = TypeVar("T")


class IdleTimeout(TimeoutError):
    """The byte source produced nothing for ``idle_timeout`` seconds."""


def check_idle_timeout(seconds: float | None) -> float | None:
    """``seconds`` if it is ``None`` or a positive finite number, else ``ValueError``
    (raised when the adapter is called, not at the first event)."""
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise ValueError(f"idle_timeout must be a number of seconds, got {seconds!r}")
    if not 0 < seconds < float("inf"):
        raise ValueError(f"idle_timeout must be positive and finite, got {seconds!r}")
    return float(seconds)


if sys.version_info >= (3, 11):

    async def _next_within(source: AsyncIterator[T], seconds: float) -> T:
        # In the current task: no task per piece, and task-bound cancel
        # scopes (anyio under httpx) see the read where it started.
        async with asyncio.timeout(seconds):
            return await anext(source)

else:  # pragma: no cover - Python 3.10

    async def _next_within(source: AsyncIterator[T], seconds: float) -> T:
        return await asyncio.wait_for(anext(source), seconds)


async def idle_limited(source: AsyncIterable[T], seconds: float | None) -> AsyncIterator[T]:
    """The items of ``source``; :class:`IdleTimeout` when the next one takes
    more than ``seconds`` to arrive (no limit for ``None``). Cancellation from
    outside passes through untouched."""
    it = aiter(source)
    if seconds is None:
        async for item in it:
            yield item
        return
    while True:
        try:
            item = await _next_within(it, seconds)
        except StopAsyncIteration:
            return
        except TimeoutError:
            raise IdleTimeout(f"no bytes for {seconds:g} s (idle_timeout={seconds:g})") from None
        yield item
