"""The Open Responses compliance tests, against the gateway's ``/v1/responses``
with each upstream API behind it, streaming and not.

The requests and the checks are those of the spec repository's
``src/lib/compliance-tests.ts`` (openresponses/openresponses), re-expressed
here: every response object must validate as the spec's ``ResponseResource``
and every streamed event as one of its streaming events. The schema is the
one generated from the spec's OpenAPI document, as the PyPI package
``openresponses-types`` ships it (pydantic models).

Each upstream answers with a recorded answer of its own API: text for the
text cases, a function call for the tool cases.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, Union

import httpx
import pytest
from openresponses_types import types as spec
from pydantic import TypeAdapter, ValidationError

from streamnorm import (
    AssistantMessage,
    StopReason,
    TextBlock,
    Usage,
    encode_response,
    encode_stream,
    normalize,
)
from streamnorm.sse import SSEDecoder

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    SHORT,
    FakeUpstream,
    Reply,
    ServerThread,
    fixture_reply,
    running_gateway,
    sse_events,
)
from .support import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

APIS = ("openai-responses", "anthropic-messages", "openai-completions", "google-generative-ai")

#: (streamed recording, whole recording) per upstream API: a text answer, a function call.
TEXT = {
    "openai-responses": ("text-basic", "r04_reasoning_summary_message"),
    "anthropic-messages": ("text-basic", "a01_text_simple"),
    "openai-completions": ("openai-text-include-usage", "c01_text_basic"),
    "google-generative-ai": ("text-basic", "g01_text_basic"),
}
TOOL = {
    "openai-responses": ("", "r02_function_call_parallel"),
    "anthropic-messages": ("tool-use-no-args", "a02_tool_use_single"),
    "openai-completions": ("openai-tool-call", "c02_tool_call_single"),
    "google-generative-ai": ("function-call", "g02_function_call_single"),
}

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the current weather for a location",
    "parameters": {
        "type": "object",
        "properties": {
            "location": {
                "type": "string",
                "description": "The city and state, e.g. San Francisco, CA",
            }
        },
        "required": ["location"],
    },
}
#: A 32x32 PNG, as the spec's image case sends one (any small image does).
PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8"
    "z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _user(content: Any) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": content}


#: The spec's cases: id → (request input and options, uses a tool).
CASES: dict[str, tuple[dict[str, Any], bool]] = {
    "basic-response": ({"input": [_user("Say hello in exactly 3 words.")]}, False),
    "streaming-response": ({"input": [_user("Count from 1 to 5.")]}, False),
    "system-prompt": (
        {
            "input": [
                {
                    "type": "message",
                    "role": "system",
                    "content": "You are a pirate. Always respond in pirate speak.",
                },
                _user("Say hello."),
            ]
        },
        False,
    ),
    "tool-calling": (
        {"input": [_user("What's the weather like in San Francisco?")], "tools": [WEATHER_TOOL]},
        True,
    ),
    "image-input": (
        {
            "input": [
                _user(
                    [
                        {
                            "type": "input_text",
                            "text": "What do you see in this image? Answer in one sentence.",
                        },
                        {"type": "input_image", "image_url": PNG},
                    ]
                )
            ]
        },
        False,
    ),
    "multi-turn": (
        {
            "input": [
                _user("My name is Alice."),
                {
                    "type": "message",
                    "role": "assistant",
                    "content": "Hello Alice! Nice to meet you. How can I help you today?",
                },
                _user("What is my name?"),
            ]
        },
        False,
    ),
}

#: Every streaming event of the spec (sse-parser.ts checks each event against their union).
_EVENT_MODELS: Any = tuple(
    getattr(spec, name) for name in dir(spec) if name.endswith("StreamingEvent")
)
STREAMING_EVENT: TypeAdapter[Any] = TypeAdapter(Union[_EVENT_MODELS])  # noqa: UP007


def schema_errors(model: Callable[[Any], Any], data: Any) -> list[str]:
    try:
        model(data)
    except ValidationError as exc:
        return [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
    return []


def resource_errors(response: Any) -> list[str]:
    return schema_errors(spec.ResponseResource.model_validate, response)


def _reply(api: str, case: str, stream: bool) -> Reply:
    """The upstream's recorded answer for a case.

    No recording of a Responses server holds both a function call and the
    spec's current object fields without ``response.reasoning_text.*``
    events (which the spec names ``response.reasoning.*``): that one
    streamed case gets the Chat recording of a call, as a Responses server
    streams it.
    """
    tool = CASES[case][1]
    streamed, whole = (TOOL if tool else TEXT)[api]
    if stream and not streamed:
        chat = (
            FIXTURES / "openai-completions" / f"{TOOL['openai-completions'][0]}.sse"
        ).read_bytes()
        events = normalize([chat], api="openai-completions")
        return Reply(200, sse_events(b"".join(encode_stream(events, api, created=1700000000))))
    return fixture_reply(api, streamed if stream else whole, stream=stream)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    yield FakeUpstream()


@pytest.fixture(scope="module")
def url(fake: FakeUpstream) -> Iterator[str]:
    with ServerThread(fake) as up, running_gateway(up.url) as (_, gw):
        yield gw.url


def _events(raw: bytes) -> list[dict[str, Any]]:
    decoder = SSEDecoder()
    events = decoder.feed(raw) + decoder.flush()
    return [json.loads(e.data) for e in events if e.data and e.data != "[DONE]"]


def _run(url: str, body: dict[str, Any], stream: bool) -> tuple[Any, list[dict[str, Any]]]:
    """POST the case; the final response object and the streamed events."""
    answer = httpx.post(
        url + "/v1/responses",
        json={**body, "stream": stream},
        headers={"authorization": f"Bearer {GATEWAY_KEY}"},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    if not stream:
        return answer.json(), []
    events = _events(answer.content)
    finals = [
        e["response"]
        for e in events
        if e.get("type") in ("response.completed", "response.failed", "response.incomplete")
    ]
    return (finals[-1] if finals else None), events


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("api", APIS)
def test_compliance(url: str, fake: FakeUpstream, api: str, case: str, stream: bool) -> None:
    request, tool = CASES[case]
    fake.script(NAMED_MODELS[api], _reply(api, case, stream))
    response, events = _run(url, {"model": f"named.{SHORT[api]}", **request}, stream)
    assert response is not None, "no terminal event"
    assert resource_errors(response) == []
    assert response["output"], "Response has no output items"
    if tool:
        assert any(item["type"] == "function_call" for item in response["output"])
    else:
        assert response["status"] == "completed"
    if stream:
        assert events
        assert [e for e in events if schema_errors(STREAMING_EVENT.validate_python, e)] == []
        for kind in ("response.created", "response.in_progress"):
            started = next(e for e in events if e["type"] == kind)
            assert resource_errors(started["response"]) == []
    if stream and tool:
        kinds = [e["type"] for e in events]
        assert "response.function_call_arguments.delta" in kinds
        assert "response.function_call_arguments.done" in kinds
        for kind in ("response.output_item.added", "response.output_item.done"):
            assert any(e["type"] == kind and e["item"]["type"] == "function_call" for e in events)


# -- the request's own values, echoed ----------------------------------------

ECHOED = {
    "instructions": "Answer briefly.",
    "temperature": 0.3,
    "top_p": 0.9,
    "max_output_tokens": 300,
    "tool_choice": "required",
    "tools": [WEATHER_TOOL],
    "text": {"format": {"type": "json_object"}},
    "reasoning": {"effort": "low", "summary": "auto"},
    "store": False,
    "metadata": {"team": "a"},
    "parallel_tool_calls": False,
    "presence_penalty": 0.5,
    "frequency_penalty": 0.25,
    "top_logprobs": 2,
    "truncation": "auto",
    "service_tier": "flex",
    "safety_identifier": "user-7",
    "prompt_cache_key": "k1",
    "max_tool_calls": 4,
    "background": False,
}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("api", APIS[1:])
def test_the_response_object_echoes_the_request(
    url: str, fake: FakeUpstream, api: str, stream: bool
) -> None:
    streamed, whole = TEXT[api]
    fake.script(NAMED_MODELS[api], fixture_reply(api, streamed if stream else whole, stream=stream))
    body = {"model": f"named.{SHORT[api]}", "input": "hi", **ECHOED}
    response, events = _run(url, body, stream)
    objects = [response, *(e["response"] for e in events if "response" in e)]
    for obj in objects:
        assert resource_errors(obj) == []
        for key, value in ECHOED.items():
            expected = (
                [{**value[0], "strict": None}] if key == "tools" else value  # type: ignore[index]
            )
            assert obj[key] == expected, key


def test_an_encoded_response_is_spec_complete_without_a_request() -> None:
    """The library's own ``encode_response`` gives the spec's defaults."""
    message = AssistantMessage(
        (TextBlock("hi"),), "anthropic-messages", "m", StopReason.STOP, "end_turn", Usage(), None
    )
    body = encode_response(message, "openai-responses", created=1700000000)
    assert resource_errors(body) == []
    assert body["completed_at"] == 1700000000
    assert (body["temperature"], body["top_p"], body["store"], body["truncation"]) == (
        1.0,
        1.0,
        True,
        "disabled",
    )
    assert body["previous_response_id"] is None and body["metadata"] == {}
