"""Stream encoders on hand-made streams: what the fixtures do not cover
(encoding.md §12 items 3-7) — interleaved sources, invalid tool JSON, every
stop reason and error for every target, the sans-IO contract, the framing
each SDK needs, and foreign signatures carried in envelopes."""

from __future__ import annotations

import asyncio
import base64
import json
import re
from dataclasses import replace
from typing import Any

import pytest

from streamnorm import (
    APIS,
    AssistantMessage,
    BlockEnd,
    Done,
    Error,
    Event,
    Start,
    StopReason,
    StreamEncoder,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    aencode_stream,
    decode_request,
    encode_stream,
)
from streamnorm.envelope import unwrap

from .encode_oracles import ERRORS, READERS, STOP
from .support import run_bytes, terminal

pytest.importorskip("anthropic")
pytest.importorskip("openai")
pytest.importorskip("google.genai")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def chat_sse(*chunks: dict[str, Any]) -> bytes:
    body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks)
    return body + b"data: [DONE]\n\n"


def chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def anthropic_sse(*events: dict[str, Any]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def message(api: str, *blocks: Any, stop: StopReason = StopReason.STOP) -> AssistantMessage:
    return AssistantMessage(
        tuple(blocks), api, "model-x", stop, None, Usage.of(3, 5), "resp-source-1"
    )


def events_of(msg: AssistantMessage, end: Event | None = None) -> list[Event]:
    """A canonical stream for ``msg``: each block streamed, then ended."""
    out: list[Event] = [Start(msg.api, msg.model, msg.response_id)]
    for i, block in enumerate(msg.content):
        if isinstance(block, TextBlock):
            out.append(TextDelta(i, block.text))
        elif isinstance(block, ThinkingBlock) and not block.redacted:
            out.append(ThinkingDelta(i, block.thinking))
        elif isinstance(block, ToolCallBlock):
            out.append(ToolCallDelta(i, block.id, block.name, ""))
            out.append(ToolCallDelta(i, block.id, block.name, block.raw_arguments))
        out.append(BlockEnd(i, block))
    out.append(end if end is not None else Done(msg))
    return out


# ---------------------------------------------------------------------------
# Interleaved and invalid sources (encoding.md §12.4, §12.5)


def test_interleaved_chat_source_becomes_sequential_anthropic_blocks() -> None:
    first = {"index": 0, "id": "c0", "type": "function", "function": {"name": "a", "arguments": ""}}
    second = {
        "index": 1,
        "id": "c1",
        "type": "function",
        "function": {"name": "b", "arguments": ""},
    }
    source = chat_sse(
        chat_chunk(
            {
                "role": "assistant",
                "reasoning_content": "think",
                "content": "hi",
                "tool_calls": [first],
            }
        ),
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x":'}}]}),
        chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": "1}"}}, second]}),
        chat_chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"y":2}'}}]}),
        chat_chunk({}, "tool_calls"),
    )
    events = run_bytes(source, "openai-completions")
    data = b"".join(encode_stream(events, "anthropic-messages"))
    starts = [
        json.loads(line[6:]) for line in data.split(b"\n") if b'"content_block_start"' in line
    ]
    assert [s["index"] for s in starts] == list(range(len(starts)))  # dense, in order
    stops = re.findall(rb'"type":"content_block_stop","index":(\d+)', data)
    assert [int(i) for i in stops] == list(range(len(starts)))  # one block open at a time
    view = READERS["anthropic-messages"](data)
    assert (view.thinking, view.text) == ("think", "hi")
    assert view.calls == [("c0", "a", {"x": 1}), ("c1", "b", {"y": 2})]
    assert view.stop == "tool_use"


def test_invalid_tool_json_stops_streaming_and_the_sdk_still_reads_the_stream() -> None:
    tool = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    source = anthropic_sse(
        {
            "type": "message_start",
            "message": {"id": "msg_1", "model": "m", "content": [], "usage": {}},
        },
        {"type": "content_block_start", "index": 0, "content_block": tool},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": "x'},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '\ty", "b": 1}'},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use"},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    )
    events = run_bytes(source, "anthropic-messages")
    call = terminal(events).message.tool_calls[0]
    assert call.arguments == {"a": "x\ty", "b": 1}  # repaired by the decoder
    data = b"".join(encode_stream(events, "anthropic-messages"))
    sent = [
        json.loads(line[6:])["delta"]["partial_json"]
        for line in data.split(b"\n")
        if b"input_json_delta" in line
    ]
    assert sent == ['{"a": "x', '"}']  # the raw tab never reaches the client; the prefix is closed
    view = READERS["anthropic-messages"](data)
    assert view.calls == [("t1", "f", {"a": "x"})] and view.stop == "tool_use"


