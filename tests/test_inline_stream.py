"""``NormalizingStream``: indices, terminal and trailer rules, iteration modes.

Reference: inline-tool-calls.md §1. Streams are built from canonical events
directly; one test runs a real recorded fixture through ``normalize`` first.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import pytest

from streamnorm import normalize
from streamnorm.apis import ApiName
from streamnorm.events import (
    BlockEnd,
    Done,
    Error,
    Event,
    NormalizationError,
    PromptProgress,
    Start,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageUpdate,
)
from streamnorm.inline import NormalizingStream, get_parser
from streamnorm.messages import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)

from .support import FIXTURES
from .test_inline_samples import run_stream, upstream

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
API: ApiName = "openai-completions"


def message(
    content: tuple[ContentBlock, ...] = (), stop: StopReason = StopReason.STOP
) -> AssistantMessage:
    return AssistantMessage(
        content,
        API,
        "m",
        stop,
        stop.value,
        Usage.of(5, 7),
        "resp_9",
        provider="vllm",
        response_model="m-served",
    )


def terminals(events: list[Event]) -> list[Event]:
    return [e for e in events if isinstance(e, (Done, Error))]


def check_indices(events: list[Event]) -> None:
    """Dense indices in order of first appearance, one BlockEnd per block."""
    first: list[int] = []
    ends: list[int] = []
    for e in events:
        if (
            isinstance(e, (TextDelta, ThinkingDelta, ToolCallDelta, BlockEnd))
            and e.index not in first
        ):
            first.append(e.index)
        if isinstance(e, BlockEnd):
            ends.append(e.index)
    assert sorted(first) == list(range(len(first)))
    assert sorted(ends) == sorted(first)
    assert len(ends) == len(set(ends))


# --------------------------------------------------------------------------
# Terminal event and stop reason


def test_done_rebuilt_with_calls_and_tool_use() -> None:
    events = run_stream("hermes", upstream(["Checking.\n", CALL, "\nDone."]))
    done = events[-1]
    assert isinstance(done, Done)
    assert len(terminals(events)) == 1
    kinds = [type(b).__name__ for b in done.message.content]
    assert kinds == ["TextBlock", "ToolCallBlock", "TextBlock"]
    assert done.stop_reason is StopReason.TOOL_USE
    assert done.message.raw_stop_reason == "stop"
    call = done.message.content[1]
    assert isinstance(call, ToolCallBlock)
    assert call.arguments == {"city": "Paris"} and call.error is None
    assert call.id.startswith("call_") and call.id.endswith("_0")
    check_indices(events)


def test_message_fields_copied_from_upstream() -> None:
    events: list[Event] = [Start(API, "m", "resp_9"), TextDelta(0, CALL)]
    events += [BlockEnd(0, TextBlock(CALL)), Done(message((TextBlock(CALL),)))]
    done = run_stream("hermes", events)[-1]
    assert isinstance(done, Done)
    m = done.message
    assert (m.api, m.model, m.provider, m.response_model, m.response_id) == (
        API,
        "m",
        "vllm",
        "m-served",
        "resp_9",
    )
    assert m.usage == Usage.of(5, 7)


def test_no_call_keeps_stop() -> None:
    done = run_stream("hermes", upstream(["Just text, <tool_call> mentioned."]))[-1]
    assert isinstance(done, Done) and done.stop_reason is StopReason.STOP


def test_length_stays_length_and_cut_call_is_incomplete() -> None:
    src = 'Writing.\n<tool_call>\n{"name": "write", "arguments": {"content": "Filing'
    events = run_stream("hermes", upstream(list(src), stop=StopReason.LENGTH))
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason is StopReason.LENGTH
    call = done.message.content[-1]
    assert isinstance(call, ToolCallBlock)
    assert call.error == "incomplete"
    assert call.raw_arguments == '{"content": "Filing'  # nothing invented
    assert call.arguments == {"content": "Filing"}
    errors = [e for e in events if isinstance(e, NormalizationError)]
    assert [e.kind for e in errors] == ["unclosed_tool_call"]
    assert errors[0].raw == src[len("Writing.\n") :]


def test_call_closed_only_by_finish_is_incomplete_under_length() -> None:
    """Arguments complete but the call's markup still open when the stream
    stopped for length: cut off (DESIGN §4). Under stop it is whole, with
    ``missing_close_marker``."""
    src = "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n"
    done = run_stream("qwen3_coder", upstream([src], stop=StopReason.LENGTH))[-1]
    assert isinstance(done, Done) and done.stop_reason is StopReason.LENGTH
    call = done.message.content[0]
    assert isinstance(call, ToolCallBlock) and call.error == "incomplete"
    assert call.raw_arguments == '{"a": 1}'
    events = run_stream("qwen3_coder", upstream([src]))
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason is StopReason.TOOL_USE
    call = done.message.content[0]
    assert isinstance(call, ToolCallBlock) and call.error is None
    kinds = [e.kind for e in events if isinstance(e, NormalizationError)]
    assert kinds == ["missing_close_marker"]


def test_json_object_complete_before_length_is_whole() -> None:
    """A JSON call ends with its object; a missing close tag after it does
    not make it cut."""
    src = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}'
    done = run_stream("hermes", upstream([src], stop=StopReason.LENGTH))[-1]
    assert isinstance(done, Done)
    call = done.message.content[0]
    assert isinstance(call, ToolCallBlock) and call.error is None


def test_content_filter_and_pause_never_change() -> None:
    for stop in (StopReason.CONTENT_FILTER, StopReason.PAUSE):
        done = run_stream("hermes", upstream([CALL], stop=stop))[-1]
        assert isinstance(done, Done) and done.stop_reason is stop


def test_upstream_error_after_finish() -> None:
    events: list[Event] = [Start(API, "m", "r"), TextDelta(0, 'Hi <tool_call>\n{"name": "f"')]
    partial = message((TextBlock("Hi"),), StopReason.ERROR)
    events.append(Error("upstream", "overloaded", "503", partial))
    out = run_stream("hermes", events)
    assert len(terminals(out)) == 1
    err = out[-1]
    assert isinstance(err, Error)
    assert (err.kind, err.reason, err.code) == ("upstream", "overloaded", "503")
    kinds = [type(b).__name__ for b in err.message.content]
    assert kinds == ["TextBlock", "ToolCallBlock"]
    call = err.message.content[1]
    assert isinstance(call, ToolCallBlock) and call.error == "incomplete"
    assert err.message.stop_reason is StopReason.ERROR
    check_indices(out)


def test_inner_without_terminal_ends_truncated() -> None:
    events: list[Event] = [Start(API, "m", "r"), TextDelta(0, "Hello <think")]
    out = run_stream("hermes", events)
    assert len(terminals(out)) == 1
    err = out[-1]
    assert isinstance(err, Error) and err.kind == "truncated"
    assert err.message.text == "Hello <think"  # held-back text flushed, not lost
    assert err.message.stop_reason is StopReason.ERROR
    assert err.message.api == API


def test_empty_inner() -> None:
    out = run_stream("hermes", [])
    assert len(out) == 1 and isinstance(out[0], Error) and out[0].kind == "truncated"


# --------------------------------------------------------------------------
# After the terminal event


def test_trailer_after_done() -> None:
    events = upstream(["Hi ", CALL])
    late_usage = UsageUpdate(Usage.of(5, 9))
    events += [
        late_usage,
        PromptProgress(1, 2, 0, 3.0),
        NormalizationError("x", "y", None),
        TextDelta(0, "late text"),
        ToolCallDelta(3, "c", "n", "{}"),
        Done(message()),
        Error("upstream", "boom", None, message()),
    ]
    out = run_stream("hermes", events)
    i = next(k for k, e in enumerate(out) if isinstance(e, Done))
    after = out[i + 1 :]
    assert after[0] is late_usage
    assert isinstance(after[1], PromptProgress)
    assert isinstance(after[2], NormalizationError) and after[2].kind == "x"
    dropped = [e for e in after if isinstance(e, NormalizationError) and e.kind != "x"]
    assert [e.kind for e in dropped] == ["content_after_done", "error_after_done"]
    assert dropped[1].detail == "boom"
    assert not any(isinstance(e, (TextDelta, ToolCallDelta, Done, Error)) for e in after)
    assert len(terminals(out)) == 1


# --------------------------------------------------------------------------
# Indices


def test_native_calls_never_collide_with_inline_calls() -> None:
    text = "Look: " + CALL + " and more"
    native = ToolCallBlock("call_native", "lookup", {"q": 1}, '{"q":1}')
    events: list[Event] = [
        Start(API, "m", "resp_9"),
        TextDelta(0, text[:20]),
        ToolCallDelta(1, "call_native", "lookup", ""),
        TextDelta(0, text[20:]),
        ToolCallDelta(1, "call_native", "lookup", '{"q":1}'),
        BlockEnd(0, TextBlock(text)),
        BlockEnd(1, native),
        Done(message((TextBlock(text), native))),
    ]
    out = run_stream("hermes", events)
    check_indices(out)
    done = out[-1]
    assert isinstance(done, Done)
    blocks = done.message.content
    names = [b.name for b in blocks if isinstance(b, ToolCallBlock)]
    assert sorted(names) == ["get_weather", "lookup"]
    ids = [b.id for b in blocks if isinstance(b, ToolCallBlock)]
    assert len(set(ids)) == 2
    # The native block is forwarded unchanged apart from its index.
    assert native in blocks
    native_index = blocks.index(native)
    forwarded = [e for e in out if isinstance(e, ToolCallDelta) and e.name == "lookup"]
    assert {e.index for e in forwarded} == {native_index}
    assert [e.raw_json_delta for e in forwarded] == ["", '{"q":1}']


def test_upstream_native_ids_are_not_reused() -> None:
    """An inline call never gets the synthesised id of a native call."""
    native = ToolCallBlock("call_0", "n", {}, "")
    events: list[Event] = [
        Start(API, "m", None),
        ToolCallDelta(0, "call_0", "n", ""),
        BlockEnd(0, native),
        TextDelta(1, CALL),
        BlockEnd(1, TextBlock(CALL)),
        Done(message((native, TextBlock(CALL)))),
    ]
    done = run_stream("hermes", events)[-1]
    assert isinstance(done, Done)
    ids = [b.id for b in done.message.content if isinstance(b, ToolCallBlock)]
    assert ids[0] == "call_0" and ids[1] != "call_0"


def test_blocks_without_deltas_keep_their_place() -> None:
    """A provider block and redacted thinking appear only at their end; their
    output index is reserved when a later upstream index shows up first."""
    provider = ProviderBlock(API, "web_search_call", {"id": "ws_1"})
    redacted = ThinkingBlock("", "opaque", redacted=True)
    events: list[Event] = [
        Start(API, "m", "r"),
        TextDelta(2, "After search: " + CALL),
        BlockEnd(0, redacted),
        BlockEnd(1, provider),
        BlockEnd(2, TextBlock("...")),
        Done(message()),
    ]
    out = run_stream("hermes", events)
    check_indices(out)
    done = out[-1]
    assert isinstance(done, Done)
    content = done.message.content
    assert content[0] == redacted and content[1] == provider
    assert [type(b).__name__ for b in content[2:]] == ["TextBlock", "ToolCallBlock"]


def test_text_block_boundary_carries_held_prefix() -> None:
    """A marker split across upstream text blocks is still recognised; the
    first block's text ends where the marker began."""
    a, b = "Intro <tool_", 'call>{"name": "f", "arguments": {}}</tool_call> outro'
    events: list[Event] = [
        Start(API, "m", "r"),
        TextDelta(0, a),
        BlockEnd(0, TextBlock(a)),
        TextDelta(1, b),
        BlockEnd(1, TextBlock(b)),
        Done(message()),
    ]
    out = run_stream("hermes", events)
    check_indices(out)
    done = out[-1]
    assert isinstance(done, Done)
    content = done.message.content
    assert [type(x).__name__ for x in content] == ["TextBlock", "ToolCallBlock", "TextBlock"]
    assert content[0] == TextBlock("Intro ") and content[2] == TextBlock(" outro")


