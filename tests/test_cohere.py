"""``cohere-chat``: Cohere's v2 ``/v2/chat`` SSE stream.

The recorded streams are read back by the official ``cohere`` client
(``ClientV2.chat_stream`` over an httpx transport serving the same bytes) as
the oracle for text, tool plan, tool calls, citations, finish reason and
billed usage.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import cohere
import httpx
import pytest

from streamnorm import StopReason, TextBlock, ThinkingBlock, ToolCallBlock

from .support import (
    assert_chunk_invariant,
    done,
    extra_fixture_paths,
    failed,
    fixture_id,
    needs_fixtures,
    run_bytes,
    terminal,
)

API = "cohere-chat"
PATHS = extra_fixture_paths("cohere-chat")


def sse(*payloads: dict[str, Any], names: bool = True) -> bytes:
    out = b""
    for p in payloads:
        if names:
            out += f"event: {p['type']}\n".encode()
        out += b"data: " + json.dumps(p).encode() + b"\n\n"
    return out


def message(**fields: Any) -> dict[str, Any]:
    return {"delta": {"message": fields}}


START = {"id": "r1", "type": "message-start", **message(role="assistant", content=[])}


def end(reason: str, **delta: Any) -> dict[str, Any]:
    usage = {"billed_units": {"input_tokens": 3, "output_tokens": 5}, "tokens": {"input_tokens": 9}}
    return {"type": "message-end", "delta": {"finish_reason": reason, "usage": usage, **delta}}


def text_block(index: int, *pieces: str) -> list[dict[str, Any]]:
    content = {"type": "text", "text": ""}
    return [
        {"type": "content-start", "index": index, **message(content=content)},
        *(
            {"type": "content-delta", "index": index, **message(content={"text": p})}
            for p in pieces
        ),
        {"type": "content-end", "index": index},
    ]


def _sdk_events(data: bytes) -> list[Any]:
    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=data, headers={"content-type": "text/event-stream"})

    client = cohere.ClientV2(
        api_key="test",
        base_url="http://127.0.0.1:9",
        httpx_client=httpx.Client(transport=httpx.MockTransport(serve)),
    )
    return list(client.chat_stream(model="m", messages=[]))


@needs_fixtures
def test_all_cohere_fixtures_are_found() -> None:
    assert len(PATHS) == 8


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_fixture_is_chunk_invariant_with_one_terminal(path: Path) -> None:
    events = assert_chunk_invariant(path.read_bytes(), API, path.name)
    end = terminal(events)
    assert end.message.api == API
    if "error" in path.name:
        end = failed(events)
        assert (end.kind, end.code) == ("upstream", "INVALID_TOOL_GENERATION")
        assert end.reason.startswith("your request resulted in an invalid tool generation")
        assert end.message.raw_stop_reason == "ERROR"
        (plan,) = end.message.content
        assert isinstance(plan, ThinkingBlock) and plan.thinking.startswith("I will first")
    else:
        done(events)


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_the_cohere_client_reads_the_same_message(path: Path) -> None:
    data = path.read_bytes()
    sdk = _sdk_events(data)
    message = terminal(run_bytes(data, API)).message
    by_type: dict[str, list[Any]] = {}
    for e in sdk:
        by_type.setdefault(e.type, []).append(e)
    text = "".join(e.delta.message.content.text or "" for e in by_type.get("content-delta", []))
    plan = "".join(e.delta.message.tool_plan or "" for e in by_type.get("tool-plan-delta", []))
    assert "".join(b.text for b in message.content if isinstance(b, TextBlock)) == text
    assert "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock)) == plan
    starts = [e.delta.message.tool_calls for e in by_type.get("tool-call-start", [])]
    args = "".join(
        e.delta.message.tool_calls.function.arguments or ""
        for e in by_type.get("tool-call-delta", [])
    )
    calls = [b for b in message.content if isinstance(b, ToolCallBlock)]
    assert [(c.id, c.name) for c in calls] == [(s.id, s.function.name) for s in starts]
    assert "".join(c.raw_arguments for c in calls) == args
    cited = [c for b in message.content if isinstance(b, TextBlock) for c in b.citations]
    sdk_cited = [e.delta.message.citations for e in by_type.get("citation-start", [])]
    assert [(c["start"], c["end"], c["text"]) for c in cited] == [
        (c.start, c.end, c.text) for c in sdk_cited
    ]
    (last,) = by_type["message-end"]
    assert message.raw_stop_reason == last.delta.finish_reason
    billed = last.delta.usage.billed_units if last.delta.usage else None
    assert message.usage.input_tokens == int(billed.input_tokens or 0 if billed else 0)
    assert message.usage.output_tokens == int(billed.output_tokens or 0 if billed else 0)


def test_event_names_are_not_needed() -> None:
    payloads = (START, *text_block(0, "Hi", "!"), end("COMPLETE"))
    with_names = run_bytes(sse(*payloads), API)
    assert run_bytes(sse(*payloads, names=False), API) == with_names
    assert done(with_names).content == (TextBlock("Hi!"),)


def test_usage_is_billed_units_and_tokens_stay_raw() -> None:
    usage = done(run_bytes(sse(START, *text_block(0, "x"), end("COMPLETE")), API)).usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (3, 5, 8)
    assert usage.raw is not None and usage.raw["tokens"] == {"input_tokens": 9}


@pytest.mark.parametrize(
    ("reason", "stop"),
    [
        ("COMPLETE", StopReason.STOP),
        ("STOP_SEQUENCE", StopReason.STOP),
        ("MAX_TOKENS", StopReason.LENGTH),
        ("TOOL_CALL", StopReason.TOOL_USE),
    ],
)
def test_finish_reasons(reason: str, stop: StopReason) -> None:
    message = done(run_bytes(sse(START, *text_block(0, "x"), end(reason)), API)).message
    assert (message.stop_reason, message.raw_stop_reason) == (stop, reason)


def test_timeout_is_an_upstream_error_with_the_text() -> None:
    end_ = failed(run_bytes(sse(START, *text_block(0, "x"), end("TIMEOUT")), API))
    assert (end_.kind, end_.code) == ("upstream", "TIMEOUT")
    assert end_.message.content == (TextBlock("x"),)


def test_streamed_arguments_plan_and_call_in_order() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
    payloads = (
        START,
        {"type": "tool-plan-delta", **message(tool_plan="I will ")},
        {"type": "tool-plan-delta", **message(tool_plan="call f.")},
        {"type": "tool-call-start", "index": 0, **message(tool_calls=call)},
        *(
            {
                "type": "tool-call-delta",
                "index": 0,
                **message(tool_calls={"function": {"arguments": a}}),
            }
            for a in ('{"a"', ": 1}")
        ),
        {"type": "tool-call-end", "index": 0},
        end("TOOL_CALL"),
    )
    content = done(run_bytes(sse(*payloads), API)).content
    assert content == (
        ThinkingBlock("I will call f."),
        ToolCallBlock("c1", "f", {"a": 1}, '{"a": 1}'),
    )


def test_thinking_content_of_reasoning_models() -> None:
    thinking = {"type": "thinking", "thinking": ""}
    payloads = (
        START,
        {"type": "content-start", "index": 0, **message(content=thinking)},
        {"type": "content-delta", "index": 0, **message(content={"thinking": "hmm"})},
        {"type": "content-end", "index": 0},
        *text_block(1, "ok"),
        end("COMPLETE"),
    )
    assert done(run_bytes(sse(*payloads), API)).content == (ThinkingBlock("hmm"), TextBlock("ok"))


def test_citation_after_its_text_ended_is_backfilled() -> None:
    citation = {"start": 0, "end": 2, "text": "Hi", "sources": []}
    payloads = (
        START,
        *text_block(0, "Hi"),
        {"type": "citation-start", "index": 0, **message(citations=citation)},
        {"type": "citation-end", "index": 0},
        end("COMPLETE"),
    )
    events = run_bytes(sse(*payloads), API)
    assert done(events).content == (TextBlock("Hi", citations=(citation,)),)


def test_cut_before_message_end_is_truncated() -> None:
    end_ = failed(run_bytes(sse(START, *text_block(0, "Hel", "lo")), API))
    assert end_.kind == "truncated" and end_.message.content == (TextBlock("Hello"),)


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_a_cut_before_message_end_is_truncated_with_a_prefix_of_the_text(path: Path) -> None:
    data = path.read_bytes()
    full = terminal(run_bytes(data, API)).message
    texts = "".join(b.text for b in full.content if isinstance(b, TextBlock))
    rng = random.Random(path.name)
    last = data.index(b"}", data.index(b'"type":"message-end"'))  # its data is not whole before
    for cut in sorted(rng.randrange(0, last) for _ in range(40)):
        end = failed(run_bytes(data[:cut], API))
        assert end.kind == "truncated", (cut, end.reason)
        text = "".join(b.text for b in end.message.content if isinstance(b, TextBlock))
        assert texts.startswith(text)
