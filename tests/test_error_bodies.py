"""Errors as the providers really send them: each recorded error body and
error stream keeps the provider's own code and type, gets the HTTP status
from the adapter that saw it, and is classified; context overflow is told
apart in each provider's own words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamnorm import (
    Error,
    Event,
    decode_response,
    encode_response,
    event_from_dict,
    message_from_dict,
    normalize,
)
from streamnorm.codec import response_events
from streamnorm.integrations import httpx as sn_httpx

from .support import FIXTURES, aws_event, aws_frame, needs_fixtures

#: Recorded error bodies: (api, stem) -> (HTTP status, code, type, category).
#: The status is the one each recording was answered with.
BODIES: dict[tuple[str, str], tuple[int, str, str | None, str]] = {
    ("anthropic-messages", "a23_error_invalid_request_400"): (
        400,
        "invalid_request_error",
        "invalid_request_error",
        "invalid_request",
    ),
    ("anthropic-messages", "a24_error_authentication_401"): (
        401,
        "authentication_error",
        "authentication_error",
        "auth",
    ),
    ("google-generative-ai", "g23_error_404_vertex"): (404, "NOT_FOUND", None, "not_found"),
    ("google-generative-ai", "g24_error_429_resource_exhausted"): (
        429,
        "RESOURCE_EXHAUSTED",
        None,
        "rate_limit",
    ),
    ("google-generative-ai", "g25_error_403_permission_denied"): (
        403,
        "PERMISSION_DENIED",
        None,
        "permission",
    ),
    ("openai-completions", "c22_error_400"): (
        400,
        "invalid_image_url",
        "invalid_request_error",
        "invalid_request",
    ),
    ("openai-completions", "c23_error_401"): (
        401,
        "invalid_api_key",
        "invalid_request_error",
        "auth",
    ),
    ("openai-responses", "r23_error_400_model_not_found"): (
        400,
        "model_not_found",
        "invalid_request_error",
        "not_found",
    ),
    ("openai-responses", "r24_error_401_invalid_api_key"): (
        401,
        "invalid_api_key",
        "invalid_request_error",
        "auth",
    ),
}


def _body(api: str, stem: str) -> bytes:
    return (FIXTURES / "responses" / api / f"{stem}.json").read_bytes()


def _error(events: list[Event]) -> Error:
    last = events[-1]
    assert isinstance(last, Error), last
    return last


def _through_httpx(api: str, body: bytes, status: int, headers: dict[str, str]) -> Error:
    """``body`` answered with ``status`` and read by the httpx adapter."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, content=body, headers=headers)

    with (
        httpx.Client(transport=httpx.MockTransport(answer)) as client,
        client.stream("POST", "http://127.0.0.1/v1") as response,
    ):
        return _error(list(sn_httpx.iter_events(response, api=api)))


@needs_fixtures
@pytest.mark.parametrize(("api", "stem"), list(BODIES), ids=[s for _, s in BODIES])
def test_recorded_error_bodies(api: str, stem: str) -> None:
    status, code, error_type, category = BODIES[api, stem]
    body = _body(api, stem)
    read = [_error(list(normalize(body))), _error(response_events(json.loads(body), api))]
    for error in read:
        assert (error.kind, error.code, error.error_type) == ("upstream", code, error_type)
        assert error.category == category
        assert error.status is None  # the bytes alone do not say it
    message = decode_response(body, api)
    assert (message.error_code, message.error_type) == (code, error_type)
    assert message_from_dict(message.to_dict()) == message
    for error in read:
        assert (error.message.error_code, error.message.error_type) == (code, error_type)
    seen = _through_httpx(api, body, status, {"content-type": "application/json"})
    assert (seen.status, seen.code, seen.error_type, seen.category) == (
        status,
        code,
        error_type,
        category,
    )
    assert event_from_dict(seen.to_dict()) == seen
    assert seen.to_dict()["error_type"] == error_type


@needs_fixtures
def test_a_responses_error_event_keeps_code_and_type() -> None:
    """OpenAI's ``insufficient_quota``: the account must be paid for, trying
    again later does not help (unlike a rate limit)."""
    data = (FIXTURES / "openai-responses" / "error-response-failed.sse").read_bytes()
    error = _error(list(normalize(data, "openai-responses")))
    assert (error.code, error.error_type) == ("insufficient_quota", "insufficient_quota")
    assert error.message.error_type == "insufficient_quota"
    assert error.category == "quota"
    assert not error.retryable


def test_anthropic_billing_error_is_quota() -> None:
    body = {"type": "error", "error": {"type": "billing_error", "message": "credit too low"}}
    error = _error(list(normalize(json.dumps(body).encode())))
    assert (error.code, error.category, error.retryable) == ("billing_error", "quota", False)


def test_the_type_decides_when_the_code_is_unknown() -> None:
    """A code no table lists (``invalid_image_url``) is classified by the
    provider's type beside it; the code stays the provider's."""
    body = {"error": {"message": "bad", "type": "rate_limit_error", "code": "tokens_per_min"}}
    error = _error(list(normalize(json.dumps(body).encode(), "openai-completions")))
    assert (error.code, error.error_type, error.category) == (
        "tokens_per_min",
        "rate_limit_error",
        "rate_limit",
    )


# -- context overflow, in each provider's words --------------------------------

ANTHROPIC_START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    },
}


def _sse(*payloads: dict[str, Any]) -> bytes:
    return b"".join(
        f"event: {p.get('type', 'message')}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads
    )