# ---------------------------------------------------------------------------
# Every stop reason and every error, for every target (encoding.md §12.6)

_STOPS = [StopReason.STOP, StopReason.LENGTH, StopReason.CONTENT_FILTER, StopReason.PAUSE]


@pytest.mark.parametrize("target", APIS)
@pytest.mark.parametrize("stop", _STOPS, ids=str)
def test_every_stop_reason_reaches_the_sdk(target: str, stop: StopReason) -> None:
    msg = message("other-api", TextBlock("hello"), stop=stop)
    view = READERS[target](b"".join(encode_stream(events_of(msg), target)))
    assert view.text == "hello" and view.stop == STOP[target][stop]
    assert view.usage[:2] == (3, 5)


@pytest.mark.parametrize("target", APIS)
def test_tool_use_reaches_the_sdk(target: str) -> None:
    call = ToolCallBlock("call_1", "f", {"q": [1, 2]}, '{"q": [1, 2]}')
    msg = message("other-api", call, stop=StopReason.TOOL_USE)
    view = READERS[target](b"".join(encode_stream(events_of(msg), target)))
    assert [(c[1], c[2]) for c in view.calls] == [("f", {"q": [1, 2]})]
    assert view.stop == STOP[target][StopReason.TOOL_USE]


def test_chat_length_and_content_filter_raise_the_sdks_documented_errors() -> None:
    import openai
    from openai.lib.streaming.chat import ChatCompletionStreamState

    from .encode_oracles import _openai_client

    for stop, error in (
        (StopReason.LENGTH, openai.LengthFinishReasonError),
        (StopReason.CONTENT_FILTER, openai.ContentFilterFinishReasonError),
    ):
        data = b"".join(
            encode_stream(events_of(message("x", TextBlock("a"), stop=stop)), "openai-completions")
        )
        state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
        stream = _openai_client(data).chat.completions.create(model="m", messages=[], stream=True)
        for chunk in stream:
            state.handle_chunk(chunk)
        with pytest.raises(error):
            state.get_final_completion()


_KINDS = [("upstream", "rate_limit_exceeded"), ("upstream", "overloaded"), ("truncated", None)]


@pytest.mark.parametrize("target", APIS)
@pytest.mark.parametrize(("kind", "code"), _KINDS)
def test_every_error_is_the_targets_own_in_stream_error(
    target: str, kind: str, code: str | None
) -> None:
    msg = message("other-api", TextBlock("partial"), stop=StopReason.ERROR)
    msg = AssistantMessage(**{**{n: getattr(msg, n) for n in msg.__slots__}, "error": "boom"})
    events = events_of(msg, Error(kind, "boom", code, msg))
    data = b"".join(encode_stream(events, target))
    view = READERS[target](data)
    expected = ERRORS[target]
    if target == "google-generative-ai" and code == "rate_limit_exceeded":
        expected = "ClientError"  # 429
    assert view.error == expected
    back = terminal(run_bytes(data, target))
    assert isinstance(back, Error) and back.reason == "boom"
    assert back.message.text == "partial"  # what was streamed stays with the client


#: Per target: an error code and type of its own, and the type that comes
#: back (Gemini's error has no type: its ``status`` is the code).
_OWN_ERRORS = {
    "anthropic-messages": ("overloaded_error", "overloaded_error", "overloaded_error"),
    "openai-completions": ("invalid_api_key", "invalid_request_error", "invalid_request_error"),
    "openai-responses": ("insufficient_quota", "insufficient_quota", "insufficient_quota"),
    "google-generative-ai": ("RESOURCE_EXHAUSTED", None, None),
}


@pytest.mark.parametrize("target", APIS)
def test_the_same_issuers_error_code_and_type_come_back(target: str) -> None:
    code, error_type, back_type = _OWN_ERRORS[target]
    msg = message(target, TextBlock("partial"), stop=StopReason.ERROR)
    msg = replace(msg, error="boom", error_code=code, error_type=error_type)
    events = events_of(msg, Error("upstream", "boom", code, msg, error_type=error_type))
    back = terminal(run_bytes(b"".join(encode_stream(events, target)), target))
    assert isinstance(back, Error)
    assert (back.code, back.error_type) == (code, back_type)
    assert (back.message.error_code, back.message.error_type) == (code, back_type)


