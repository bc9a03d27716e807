"""Choosing the framing and the api from the first bytes.

* every framing is recognised from its first line (a binary prelude, NDJSON,
  a JSON array, a JSON document, SSE), and each new api from its first
  payload, whatever the chunking;
* a body that is no stream (an HTML page) is refused from its first line,
  without reading the rest;
* an api forced on the bytes of another is a ``protocol`` error that names
  the api the bytes look like, not a truncation;
* ``Start`` is the first event of every stream, error bodies and empty input
  included, and its api is never ``"auto"``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest
from fuzz.check import InvariantError, check

from streamnorm import Done, Error, Start, TextBlock, normalize
from streamnorm.framing import sniff_framing

from .support import (
    assert_chunk_invariant,
    aws_event,
    dicts,
    extra_api_of,
    extra_fixture_paths,
    failed,
    load,
    needs_fixtures,
    run,
    run_bytes,
    split_every,
    terminal,
)

OLLAMA = (
    b'{"model":"m","created_at":"t","message":{"role":"assistant","content":"Hi"},"done":false}\n'
)
OLLAMA_END = (
    b'{"model":"m","created_at":"t","message":{"role":"assistant","content":""},'
    b'"done":true,"done_reason":"stop"}\n'
)
COHERE = (
    b'event: message-start\ndata: {"id":"r","type":"message-start","delta":{"message":{}}}\n\n'
    b'event: message-end\ndata: {"type":"message-end","delta":{"finish_reason":"COMPLETE"}}\n\n'
)
GEMINI = b'[{"candidates":[{"content":{"parts":[{"text":"Hi"}]},"finishReason":"STOP"}]}]'
HTML = b"<!DOCTYPE html>\n<html><body><h1>502 Bad Gateway</h1></body></html>\n"


@pytest.mark.parametrize(
    ("head", "framing"),
    [
        (b"data: {", "sse"),
        (b"event: message_start\n", "sse"),
        (b": keep-alive\n", "sse"),
        (b"\r\n\r\nid: 1\n", "sse"),
        (b"\xef\xbb\xbfdata:", "sse"),
        (b'{"model":"m","done":false}\n', "ndjson"),
        (b'{"error":"model not found"}', None),  # one line so far: may go on
        (b'{\n  "error": {\n', "json"),
        (b"[{", "json-array"),
        (b"  \n[", "json-array"),
        (HTML, "text"),
        (b"\x00\x00\x00\x10" + b"\x00" * 8, "binary"),
        (b"da", None),
    ],
)
def test_sniff_framing(head: bytes, framing: str | None) -> None:
    assert sniff_framing(head, False) == framing


def test_sniff_at_the_end_of_input() -> None:
    assert sniff_framing(b'{"error":"x"}', True) == "ndjson"
    assert sniff_framing(b"da", True) == "sse"  # a field name cut short: a cut stream
    assert sniff_framing(b"hello", True) == "text"
    assert sniff_framing(b"\n\n", True) == "sse"
    assert sniff_framing(b"\x00\x00", True) == "eventstream"  # a prelude cut short


@pytest.mark.parametrize(
    ("data", "api"),
    [
        (OLLAMA + OLLAMA_END, "ollama-chat"),
        (COHERE, "cohere-chat"),
        (GEMINI, "google-generative-ai"),
        (aws_event("messageStart", {"role": "assistant"}), "bedrock-converse-stream"),
    ],
    ids=["ollama", "cohere", "gemini-array", "bedrock"],
)
def test_each_new_api_is_detected_from_its_first_bytes(data: bytes, api: str) -> None:
    events = assert_chunk_invariant(data, api, api)
    assert isinstance(events[0], Start) and events[0].api == api


def _html_page(pulled: list[int], size: int = 50 * 1024 * 1024) -> Iterator[bytes]:
    """A 50 MB HTML page served with HTTP 200, generated lazily."""
    yield HTML
    body = b"<p>" + b"x" * 65_530 + b"</p>\n"
    while pulled[0] < size:
        pulled[0] += len(body)
        yield body


def test_a_page_that_is_no_stream_is_refused_from_its_first_line() -> None:
    pulled = [0]
    events = list(normalize(_html_page(pulled)))
    end = failed(events)
    assert end.kind == "protocol" and "<!DOCTYPE html>" in end.reason
    assert pulled[0] == 0, f"{pulled[0]} bytes read after the first line"
    assert [type(e) for e in events] == [Start, Error]


def test_the_refusal_is_the_same_however_the_page_is_cut() -> None:
    whole = dicts(run([HTML * 3]))
    for size in (1, 2, 7, 50):
        assert dicts(run(split_every(HTML * 3, size))) == whole
    long_line = b"<html>" + b"y" * 500
    assert dicts(run(split_every(long_line, 1))) == dicts(run([long_line]))


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\n\n",
        HTML,
        b'{"error": {"type": "rate_limit_error", "message": "Slow down"}}',
        b'{\n  "error": {\n    "message": "Invalid key",\n    "type": "invalid_request"\n  }\n}\n',
        b'{"error":"model \'x\' not found"}',
        b'[{\n  "error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}\n}]',
        b'data: {"error": {"message": "overloaded"}}\n\n',
    ],
    ids=["empty", "blank", "html", "json", "pretty-json", "ollama", "gemini-array", "sse"],
)
@pytest.mark.parametrize("api", ["auto", "anthropic-messages", "ollama-chat"])
def test_start_is_first_and_names_an_api(body: bytes, api: str) -> None:
    for chunks in ([body], split_every(body, 1)):
        events = run(chunks, api)
        end = terminal(events)
        assert isinstance(events[0], Start), events
        assert events[0].api != "auto" and end.message.api == events[0].api
        if api != "auto":
            assert events[0].api == api
    if b"error" in body:
        assert isinstance(end, Error) and end.kind == "upstream"


def test_error_bodies_name_the_api_their_shape_has() -> None:
    apis = {
        b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}': (
            "anthropic-messages"
        ),
        b'{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}': (
            "google-generative-ai"
        ),
        b'[{"error":{"code":400,"message":"bad"}}]': "google-generative-ai",
        b'{"error":"model not found"}': "ollama-chat",
        b'{"error":{"message":"bad","type":"invalid_request_error"}}': "unknown",
    }
    for body, api in apis.items():
        events = run_bytes(body)
        assert isinstance(events[0], Start) and events[0].api == api, body


def test_a_non_stream_json_body_is_a_protocol_error_naming_it() -> None:
    body = json.dumps(
        {"id": "c", "object": "chat.completion", "choices": [{"message": {"content": "hi"}}]},
        indent=2,
    ).encode()
    end = failed(run_bytes(body))
    assert end.kind == "protocol" and "single JSON document" in end.reason


@needs_fixtures
@pytest.mark.parametrize(
    ("fixture", "forced", "looks_like"),
    [
        ("anthropic-messages/thinking-then-tool-use.sse", "google", "anthropic-messages"),
        ("openai-completions/openai-tool-call.sse", "openai-responses", "openai-completions"),
        ("openai-responses/text-basic.sse", "anthropic", "openai-responses"),
        ("google-generative-ai/text-basic.sse", "cohere", "google-generative-ai"),
    ],
)
def test_forcing_the_wrong_api_is_a_protocol_error_naming_the_right_one(
    fixture: str, forced: str, looks_like: str
) -> None:
    data = load(fixture)
    for chunks in ([data], split_every(data, 1)):
        events = run(chunks, forced)
        end = failed(events)
        assert end.kind == "protocol", end
        assert f"looks like {looks_like}" in end.reason
        assert isinstance(events[0], Start) and events[0].api != looks_like


@pytest.mark.parametrize(
    ("data", "forced", "framing"),
    [
        (COHERE, "ollama", "a server-sent event stream"),
        (OLLAMA + OLLAMA_END, "anthropic", "newline-delimited JSON"),
        (GEMINI, "openai-completions", "a streamed JSON array"),
    ],
)
def test_forcing_an_api_on_another_framing_names_the_framing(
    data: bytes, forced: str, framing: str
) -> None:
    end = failed(run_bytes(data, forced))
    assert end.kind == "protocol" and framing in end.reason


def test_forcing_the_right_api_changes_nothing() -> None:
    for data, api in ((OLLAMA + OLLAMA_END, "ollama"), (COHERE, "cohere"), (GEMINI, "gemini")):
        assert isinstance(terminal(run_bytes(data, api)), Done)


def test_leading_blank_lines_before_any_framing() -> None:
    for data in (OLLAMA + OLLAMA_END, GEMINI, COHERE):
        assert dicts(run_bytes(b"\r\n\n" + data)) == dicts(run_bytes(data))


def test_a_bom_before_ndjson_and_arrays() -> None:
    assert terminal(run_bytes(b"\xef\xbb\xbf" + OLLAMA + OLLAMA_END)).message.content == (
        TextBlock("Hi"),
    )
    assert isinstance(terminal(run_bytes(b"\xef\xbb\xbf" + GEMINI)), Done)


def test_binary_that_is_no_event_stream_is_refused() -> None:
    end = failed(run_bytes(b"\x00\x01\x02\x03" * 10))
    assert end.kind == "protocol" and "binary" in end.reason


_HOSTILE = (b"{", b"}", b"[", b"]", b'"', b"\\", b",", b"\n", b"\r", b"\x00", b"\xff", b"data: ")


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """A byte-level mutation: cut, delete, repeat, insert or swap lines."""
    i, j = sorted(rng.randrange(0, len(data) + 1) for _ in range(2))
    op = rng.randrange(5)
    if op == 0:
        return data[:j]
    if op == 1:
        return data[:i] + data[j:]
    if op == 2:
        return data[:j] + data[i:j] + data[j:]
    if op == 3:
        return data[:i] + rng.choice(_HOSTILE) * rng.randint(1, 3) + data[i:]
    lines = data.split(b"\n")
    a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[a], lines[b] = lines[b], lines[a]
    return b"\n".join(lines)


@needs_fixtures
@pytest.mark.parametrize(
    "folder", ["ollama-chat", "cohere-chat", "gemini-json-array", "mistral-chat"]
)
def test_mutated_recordings_keep_every_invariant(folder: str) -> None:
    """fuzz.check's invariants (one terminal event, Start first, the same
    events for every chunking, no decoder error …) on seeded mutations of
    every recording, read as its api and as auto."""
    rng = random.Random(folder)
    for path in extra_fixture_paths(folder):
        original = path.read_bytes()
        for n in range(12):
            data = _mutate(original, rng)
            for api in (extra_api_of(path), "auto"):
                try:
                    check(data, api, split_seed=n)
                except InvariantError as exc:
                    raise AssertionError(f"{path.name} mutation {n} as {api}: {exc}") from exc
