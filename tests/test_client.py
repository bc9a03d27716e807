"""``streamnorm.Client`` (issue 32 item 4) against scripted servers on
127.0.0.1: the host's path, body and key; retries of 429 (Retry-After), 529
and a reset before the first byte; no retry after the first byte; no retry
of a request the host refused; the issuer on the message; and
``Tool.from_function``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

import pytest

from streamnorm import (
    Client,
    ClientError,
    Done,
    Error,
    Request,
    RetryPolicy,
    TextDelta,
    Tool,
    UserMessage,
)

from .client_support import CHAT_SSE, ScriptedServer, Step, error_body

REQUEST = Request(model="claude-x", messages=(UserMessage("Hello"),), max_tokens=32)
FAST = RetryPolicy(max_retries=2, initial=0.01, max_delay=0.02)


def _client(server: ScriptedServer, retry: RetryPolicy = FAST) -> Client:
    env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test-secret"}
    return Client(env=env, retry=retry, timeout=5)


def test_complete_sends_the_host_s_request_and_records_the_issuer() -> None:
    with ScriptedServer([Step()]) as server:
        message = _client(server).complete(REQUEST, host="anthropic")
    assert message.content[0].text == "Hi"  # type: ignore[union-attr]
    assert message.provider == "anthropic" and message.model == "claude-x"
    (seen,) = server.seen
    assert (seen.method, seen.path) == ("POST", "/v1/messages")
    assert seen.headers["x-api-key"] == "sk-test-secret"
    assert seen.headers["anthropic-version"]
    assert json.loads(seen.body)["stream"] is True


def test_stream_yields_canonical_events() -> None:
    with ScriptedServer([Step()]) as server:
        events = list(_client(server).stream(REQUEST, host="anthropic"))
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hi"]
    assert isinstance(events[-1], Done)


def test_429_waits_the_retry_after_then_succeeds() -> None:
    waited = Step(429, error_body("rate_limit_error", "slow down"), {"retry-after": "0.2"})
    with ScriptedServer([waited, Step()]) as server:
        import time

        start = time.monotonic()
        message = _client(server).complete(REQUEST, host="anthropic")
        elapsed = time.monotonic() - start
    assert len(server.seen) == 2 and message.content
    assert elapsed >= 0.2


def test_529_overloaded_is_retried() -> None:
    overloaded = Step(529, error_body("overloaded_error", "Overloaded"))
    with ScriptedServer([overloaded, overloaded, Step()]) as server:
        message = _client(server).complete(REQUEST, host="anthropic")
    assert len(server.seen) == 3 and message.content


def test_retries_stop_after_max_retries_with_the_classified_error() -> None:
    overloaded = Step(529, error_body("overloaded_error", "Overloaded"))
    with ScriptedServer([overloaded]) as server, pytest.raises(ClientError) as caught:
        _client(server).complete(REQUEST, host="anthropic")
    assert len(server.seen) == 3
    error = caught.value.error
    assert (error.category, error.retryable, error.status) == ("overloaded", True, 529)


def test_a_retry_after_too_long_is_not_waited() -> None:
    waited = Step(429, error_body("rate_limit_error", "later"), {"retry-after": "3600"})
    with ScriptedServer([waited, Step()]) as server:
        events = list(_client(server).stream(REQUEST, host="anthropic"))
    assert len(server.seen) == 1
    last = events[-1]
    assert isinstance(last, Error) and last.retry_after == 3600 and last.category == "rate_limit"


def test_a_bad_request_is_not_retried() -> None:
    bad = Step(400, error_body("invalid_request_error", "max_tokens: too large"))
    with ScriptedServer([bad, Step()]) as server, pytest.raises(ClientError) as caught:
        _client(server).complete(REQUEST, host="anthropic")
    assert len(server.seen) == 1
    assert caught.value.error.category == "invalid_request"


def test_a_reset_before_the_first_byte_is_retried() -> None:
    with ScriptedServer([Step(reset=True), Step()]) as server:
        message = _client(server).complete(REQUEST, host="anthropic")
    assert len(server.seen) == 2 and message.content


def test_a_reset_after_the_first_byte_is_not_retried() -> None:
    half = Step(body=b"\n\n".join(Step().body.split(b"\n\n")[:3]) + b"\n\n", cut=True)
    with ScriptedServer([half, Step()]) as server:
        events = list(_client(server).stream(REQUEST, host="anthropic"))
    assert len(server.seen) == 1
    last = events[-1]
    assert isinstance(last, Error) and last.kind == "truncated"
    assert [e.delta for e in events if isinstance(e, TextDelta)] == ["Hi"]


def test_an_unreachable_host_ends_with_an_error_after_retries() -> None:
    with ScriptedServer([Step()]) as server:
        dead = server.url
    client = Client(env={"ANTHROPIC_BASE_URL": dead, "ANTHROPIC_API_KEY": "k"}, retry=FAST)
    events = list(client.stream(REQUEST, host="anthropic"))
    last = events[-1]
    assert isinstance(last, Error) and last.retryable and "could not reach" in last.reason
    assert "k" not in last.reason.split()


async def test_async_stream_retries_and_records_the_issuer() -> None:
    overloaded = Step(529, error_body("overloaded_error", "Overloaded"))
    with ScriptedServer([overloaded, Step()]) as server:
        message = await _client(server).acomplete(REQUEST, host="anthropic")
    assert len(server.seen) == 2 and message.provider == "anthropic"


def test_azure_through_the_client_sends_deployment_path_and_api_key() -> None:
    with ScriptedServer([Step(body=CHAT_SSE)]) as server:
        env = {"AZURE_OPENAI_ENDPOINT": server.url, "AZURE_OPENAI_API_KEY": "az-secret"}
        message = Client(env=env, retry=FAST).complete(
            Request(model="my-dep", messages=(UserMessage("hi"),)), host="azure"
        )
    (seen,) = server.seen
    assert seen.path == "/openai/deployments/my-dep/chat/completions?api-version=2024-10-21"
    assert seen.headers["api-key"] == "az-secret" and "authorization" not in seen.headers
    assert message.provider == "azure"


def test_a_missing_key_names_its_variable() -> None:
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        list(Client(env={}).stream(REQUEST, host="anthropic"))


def test_an_unknown_host_lists_the_hosts() -> None:
    with pytest.raises(ValueError, match="vertex-anthropic"):
        list(Client(env={}).stream(REQUEST, host="nowhere"))


def test_the_client_s_repr_holds_no_key() -> None:
    client = Client(keys={"anthropic": "sk-secret-value"})
    assert "sk-secret-value" not in repr(client)


@dataclass
class Place:
    city: str
    country: str = "FR"


def get_weather(
    city: str,
    unit: Literal["c", "f"] = "c",
    days: int | None = None,
    places: list[Place] | None = None,
) -> str:
    """Weather of a city.

    More words that are not the description.

    Args:
        city: The city's name.
        unit: Celsius or Fahrenheit.
    """
    return city


def test_tool_from_function() -> None:
    tool = Tool.from_function(get_weather)
    assert (tool.name, tool.description) == ("get_weather", "Weather of a city.")
    props = tool.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "The city's name."}
    assert props["unit"] == {"enum": ["c", "f"], "description": "Celsius or Fahrenheit."}
    assert props["days"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    place = props["places"]["anyOf"][0]["items"]
    assert place["required"] == ["city"] and place["properties"]["country"] == {"type": "string"}
    assert tool.parameters["required"] == ["city"]


class Opaque:
    """A class with no JSON Schema."""


def test_tool_from_function_refuses_a_type_without_schema() -> None:
    def f(x: Opaque) -> None:
        """Does nothing."""

    with pytest.raises(TypeError, match=r"f\.x"):
        Tool.from_function(f)