@pytest.mark.parametrize("target", ["openai-completions", "openai-responses"])
def test_an_error_without_a_type_gets_none_made_up(target: str) -> None:
    """OpenRouter's in-stream error has a code and no type: none comes back."""
    msg = message(target, TextBlock("partial"), stop=StopReason.ERROR)
    msg = replace(msg, error="boom", error_code="400")
    events = events_of(msg, Error("upstream", "boom", "400", msg))
    back = terminal(run_bytes(b"".join(encode_stream(events, target)), target))
    assert isinstance(back, Error)
    assert (back.code, back.error_type, back.message.error_type) == ("400", None, None)


# ---------------------------------------------------------------------------
# The sans-IO contract and the framing


def test_close_without_a_terminal_event_reports_truncation_and_feed_after_close_raises() -> None:
    for target in APIS:
        encoder = StreamEncoder(target)
        out = encoder.feed(Start("anthropic-messages", "m", "msg_1")) + encoder.feed(
            TextDelta(0, "hi")
        )
        out += encoder.close()
        back = terminal(run_bytes(out, target))
        assert isinstance(back, Error) and back.message.text == "hi"
        assert encoder.close() == b""
        with pytest.raises(RuntimeError):
            encoder.feed(TextDelta(0, "more"))


def test_an_aborted_stream_writes_nothing_more() -> None:
    msg = message("x", TextBlock("a"), stop=StopReason.ABORTED)
    for target in APIS:
        encoder = StreamEncoder(target)
        encoder.feed(Start("x", "m", "r"))
        assert encoder.feed(Error("aborted", "the client went away", None, msg)) == b""
        assert encoder.close() == b""


def test_events_after_the_terminal_event_write_nothing() -> None:
    msg = message("x", TextBlock("a"))
    encoder = StreamEncoder("anthropic")
    for event in events_of(msg):
        encoder.feed(event)
    assert encoder.feed(TextDelta(0, "late")) == b"" and encoder.close() == b""


@pytest.mark.parametrize("target", APIS)
def test_encoding_is_deterministic_and_the_async_twin_agrees(target: str) -> None:
    events = events_of(message("x", ThinkingBlock("t"), TextBlock("a")))

    async def collect() -> bytes:
        async def source() -> Any:
            for event in events:
                yield event

        return b"".join([chunk async for chunk in aencode_stream(source(), target)])

    once = b"".join(encode_stream(events, target))
    assert once == b"".join(encode_stream(events, target)) == asyncio.run(collect())


def test_model_and_response_id_are_the_callers() -> None:
    events = events_of(message("x", TextBlock("a")))
    for target in APIS:
        data = b"".join(
            encode_stream(events, target, model="client-model", response_id="resp_fixed")
        )
        start = terminal(run_bytes(data, target)).message
        assert (start.response_model, start.response_id) == ("client-model", "resp_fixed")


def test_derived_ids_have_each_apis_prefix() -> None:
    events = events_of(message("x", TextBlock("a")))
    prefixes = {
        "anthropic-messages": "msg_",
        "openai-completions": "chatcmpl-",
        "openai-responses": "resp_",
    }
    for target, prefix in prefixes.items():
        got = terminal(run_bytes(b"".join(encode_stream(events, target)), target)).message
        assert got.response_id is not None and got.response_id.startswith(prefix)


def test_framing_each_sdk_needs() -> None:
    events = events_of(message("x", ThinkingBlock("t", "sig"), TextBlock("a")))
    blocks = {t: b"".join(encode_stream(events, t)).split(b"\n\n") for t in APIS}
    assert all(b.startswith(b"event: ") for b in blocks["anthropic-messages"] if b)
    gemini = b"".join(encode_stream(events, "google-generative-ai"))
    assert all(line.startswith(b"data: {") for line in gemini.split(b"\r\n") if line)
    assert blocks["openai-completions"][-2] == b"data: [DONE]"
    usage = [json.loads(b[6:]) for b in blocks["openai-completions"] if b"usage" in b]
    assert len(usage) == 1 and usage[0]["choices"] == []  # usage once, on the last chunk


# ---------------------------------------------------------------------------
# Foreign issuers (encoding.md §9, §12.7)


def _gemini_call_turn() -> bytes:
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
    return b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"


