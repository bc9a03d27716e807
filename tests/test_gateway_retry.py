"""Retries before the first byte, weighted balancing and cool-down (``gateway/retry.py``):
the policy on its own, then through the gateway against an upstream that
fails a given number of times before it answers."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamnorm.gateway import Upstream, create_app, parse_config
from streamnorm.gateway.errors import GatewayError
from streamnorm.gateway.retry import MAX_WAIT, Health, Tries, balance, retry_after

from .gateway_support import GATEWAY_KEY, Receive, Scope, Send, ServerThread, free_port
from .support import FIXTURES, needs_fixtures


def up(name: str, **fields: Any) -> Upstream:
    return Upstream(name, "openai-completions", "http://127.0.0.1:9", **fields)


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after": "1.5"}) == 1.5
    assert retry_after({"retry-after": "Thu, 01 Jan 2026 00:00:10 GMT"}, now=1767225600.0) == 10
    assert retry_after({"retry-after": "Thu, 01 Jan 2026 00:00:10 GMT"}, now=1767225700.0) == 0
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({"retry-after": "nan"}) is None
    assert retry_after({}) is None


def test_the_delay_is_jittered_backoff_never_shorter_than_retry_after() -> None:
    tries = Tries(up("a", retries=3, backoff=1.0), random.Random(1), Health())
    busy = GatewayError(503, "busy")
    delays = []
    for n in range(3):
        delay = tries.delay(busy)
        assert delay is not None and 0 <= delay <= 2**n
        delays.append(delay)
        tries._retried += 1
    assert tries.delay(busy) is None  # retries spent
    assert len(set(delays)) == 3
    fresh = Tries(up("a", retries=1, backoff=0.01), random.Random(1), Health())
    assert fresh.delay(GatewayError(429, "slow", headers={"retry-after": "2"})) == 2.0
    long_wait = GatewayError(429, "later", headers={"retry-after": str(MAX_WAIT + 1)})
    assert fresh.delay(long_wait) is None  # the next upstream rather than a long wait
    assert fresh.delay(GatewayError(400, "bad")) is None
    assert fresh.delay(GatewayError(502, "unreachable")) is not None  # a connection error
    assert fresh.delay(GatewayError(504, "no answer in time")) is not None
    assert Tries(up("b"), health=Health()).delay(busy) is None  # retries default to 0


def test_a_request_seeds_no_generator_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The jitter of every request comes from one generator seeded once:
    seeding one per request reads OS entropy each time."""
    seeded: list[object] = []

    class Counted(random.Random):
        def seed(self, *args: Any, **kw: Any) -> None:
            seeded.append(args)
            super().seed(*args, **kw)

    monkeypatch.setattr(random, "Random", Counted)
    busy = GatewayError(503, "busy")
    delays = [
        Tries(up("a", retries=1, backoff=1.0), health=Health()).delay(busy) for _ in range(50)
    ]
    assert seeded == []
    assert all(d is not None and 0.0 <= d <= 1.0 for d in delays)
    assert len(set(delays)) > 40  # drawn, not one value for all


def test_weights_share_the_first_place_and_cooling_upstreams_go_last() -> None:
    rng = random.Random(7)
    pair = [up("heavy", weight=3), up("light")]
    firsts = [balance(pair, rng, Health())[0].name for _ in range(4000)]
    assert 0.72 < firsts.count("heavy") / 4000 < 0.78
    assert [u.name for u in balance([up("x"), up("y")], rng, Health())] == ["x", "y"]
    health = Health()
    flaky = up("flaky", cooldown=60)
    for _ in range(3):
        health.failed(flaky)
    assert health.cooling(flaky)
    assert [u.name for u in balance([flaky, up("steady")], rng, health)] == ["steady", "flaky"]
    health.succeeded(flaky)
    assert not health.cooling(flaky)
    never = up("never", cooldown=0)
    for _ in range(5):
        health.failed(never)
    assert not health.cooling(never)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"retries": -1}, "retries: a whole number from 0 to 10"),
        ({"retries": 11}, "retries: a whole number from 0 to 10"),
        ({"backoff": "1"}, "backoff: a number of seconds"),
        ({"cooldown": -1}, "cooldown: a number of seconds"),
        ({"weight": 0}, "weight: a positive number"),
    ],
)
def test_the_retry_settings_are_checked(table: dict[str, Any], message: str) -> None:
    data = _config("http://127.0.0.1:9", table)
    with pytest.raises(ValueError, match=f"upstreams.flaky.{message}"):
        parse_config(data, {})


