"""Through a translating gateway and back: a foreign issuer's opaque state,
encoded for a client, comes back in the client's next request, and
``decode_request`` restores the original blocks and their issuer; the
non-streaming bodies decode back to the message (``decode_response``)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from streamnorm import (
    APIS,
    AssistantMessage,
    Error,
    ToolCallBlock,
    decode_request,
    decode_response,
    encode_request,
    encode_response,
    encode_stream,
)

from .support import api_of, fixture_id, fixture_paths, needs_fixtures, run_bytes, terminal

anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

REASONING: dict[str, Any] = {
    "type": "reasoning",
    "id": "rs_0abc",
    "summary": [{"type": "summary_text", "text": "plan the call"}],
    "encrypted_content": "gAAAAB-opaque",
}
CALL: dict[str, Any] = {
    "type": "function_call",
    "id": "fc_0abc",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city":"Paris"}',
    "status": "completed",
}


def _responses_turn() -> bytes:
    response = {"id": "resp_1", "object": "response", "model": "gpt-5", "status": "completed"}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**response, "status": "in_progress", "output": []}})
    ]
    for index, item in enumerate((REASONING, CALL)):
        events.append(("response.output_item.done", {"output_index": index, "item": item}))
    events.append(("response.completed", {"response": {**response, "output": [REASONING, CALL]}}))
    return b"".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n".encode()
        for name, payload in events
    )


def _anthropic_client_message(data: bytes) -> list[dict[str, Any]]:
    """The content an Anthropic SDK user sends back: ``get_final_message()``."""

    def respond(request: Any) -> Any:
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    client = anthropic.Anthropic(
        api_key="x", http_client=httpx2.Client(transport=httpx2.MockTransport(respond))
    )
    with client.messages.stream(model="m", max_tokens=64, messages=[]) as stream:
        message = stream.get_final_message()
    return [b.model_dump(exclude_none=True) for b in message.content]


def test_responses_reasoning_through_an_anthropic_client_comes_back_whole() -> None:
    # The host the gateway talked to is recorded: opaque state stays with it.
    source = run_bytes(_responses_turn(), "openai-responses", provider="openai")
    original = terminal(source).message
    data = b"".join(encode_stream(source, "anthropic-messages", provider="openai"))
    content = _anthropic_client_message(data)
    call_id = next(b["id"] for b in content if b["type"] == "tool_use")
    body = {
        "model": "gpt-5",  # the issuer's model: the upstream takes its own reasoning back
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": content},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "sunny"}],
            },
        ],
    }
    request = decode_request(body, "anthropic-messages")
    turn = request.messages[1]
    assert isinstance(turn, AssistantMessage) and turn.api == "openai-responses"
    thinking, call = turn.content
    assert thinking == original.content[0]  # the whole reasoning item, as its signature
    assert isinstance(call, ToolCallBlock) and call.signature == original.content[1].signature  # type: ignore[union-attr]
    upstream = encode_request(request, "openai-responses", provider="openai")
    items = [i for i in upstream.body["input"] if i.get("type") in ("reasoning", "function_call")]
    assert items[0] == REASONING
    assert {k: items[1][k] for k in ("id", "call_id", "name")} == {
        k: CALL[k] for k in ("id", "call_id", "name")
    }


def test_gemini_call_signature_through_chat_and_responses_clients() -> None:
    part = {
        "functionCall": {"id": "g1", "name": "f", "args": {"a": 1}},
        "thoughtSignature": "R2VtaW5p",
    }
    chunk = {
        "candidates": [
            {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
        ],
        "modelVersion": "gemini-3",
        "responseId": "r1",
    }
    source = run_bytes(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n", "google-generative-ai")
    original = terminal(source).message
    for client in ("openai-completions", "openai-responses", "anthropic-messages"):
        body = encode_response(original, client)
        request: dict[str, Any]
        if client == "openai-completions":
            history = [{"role": "user", "content": "hi"}, body["choices"][0]["message"]]
            request = {"model": "m", "messages": history}
        elif client == "openai-responses":
            request = {"model": "m", "input": [{"role": "user", "content": "hi"}, *body["output"]]}
        else:
            history = [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": body["content"]},
            ]
            request = {"model": "m", "max_tokens": 8, "messages": history}
        turn = decode_request(request, client).messages[1]
        assert isinstance(turn, AssistantMessage) and turn.api == "google-generative-ai", client
        calls = [b for b in turn.content if isinstance(b, ToolCallBlock)]
        assert [(c.id, c.signature) for c in calls] == [("g1", "R2VtaW5p")], client


def _whole(blocks: Any, target: str) -> list[Any]:
    """Blocks as a non-streaming body can hold them: Messages and Gemini send
    arguments as an object, so the streamed argument text and a cut-off
    call's ``incomplete`` mark have no place (docs/encoding.md 'Responses')."""
    if target not in ("anthropic-messages", "google-generative-ai"):
        return list(blocks)
    return [
        replace(b, raw_arguments="", error=None) if isinstance(b, ToolCallBlock) else b
        for b in blocks
    ]


PAIRS = [(p, t) for p in fixture_paths() for t in APIS if api_of(p) == t]


@needs_fixtures
@pytest.mark.parametrize(("path", "target"), PAIRS, ids=[fixture_id(p) for p, _ in PAIRS])
def test_same_api_response_body_decodes_to_the_message(path: Path, target: str) -> None:
    end = terminal(run_bytes(path.read_bytes(), target))
    message = end.message
    body = json.dumps(encode_response(message, target))
    back = decode_response(body, target)
    assert _whole(back.content, target) == _whole(message.content, target)
    if isinstance(end, Error):  # what came before the failure; the body says no error
        return
    assert (back.stop_reason, back.usage, back.response_id) == (
        message.stop_reason,
        message.usage,
        message.response_id,
    )