def test_gemini_call_signature_rides_on_one_extra_thinking_block_for_anthropic() -> None:
    events = run_bytes(_gemini_call_turn(), "google-generative-ai")
    data = b"".join(encode_stream(events, "anthropic-messages"))
    back = terminal(run_bytes(data, "anthropic-messages")).message
    call, carrier = back.content
    assert isinstance(call, ToolCallBlock) and call.id == "g1" and call.arguments == {"a": 1}
    assert isinstance(carrier, ThinkingBlock) and carrier.thinking == ""
    envelope = unwrap(carrier.signature)
    assert envelope is not None and envelope.kind == "turn"
    assert envelope.issuer.api == "google-generative-ai" and envelope.issuer.model == "gemini-3"
    assert envelope.signature == [[0, "toolcall", "R2VtaW5p"]]


def test_responses_reasoning_item_survives_a_trip_through_an_anthropic_client() -> None:
    item = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "plan"}],
        "encrypted_content": "ENC",
    }
    message_item = {
        "type": "message",
        "id": "msg_9",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "ok", "annotations": []}],
    }
    response = {
        "id": "resp_1",
        "object": "response",
        "model": "gpt",
        "status": "completed",
        "output": [item, message_item],
    }
    source = b"".join(
        f"event: {t}\ndata: {json.dumps(p)}\n\n".encode()
        for t, p in (
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": {**response, "status": "in_progress", "output": []},
                },
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 1, "item": message_item},
            ),
            ("response.completed", {"type": "response.completed", "response": response}),
        )
    )
    original = terminal(run_bytes(source, "openai-responses")).message
    thinking = original.content[0]
    assert isinstance(thinking, ThinkingBlock)
    data = b"".join(encode_stream(run_bytes(source, "openai-responses"), "anthropic-messages"))
    client_side = terminal(run_bytes(data, "anthropic-messages")).message
    carried = client_side.content[0]
    assert isinstance(carried, ThinkingBlock) and carried.thinking == "plan"
    envelope = unwrap(carried.signature)
    assert envelope is not None and envelope.issuer.api == "openai-responses"
    assert json.loads(envelope.signature) == item  # the whole item, byte for byte in meaning
    assert envelope.signature == thinking.signature


def test_anthropic_signature_reaches_a_gemini_client_as_valid_base64() -> None:
    msg = message("anthropic-messages", ThinkingBlock("t", "EqQBCkYI"), TextBlock("a"))
    data = b"".join(encode_stream(events_of(msg), "google-generative-ai"))
    assert READERS["google-generative-ai"](data).thinking == "t"  # the SDK decoded it
    back = terminal(run_bytes(data, "google-generative-ai")).message
    thinking, text = back.content  # the thought unsigned, the turn's last part signed
    assert isinstance(thinking, ThinkingBlock) and thinking.signature is None
    assert isinstance(text, TextBlock) and text.signature is not None
    base64.b64decode(text.signature, validate=True)
    envelope = unwrap(text.signature)
    assert envelope is not None and envelope.kind == "turn"
    assert envelope.signature == [[0, "thinking", "EqQBCkYI", "t"]]


def test_same_issuer_signatures_go_out_as_they_are() -> None:
    msg = message("anthropic-messages", ThinkingBlock("t", "EqQBCkYI"), TextBlock("a"))
    data = b"".join(encode_stream(events_of(msg), "anthropic-messages"))
    assert terminal(run_bytes(data, "anthropic-messages")).message.content == msg.content


def test_interleaved_calls_of_a_source_that_ends_blocks_wait_their_turn() -> None:
    """Responses items may interleave: the second call's events wait until the
    first call ends, then follow in order (nothing is lost or reordered)."""

    def item(index: int, call_id: str, name: str) -> dict[str, Any]:
        call = {"type": "function_call", "id": f"fc_{index}", "call_id": call_id, "name": name}
        return {"output_index": index, "item": {**call, "arguments": "", "status": "in_progress"}}

    def delta(index: int, text: str) -> dict[str, Any]:
        return {"output_index": index, "item_id": f"fc_{index}", "delta": text}

    response = {"id": "resp_1", "object": "response", "model": "m", "status": "completed"}
    steps: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**response, "status": "in_progress", "output": []}}),
        ("response.output_item.added", item(0, "c0", "a")),
        ("response.function_call_arguments.delta", delta(0, '{"x":')),
        ("response.output_item.added", item(1, "c1", "b")),
        ("response.function_call_arguments.delta", delta(1, '{"y":2}')),
        ("response.function_call_arguments.delta", delta(0, "1}")),
        ("response.output_item.done", {**item(0, "c0", "a"), "output_index": 0}),
        ("response.output_item.done", {**item(1, "c1", "b"), "output_index": 1}),
        ("response.completed", {"response": response}),
    ]
    source = b"".join(
        f"event: {kind}\ndata: {json.dumps({'type': kind, **payload})}\n\n".encode()
        for kind, payload in steps
    )
    events = run_bytes(source, "openai-responses")
    assert [c.arguments for c in terminal(events).message.tool_calls] == [{"x": 1}, {"y": 2}]
    data = b"".join(encode_stream(events, "anthropic-messages"))
    view = READERS["anthropic-messages"](data)
    assert view.calls == [("c0", "a", {"x": 1}), ("c1", "b", {"y": 2})]
    back = terminal(run_bytes(data, "anthropic-messages")).message
    assert [c.raw_arguments for c in back.tool_calls] == ['{"x":1}', '{"y":2}']


