"""The gateway against upstreams that fail after the 200: what is released,
what is logged, how soon a finished answer ends (docs/gateway.md, Reliability).

The app is driven in process (``fuzz/gateway.py``) against a raw HTTP server
on 127.0.0.1 that can hold a connection open after its last byte, flood, or
stall mid-body.
"""

from __future__ import annotations

import gc
import json
import logging
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz.gateway import UPSTREAM_KEYS, Fault, Harness, MisbehavingUpstream

from streamnorm import Done, normalize
from streamnorm.gateway import proxy
from streamnorm.gateway.telemetry import LOGGER

from .gateway_support import sse_events
from .support import FIXTURES, needs_fixtures

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


@pytest.mark.parametrize("client", ["builtin", "aiohttp", "httpx"])
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


# -- the log line of a stream that failed after the 200 ------------------------------


_OVERLOADED = (
    b"event: message_start\ndata: "
    + json.dumps(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-x",
                "content": [],
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        }
    ).encode()
    + b"\n\nevent: error\ndata: "
    + json.dumps(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    ).encode()
    + b"\n\n"
)
_FAULTS = {
    "limit": (
        Fault(chunks=[_OVERLOADED.split(b"event: error")[0]], end="flood"),
        "max_stream_bytes",
    ),
    "error event": (Fault(chunks=[_OVERLOADED]), "Overloaded"),
    "not a stream": (Fault(chunks=[b"<html>502 Bad Gateway</html>"]), "not a stream"),
    "cut": (Fault(chunks=[_OVERLOADED.split(b"event: error")[0]]), "ended before"),
}


@pytest.mark.parametrize("client", ["anthropic-messages", CHAT])
@pytest.mark.parametrize("fault", list(_FAULTS))
def test_a_stream_refused_after_the_200_names_its_error_in_the_log_line(
    upstream: MisbehavingUpstream, log_lines: list[dict[str, Any]], client: str, fault: str
) -> None:
    """The client gets its API's error event after the 200; the log line
    (and so the trace) says why, not ``error: null``."""
    harness = Harness(upstream.url, timeout=5.0, max_stream_bytes=256 * 1024)
    try:
        upstream.fault, reason = _FAULTS[fault]
        model = "anthropic-messages.m"
        answer = harness.call(client, model, body(client, model, stream=True), stream=True)
    finally:
        harness.close()
    assert answer.status == 200 and answer.ended
    (line,) = [line for line in log_lines if line["model"] == model]
    assert line["status"] == 200
    assert line["error"] is not None and reason in line["error"], line
    assert line["finish_reason"] == "error"


def test_an_upstream_key_in_a_stream_error_stays_out_of_the_log_line(
    upstream: MisbehavingUpstream, log_lines: list[dict[str, Any]]
) -> None:
    key = UPSTREAM_KEYS["anthropic-messages"]
    upstream.fault = Fault(chunks=[_OVERLOADED.replace(b"Overloaded", f"bad key {key}".encode())])
    harness = Harness(upstream.url)
    try:
        model = "anthropic-messages.m"
        api = "anthropic-messages"
        answer = harness.call(api, model, body(api, model, stream=True), stream=True)
    finally:
        harness.close()
    assert answer.status == 200 and key.encode() not in answer.body
    (line,) = [line for line in log_lines if line["model"] == model]
    assert line["error"] == "bad key ***"


# -- max_stream_seconds -------------------------------------------------------------


def _chat_chunk(text: str) -> bytes:
    chunk = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
    }
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


@pytest.mark.parametrize("client", [CHAT, "anthropic-messages"])
def test_a_trickling_stream_ends_at_max_stream_seconds(
    upstream: MisbehavingUpstream, log_lines: list[dict[str, Any]], client: str
) -> None:
    """An upstream that sends a little now and then, never silent for its
    ``timeout``, is ended at ``max_stream_seconds``: the client gets its
    API's error event and the upstream is closed, long before the trickle
    would have ended (200 chunks, 0.05 s apart)."""
    harness = Harness(upstream.url, timeout=5.0, max_stream_seconds=0.5)
    try:
        upstream.fault = Fault(chunks=[_chat_chunk("a")] * 200, pause=0.05)
        model = f"{CHAT}.m"
        answer = harness.call(client, model, body(client, model, stream=True), stream=True)
        assert closed_by_gateway(upstream)
    finally:
        harness.close()
    assert answer.status == 200 and answer.ended
    assert b"max_stream_seconds" in answer.body.rsplit(b"data: ", 1)[-1]
    assert upstream.seen[-1].sent < 150 * len(_chat_chunk("a"))
    (line,) = [line for line in log_lines if line["model"] == model]
    assert "max_stream_seconds" in line["error"]


