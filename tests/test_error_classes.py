"""Errors carry enough to act on: the provider's own code, the HTTP status
where an adapter saw one, ``Retry-After``, and one classification with
``retryable`` for every provider, context overflow included."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from streamnorm import (
    Error,
    Event,
    decode_response,
    event_from_dict,
    message_from_dict,
    normalize,
)
from streamnorm.codec import response_events
from streamnorm.errors import classify, error_code, is_retryable, retry_after_of
from streamnorm.integrations import httpx as sn_httpx
from streamnorm.integrations.status import status_of


def _error(events: list[Event]) -> Error:
    last = events[-1]
    assert isinstance(last, Error)
    return last


def _body_error(body: dict[str, Any], api: str = "auto") -> Error:
    return _error(list(normalize(json.dumps(body).encode(), api)))


OPENAI_KEY = {
    "error": {
        "message": "Incorrect API key provided: sk-***.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}
GEMINI_QUOTA = {
    "error": {
        "code": 429,
        "message": "Resource has been exhausted.",
        "status": "RESOURCE_EXHAUSTED",
    }
}
START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    },
}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
ANTHROPIC_OVERLOADED = (
    f"event: message_start\ndata: {json.dumps(START)}\n\n"
    f"event: error\ndata: {json.dumps(OVERLOADED)}\n\n"
).encode()


def test_openai_code_is_kept_over_its_type() -> None:
    error = _body_error(OPENAI_KEY)
    assert error.code == "invalid_api_key"
    assert error.category == "auth"
    assert not error.retryable
    assert error.message.error_code == "invalid_api_key"


def test_gemini_status_word_is_the_code_not_the_number() -> None:
    error = _body_error(GEMINI_QUOTA)
    assert error.code == "RESOURCE_EXHAUSTED"
    assert error.category == "rate_limit"
    assert error.retryable


def test_anthropic_overloaded_in_stream_is_retryable() -> None:
    error = _error(list(normalize(ANTHROPIC_OVERLOADED)))
    assert error.code == "overloaded_error"
    assert error.category == "overloaded"
    assert error.retryable
    assert error.to_dict()["category"] == "overloaded"
    assert error.to_dict()["retryable"] is True


@pytest.mark.parametrize(
    ("body", "api"),
    [
        (
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 208310 tokens > 200000 maximum",
                },
            },
            "anthropic-messages",
        ),
        (
            {
                "error": {
                    "message": "This model's maximum context length is 128000 tokens. However, "
                    "your messages resulted in 130512 tokens.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
            "openai-completions",
        ),
        (
            {
                "error": {
                    "code": 400,
                    "message": "The input token count (1210534) exceeds the maximum number of "
                    "tokens allowed (1048576).",
                    "status": "INVALID_ARGUMENT",
                }
            },
            "google-generative-ai",
        ),
    ],
)
def test_context_overflow_recognised_per_provider(body: dict[str, Any], api: str) -> None:
    for error in (_body_error(body), _error(response_events(body, api))):
        assert error.category == "context_overflow", error
        assert not error.retryable


@pytest.mark.parametrize(
    "reason",
    [
        "Input is too long for requested model.",  # Bedrock
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "Please reduce the length of the messages or completion.",  # Groq
    ],
)
def test_context_overflow_words_of_other_hosts(reason: str) -> None:
    assert classify("upstream", "ValidationException", reason, 400) == "context_overflow"


def test_decode_response_of_an_error_body_keeps_the_code_and_type() -> None:
    message = decode_response(OPENAI_KEY, "openai-completions")
    assert (message.error_code, message.error_type) == ("invalid_api_key", "invalid_request_error")
    d = message.to_dict()
    assert (d["error_code"], d["error_type"]) == ("invalid_api_key", "invalid_request_error")
    assert message_from_dict(d) == message


def test_a_message_without_an_error_type_writes_none() -> None:
    """``to_dict()`` stays compact: no ``error_type`` key when there is none."""
    body = {"error": {"code": 400, "message": "Token limit reached"}}
    message = decode_response(body, "openai-completions")
    assert (message.error_code, message.error_type) == ("400", None)
    assert "error_type" not in message.to_dict()
    assert message_from_dict(message.to_dict()) == message


def test_classification_by_status_and_kind() -> None:
    assert classify("upstream", None, "boom", 503) == "overloaded"
    assert classify("upstream", None, "boom", 500) == "server"
    assert classify("upstream", "429", "Too many requests") == "rate_limit"
    assert classify("truncated", None, "the byte source failed: ReadTimeout: timed out") == (
        "timeout"
    )
    assert classify("truncated", None, "the stream ended before its terminal event") == (
        "truncated"
    )
    assert classify("protocol", None, "not a stream") == "protocol"
    assert is_retryable("server")
    assert not is_retryable("invalid_request")


def test_error_code_prefers_words() -> None:
    assert error_code({"type": "invalid_request_error", "code": "invalid_api_key"}) == (
        "invalid_api_key"
    )
    assert error_code({"code": 503}) == "503"
    assert error_code("oops") is None


def test_retry_after_headers() -> None:
    assert retry_after_of({"Retry-After": "7"}) == 7.0
    assert retry_after_of({"retry-after-ms": "1500", "retry-after": "2"}) == 1.5
    date = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert retry_after_of({"Retry-After": date}, now=1445412470.0) == 10.0
    assert retry_after_of({"Retry-After": "soon"}) is None
    assert retry_after_of({}) is None


def _transport(status: int, body: bytes, headers: dict[str, str]) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers=headers)

    return httpx.MockTransport(handler)


RATE_LIMITED = json.dumps(
    {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
).encode()


def test_httpx_adapter_puts_status_and_retry_after_on_error() -> None:
    transport = _transport(429, RATE_LIMITED, {"retry-after": "12"})
    with (
        httpx.Client(transport=transport) as client,
        client.stream("POST", "http://127.0.0.1/v1/messages") as response,
    ):
        error = _error(list(sn_httpx.iter_events(response)))
    assert (error.status, error.retry_after, error.code) == (429, 12.0, "rate_limit_error")
    assert error.category == "rate_limit"
    assert error.retryable
    assert event_from_dict(error.to_dict()) == error


def test_httpx_async_adapter_puts_status_on_error() -> None:
    transport = _transport(500, b'{"error":{"message":"internal"}}', {})

    async def read() -> list[Event]:
        async with (
            httpx.AsyncClient(transport=transport) as client,
            client.stream("POST", "http://127.0.0.1/v1/chat/completions") as response,
        ):
            return [event async for event in sn_httpx.aiter_events(response)]

    error = _error(asyncio.run(read()))
    assert error.status == 500
    assert error.category == "server"


def test_status_of_each_response_shape() -> None:
    requests_like = SimpleNamespace(status_code=401, headers={"Retry-After": "1"})
    aiohttp_like = SimpleNamespace(status=503, headers={})
    sdk_like = SimpleNamespace(http_response=requests_like)
    assert status_of(requests_like) == (401, {"Retry-After": "1"})
    assert status_of(aiohttp_like) == (503, {})
    assert status_of(sdk_like) == (401, {"Retry-After": "1"})
    assert status_of(object()) == (None, {})


GEMINI_RETRY_INFO = {
    "error": {
        "code": 429,
        "message": "You exceeded your current quota.",
        "status": "RESOURCE_EXHAUSTED",
        "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"},
        ],
    }
}


def test_gemini_retry_delay_in_the_body_is_retry_after() -> None:
    assert _body_error(GEMINI_RETRY_INFO).retry_after == 26.0
    in_stream = f"data: {json.dumps(GEMINI_RETRY_INFO)}\r\n\r\n".encode()
    assert _error(list(normalize(in_stream, "google-generative-ai"))).retry_after == 26.0
    decoded = _error(response_events(GEMINI_RETRY_INFO, "google-generative-ai"))
    assert decoded.retry_after == 26.0


def test_the_body_retry_after_survives_an_http_status_without_header() -> None:
    body = json.dumps(GEMINI_RETRY_INFO).encode()
    with (
        httpx.Client(transport=_transport(429, body, {})) as client,
        client.stream("POST", "http://127.0.0.1/v1beta/models/g:streamGenerateContent") as response,
    ):
        error = _error(list(sn_httpx.iter_events(response)))
    assert (error.status, error.retry_after) == (429, 26.0)