def test_a_gemini_signature_that_is_not_base64_still_reaches_the_sdk() -> None:
    """The SDK fails the whole stream on a thoughtSignature that is not
    standard base64: such a value goes in an envelope, even for Gemini."""
    msg = message("google-generative-ai", ThinkingBlock("t", "00000"), TextBlock("a"))
    data = b"".join(encode_stream(events_of(msg), "google-generative-ai"))
    assert READERS["google-generative-ai"](data).thinking == "t"
    thinking = terminal(run_bytes(data, "google-generative-ai")).message.content[0]
    assert isinstance(thinking, ThinkingBlock)
    envelope = unwrap(thinking.signature)
    assert envelope is not None and envelope.signature == "00000"


def _gemini_signed_text_turn() -> bytes:
    """A Gemini thinking model's answer: thought, then text whose last part is signed."""
    parts: list[dict[str, Any]] = [
        {"text": "pondering", "thought": True},
        {"text": "Hello "},
        {"text": "world", "thoughtSignature": "U2lnVGV4dA=="},
    ]
    out = b""
    for n, part in enumerate(parts):
        content = {"role": "model", "parts": [part]}
        candidate: dict[str, Any] = {"content": content, "index": 0}
        if n == len(parts) - 1:
            candidate["finishReason"] = "STOP"
        chunk = {"candidates": [candidate], "modelVersion": "gemini-3", "responseId": "r1"}
        out += b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"
    return out


def _blocks_in_stop_order(data: bytes) -> list[dict[str, Any]]:
    """Content blocks in the order a stream stops them, the way Claude Code
    turns each ``content_block_stop`` into one message of the transcript."""
    open_blocks: dict[int, dict[str, Any]] = {}
    stopped: list[dict[str, Any]] = []
    for line in data.split(b"\n"):
        if not line.startswith(b"data: "):
            continue
        event = json.loads(line[6:])
        if event["type"] == "content_block_start":
            open_blocks[event["index"]] = dict(event["content_block"])
        elif event["type"] == "content_block_delta":
            block, delta = open_blocks[event["index"]], event["delta"]
            for key in ("text", "thinking", "signature"):
                if key in delta:
                    block[key] = block.get(key, "") + delta[key]
        elif event["type"] == "content_block_stop":
            stopped.append(open_blocks.pop(event["index"]))
    return stopped


def test_a_signed_foreign_text_is_the_last_block_a_client_sees_and_comes_back_signed() -> None:
    events = run_bytes(_gemini_signed_text_turn(), "google-generative-ai")
    data = b"".join(encode_stream(events, "anthropic-messages"))
    stopped = _blocks_in_stop_order(data)
    assert stopped[-1] == {"type": "text", "text": "Hello world"}
    assert READERS["anthropic-messages"](data).text == "Hello world"
    body = {
        "model": "claude-x",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": stopped},
            {"role": "user", "content": "and?"},
        ],
    }
    turn = decode_request(body, "anthropic-messages").messages[1]
    assert isinstance(turn, AssistantMessage) and turn.api == "google-generative-ai"
    thought, text = turn.content
    assert isinstance(thought, ThinkingBlock) and thought.thinking == "pondering"
    assert text == TextBlock("Hello world", signature="U2lnVGV4dA==")


