"""Retries before the first byte, weighted balancing and cool-down (docs/gateway.md, "Retries").

Nothing has reached the client before an upstream's first body byte, so
until then a failed attempt can be tried again or given to the next
upstream without the client seeing more than one answer.

* **Retries** (``retries``, ``backoff`` per upstream): a connection error, a
  timeout before the answer, a 429 or a 5xx (529 "overloaded" too) is tried
  again on the same upstream up to ``retries`` times, after a delay drawn
  uniformly from ``[0, backoff · 2ⁿ]`` ("full jitter", so workers that
  failed together do not come back together), never shorter than the
  upstream's ``Retry-After`` (seconds or an HTTP date). A ``Retry-After``
  beyond :data:`MAX_WAIT` goes to the next upstream at once. A connection the
  upstream closed before answering (a kept-alive connection it was closing)
  is tried again once at once, without counting as a retry.
* **Balancing** (``weight``): a route with a weight on any upstream picks its
  order at random for each request, in proportion to the weights (1 for an
  upstream without one); the rest of that order are the fallbacks. A route
  without weights keeps its configured order.
* **Cool-down** (``cooldown``): an upstream whose attempts failed
  :data:`FAILURES_TO_COOL` times in a row (after its retries) goes to the end
  of every order for ``cooldown`` seconds — still tried when everything
  before it failed. One success ends it. Each worker process keeps its own;
  ``cooldown`` is 0 (off) unless configured.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .config import Upstream
from .errors import GatewayError

__all__ = ["FAILURES_TO_COOL", "MAX_WAIT", "Health", "Tries", "balance", "retry_after"]

#: The longest ``Retry-After`` the gateway waits for before trying another upstream.
MAX_WAIT = 30.0
#: Failed requests in a row that send an upstream into its cool-down.
FAILURES_TO_COOL = 3
_RETRIED_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
#: The backoff's jitter, seeded once: a generator of its own per request
#: would read 2.5 KB of OS entropy for each (9 µs), to draw at most a few numbers.
_JITTER = random.Random()


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header (delay seconds or an HTTP date) asks
    for; None when it is absent or unreadable."""
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError, IndexError):
            return None
        seconds = moment - (time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


@dataclass(slots=True)
class _State:
    failures: int = 0
    cool_until: float = 0.0


class Health:
    """Consecutive failures and cool-downs of upstreams (one per process)."""

    def __init__(self) -> None:
        self._states: dict[Upstream, _State] = {}

    def cooling(self, upstream: Upstream, now: float | None = None) -> bool:
        state = self._states.get(upstream)
        return state is not None and state.cool_until > (time.monotonic() if now is None else now)

    def succeeded(self, upstream: Upstream) -> None:
        self._states.pop(upstream, None)

    def failed(self, upstream: Upstream) -> None:
        state = self._states.setdefault(upstream, _State())
        state.failures += 1
        if state.failures >= FAILURES_TO_COOL and upstream.cooldown > 0:
            state.cool_until = time.monotonic() + upstream.cooldown
            state.failures = 0


#: The health of this process's upstreams.
HEALTH = Health()


def balance(
    upstreams: Sequence[Upstream], rng: random.Random | None = None, health: Health = HEALTH
) -> list[Upstream]:
    """The order to try ``upstreams`` in: weighted at random when any has a
    weight (Efraimidis–Spirakis sampling), cooling ones last."""
    order = list(upstreams)
    if any(u.weight is not None for u in order):
        draw = (rng or random).random
        keys = {u.name: draw() ** (1.0 / (u.weight or 1.0)) for u in order}
        order.sort(key=lambda u: keys[u.name], reverse=True)
    now = time.monotonic()
    return sorted(order, key=lambda u: health.cooling(u, now))


class Tries:
    """The attempts at one upstream: whether to try again, and after how long."""

    def __init__(
        self, upstream: Upstream, rng: random.Random | None = None, health: Health = HEALTH
    ) -> None:
        self.upstream = upstream
        self._rng = rng or _JITTER
        self._health = health
        self._retried = 0
        self._stale_retried = False

    def delay(self, failure: GatewayError) -> float | None:
        """Seconds to wait before the next attempt after ``failure``; None: no more."""
        if failure.status not in _RETRIED_STATUSES or self._retried >= self.upstream.retries:
            return None
        asked = retry_after(failure.headers)
        if asked is not None and asked > MAX_WAIT:
            return None
        jitter = self._rng.uniform(0.0, self.upstream.backoff * 2**self._retried)
        return min(MAX_WAIT, max(jitter, asked or 0.0))

    async def again(self, failure: GatewayError, stale: bool) -> bool:
        """After a failed attempt: wait and return True to try again, or
        return False (and count the failure) to move on."""
        if stale and not self._stale_retried:
            self._stale_retried = True
            return True
        wait = self.delay(failure)
        if wait is None:
            self._health.failed(self.upstream)
            return False
        self._retried += 1
        await asyncio.sleep(wait)
        return True

    def succeeded(self) -> None:
        self._health.succeeded(self.upstream)
