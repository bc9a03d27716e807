"""The gateway against upstreams that fail after the 200: what is released,
what is logged, how soon a finished answer ends (docs/gateway.md, Reliability).

The app is driven in process (``fuzz/gateway.py``) against a raw HTTP server
on 127.0.0.1 that can hold a connection open after its last byte, flood, or
stall mid-body.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fuzz.gateway import Fault, Harness, MisbehavingUpstream

from streamnorm.gateway import proxy
from streamnorm.gateway.telemetry import LOGGER

CHAT = "openai-completions"
JSON = [(b"content-type", b"application/json")]


@pytest.fixture(scope="module")
def upstream() -> Iterator[MisbehavingUpstream]:
    with MisbehavingUpstream() as up:
        yield up


@pytest.fixture(autouse=True)
def _fresh(upstream: MisbehavingUpstream) -> None:
    upstream.seen.clear()
    upstream.queue.clear()
    upstream.fault = Fault()


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(record.getMessage()))


@pytest.fixture
def log_lines() -> Iterator[list[dict[str, Any]]]:
    """The gateway's log lines of the test, as JSON."""
    handler = _Lines()
    LOGGER.addHandler(handler)
    level = LOGGER.level
    LOGGER.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        LOGGER.removeHandler(handler)
        LOGGER.setLevel(level)


def body(api: str, model: str, *, stream: bool) -> bytes:
    if api == "anthropic-messages":
        data: dict[str, Any] = {"max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    elif api == "openai-responses":
        data = {"input": "hi", "store": False}
    elif api == "openai-completions":
        data = {"messages": [{"role": "user", "content": "hi"}]}
    else:
        return json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}).encode()
    return json.dumps({**data, "model": model, "stream": stream}).encode()


def closed_by_gateway(upstream: MisbehavingUpstream) -> bool:
    """Whether the gateway soon closes the upstream's last connection (a
    bounded wait: the upstream holds it open until then)."""
    deadline = time.monotonic() + 5.0
    while upstream.seen[-1].closed_at is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return upstream.seen[-1].closed_at is not None


# -- a whole answer whose read fails ----------------------------------------------


@pytest.mark.parametrize("client", ["aiohttp", "httpx"])
@pytest.mark.parametrize("end", ["hang", "flood"])
def test_a_whole_answer_that_fails_mid_body_releases_the_upstream_connection(
    upstream: MisbehavingUpstream, monkeypatch: pytest.MonkeyPatch, client: str, end: str
) -> None:
    """The upstream stalls (504) or sends past the response limit (502) in
    the middle of a non-streaming answer: its connection is closed then,
    not left to the pool or the garbage collector."""
    monkeypatch.setattr(proxy, "MAX_RESPONSE_BYTES", 256 * 1024)
    harness = Harness(upstream.url, upstream_client=client)
    try:
        upstream.fault = Fault(headers=JSON, chunks=[b'{"id": "chatcmpl-1", "choices": ['], end=end)
        model = f"{CHAT}.m"
        answer = harness.call(CHAT, model, body(CHAT, model, stream=False), stream=False)
        assert answer.status == (504 if end == "hang" else 502), answer.body
        assert closed_by_gateway(upstream)
    finally:
        harness.close()
