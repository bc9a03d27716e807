"""The issuer of a message travels with its events and its message, from
wherever it is known, and the encoders take it from there (issue 28 item 1).

The streams here are written in each API's real shape: Anthropic message ids
as Anthropic, Vertex AI and Bedrock issue them, a DeepSeek Chat stream with
``reasoning_content``.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import httpx
import pytest

from streamnorm import (
    AssistantMessage,
    Done,
    Reasoning,
    Request,
    Start,
    TextDelta,
    ToolResultMessage,
    UserMessage,
    decode_request,
    encode_request,
    encode_stream,
    normalize,
)
from streamnorm.events import event_from_dict
from streamnorm.integrations.hosts import provider_for_response, provider_for_url
from streamnorm.providers.wire_writer import ProviderMismatchWarning

from .gateway_support import ServerThread

ANTHROPIC_ID = "msg_01ALwQ87pTS7hH1PjSdC9wJD"
SIGNATURE = "EqQBCkYIBxgCKkDl5nGm3k2Y0uXxqS9Pj0Wm1bPw4sVZt0nWcJ8h1kCq2r3xYbLz"
MODEL = "claude-sonnet-4-5-20250929"


def _sse(events: list[dict[str, object]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def anthropic_stream(message_id: str = ANTHROPIC_ID) -> bytes:
    """Thinking with its signature, then a tool call: the first turn of a tool loop."""
    usage = {"input_tokens": 20, "output_tokens": 1}
    return _sse(
        [
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": MODEL,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "The user wants the weather."},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": SIGNATURE},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {
                    "type": "tool_use",
                    "id": "toolu_01A09q90qw90lq917835lq9",
                    "name": "get_weather",
                    "input": {},
                },
            },
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": '{"city": "Paris"}'},
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 40},
            },
            {"type": "message_stop"},
        ]
    )


async def _anthropic_server(scope: Any, receive: Any, send: Any) -> None:
    """An ASGI app on 127.0.0.1 that answers every POST with :func:`anthropic_stream`."""
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-type", b"text/event-stream")]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": anthropic_stream()})


def test_readme_quick_start_second_turn_keeps_thinking_signature_and_parameter() -> None:
    """The README's Quick start, followed literally (``httpx.stream`` and
    ``normalize`` without ``provider=``), then the tool result sent to the same
    Claude model with ``encode_request`` (no ``provider=`` either): the
    thinking block goes back with its signature, and the ``thinking``
    parameter stays in the body."""
    body = {"model": MODEL, "max_tokens": 4096, "messages": [], "stream": True}
    headers = {"anthropic-version": "2023-06-01"}
    with ServerThread(_anthropic_server) as server:
        url = server.url + "/v1/messages"
        # -- the README's Quick start, as written --
        with httpx.stream("POST", url, json=body, headers=headers, timeout=60) as response:
            for event in normalize(response.iter_bytes()):  # api detected from the stream
                if isinstance(event, TextDelta):
                    print(event.delta, end="", flush=True)
                elif isinstance(event, Done):
                    message = (
                        event.message
                    )  # content, stop_reason, usage — same shape for every API

    call = message.tool_calls[0]
    request = Request(
        "claude-sonnet-4-5",
        (
            UserMessage("Weather in Paris?"),
            message,
            ToolResultMessage(call.id, call.name, "18 °C, sunny"),
        ),
        reasoning=Reasoning(budget_tokens=2048),
        max_tokens=4096,
    )
    wire = encode_request(request, "anthropic-messages")
    assert wire.body["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": "The user wants the weather.",
        "signature": SIGNATURE,
    }
    assert wire.body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert wire.warnings == ()


@pytest.mark.parametrize(
    ("message_id", "provider"),
    [
        (ANTHROPIC_ID, "anthropic"),
        ("msg_011CduoCRono7pFKoTWpPAia", "anthropic"),
        ("msg_vrtx_01Tg7a8cFwAgP7dXgE7nNq3K", "vertex"),
        ("msg_bdrk_01Tg7a8cFwAgP7dXgE7nNq3K", "bedrock"),
        # Compatible hosts and proxies write ids of their own: nothing proven.
        ("msg_b9dea558e8565c58afa798b4ee2589c0", None),
        ("msg_01ALwQ87pTS7hH1PjSdC9wJD0", None),
        ("msg_01ALwQ87pTS7hH1PjSdC9wJ0", None),  # "0" is not base58
        ("0196a4c3-2f6e-7d1a-9b3c-5e8f1a2b3c4d", None),
    ],
)
def test_stream_names_its_issuer_only_when_its_id_proves_it(
    message_id: str, provider: str | None
) -> None:
    events = list(normalize([anthropic_stream(message_id)]))
    start, done = events[0], events[-1]
    assert isinstance(start, Start) and isinstance(done, Done)
    assert start.provider == provider
    assert done.message.provider == provider
    assert event_from_dict(json.loads(json.dumps(start.to_dict()))) == start


def test_response_id_proves_nothing_for_other_apis() -> None:
    assert provider_for_response("openai-completions", ANTHROPIC_ID) is None
    assert provider_for_response("anthropic-messages", None) is None


def test_explicit_provider_wins_over_the_stream() -> None:
    events = list(normalize([anthropic_stream()], provider="my-proxy.example"))
    assert events[0].provider == "my-proxy.example"  # type: ignore[union-attr]
    assert events[-1].message.provider == "my-proxy.example"  # type: ignore[union-attr]


def test_start_without_provider_keeps_its_old_dict() -> None:
    assert Start("openai-completions", "m", "r").to_dict() == {
        "type": "start",
        "api": "openai-completions",
        "model": "m",
        "response_id": "r",
    }


def test_regional_hosts_are_their_provider() -> None:
    assert provider_for_url("https://us-east5-aiplatform.googleapis.com/v1/projects/p") == "vertex"
    assert provider_for_url("https://aiplatform.googleapis.com/v1/projects/p") == "vertex"
    assert provider_for_url("https://bedrock-runtime.eu-west-1.amazonaws.com/model/x") == "bedrock"
    assert provider_for_url("https://bedrock-runtime-fips.us-east-1.amazonaws.com/") == "bedrock"
    assert provider_for_url("https://evil-aiplatform.googleapis.com.example/") == (
        "evil-aiplatform.googleapis.com.example"
    )


def deepseek_stream() -> bytes:
    chunks = [
        {"reasoning_content": "Think about Paris.", "role": "assistant"},
        {"content": "It is sunny."},
    ]
    out = b""
    for delta in chunks:
        payload = {
            "id": "0196a4c3-2f6e-7d1a-9b3c-5e8f1a2b3c4d",
            "object": "chat.completion.chunk",
            "model": "deepseek-reasoner",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }
        out += b"data: " + json.dumps(payload).encode() + b"\n\n"
    last = {
        "id": "0196a4c3-2f6e-7d1a-9b3c-5e8f1a2b3c4d",
        "object": "chat.completion.chunk",
        "model": "deepseek-reasoner",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14},
    }
    return out + b"data: " + json.dumps(last).encode() + b"\n\ndata: [DONE]\n\n"


def _issuer_of_turn(anthropic_bytes: bytes) -> str | None:
    """The provider the client's copy of the turn names, once sent back."""
    body = {
        "model": "x",
        "max_tokens": 1,
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": _anthropic_turn(anthropic_bytes)},
        ],
    }
    turn = decode_request(body, "anthropic-messages").messages[1]
    assert isinstance(turn, AssistantMessage)
    return turn.provider