def test_a_whole_answer_past_max_stream_seconds_is_a_504(upstream: MisbehavingUpstream) -> None:
    harness = Harness(upstream.url, timeout=5.0, max_stream_seconds=0.5)
    try:
        upstream.fault = Fault(headers=JSON, chunks=[b" "] * 200, pause=0.05)
        model = f"{CHAT}.m"
        answer = harness.call(CHAT, model, body(CHAT, model, stream=False), stream=False)
        assert closed_by_gateway(upstream)
    finally:
        harness.close()
    assert answer.status == 504
    assert "max_stream_seconds" in json.loads(answer.body)["error"]["message"]


# -- a Gemini SSE stream that stalls after its last chunk -----------------------------

GEMINI = "google-generative-ai"


@pytest.fixture(scope="module")
def patient(upstream: MisbehavingUpstream) -> Iterator[Harness]:
    """Upstream timeout 30 s: a call ends before it only if the gateway ends
    the stream itself (``Harness.call`` fails the test after 10 s)."""
    harness = Harness(upstream.url, timeout=30.0)
    yield harness
    harness.close()


@needs_fixtures
@pytest.mark.parametrize("stem", ["text-basic", "function-call-partial-args", "max-tokens"])
@pytest.mark.parametrize("client", [GEMINI, "anthropic-messages", CHAT, "openai-responses"])
def test_a_gemini_stream_ends_at_its_last_chunk_while_the_upstream_stalls(
    patient: Harness, upstream: MisbehavingUpstream, client: str, stem: str
) -> None:
    """Gemini sends no terminal event: its last chunk is the one with the
    finish reason. The client gets the whole answer, ended, and the upstream
    is closed, though it holds the connection open (it used to last until
    the upstream's ``timeout``), on the passthrough and translated routes."""
    data = (FIXTURES / GEMINI / f"{stem}.sse").read_bytes()
    upstream.fault = Fault(chunks=sse_events(data), end="hang")
    model = f"{GEMINI}.m"
    answer = patient.call(client, model, body(client, model, stream=True), stream=True)
    assert answer.status == 200 and answer.ended
    assert closed_by_gateway(upstream)
    if client == GEMINI:
        assert answer.body == data
    wanted = list(normalize([data], GEMINI))[-1]
    got = list(normalize([answer.body], client))[-1]
    assert isinstance(wanted, Done) and isinstance(got, Done), got
    assert got.message.stop_reason is wanted.message.stop_reason
    assert got.message.usage.output_tokens == wanted.message.usage.output_tokens


@needs_fixtures
def test_a_gemini_stream_of_several_candidates_is_not_cut_at_the_first_finish(
    patient: Harness, upstream: MisbehavingUpstream
) -> None:
    """With a second candidate in the stream, the first one's finish reason
    does not end a passthrough stream: the other's chunks still come."""
    a, b = ({"content": {"parts": [{"text": t}]}, "index": i} for i, t in enumerate("ab"))
    first = {"candidates": [a, b]}
    other = {"candidates": [b]}
    done = {"candidates": [{**a, "finishReason": "STOP"}, b]}
    late = {
        "candidates": [{"content": {"parts": [{"text": "c"}]}, "index": 1, "finishReason": "STOP"}]
    }
    chunks = [b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in (first, other, done, late)]
    upstream.fault = Fault(chunks=chunks, end="end", pause=0.05)
    model = f"{GEMINI}.m"
    answer = patient.call(GEMINI, model, body(GEMINI, model, stream=True), stream=True)
    assert answer.status == 200 and answer.ended
    assert answer.body == b"".join(chunks)


# -- memory held by a passthrough stream ----------------------------------------------

#: The recorded text answers grown here, and where their text is.
_GROWN: dict[str, tuple[str, Callable[[Any], Any], str]] = {
    "anthropic-messages": ("text-basic", lambda p: p.get("delta", {}), "text"),
    "openai-completions": (
        "openai-text-include-usage",
        lambda p: (p.get("choices") or [{}])[0].get("delta", {}),
        "content",
    ),
    "openai-responses": (
        "text-basic",
        lambda p: p if p.get("type") == "response.output_text.delta" else {},
        "delta",
    ),
    "google-generative-ai": (
        "text-basic",
        lambda p: ((p.get("candidates") or [{}])[0].get("content") or {"parts": [{}]})["parts"][0],
        "text",
    ),
}
_PIECE = 4096  # characters of text a grown event carries