def test_reasoning_channel_and_signature() -> None:
    events: list[Event] = [
        Start(API, "m", "r"),
        ThinkingDelta(0, "Let me think."),
        ThinkingDelta(0, "", "sig-1"),
        BlockEnd(0, ThinkingBlock("Let me think.", "sig-1")),
        TextDelta(1, "<think>inline</think>Answer."),
        BlockEnd(1, TextBlock("...")),
        Done(message()),
    ]
    out = run_stream("hermes", events)
    check_indices(out)
    done = out[-1]
    assert isinstance(done, Done)
    assert done.message.content == (
        ThinkingBlock("Let me think.", "sig-1"),
        ThinkingBlock("inline"),
        TextBlock("Answer."),
    )
    sigs = [e.signature for e in out if isinstance(e, ThinkingDelta) and e.signature]
    assert sigs == ["sig-1"]


def test_call_in_reasoning_channel_extracted() -> None:
    events: list[Event] = [
        Start(API, "m", "r"),
        ThinkingDelta(0, "Plan. " + CALL),
        BlockEnd(0, ThinkingBlock("...")),
        TextDelta(1, "Done."),
        BlockEnd(1, TextBlock("Done.")),
        Done(message()),
    ]
    done = run_stream("qwen3_coder", events)[-1]
    assert isinstance(done, Done)
    kinds = [type(b).__name__ for b in done.message.content]
    assert kinds == ["ThinkingBlock", "ToolCallBlock", "TextBlock"]
    assert done.stop_reason is StopReason.TOOL_USE


