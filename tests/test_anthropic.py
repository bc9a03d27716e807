"""Anthropic Messages: every fixture, the exact content of key fixtures, and
the edge cases of providers.md §9.1 that no fixture covers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamnorm import (
    BlockEnd,
    Done,
    Error,
    NormalizationError,
    ProviderBlock,
    Start,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
)
from streamnorm.apis import ApiName

from .support import final, fixture_id, fixture_paths, load, needs_fixtures, run_bytes

API: ApiName = "anthropic-messages"

# What each recording ends with, read from its final message_delta (all 25
# recordings are complete streams ending in message_stop).
EXPECTED_STOP = {
    "advisor-tool.sse": ("end_turn", StopReason.STOP),
    "compaction-usage-cache.sse": ("end_turn", StopReason.STOP),
    "max-tokens-mid-tool-input.sse": ("max_tokens", StopReason.LENGTH),
    "max-tokens-text.sse": ("max_tokens", StopReason.LENGTH),
    "mcp-connector.sse": ("end_turn", StopReason.STOP),
    "prompt-cache-read-usage.sse": ("end_turn", StopReason.STOP),
    "prompt-cache-write-usage.sse": ("end_turn", StopReason.STOP),
    "redacted-thinking.sse": ("end_turn", StopReason.STOP),
    "server-code-execution.sse": ("end_turn", StopReason.STOP),
    "server-web-fetch.sse": ("end_turn", StopReason.STOP),
    "server-web-search-citations.sse": ("end_turn", StopReason.STOP),
    "server-web-search-pause-turn.sse": ("pause_turn", StopReason.PAUSE),
    "server-web-search-thinking.sse": ("end_turn", StopReason.STOP),
    "structured-output-format.sse": ("end_turn", StopReason.STOP),
    "text-basic.sse": ("end_turn", StopReason.STOP),
    "text-claude3-legacy-usage.sse": ("end_turn", StopReason.STOP),
    "text-stop-sequence.sse": ("stop_sequence", StopReason.STOP),
    "thinking-adaptive-opus.sse": ("end_turn", StopReason.STOP),
    "thinking-signature.sse": ("end_turn", StopReason.STOP),
    "thinking-then-tool-use.sse": ("tool_use", StopReason.TOOL_USE),
    "tool-search.sse": ("tool_use", StopReason.TOOL_USE),
    "tool-use-long-input-json.sse": ("tool_use", StopReason.TOOL_USE),
    "tool-use-no-args.sse": ("tool_use", StopReason.TOOL_USE),
    "tool-use-parallel.sse": ("tool_use", StopReason.TOOL_USE),
    "tool-use-text-then-two-tools.sse": ("tool_use", StopReason.TOOL_USE),
}


@needs_fixtures
def test_expectations_cover_every_fixture() -> None:
    assert {p.name for p in fixture_paths(API)} == set(EXPECTED_STOP)


@needs_fixtures
@pytest.mark.parametrize("path", fixture_paths(API), ids=fixture_id)
def test_fixture_outcome(path: Path) -> None:
    end = final(path.read_bytes(), API)
    assert isinstance(end, Done), end
    raw, reason = EXPECTED_STOP[path.name]
    assert end.message.raw_stop_reason == raw
    assert end.stop_reason is reason
    assert end.message.api == API
    # No scratch state in final blocks and every tool call parsed cleanly,
    # except the one cut by max_tokens.
    for block in end.content:
        if isinstance(block, ToolCallBlock) and path.name != "max-tokens-mid-tool-input.sse":
            assert block.error is None
            assert block.arguments == (
                json.loads(block.raw_arguments) if block.raw_arguments else {}
            )


@needs_fixtures
def test_text_basic_exact() -> None:
    events = run_bytes(load(f"{API}/text-basic.sse"), API)
    assert events[0] == Start(
        API, "claude-sonnet-4-5-20250929", "msg_017A4s3HAsrqf5d2WvBmrpLr", "anthropic"
    )
    assert [e.delta for e in events if isinstance(e, TextDelta)] == [
        "-",
        " Captain",
        "\n- Sc",
        "oop",
    ]
    done = events[-1]
    assert isinstance(done, Done)
    assert done.content == (TextBlock("- Captain\n- Scoop"),)
    assert done.usage == Usage.of(input_tokens=17, output_tokens=10)
    assert done.message.model == "claude-sonnet-4-5-20250929"
    assert done.message.response_id == "msg_017A4s3HAsrqf5d2WvBmrpLr"


@needs_fixtures
def test_requested_model_wins_over_reported() -> None:
    done = final(load(f"{API}/text-basic.sse"), API, model="claude-sonnet-4-5")
    assert done.message.model == "claude-sonnet-4-5"
    assert done.message.response_model == "claude-sonnet-4-5-20250929"


@needs_fixtures
def test_thinking_signature() -> None:
    events = run_bytes(load(f"{API}/thinking-signature.sse"), API)
    done = events[-1]
    assert isinstance(done, Done)
    thinking, text = done.content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert thinking.thinking.startswith(
        "This is a straightforward question about pedestrian safety."
    )
    assert thinking.signature and len(thinking.signature) > 100
    sig_events = [e for e in events if isinstance(e, ThinkingDelta) and e.signature]
    assert (
        len(sig_events) == 1
        and sig_events[0].delta == ""
        and sig_events[0].signature == thinking.signature
    )
    assert text.text.startswith("Here are the basic steps for safely crossing the street:")
    assert done.usage == Usage.of(input_tokens=43, output_tokens=282)


@needs_fixtures
def test_redacted_thinking_kept_in_order() -> None:
    events = run_bytes(load(f"{API}/redacted-thinking.sse"), API)
    done = events[-1]
    assert isinstance(done, Done)
    a, b, text = done.content
    for block in (a, b):
        assert isinstance(block, ThinkingBlock)
        assert block.redacted and block.thinking == "" and block.signature
    assert isinstance(text, TextBlock)
    assert not any(isinstance(e, ThinkingDelta) for e in events)


@needs_fixtures
def test_parallel_tool_use() -> None:
    done = final(load(f"{API}/tool-use-parallel.sse"), API)
    assert isinstance(done, Done)
    assert done.content == (
        ToolCallBlock(
            "toolu_01CM7Nqnu3tF2UqzksSCxsqt", "plus", {"a": 1, "b": 2}, '{"a": 1, "b": 2}'
        ),
        ToolCallBlock(
            "toolu_01MGZBHepZSnpCrVLDT34yxu", "minus", {"a": 2, "b": 1}, '{"a": 2, "b": 1}'
        ),
    )
    # message_delta carries only output_tokens: input stays from message_start.
    assert done.usage == Usage.of(input_tokens=469, output_tokens=104)


@needs_fixtures
def test_tool_without_arguments() -> None:
    events = run_bytes(load(f"{API}/tool-use-no-args.sse"), API)
    done = events[-1]
    assert isinstance(done, Done)
    call = done.content[1]
    assert call == ToolCallBlock("toolu_01QE1WLsSVp5hy5Q3GmGTmjP", "updateIssueList", {}, "")
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [d.raw_json_delta for d in deltas] == [""]  # the opening delta only
    assert deltas[0].id == "toolu_01QE1WLsSVp5hy5Q3GmGTmjP" and deltas[0].partial_args == {}


@needs_fixtures
def test_max_tokens_mid_tool_input() -> None:
    """Block 1 is cut by max_tokens and never stopped; the file ends with a
    message_stop that has no line terminator at all."""
    events = run_bytes(load(f"{API}/max-tokens-mid-tool-input.sse"), API)
    done = events[-1]
    assert isinstance(done, Done)
    assert done.stop_reason is StopReason.LENGTH and done.message.raw_stop_reason == "max_tokens"
    call = done.content[1]
    assert isinstance(call, ToolCallBlock)
    assert call.error == "incomplete"
    assert call.name == "make_file" and call.id == "toolu_01EKqbqmZrGRXy18eN7m9kvY"
    assert call.arguments["filename"] == "taxes.txt"
    assert (
        call.arguments["lines_of_text"][0]
        == "# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s"
    )
    assert done.usage == Usage.of(input_tokens=450, output_tokens=124)
    ends = [e.index for e in events if isinstance(e, BlockEnd)]
    assert ends == [0, 1]


@needs_fixtures
def test_cache_usage() -> None:
    read = final(load(f"{API}/prompt-cache-read-usage.sse"), API)
    write = final(load(f"{API}/prompt-cache-write-usage.sse"), API)
    assert read.message.usage == Usage.of(input_tokens=4, output_tokens=221, cache_read_tokens=1165)
    assert write.message.usage == Usage.of(
        input_tokens=4, output_tokens=201, cache_write_tokens=1165
    )
    assert read.message.usage.total_tokens == 4 + 221 + 1165


@needs_fixtures
def test_compaction_iterations_are_added() -> None:
    done = final(load(f"{API}/compaction-usage-cache.sse"), API)
    assert isinstance(done, Done)
    u = done.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens) == (281, 91, 55096)
    compaction = done.content[0]
    assert isinstance(compaction, ProviderBlock) and compaction.kind == "compaction"
    assert isinstance(compaction.data["content"], str) and compaction.data["content"]


@needs_fixtures
def test_advisor_iterations_are_not_added() -> None:
    done = final(load(f"{API}/advisor-tool.sse"), API)
    assert isinstance(done, Done)
    assert (done.usage.input_tokens, done.usage.output_tokens) == (2411, 145)
    assert done.usage.raw is not None and "iterations" in done.usage.raw


@needs_fixtures
def test_server_tools_and_citations() -> None:
    done = final(load(f"{API}/server-web-search-citations.sse"), API)
    assert isinstance(done, Done)
    first = done.content[0]
    assert isinstance(first, ProviderBlock) and first.kind == "server_tool_use"
    assert first.data["input"] == {"query": "top world news today"}
    assert first.data["id"] == "srvtoolu_01NcU4XNwyxWK6a9tcJZ8wGY"
    assert (
        isinstance(done.content[1], ProviderBlock)
        and done.content[1].kind == "web_search_tool_result"
    )
    cited = [b for b in done.content if isinstance(b, TextBlock) and b.citations]
    assert cited, "citations_delta must land in TextBlock.citations"
    assert all(c["type"] == "web_search_result_location" for b in cited for c in b.citations)
    assert done.stop_reason is StopReason.STOP  # server tools are not client tool calls
    assert (done.usage.input_tokens, done.usage.output_tokens) == (31772, 644)


@needs_fixtures
def test_pause_turn_and_thinking_tokens() -> None:
    done = final(load(f"{API}/server-web-search-pause-turn.sse"), API)
    assert isinstance(done, Done) and done.stop_reason is StopReason.PAUSE


# ---------------------------------------------------------------------------
# Synthetic edge cases


def sse(*payloads: dict[str, Any] | str, named: bool = True) -> bytes:
    out = []
    for p in payloads:
        data = p if isinstance(p, str) else json.dumps(p)
        kind = json.loads(data).get("type", "message") if named and data.startswith("{") else None
        out.append((f"event: {kind}\n" if kind else "") + f"data: {data}\n\n")
    return "".join(out).encode()


START = {
    "type": "message_start",
    "message": {
        "id": "msg_1",
        "model": "claude-x",
        "usage": {"input_tokens": 5, "output_tokens": 1},
    },
}
STOP = {"type": "message_stop"}


def delta(index: int, **d: object) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def block(index: int, **b: object) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": b}


def stop(reason: str | None, **usage: int) -> dict[str, Any]:
    return {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": usage or None}


def test_without_event_lines_still_decodes() -> None:
    body = sse(
        START,
        block(0, type="text", text=""),
        delta(0, type="text_delta", text="hi"),
        {"type": "content_block_stop", "index": 0},
        stop("end_turn", output_tokens=3),
        STOP,
        named=False,
    )
    done = final(body, API)
    assert isinstance(done, Done) and done.content == (TextBlock("hi"),)


def test_initial_content_is_kept() -> None:
    body = sse(
        START,
        block(0, type="text", text="Hello"),
        delta(0, type="text_delta", text=" world"),
        {"type": "content_block_stop", "index": 0},
        block(1, type="tool_use", id="t1", name="f", input={"x": 1, "y": "é"}),
        {"type": "content_block_stop", "index": 1},
        stop("tool_use"),
        STOP,
    )
    events = run_bytes(body, API)
    done = events[-1]
    assert isinstance(done, Done)
    assert done.content[0] == TextBlock("Hello world")
    call = done.content[1]
    assert call == ToolCallBlock("t1", "f", {"x": 1, "y": "é"}, '{"x":1,"y":"é"}')
    raw = [e.raw_json_delta for e in events if isinstance(e, ToolCallDelta)]
    assert raw == ["", '{"x":1,"y":"é"}']


def test_eager_input_yields_to_deltas() -> None:
    body = sse(
        START,
        block(0, type="tool_use", id="t1", name="f", input={"stale": True}),
        delta(0, type="input_json_delta", partial_json=""),
        delta(0, type="input_json_delta", partial_json='{"a":'),
        delta(0, type="input_json_delta", partial_json="1}"),
        {"type": "content_block_stop", "index": 0},
        stop("tool_use"),
        STOP,
    )
    done = final(body, API)
    assert isinstance(done, Done)
    assert done.content[0] == ToolCallBlock("t1", "f", {"a": 1}, '{"a":1}')


def test_invalid_tool_json_does_not_stop_the_stream() -> None:
    body = sse(
        START,
        block(0, type="tool_use", id="t1", name="f", input={}),
        delta(0, type="input_json_delta", partial_json='{"q": "say "hi""}'),
        {"type": "content_block_stop", "index": 0},
        block(1, type="text", text=""),
        delta(1, type="text_delta", text="after"),
        {"type": "content_block_stop", "index": 1},
        stop("tool_use"),
        STOP,
    )
    events = run_bytes(body, API)
    done = events[-1]
    assert isinstance(done, Done)
    call = done.content[0]
    assert isinstance(call, ToolCallBlock) and call.error and call.error.startswith("invalid_json")
    assert done.content[1] == TextBlock("after")
    assert any(
        isinstance(e, NormalizationError) and e.kind == "invalid_tool_arguments" for e in events
    )


def test_signature_delta_replaces_and_thinking_without_signature_is_valid() -> None:
    body = sse(
        START,
        block(0, type="thinking", thinking="", signature=""),
        delta(0, type="thinking_delta", thinking="hmm"),
        delta(0, type="signature_delta", signature="AAA"),
        delta(0, type="signature_delta", signature="BBB"),
        {"type": "content_block_stop", "index": 0},
        block(1, type="thinking", thinking="plain"),
        {"type": "content_block_stop", "index": 1},
        stop("end_turn"),
        STOP,
    )
    done = final(body, API)
    assert isinstance(done, Done)
    assert done.content == (ThinkingBlock("hmm", "BBB"), ThinkingBlock("plain", None))


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("refusal", StopReason.CONTENT_FILTER),
        ("model_context_window_exceeded", StopReason.LENGTH),
        ("sensitive", StopReason.CONTENT_FILTER),
        ("stop_sequence", StopReason.STOP),
    ],
)
def test_stop_reason_mapping(raw: str, reason: StopReason) -> None:
    done = final(sse(START, stop(raw), STOP), API)
    assert (
        isinstance(done, Done)
        and done.stop_reason is reason
        and done.message.raw_stop_reason == raw
    )


def test_unknown_and_missing_stop_reasons_never_raise() -> None:
    events = run_bytes(sse(START, stop("brand_new"), STOP), API)
    assert isinstance(events[-1], Done) and events[-1].stop_reason is StopReason.STOP
    assert any(
        isinstance(e, NormalizationError) and e.kind == "unknown_stop_reason" for e in events
    )
    events = run_bytes(sse(START, STOP), API)
    assert isinstance(events[-1], Done) and events[-1].stop_reason is StopReason.STOP
    assert any(
        isinstance(e, NormalizationError) and e.kind == "missing_stop_reason" for e in events
    )


def test_stop_reason_error_is_an_upstream_error() -> None:
    events = run_bytes(sse(START, block(0, type="text", text="a"), stop("error"), STOP), API)
    end = events[-1]
    assert isinstance(end, Error) and end.kind == "upstream" and end.code == "error"
    assert end.message.content == (TextBlock("a"),)
    assert end.message.stop_reason is StopReason.ERROR


def test_error_event_mid_stream() -> None:
    body = (
        sse(START, block(0, type="text", text=""), delta(0, type="text_delta", text="part"))
        + (
            b"event: error\ndata: "
            b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
        )
        + sse(STOP)
    )
    events = run_bytes(body, API)
    end = events[-1]
    assert isinstance(end, Error)
    assert (end.kind, end.code, end.reason) == ("upstream", "overloaded_error", "Overloaded")
    assert end.message.content == (TextBlock("part"),)
    assert sum(isinstance(e, (Done, Error)) for e in events) == 1


def test_truncated_keeps_content_and_raw_stop() -> None:
    body = sse(
        START,
        block(0, type="text", text=""),
        delta(0, type="text_delta", text="abc"),
        stop("end_turn", output_tokens=9),
    )
    end = final(body, API)
    assert isinstance(end, Error) and end.kind == "truncated"
    assert end.message.content == (TextBlock("abc"),)
    assert end.message.raw_stop_reason == "end_turn"
    assert end.message.usage.output_tokens == 9


def test_final_block_cut_inside_json_is_discarded() -> None:
    body = sse(START, stop("end_turn")) + b'data: {"type":"mess'
    end = final(body, API)
    assert isinstance(end, Error) and end.kind == "truncated"


def test_input_after_message_stop_is_ignored() -> None:
    body = sse(START, stop("end_turn"), STOP, block(0, type="text", text="late"), STOP)
    events = run_bytes(body, API)
    assert isinstance(events[-1], Done) and events[-1].content == ()


def test_delta_for_unknown_block_and_duplicate_start() -> None:
    body = sse(
        START,
        delta(7, type="text_delta", text="lost"),
        block(0, type="text", text="one"),
        block(0, type="text", text="two"),
        delta(0, type="bogus_delta", x=1),
        stop("end_turn"),
        STOP,
    )
    events = run_bytes(body, API)
    kinds = [e.kind for e in events if isinstance(e, NormalizationError)]
    assert kinds == ["delta_for_unknown_block", "duplicate_block_start", "unknown_delta"]
    done = events[-1]
    assert isinstance(done, Done) and done.content == (TextBlock("one"), TextBlock("two"))


def test_ping_inside_blocks_is_ignored() -> None:
    body = sse(
        START,
        block(0, type="text", text=""),
        {"type": "ping"},
        delta(0, type="text_delta", text="x"),
        {"type": "ping"},
        stop("end_turn"),
        STOP,
    )
    done = final(body, API)
    assert isinstance(done, Done) and done.content == (TextBlock("x"),)