def _anthropic_body() -> bytes:
    error = {
        "type": "invalid_request_error",
        "message": "prompt is too long: 208310 tokens > 200000 maximum",
    }
    return json.dumps({"type": "error", "error": error}).encode()


def _anthropic_in_stream() -> bytes:
    error = {
        "type": "invalid_request_error",
        "message": "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000",
    }
    return _sse(ANTHROPIC_START, {"type": "error", "error": error})


def _openai_body() -> bytes:
    error = {
        "message": "This model's maximum context length is 128000 tokens. However, your "
        "messages resulted in 130512 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    return json.dumps({"error": error}).encode()


def _responses_body() -> bytes:
    error = {
        "message": "Your input exceeds the context window of this model. "
        "Please adjust your input and try again.",
        "type": "invalid_request_error",
        "param": "input",
        "code": "context_length_exceeded",
    }
    return json.dumps({"error": error}).encode()


def _responses_failed() -> bytes:
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "failed",
        "model": "gpt-5",
        "output": [],
        "error": {
            "code": "context_length_exceeded",
            "message": "Your input exceeds the context window of this model.",
        },
    }
    created = {**response, "status": "in_progress", "error": None}
    return _sse(
        {"type": "response.created", "response": created},
        {"type": "response.failed", "response": response},
    )


def _gemini_body() -> bytes:
    error = {
        "code": 400,
        "message": "The input token count (1210534) exceeds the maximum number of tokens "
        "allowed (1048576).",
        "status": "INVALID_ARGUMENT",
    }
    return json.dumps({"error": error}).encode()


def _bedrock_body() -> bytes:
    """ConverseStream refused before any frame: a JSON body (restJson1)."""
    return json.dumps({"message": "Input is too long for requested model."}).encode()


def _bedrock_in_stream() -> bytes:
    start = aws_event("messageStart", {"role": "assistant"})
    exception = aws_frame(
        {
            ":message-type": "exception",
            ":exception-type": "validationException",
            ":content-type": "application/json",
        },
        json.dumps(
            {"message": "The model returned the following errors: too many input tokens"}
        ).encode(),
    )
    return start + exception


OVERFLOWS = {
    "anthropic body": ("anthropic-messages", _anthropic_body, "invalid_request_error"),
    "anthropic stream": ("anthropic-messages", _anthropic_in_stream, "invalid_request_error"),
    "chat body": ("openai-completions", _openai_body, "context_length_exceeded"),
    "responses body": ("openai-responses", _responses_body, "context_length_exceeded"),
    "responses failed": ("openai-responses", _responses_failed, "context_length_exceeded"),
    "gemini body": ("google-generative-ai", _gemini_body, "INVALID_ARGUMENT"),
    "bedrock body": ("bedrock-converse-stream", _bedrock_body, None),
    "bedrock stream": ("bedrock-converse-stream", _bedrock_in_stream, "validationException"),
}


@pytest.mark.parametrize("case", list(OVERFLOWS))
def test_context_overflow_in_each_providers_words(case: str) -> None:
    api, make, code = OVERFLOWS[case]
    error = _error(list(normalize(make(), api)))
    assert (error.kind, error.code, error.category) == ("upstream", code, "context_overflow")
    assert not error.retryable


def test_a_bedrock_error_body_through_an_adapter_gets_status_and_type() -> None:
    """Bedrock names the exception in the ``x-amzn-ErrorType`` header, not in
    the body: the adapter that saw the header puts it beside the status."""
    headers = {
        "content-type": "application/json",
        "x-amzn-ErrorType": "ValidationException:http://internal.amazon.com/coral/",
    }
    error = _through_httpx("bedrock-converse-stream", _bedrock_body(), 400, headers)
    assert (error.status, error.code, error.category) == (
        400,
        "ValidationException",
        "context_overflow",
    )
    kept = (error.message.error_code, error.message.error_type)
    assert kept == ("ValidationException", "ValidationException")
    throttled = json.dumps({"message": "Too many requests, please wait."}).encode()
    headers["x-amzn-ErrorType"] = "ThrottlingException"
    error = _through_httpx("bedrock-converse-stream", throttled, 429, headers)
    assert (error.code, error.category, error.retryable) == (
        "ThrottlingException",
        "rate_limit",
        True,
    )


def test_the_docs_list_every_category() -> None:
    """docs/events.md names each category an Error can have."""
    from streamnorm.errors import CATEGORIES

    text = (Path(__file__).resolve().parents[1] / "docs" / "events.md").read_text()
    missing = [c for c in CATEGORIES if f"`{c}`" not in text]
    assert missing == []


@needs_fixtures
@pytest.mark.parametrize(("api", "stem"), list(BODIES), ids=[s for _, s in BODIES])
def test_a_whole_responses_body_carries_the_error_code(api: str, stem: str) -> None:
    """A failed Responses body says what failed: the same api's own code,
    another's the code of its class (a rate limit, else a server error)."""
    _, code, _, category = BODIES[api, stem]
    body = encode_response(decode_response(_body(api, stem), api), "openai-responses")
    assert body["status"] == "failed"
    expected = (
        code
        if api == "openai-responses"
        else "rate_limit_exceeded"
        if category == "rate_limit"
        else "server_error"
    )
    assert body["error"]["code"] == expected
    assert decode_response(json.dumps(body).encode(), "openai-responses").error_code == expected