def test_a_thinking_block_sent_whole_opens_unsigned_and_signs_by_delta() -> None:
    msg = message("anthropic-messages", ThinkingBlock("", "EqQBCkYI"), TextBlock("a"))
    end_only = [e for e in events_of(msg) if not isinstance(e, ThinkingDelta)]
    data = b"".join(encode_stream(end_only, "anthropic-messages"))
    frames = [json.loads(x[6:]) for x in data.split(b"\n") if x.startswith(b"data: ")]
    start = next(f for f in frames if f["type"] == "content_block_start")
    assert start["content_block"] == {"type": "thinking", "thinking": "", "signature": ""}
    signed = [f["delta"] for f in frames if f["type"] == "content_block_delta" and f["index"] == 0]
    assert signed == [{"type": "signature_delta", "signature": "EqQBCkYI"}]
    assert terminal(run_bytes(data, "anthropic-messages")).message.content == msg.content


def _gemini_parts(data: bytes) -> list[dict[str, Any]]:
    """Every part of a Gemini stream, adjacent non-thought text parts joined
    and empty unsigned ones left out (as Gemini CLI and the AI SDK keep them
    in their history)."""
    parts: list[dict[str, Any]] = []
    for line in data.split(b"\r\n"):
        if not line.startswith(b"data: "):
            continue
        for part in json.loads(line[6:])["candidates"][0]["content"]["parts"]:
            if part == {"text": ""}:
                continue
            previous = parts[-1] if parts else None
            plain = "text" in part and not part.get("thought")
            if plain and previous is not None and set(previous) <= {"text", "thoughtSignature"}:
                previous["text"] += part["text"]
                if "thoughtSignature" in part:
                    previous["thoughtSignature"] = part["thoughtSignature"]
            else:
                parts.append(dict(part))
    return parts


@pytest.mark.parametrize("keeps_thoughts", [False, True], ids=["gemini-cli", "ai-sdk"])
@pytest.mark.parametrize("whole", [False, True], ids=["stream", "response"])
def test_foreign_thinking_rides_on_the_signed_function_call_for_gemini_clients(
    keeps_thoughts: bool, whole: bool
) -> None:
    call = ToolCallBlock("toolu_1", "get_weather", {"city": "Paris"}, '{"city":"Paris"}')
    msg = message(
        "anthropic-messages",
        ThinkingBlock("Let me check.", "EqQBCkYIsig"),
        TextBlock("Checking."),
        call,
        stop=StopReason.TOOL_USE,
    )
    if whole:
        from streamnorm import encode_response

        body = encode_response(msg, "google-generative-ai")
        parts = body["candidates"][0]["content"]["parts"]
    else:
        parts = _gemini_parts(b"".join(encode_stream(events_of(msg), "google-generative-ai")))
    assert not any(p.get("thought") and "thoughtSignature" in p for p in parts)
    signed = [p for p in parts if "functionCall" in p]
    assert len(signed) == 1 and "thoughtSignature" in signed[0]
    base64.b64decode(signed[0]["thoughtSignature"], validate=True)
    history = [p for p in parts if keeps_thoughts or not p.get("thought")]
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {"role": "model", "parts": history},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "get_weather", "response": {"t": 21}}}],
            },
        ]
    }
    turn = decode_request(body, "google-generative-ai", path="/v1beta/models/g:generateContent")
    back = turn.messages[1]
    assert isinstance(back, AssistantMessage) and back.api == "anthropic-messages"
    assert back.content == (
        ThinkingBlock("Let me check.", "EqQBCkYIsig"),
        TextBlock("Checking."),
        replace(call, signature=None, raw_arguments=back.content[2].raw_arguments),  # type: ignore[union-attr]
    )


@pytest.mark.parametrize(
    "text",
    ["plain", 'quote " and \\ backslash', "line\nbreak\ttab\r", "ünï 字 😀", "\x00\x1f\x7f", ""],
)
def test_a_text_delta_to_the_open_anthropic_block_is_the_general_frame(text: str) -> None:
    """The open block's next text piece is written from a template (the
    commonest event of a stream): the same bytes as the general frame, at
    the block's wire index, which the SDK reads back as the text."""
    from streamnorm.providers.wire_writer import frame

    encoder = StreamEncoder("anthropic-messages", model="m")
    encoder.feed(Start("openai-completions", "m", "r1"))
    for index in (0, 1):
        opened = encoder.feed(TextDelta(index, "first"))
        assert b"content_block_start" in opened
        written = encoder.feed(TextDelta(index, text))
        payload = {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        }
        assert written == frame(payload, "content_block_delta")
        data = written.split(b"data: ", 1)[1]
        assert json.loads(data)["delta"]["text"] == text