# --------------------------------------------------------------------------
# Streaming behaviour


def test_arguments_stream_before_the_close_marker() -> None:
    stream = NormalizingStream([], get_parser("hermes"))
    stream.feed(Start(API, "m", "r"))
    seen = []
    for piece in ['<tool_call>\n{"name": "write", "arguments": {"content": "', "abc", "def"]:
        seen += stream.feed(TextDelta(0, piece))
    deltas = [e for e in seen if isinstance(e, ToolCallDelta)]
    assert deltas[0].raw_json_delta == "" and deltas[0].name == "write"
    assert "".join(e.raw_json_delta for e in deltas) == '{"content": "abcdef'
    assert deltas[-1].partial_args == {"content": "abcdef"}


def test_qwen_xml_string_values_stream() -> None:
    stream = NormalizingStream([], get_parser("qwen3_coder"))
    stream.feed(Start(API, "m", "r"))
    seen = []
    src = "<tool_call>\n<function=write_file>\n<parameter=content>\nline 1\nline 2"
    for c in src:
        seen += stream.feed(TextDelta(0, c))
    text = "".join(e.raw_json_delta for e in seen if isinstance(e, ToolCallDelta))
    assert text == '{"content": "line 1\\nline 2'


def test_lazy_pull() -> None:
    pulled: list[int] = []

    def inner() -> Iterator[Event]:
        for i, ev in enumerate(upstream(["a", "b", "c"])):
            pulled.append(i)
            yield ev

    it = iter(NormalizingStream(inner(), get_parser("hermes")))
    first = next(it)
    assert isinstance(first, Start) and pulled == [0]
    next(it)
    assert pulled == [0, 1]