# -- through the gateway -----------------------------------------------------------


class Flaky:
    """An upstream that answers ``status`` (with ``retry_after``) ``fails``
    times, then a recorded Chat Completions answer; counts its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.fails = 0
        self.status = 503
        self.retry_after: str | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        self.calls += 1
        if self.calls <= self.fails:
            headers = [(b"content-type", b"application/json")]
            if self.retry_after is not None:
                headers.append((b"retry-after", self.retry_after.encode()))
            body = json.dumps({"error": {"message": "overloaded", "type": "server_error"}})
            await send({"type": "http.response.start", "status": self.status, "headers": headers})
            await send({"type": "http.response.body", "body": body.encode()})
            return
        data = (FIXTURES / "responses/openai-completions/c01_text_basic.json").read_bytes()
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": data})

    def reset(self, fails: int, status: int = 503, retry_after: str | None = None) -> None:
        self.calls, self.fails, self.status, self.retry_after = 0, fails, status, retry_after


def _config(flaky_url: str, flaky: dict[str, Any], backup_url: str | None = None) -> Any:
    ups = {
        "flaky": {"api": "openai-completions", "base_url": flaky_url, **flaky},
        "backup": {"api": "openai-completions", "base_url": backup_url or flaky_url},
    }
    return {
        "gateway": {"keys_env": "GW"},
        "upstreams": ups,
        "routes": [{"models": "m", "upstreams": ["flaky", "backup"]}],
    }


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[Flaky, Flaky, str, str]]:
    flaky, backup = Flaky(), Flaky()
    with ServerThread(flaky) as a, ServerThread(backup) as b:
        yield flaky, backup, a.url, b.url


def _ask(url: str) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    headers = {"authorization": f"Bearer {GATEWAY_KEY}"}
    return httpx.post(url + "/v1/chat/completions", json=body, headers=headers, timeout=30)


def _gateway(servers: tuple[Flaky, Flaky, str, str], **flaky: Any) -> ServerThread:
    config = parse_config(_config(servers[2], flaky, servers[3]), {"GW": GATEWAY_KEY})
    return ServerThread(create_app(config), port=free_port())


@needs_fixtures
def test_a_failing_upstream_is_retried_before_the_fallback(
    servers: tuple[Flaky, Flaky, str, str],
) -> None:
    flaky, backup, _, _ = servers
    with _gateway(servers, retries=2, backoff=0.01) as gw:
        for status in (503, 429, 529, 500):
            flaky.reset(fails=2, status=status)
            backup.reset(fails=0)
            assert _ask(gw.url).status_code == 200
            assert (flaky.calls, backup.calls) == (3, 0), status
        flaky.reset(fails=3)
        assert _ask(gw.url).status_code == 200
        assert (flaky.calls, backup.calls) == (3, 1)
        flaky.reset(fails=5, status=400)  # not retried: the client's own error
        assert _ask(gw.url).status_code == 400 and flaky.calls == 1


@needs_fixtures
def test_retry_after_is_waited_for(servers: tuple[Flaky, Flaky, str, str]) -> None:
    flaky, backup, _, _ = servers
    with _gateway(servers, retries=1, backoff=0.01) as gw:
        flaky.reset(fails=1, status=429, retry_after="1")
        backup.reset(fails=0)
        started = time.monotonic()
        assert _ask(gw.url).status_code == 200
        assert time.monotonic() - started >= 1.0 and (flaky.calls, backup.calls) == (2, 0)
        flaky.reset(fails=1, status=429, retry_after="3600")
        started = time.monotonic()
        assert _ask(gw.url).status_code == 200
        assert time.monotonic() - started < 1.0 and (flaky.calls, backup.calls) == (1, 1)


@needs_fixtures
def test_an_upstream_that_keeps_failing_cools_down(servers: tuple[Flaky, Flaky, str, str]) -> None:
    flaky, backup, _, _ = servers
    with _gateway(servers, cooldown=60) as gw:
        flaky.reset(fails=100)
        backup.reset(fails=0)
        for _ in range(3):
            assert _ask(gw.url).status_code == 200
        assert (flaky.calls, backup.calls) == (3, 3)
        assert _ask(gw.url).status_code == 200
        assert (flaky.calls, backup.calls) == (3, 4)  # the backup first now