def test_encode_stream_takes_the_provider_from_the_events() -> None:
    """``provider=`` given once, to ``normalize``: the Anthropic stream's
    envelope names DeepSeek, and the next Chat request to DeepSeek (provider
    taken from the history) hands its ``reasoning_content`` back."""
    events = list(normalize([deepseek_stream()], provider="deepseek"))
    out = b"".join(encode_stream(events, "anthropic-messages"))
    assert _issuer_of_turn(out) == "deepseek"

    # The client sends the turn back; DeepSeek gets its reasoning again.
    turn = _anthropic_turn(out)
    body = {
        "model": "deepseek-reasoner",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": turn},
            {"role": "user", "content": "And tomorrow?"},
        ],
    }
    request = decode_request(body, "anthropic-messages")
    wire = encode_request(request, "openai-completions")
    assert wire.body["messages"][1]["reasoning_content"] == "Think about Paris."
    assert wire.warnings == ()


def _anthropic_turn(stream: bytes) -> list[dict[str, object]]:
    """The content blocks an Anthropic client accumulates from ``stream``."""
    blocks: list[dict[str, object]] = []
    for line in stream.split(b"\n"):
        if not line.startswith(b"data: "):
            continue
        data = json.loads(line[6:])
        if data["type"] == "content_block_start":
            blocks.append(dict(data["content_block"]))
        elif data["type"] == "content_block_delta":
            block, delta = blocks[data["index"]], data["delta"]
            for key in ("thinking", "text", "signature"):
                if key in delta:
                    block[key] = str(block.get(key, "")) + delta[key]
    return blocks


def test_encode_stream_explicit_provider_wins_with_a_warning() -> None:
    events = list(normalize([deepseek_stream()], provider="deepseek"))
    with pytest.warns(ProviderMismatchWarning, match="'other'.*'deepseek'"):
        out = b"".join(encode_stream(events, "anthropic-messages", provider="other"))
    assert _issuer_of_turn(out) == "other"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b"".join(encode_stream(events, "anthropic-messages", provider="DeepSeek"))


def test_encode_request_provider_from_history_only_for_same_api_and_model() -> None:
    """The host is taken from a turn of the same api and model; another
    model's turn does not make its host the target."""
    events = list(normalize([anthropic_stream()]))
    message = events[-1].message  # type: ignore[union-attr]
    assert isinstance(message, AssistantMessage)
    history = (UserMessage("q"), message, UserMessage("again"))
    kept = encode_request(Request("claude-sonnet-4-5", history), "anthropic-messages")
    assert kept.body["messages"][1]["content"][0]["type"] == "thinking"
    other = encode_request(Request("claude-opus-4-6", history), "anthropic-messages")
    assert other.body["messages"][1]["content"][0] == {
        "type": "text",
        "text": "<thinking>\nThe user wants the weather.\n</thinking>\n\n",
    }
    assert [str(w) for w in other.warnings] == [
        "messages[1].content[0]: thinking_tagged: reasoning of another issuer sent as "
        "visible <thinking> text"
    ]