def test_async_iteration() -> None:
    async def inner() -> AsyncIterator[Event]:
        for ev in upstream(["Checking.\n", CALL[:30], CALL[30:]]):
            await asyncio.sleep(0)
            yield ev

    async def collect() -> list[Event]:
        return [ev async for ev in NormalizingStream(inner(), get_parser("hermes"))]

    out = asyncio.run(collect())
    sync = run_stream("hermes", upstream(["Checking.\n", CALL[:30], CALL[30:]]))
    assert [e.to_dict() for e in out] == [e.to_dict() for e in sync]


def test_async_over_sync_inner_and_sync_over_async_refused() -> None:
    async def collect() -> list[Event]:
        return [ev async for ev in NormalizingStream(upstream([CALL]), get_parser("hermes"))]

    assert isinstance(asyncio.run(collect())[-1], Done)

    async def agen() -> AsyncIterator[Event]:
        yield Start(API, "m", None)

    with pytest.raises(TypeError):
        list(NormalizingStream(agen(), get_parser("hermes")))


def test_deterministic() -> None:
    evs = upstream(["x ", CALL, " y"])
    a = [e.to_dict() for e in run_stream("hermes", evs)]
    b = [e.to_dict() for e in run_stream("hermes", evs)]
    assert a == b


def test_passthrough_fixture_matches_upstream() -> None:
    """A stream whose server returned structured calls passes through
    unchanged apart from indices (here: identical, no inline markup)."""
    path = FIXTURES / "openai-completions/openai-tool-calls-parallel.sse"
    if not path.exists():
        pytest.skip("no fixture corpus")
    data = path.read_bytes()
    up = list(normalize([data], api="openai-completions"))
    out = list(NormalizingStream(up, get_parser("hermes")))
    assert isinstance(up[-1], Done) and isinstance(out[-1], Done)
    assert out[-1].message == up[-1].message
    assert [e.to_dict() for e in out] == [e.to_dict() for e in up]


@pytest.mark.parametrize(
    ("arguments", "diagnostic"),
    [('{"a": 1,}', "invalid_tool_arguments"), ('{"s": "tab\there"}', "repaired_arguments")],
)
def test_inline_calls_are_finalised_as_native_ones(arguments: str, diagnostic: str) -> None:
    """One accumulator: broken or repaired arguments are reported the same
    way whether the server structured the call or the model wrote it inline."""
    inline = run_stream(
        "hermes", upstream([f'<tool_call>{{"name": "f", "arguments": {arguments}}}</tool_call>'])
    )
    relayed_natively = list(normalize([_completions_call(arguments)], api=API))
    for events in (inline, relayed_natively):
        kinds = [e.kind for e in events if isinstance(e, NormalizationError)]
        assert kinds == [diagnostic], events
        done = events[-1]
        assert isinstance(done, Done)
        (call,) = (b for b in done.content if isinstance(b, ToolCallBlock))
        assert (call.error is None) == (diagnostic == "repaired_arguments")


def _completions_call(arguments: str) -> bytes:
    """A Chat Completions stream of one structured call with ``arguments``."""
    delta = {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "f", "arguments": arguments},
            }
        ]
    }
    chunks = [
        {"id": "r", "model": "m", "choices": [{"index": 0, "delta": delta}]},
        {
            "id": "r",
            "model": "m",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        },
    ]
    return (
        b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
    )
