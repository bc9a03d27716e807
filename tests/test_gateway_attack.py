"""The gateway against a misbehaving upstream: what flows back to the client.

The app is driven in process through its ASGI interface (``fuzz/gateway.py``)
against a raw HTTP server on 127.0.0.1 that answers with any status line,
any headers, any bytes, and then ends, drops the connection, holds it open
or floods. Each test reproduces one way an upstream answer used to go wrong
for the client: a key echoed after the 200, an error body taken for an empty
answer, an error appended to a complete stream, an upstream read past the
end, a corrupt gzip body, an impossible status, a non-stream 200, a model
name too long for a URL, nesting deeper than Python's recursion limit, a
duplicate ``model`` key.
"""

from __future__ import annotations

import gzip
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fuzz.gateway import (
    STREAM_LIMIT,
    UPSTREAM_KEYS,
    Answer,
    Fault,
    Harness,
    MisbehavingUpstream,
)

from streamnorm import Done, Error, normalize
from streamnorm.gateway.errors import Redactor

from .gateway_support import sse_events, sse_to_json_array
from .support import FIXTURES, needs_fixtures

APIS = list(UPSTREAM_KEYS)
TEXT = {
    "anthropic-messages": "text-basic",
    "openai-responses": "text-basic",
    "openai-completions": "openai-text-include-usage",
    "google-generative-ai": "text-basic",
}
#: An API other than the key's, for the cross-API routes.
OTHER = {
    "anthropic-messages": "openai-completions",
    "openai-responses": "anthropic-messages",
    "openai-completions": "anthropic-messages",
    "google-generative-ai": "openai-responses",
}
SSE = [(b"content-type", b"text/event-stream")]
JSON = [(b"content-type", b"application/json")]
#: The patient harness's upstream timeout, in seconds.
PATIENCE = 30.0


@pytest.fixture(scope="module")
def upstream() -> Iterator[MisbehavingUpstream]:
    with MisbehavingUpstream() as up:
        yield up


@pytest.fixture(scope="module")
def gateway(upstream: MisbehavingUpstream) -> Iterator[Harness]:
    """Upstream timeout 0.5 s: a stall ends soon."""
    harness = Harness(upstream.url)
    yield harness
    harness.close()


@pytest.fixture(scope="module")
def patient(upstream: MisbehavingUpstream) -> Iterator[Harness]:
    """Upstream timeout 30 s: an answer well before it did not wait for it."""
    harness = Harness(upstream.url, timeout=PATIENCE)
    yield harness
    harness.close()


@pytest.fixture(autouse=True)
def _fresh(upstream: MisbehavingUpstream) -> None:
    upstream.seen.clear()
    upstream.queue.clear()
    upstream.fault = Fault()


def body(api: str, model: str, *, stream: bool, **extra: Any) -> bytes:
    if api == "anthropic-messages":
        data: dict[str, Any] = {"max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    elif api == "openai-responses":
        data = {"input": "hi"}
    elif api == "openai-completions":
        data = {"messages": [{"role": "user", "content": "hi"}]}
    else:
        return json.dumps(
            {"contents": [{"role": "user", "parts": [{"text": "hi"}]}], **extra}
        ).encode()
    return json.dumps({**data, "model": model, "stream": stream, **extra}).encode()


def call(harness: Harness, client: str, up: str, *, stream: bool, sse: bool = True) -> Answer:
    model = f"{up}.m"
    return harness.call(client, model, body(client, model, stream=stream), stream=stream, sse=sse)


def recorded(api: str) -> bytes:
    return (FIXTURES / api / f"{TEXT[api]}.sse").read_bytes()


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def last_event(api: str, data: bytes) -> Any:
    return list(normalize([data], api))[-1]


def error_message(api: str, raw: bytes) -> str:
    """The message of an error body, asserting it has ``api``'s error shape."""
    data = json.loads(raw)
    if api == "anthropic-messages":
        assert data["type"] == "error" and set(data["error"]) == {"type", "message"}, data
    elif api == "google-generative-ai":
        assert set(data["error"]) == {"code", "message", "status"}, data
    else:
        assert {"message", "type", "param", "code"} <= set(data["error"]), data
    return str(data["error"]["message"])


# -- item 5: no upstream key in any response byte ------------------------------


def test_the_redactor_cuts_a_secret_however_the_chunks_split_it() -> None:
    secret = "sk-SECRET-0123456789"
    data = f"data: key {secret} and again {secret}{secret} sk-SEC end sk-SE".encode()
    want = data.replace(secret.encode(), b"***")
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1, 3):
            redactor = Redactor([secret, "other-key"])
            out = redactor.feed(data[:i]) + redactor.feed(data[i:j]) + redactor.feed(data[j:])
            assert out + redactor.close() == want, (i, j)
    one = Redactor([secret])
    assert b"".join(one.feed(data[k : k + 1]) for k in range(len(data))) + one.close() == want


