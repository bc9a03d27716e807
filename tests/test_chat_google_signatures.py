"""Gemini's thought signatures in Google's OpenAI-compatible Chat form,
``extra_content.google.thought_signature``, on a tool call and on the
assistant message (issue 28 item 2): read by the Chat stream decoder and the
request codec, written back by the request encoder and the stream and
response encoders, so a Gemini 3 model behind Google's Chat endpoint gets
its signature back on the next turn."""

from __future__ import annotations

import json
from typing import Any

from streamnorm import (
    AssistantMessage,
    Message,
    Request,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    encode_stream,
    normalize,
)

#: Base64 as Gemini writes its signatures (standard alphabet, padded).
CALL_SIG = "CiQB0e2Kb1aqt4s7tI+Jw0Yv3kqYlG0o9P0y3c6O0l8tW+u7b6IKXwHR7Yo="
TEXT_SIG = "CjkB0e2Kb9v8D0cRzQ2mNnJzL1c0bWc3aW5nLWZvci1uZXh0LXR1cm4tb25seQ=="
MODEL = "gemini-3-pro-preview"


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    payload = {
        "choices": [{"delta": delta, "finish_reason": finish, "index": 0}],
        "created": 1764000000,
        "id": "f3ZvaJ2bKq3Ez7IPn8rS0Ac",
        "model": MODEL,
        "object": "chat.completion.chunk",
    }
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def google_chat_stream() -> bytes:
    """A tool call as Google's Chat endpoint streams it: whole, in one chunk,
    its signature in ``extra_content``."""
    call = {
        "extra_content": {"google": {"thought_signature": CALL_SIG}},
        "function": {"arguments": '{"city":"Paris"}', "name": "get_weather"},
        "id": "function-call-13264127835151231412",
        "type": "function",
        "index": 0,
    }
    return (
        _chunk({"role": "assistant", "tool_calls": [call]})
        + _chunk({"role": "assistant"}, "tool_calls")
        + b"data: [DONE]\n\n"
    )


def _message() -> AssistantMessage:
    events = list(normalize([google_chat_stream()], provider="google"))
    message = events[-1].message  # type: ignore[union-attr]
    assert isinstance(message, AssistantMessage)
    return message


def test_stream_decoder_reads_the_call_signature() -> None:
    (call,) = _message().tool_calls
    assert (call.name, call.arguments, call.signature) == (
        "get_weather",
        {"city": "Paris"},
        CALL_SIG,
    )


def test_next_turn_gives_google_its_signature_back() -> None:
    message = _message()
    call = message.tool_calls[0]
    history: list[Message] = [
        UserMessage("Weather?"),
        message,
        ToolResultMessage(call.id, call.name, "sunny"),
    ]
    for provider in ("google", None):  # None: the host is taken from the history
        wire = encode_request(
            Request(MODEL, tuple(history)), "openai-completions", provider=provider
        )
        (sent,) = wire.body["messages"][1]["tool_calls"]
        assert sent["extra_content"] == {"google": {"thought_signature": CALL_SIG}}
        assert wire.warnings == ()


def test_another_host_gets_no_signature_and_a_warning() -> None:
    message = _message()
    call = message.tool_calls[0]
    history: list[Message] = [
        UserMessage("Weather?"),
        message,
        ToolResultMessage(call.id, call.name, "sunny"),
    ]
    wire = encode_request(
        Request(MODEL, tuple(history)), "openai-completions", provider="openrouter"
    )
    assert "extra_content" not in wire.body["messages"][1]["tool_calls"][0]
    assert [w.kind for w in wire.warnings] == ["signature_removed"]


def test_request_codec_round_trip_of_call_and_text_signatures() -> None:
    body: dict[str, Any] = {
        "model": MODEL,
        "messages": [
            {"role": "user", "content": "Weather?"},
            {
                "role": "assistant",
                "content": "Let me look.",
                "extra_content": {"google": {"thought_signature": TEXT_SIG}},
                "tool_calls": [
                    {
                        "id": "function-call-1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
                        "extra_content": {"google": {"thought_signature": CALL_SIG}},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "function-call-1", "content": "sunny"},
        ],
    }
    request = decode_request(body, "openai-completions", provider="google")
    turn = request.messages[1]
    assert isinstance(turn, AssistantMessage)
    assert turn.content == (
        TextBlock("Let me look.", TEXT_SIG),
        ToolCallBlock(
            "function-call-1", "get_weather", {"city": "Paris"}, '{"city":"Paris"}', CALL_SIG
        ),
    )
    again = encode_request(request, "openai-completions", provider="google").body
    assert again["messages"][1]["extra_content"] == body["messages"][1]["extra_content"]
    assert (
        again["messages"][1]["tool_calls"][0]["extra_content"]
        == (body["messages"][1]["tool_calls"][0]["extra_content"])
    )


def test_stream_and_response_encoders_write_the_issuers_signatures() -> None:
    message = _message()
    out = b"".join(
        encode_stream(normalize([google_chat_stream()], provider="google"), "openai-completions")
    )
    assert out.count(CALL_SIG.encode()) == 1
    again = list(normalize([out], provider="google"))[-1].message  # type: ignore[union-attr]
    assert again.tool_calls[0].signature == CALL_SIG
    body = encode_response(message, "openai-completions")
    (call,) = body["choices"][0]["message"]["tool_calls"]
    assert call["extra_content"] == {"google": {"thought_signature": CALL_SIG}}
    assert decode_response(body, "openai-completions").tool_calls[0].signature == CALL_SIG


def test_signed_text_on_the_message() -> None:
    """A signed text answer: the signature on the message's ``extra_content``
    (the non-streaming form) or a delta's, kept on the text block."""
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": MODEL,
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": "Sunny.",
                    "extra_content": {"google": {"thought_signature": TEXT_SIG}},
                },
            }
        ],
    }
    message = decode_response(body, "openai-completions", provider="google")
    assert message.content == (TextBlock("Sunny.", TEXT_SIG),)
    out = encode_response(message, "openai-completions")
    assert out["choices"][0]["message"]["extra_content"] == {
        "google": {"thought_signature": TEXT_SIG}
    }
    streamed = b"".join(
        encode_stream(
            normalize([_chunk({"content": "Sunny."}), _chunk({}, "stop")], provider="google"),
            "openai-completions",
        )
    )
    assert b"extra_content" not in streamed  # nothing signed, nothing written