def _grown(api: str, size: int) -> tuple[bytes, list[bytes]]:
    """A recorded text answer of ``api`` and its chunks with ``size`` more
    characters of text: copies of its first text event carrying
    :data:`_PIECE` characters each, right after it (the same copy object:
    the upstream holds one)."""
    stem, where, key = _GROWN[api]
    data = (FIXTURES / api / f"{stem}.sse").read_bytes()
    events = sse_events(data)
    for i, event in enumerate(events):
        lines = event.split(b"\n")
        at = next(j for j, line in enumerate(lines) if line.startswith(b"data:"))
        payload = json.loads(lines[at][5:])
        part = where(payload) if isinstance(payload, dict) else {}
        if isinstance(part.get(key), str) and part[key]:
            part[key] = "x" * _PIECE
            lines[at] = b"data: " + json.dumps(payload).encode()
            copy = b"\n".join(lines)
            return data, [*events[: i + 1], *[copy] * (size // _PIECE), *events[i + 1 :]]
    raise AssertionError(f"no text event in {api}/{stem}")


def _peak_of(harness: Harness, api: str, chunks: list[bytes], upstream: Any) -> tuple[int, Any]:
    """The most memory traced while one passthrough stream of ``chunks`` is
    relayed, and the answer (its last bytes)."""
    upstream.fault = Fault(chunks=chunks)
    model = f"{api}.m"
    request = body(api, model, stream=True)
    gc.collect()
    tracemalloc.start()
    try:
        answer = harness.call(api, model, request, stream=True, keep=4096)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, answer


@needs_fixtures
@pytest.mark.parametrize("api", list(_GROWN))
def test_a_passthrough_stream_holds_no_more_memory_for_a_longer_answer(
    upstream: MisbehavingUpstream, log_lines: list[dict[str, Any]], api: str
) -> None:
    """The relay reads a passthrough stream only to count it: the memory it
    holds does not grow with the answer (it used to keep every character
    of text, twice over at its end). From a 1 MB to a 16 MB answer the
    peak grows by less than one byte in eight of the larger answer (it grew
    by two bytes in one: 2.2 MB to 17 MB for 1 and 8 MB). The log line's
    usage and finish reason are the recorded answer's."""
    harness = Harness(upstream.url, timeout=5.0, max_stream_bytes=64 * 1024 * 1024)
    try:
        harness.call(api, f"{api}.m", body(api, f"{api}.m", stream=True), stream=True)  # warm
        data, small = _grown(api, 1 << 20)
        peak_small, answer = _peak_of(harness, api, small, upstream)
        peak_large, _ = _peak_of(harness, api, _grown(api, 16 << 20)[1], upstream)
    finally:
        harness.close()
    assert answer.status == 200 and answer.ended
    assert answer.body == b"".join(small)[-4096:]  # the end, as the upstream sent it
    assert peak_large - peak_small < (15 << 20) / 8, (peak_small, peak_large)
    wanted = list(normalize([data], api))[-1]
    assert isinstance(wanted, Done)
    usage = wanted.message.usage
    for line in [line for line in log_lines if line["model"] == f"{api}.m"][1:]:
        assert line["error"] is None and line["finish_reason"] == wanted.message.stop_reason.value
        assert (line["input_tokens"], line["output_tokens"]) == (
            usage.input_tokens,
            usage.output_tokens,
        )
        assert line["usage_reported"] is usage.reported


@needs_fixtures
def test_a_stored_passthrough_answer_keeps_its_content(
    upstream: MisbehavingUpstream, tmp_path: Path
) -> None:
    """A Responses stream kept in the store (``store`` true) is the one
    passthrough stream whose whole message is used: the next turn's
    history carries its text."""
    api = "openai-responses"
    data = (FIXTURES / api / "text-basic.sse").read_bytes()
    done = list(normalize([data], api))[-1]
    assert isinstance(done, Done)
    harness = Harness(upstream.url, store=str(tmp_path / "store.sqlite3"))
    try:
        model = f"{api}.m"
        first = {"model": model, "input": "hi", "stream": True, "store": True}
        upstream.fault = Fault(chunks=sse_events(data))
        answer = harness.call(api, model, json.dumps(first).encode(), stream=True)
        assert answer.status == 200
        upstream.fault = Fault(chunks=sse_events(data))
        second = {**first, "input": "and then?", "previous_response_id": done.message.response_id}
        assert harness.call(api, model, json.dumps(second).encode(), stream=True).status == 200
    finally:
        harness.close()
    sent = json.loads(upstream.seen[-1].body)
    said = [i for i in sent["input"] if i.get("role") == "assistant"]
    assert said and json.dumps(said).count(done.message.text) == 1, said