def test_the_redactor_holds_back_only_what_could_start_a_secret() -> None:
    redactor = Redactor(["sk-SECRET"])
    assert redactor.feed(b"data: {}\n\n") == b"data: {}\n\n"
    assert redactor.feed(b"tail sk-S") == b"tail "
    assert redactor.feed(b"ECRET!") == b"***!"


def _in_stream_error(api: str, key: str) -> bytes:
    if api == "anthropic-messages":
        error = {"type": "error", "error": {"type": "authentication_error", "message": key}}
        return b"event: error\ndata: " + json.dumps(error).encode() + b"\n\n"
    if api == "openai-responses":
        event = {"type": "error", "code": "invalid_api_key", "message": key, "sequence_number": 3}
        return b"event: error\ndata: " + json.dumps(event).encode() + b"\n\n"
    return b"data: " + _error_body(api, key) + b"\n\n"


def _error_body(api: str, key: str) -> bytes:
    message = f"Incorrect API key provided: {key}"
    if api == "anthropic-messages":
        return json.dumps(
            {"type": "error", "error": {"type": "authentication_error", "message": message}}
        ).encode()
    if api == "google-generative-ai":
        return json.dumps(
            {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}
        ).encode()
    return json.dumps(
        {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    ).encode()


@needs_fixtures
@pytest.mark.parametrize("up", APIS)
@pytest.mark.parametrize("client", APIS)
def test_a_key_echoed_in_a_stream_after_the_200_never_reaches_the_client(
    gateway: Harness, upstream: MisbehavingUpstream, client: str, up: str
) -> None:
    key = UPSTREAM_KEYS[up]
    events = sse_events(recorded(up))
    data = b"".join(events[:2]) + _in_stream_error(up, key)
    upstream.fault = Fault(chunks=pieces(data, 7))
    answer = call(gateway, client, up, stream=True)
    assert answer.status == 200 and answer.ended
    assert key.encode() not in answer.all_bytes()
    if client == up:  # passed through: the message is kept, the key cut out
        assert b"***" in answer.body
    assert isinstance(last_event(client, answer.body), Error)


@needs_fixtures
@pytest.mark.parametrize("up", APIS)
@pytest.mark.parametrize("client", APIS)
def test_a_key_echoed_in_a_200_error_body_never_reaches_the_client(
    gateway: Harness, upstream: MisbehavingUpstream, client: str, up: str
) -> None:
    key = UPSTREAM_KEYS[up]
    upstream.fault = Fault(headers=JSON, chunks=pieces(_error_body(up, key), 5))
    answer = call(gateway, client, up, stream=False)
    assert answer.ended and key.encode() not in answer.all_bytes()
    assert b"***" in answer.body


# -- item 6: a 200 error body is an error, never an empty answer ------------------


@pytest.mark.parametrize("client", APIS)
def test_a_200_error_body_on_a_translated_route_is_an_error_in_the_clients_format(
    gateway: Harness, upstream: MisbehavingUpstream, client: str
) -> None:
    up = OTHER[client]
    upstream.fault = Fault(headers=JSON, chunks=[_error_body(up, "overloaded, try later")])
    answer = call(gateway, client, up, stream=False)
    assert answer.status == 502
    assert "overloaded, try later" in error_message(client, answer.body)


# -- items 7 and 8: a complete stream ends at its end -------------------------------


@needs_fixtures
@pytest.mark.parametrize("end", ["drop", "hang"])
@pytest.mark.parametrize("api", ["anthropic-messages", "openai-responses", "openai-completions"])
def test_a_complete_passthrough_stream_gets_nothing_after_its_end_and_ends_at_once(
    patient: Harness, upstream: MisbehavingUpstream, api: str, end: str
) -> None:
    data = recorded(api)
    upstream.fault = Fault(chunks=sse_events(data), end=end)
    started = time.monotonic()
    answer = call(patient, api, api, stream=True)
    assert answer.status == 200 and answer.ended
    assert answer.body == data
    assert isinstance(last_event(api, answer.body), Done)
    assert answer.seconds < PATIENCE / 2  # not the upstream's timeout
    _closed_soon(upstream, started)


def _closed_soon(upstream: MisbehavingUpstream, started: float) -> None:
    """The gateway closed the upstream itself: long before the upstream
    timeout could have (half of it leaves room for a loaded machine)."""
    deadline = started + PATIENCE / 2
    while upstream.seen[-1].closed_at is None and time.monotonic() < deadline:
        time.sleep(0.01)
    closed_at = upstream.seen[-1].closed_at
    assert closed_at is not None and closed_at - started < PATIENCE / 2


@needs_fixtures
@pytest.mark.parametrize("client", ["openai-completions", "google-generative-ai"])
def test_a_translated_stream_ends_at_the_upstreams_terminal_event(
    patient: Harness, upstream: MisbehavingUpstream, client: str
) -> None:
    upstream.fault = Fault(chunks=sse_events(recorded("anthropic-messages")), end="hang")
    started = time.monotonic()
    answer = call(patient, client, "anthropic-messages", stream=True)
    assert answer.status == 200 and answer.ended and answer.seconds < PATIENCE / 2
    assert isinstance(last_event(client, answer.body), Done)
    _closed_soon(upstream, started)


@needs_fixtures
@pytest.mark.parametrize("sse", [True, False])
def test_a_gemini_stream_that_drops_after_its_last_element_stays_whole(
    patient: Harness, upstream: MisbehavingUpstream, sse: bool
) -> None:
    data = recorded("google-generative-ai")
    data = data if sse else sse_to_json_array(data)
    upstream.fault = Fault(chunks=pieces(data, 500), end="drop")
    answer = call(patient, "google-generative-ai", "google-generative-ai", stream=True, sse=sse)
    assert answer.status == 200 and answer.ended
    assert answer.body == data  # nothing after the closing ]
    if not sse:
        assert isinstance(json.loads(answer.body), list)


@needs_fixtures
@pytest.mark.parametrize("client", ["anthropic-messages", "openai-completions"])
def test_a_flooding_upstream_is_closed_at_the_stream_limit(
    patient: Harness, upstream: MisbehavingUpstream, client: str
) -> None:
    """Past max_stream_bytes the client gets its error event at once and the
    gateway stops reading (it used to read the whole flood)."""
    events = sse_events(recorded("anthropic-messages"))
    upstream.fault = Fault(chunks=events[:3], end="flood")
    started = time.monotonic()
    answer = call(patient, client, "anthropic-messages", stream=True)
    assert answer.status == 200 and answer.ended
    error = last_event(client, answer.body)
    assert isinstance(error, Error) and "max_stream_bytes" in error.reason
    _closed_soon(upstream, started)
    assert upstream.seen[-1].sent < 40 * STREAM_LIMIT


# -- item 9: corrupt gzip, impossible statuses, long names, deep nesting ----------


GARBAGE_GZIP = [(b"content-encoding", b"gzip"), *SSE]


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("client", ["anthropic-messages", "openai-completions"])
def test_a_corrupt_gzip_body_is_a_502_in_the_clients_format(
    gateway: Harness, upstream: MisbehavingUpstream, client: str, stream: bool
) -> None:
    upstream.fault = Fault(headers=GARBAGE_GZIP, chunks=[b"this is not gzip at all" * 4])
    answer = call(gateway, client, "openai-completions", stream=stream)
    assert answer.status == 502 and answer.ended
    assert "decoded" in error_message(client, answer.body)


@needs_fixtures
def test_after_a_corrupt_gzip_body_the_next_fallback_is_tried(
    gateway: Harness, upstream: MisbehavingUpstream
) -> None:
    data = recorded("openai-completions")
    upstream.queue = [Fault(headers=GARBAGE_GZIP, chunks=[b"\x1f\x8b broken" * 8])]
    upstream.fault = Fault(chunks=sse_events(data))
    model = "fallback.m"
    answer = gateway.call(
        "openai-completions", model, body("openai-completions", model, stream=True), stream=True
    )
    assert answer.status == 200 and answer.body == data
    assert len(upstream.seen) == 2


@needs_fixtures
@pytest.mark.parametrize("client", ["anthropic-messages", "openai-completions"])
def test_gzip_that_breaks_mid_stream_ends_with_an_error_event(
    gateway: Harness, upstream: MisbehavingUpstream, client: str
) -> None:
    packed = gzip.compress(recorded("openai-completions"), compresslevel=1)
    half = len(packed) // 2
    upstream.fault = Fault(
        headers=GARBAGE_GZIP, chunks=[packed[:half], b"\xff" * 64 + packed[half:]], pause=0.2
    )
    answer = call(gateway, client, "openai-completions", stream=True)
    assert answer.status == 200 and answer.ended
    assert isinstance(last_event(client, answer.body), Error)
    if client == "openai-completions":  # passed through: the gateway's own error event
        assert b"could not be decoded" in answer.body


@pytest.mark.parametrize("status", [b"600 Odd", b"999 Odd"])
@pytest.mark.parametrize("client", APIS)
def test_an_upstream_status_outside_the_http_range_is_a_502(
    gateway: Harness, upstream: MisbehavingUpstream, client: str, status: bytes
) -> None:
    upstream.fault = Fault(status=status, headers=JSON, chunks=[b'{"error":{"message":"x"}}'])
    answer = call(gateway, client, "openai-completions", stream=True)
    assert answer.status == 502 and answer.ended
    assert status[:3].decode() in error_message(client, answer.body)


def test_a_model_name_too_long_for_a_url_is_a_400_naming_the_model(
    gateway: Harness, upstream: MisbehavingUpstream
) -> None:
    model = "google-generative-ai." + "a" * 70_000
    raw = body("openai-completions", model, stream=False)
    answer = gateway.call("openai-completions", model, raw, stream=False)
    assert answer.status == 400
    assert json.loads(answer.body)["error"]["param"] == "model"
    assert upstream.seen == []


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@needs_fixtures
@pytest.mark.parametrize("depth", [490, 505])
def test_tool_arguments_nested_past_the_recursion_limit_are_carried(
    gateway: Harness, upstream: MisbehavingUpstream, depth: int
) -> None:
    """Chat client, Anthropic upstream: the history goes through sanitize."""
    answer_body = (FIXTURES / "responses/anthropic-messages/a01_text_simple.json").read_bytes()
    upstream.fault = Fault(headers=JSON, chunks=[answer_body])
    model = "anthropic-messages.m"
    call_ = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": _nested(depth)}}
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "tool_calls": [call_]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    raw = json.dumps({"model": model, "messages": messages}).encode()
    answer = gateway.call("openai-completions", model, raw, stream=False)
    assert answer.status == 200, answer.body[:300]
    sent = json.loads(upstream.seen[-1].body)
    arguments = sent["messages"][1]["content"][0]["input"]
    for _ in range(depth):
        arguments = arguments["a"]
    assert arguments == 1


@needs_fixtures
def test_tool_use_input_nested_past_the_recursion_limit_is_carried(
    gateway: Harness, upstream: MisbehavingUpstream
) -> None:
    """Anthropic client, Chat upstream: nested content of a tool_use block."""
    answer_body = (FIXTURES / "responses/openai-completions").glob("*.json")
    upstream.fault = Fault(headers=JSON, chunks=[sorted(answer_body)[0].read_bytes()])
    model = "openai-completions.m"
    tool_use = '{"type":"tool_use","id":"c1","name":"f","input":' + _nested(505) + "}"
    raw = (
        '{"model":"' + model + '","max_tokens":8,"messages":[{"role":"user","content":"hi"},'
        '{"role":"assistant","content":[' + tool_use + "]},"
        '{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"ok"}]}]}'
    ).encode()
    answer = gateway.call("anthropic-messages", model, raw, stream=False)
    assert answer.status == 200, answer.body[:300]
    assert upstream.seen[-1].body.count(b'\\"a\\":') == 505


# -- item 10: a 200 that is no stream, duplicate keys --------------------------------


HTML = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>\n"


@pytest.mark.parametrize("api", APIS)
def test_a_passthrough_200_that_is_no_stream_is_an_error_event(
    gateway: Harness, upstream: MisbehavingUpstream, api: str
) -> None:
    upstream.fault = Fault(headers=[(b"content-type", b"text/html")], chunks=pieces(HTML, 20))
    answer = call(gateway, api, api, stream=True)
    assert answer.status == 200 and answer.ended
    assert b"<html" not in answer.body
    error = last_event(api, answer.body)
    assert isinstance(error, Error) and "not a stream" in error.reason


def test_a_gemini_array_client_gets_one_json_array_for_a_body_that_is_no_stream(
    gateway: Harness, upstream: MisbehavingUpstream
) -> None:
    upstream.fault = Fault(headers=[(b"content-type", b"text/html")], chunks=[HTML])
    api = "google-generative-ai"
    answer = call(gateway, api, api, stream=True, sse=False)
    data = json.loads(answer.body)
    assert "not a stream" in data[0]["error"]["message"]


@pytest.mark.parametrize("client", ["anthropic-messages", "openai-responses", "openai-completions"])
def test_duplicate_model_keys_are_refused(
    gateway: Harness, upstream: MisbehavingUpstream, client: str
) -> None:
    raw = body(client, "openai-completions.a", stream=False)
    raw = raw[:-1] + b', "model": "anthropic-messages.b"}'
    answer = gateway.call(client, "openai-completions.a", raw, stream=False)
    assert answer.status == 400
    assert error_message(client, answer.body).startswith("model:")
    assert upstream.seen == []


def test_a_duplicate_key_spelled_with_escapes_is_refused(gateway: Harness) -> None:
    raw = b'{"model":"openai-completions.a","messages":[],"mod\\u0065l":"x"}'
    answer = gateway.call("openai-completions", "openai-completions.a", raw, stream=False)
    assert answer.status == 400 and json.loads(answer.body)["error"]["param"] == "model"


def test_the_same_key_nested_is_not_a_duplicate(
    gateway: Harness, upstream: MisbehavingUpstream
) -> None:
    upstream.fault = Fault(headers=JSON, chunks=[_error_body("openai-completions", "x")])
    raw = body("openai-completions", "openai-completions.a", stream=False, metadata={"model": "m"})
    answer = gateway.call("openai-completions", "openai-completions.a", raw, stream=False)
    assert answer.status == 200 and len(upstream.seen) == 1


def test_a_key_echoed_by_an_upstream_count_endpoint_never_reaches_the_client(
    gateway: Harness, upstream: MisbehavingUpstream
) -> None:
    """The count falls back to an estimate; the warning that says why keeps no key."""
    key = UPSTREAM_KEYS["anthropic-messages"]
    upstream.fault = Fault(
        status=b"500 Oops", headers=JSON, chunks=[_error_body("anthropic-messages", key)]
    )
    model = "anthropic-messages.m"
    raw = body("anthropic-messages", model, stream=False)
    answer = gateway.call(
        "anthropic-messages", model, raw, stream=False, path="/v1/messages/count_tokens"
    )
    assert answer.status == 200 and len(upstream.seen) == 1
    assert key.encode() not in answer.all_bytes()
    assert "***" in answer.headers["x-streamnorm-warnings"]


@needs_fixtures
@pytest.mark.parametrize("stream", [True, False])
def test_a_key_echoed_in_the_upstreams_content_type_never_reaches_the_client(
    gateway: Harness, upstream: MisbehavingUpstream, stream: bool
) -> None:
    api = "openai-completions"
    key = UPSTREAM_KEYS[api]
    content_type = b"text/event-stream; charset=utf-8; k=" + key.encode() + b"\xe9\xa0"
    if stream:
        chunks = sse_events(recorded(api))
    else:
        chunks = [sorted((FIXTURES / "responses" / api).glob("*.json"))[0].read_bytes()]
    upstream.fault = Fault(headers=[(b"content-type", content_type)], chunks=chunks)
    answer = call(gateway, api, api, stream=stream)
    assert answer.status == 200 and answer.ended
    assert key.encode() not in answer.all_bytes()
    assert answer.headers["content-type"].startswith("text/event-stream; charset=utf-8; k=***")


@needs_fixtures
def test_a_gemini_array_ends_at_its_closing_bracket_while_the_upstream_stalls(
    patient: Harness, upstream: MisbehavingUpstream
) -> None:
    data = sse_to_json_array(recorded("google-generative-ai"))
    upstream.fault = Fault(chunks=pieces(data, 300), end="hang")
    started = time.monotonic()
    api = "google-generative-ai"
    answer = call(patient, api, api, stream=True, sse=False)
    assert answer.status == 200 and answer.ended and answer.seconds < PATIENCE / 2
    assert answer.body == data
    _closed_soon(upstream, started)
