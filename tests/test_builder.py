"""``MessageBuilder``'s own contract, independent of any wire API: indices,
exactly one ``BlockEnd`` per block, the terminal rules, tool-call
finalisation and ids, relaying another stream's blocks and terminal."""

from __future__ import annotations

import pytest

from streamnorm import (
    AssistantMessage,
    BlockEnd,
    Done,
    Error,
    Event,
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
    UsageUpdate,
)
from streamnorm.builder import MergedEntries, MessageBuilder, Pieces

STOPS = {"end": StopReason.STOP, "max": StopReason.LENGTH, "boom": None}


def builder(**options: object) -> MessageBuilder:
    return MessageBuilder("test-api", stop_table=STOPS, **options)  # type: ignore[arg-type]


def drain(b: MessageBuilder) -> list[Event]:
    events, b.events = b.events, []
    return events


def kinds(events: list[Event]) -> list[str]:
    return [type(e).__name__ for e in events]


def diagnostics(events: list[Event]) -> list[str]:
    return [e.kind for e in events if isinstance(e, NormalizationError)]


def test_indices_are_dense_in_order_of_first_appearance_whatever_the_keys() -> None:
    b = builder()
    b.start("m", "r")
    b.open_text(("output", 7))
    b.open_tool_call("call-key", id="c1", name="f")
    b.open_thinking(42)
    b.append_thinking(42, "hm")
    b.append_text(("output", 7), "hi")
    b.append_arguments("call-key", '{"a":1}')
    events = drain(b)
    assert [(type(e).__name__, getattr(e, "index", None)) for e in events[1:]] == [
        ("ToolCallDelta", 1),
        ("ThinkingDelta", 2),
        ("TextDelta", 0),
        ("ToolCallDelta", 1),
    ]


def test_every_block_ends_exactly_once_and_open_blocks_end_in_index_order() -> None:
    b = builder()
    b.start()
    for key in ("a", "b", "c"):
        b.open_text(key, text=key)
    b.end_block("b")
    b.end_block("b")  # a second end does nothing
    b.set_stop_reason("end")
    b.finish()
    ends = [e.index for e in drain(b) if isinstance(e, BlockEnd)]
    assert ends == [1, 0, 2]


def test_start_is_first_and_diagnostics_before_it_follow_it() -> None:
    b = builder()
    b.diagnostic("early", "before the stream identified itself")
    assert drain(b) == []
    b.start("m", "r")
    events = drain(b)
    assert events[0] == Start("test-api", "m", "r")
    assert diagnostics(events) == ["early"]


def test_content_before_start_emits_start_and_says_so() -> None:
    b = builder()
    b.open_text(0, text="x")
    events = drain(b)
    assert isinstance(events[0], Start)
    assert "missing_start" in diagnostics(events)


def test_nothing_is_emitted_after_the_terminal_event() -> None:
    b = builder()
    b.start()
    b.open_text(0, text="x")
    b.set_stop_reason("end")
    b.finish()
    drain(b)
    b.append_text(0, "more")
    b.set_usage(Usage.of(1, 2))
    b.diagnostic("late", "ignored")
    b.finish()
    b.fail("truncated", "ignored")
    assert drain(b) == []


def test_stop_with_tool_calls_becomes_tool_use_and_length_cuts_them() -> None:
    b = builder()
    b.start()
    b.open_tool_call(0, id="c", name="f")
    b.append_arguments(0, '{"a": 1}')
    b.end_block(0)
    b.set_stop_reason("end")
    b.finish()
    done = drain(b)[-1]
    assert isinstance(done, Done) and done.stop_reason is StopReason.TOOL_USE
    call = done.content[0]
    assert isinstance(call, ToolCallBlock) and call.error is None and call.arguments == {"a": 1}

    # Without a per-block end on the wire, the terminal ends a call whole ...
    implicit = builder(blocks_end_implicitly=True)
    implicit.start()
    implicit.open_tool_call(0, id="c", name="f")
    implicit.append_arguments(0, '{"a": 1}')
    implicit.set_stop_reason("end")
    implicit.finish()
    done = drain(implicit)[-1]
    assert isinstance(done, Done) and isinstance(done.content[0], ToolCallBlock)
    assert done.content[0].error is None
    # ... with one, a call still open at the terminal was cut off.
    b = builder()
    b.start()
    b.open_tool_call(0, id="c", name="f")
    b.append_arguments(0, '{"a": 1}')
    b.set_stop_reason("end")
    b.finish()
    done = drain(b)[-1]
    assert isinstance(done, Done) and isinstance(done.content[0], ToolCallBlock)
    assert done.content[0].error == "incomplete"

    b = builder()
    b.start()
    b.open_tool_call(0, id="c", name="f")
    b.append_arguments(0, '{"a": 1}')
    b.set_stop_reason("max")
    b.finish()
    done = drain(b)[-1]
    assert isinstance(done, Done) and done.stop_reason is StopReason.LENGTH
    assert isinstance(done.content[0], ToolCallBlock) and done.content[0].error == "incomplete"


def test_an_error_stop_value_fails_upstream_and_unknown_values_are_reported() -> None:
    b = builder()
    b.start()
    b.set_stop_reason("boom", error_reason="the model failed")
    b.finish()
    end = drain(b)[-1]
    assert isinstance(end, Error) and (end.kind, end.reason) == ("upstream", "the model failed")

    b = builder()
    b.start()
    b.set_stop_reason("weird")
    b.finish()
    events = drain(b)
    assert "unknown_stop_reason" in diagnostics(events)
    assert isinstance(events[-1], Done) and events[-1].message.raw_stop_reason == "weird"


def test_fail_keeps_everything_and_marks_open_calls_incomplete() -> None:
    b = builder()
    b.start()
    b.open_text(0, text="partial")
    b.open_tool_call(1, id="c", name="f")
    b.append_arguments(1, '{"a": [1, 2, ')
    b.fail("truncated", "cut")
    end = drain(b)[-1]
    assert isinstance(end, Error) and end.kind == "truncated"
    text, call = end.message.content
    assert text == TextBlock("partial")
    assert isinstance(call, ToolCallBlock)
    assert (call.error, call.arguments) == ("incomplete", {"a": [1, 2]})
    assert end.message.stop_reason is StopReason.ERROR


def test_broken_and_repaired_arguments_are_reported_once_at_the_end() -> None:
    b = builder()
    b.start()
    b.open_tool_call(0, id="a", name="f")
    b.append_arguments(0, '{"a": 1,}')
    b.open_tool_call(1, id="b", name="f")
    b.append_arguments(1, '{"s": "tab\there"}')
    b.end_block(0)
    b.end_block(1)
    events = drain(b)
    assert diagnostics(events) == ["invalid_tool_arguments", "repaired_arguments"]
    first, second = (e.block for e in events if isinstance(e, BlockEnd))
    assert isinstance(first, ToolCallBlock) and first.error is not None
    assert isinstance(second, ToolCallBlock) and second.arguments == {"s": "tab\there"}


def test_an_end_with_a_known_error_keeps_a_preview_without_reparsing() -> None:
    b = builder()
    b.start()
    b.open_tool_call(0, id="a", name="f")
    b.append_arguments(0, '{"a": "x')
    b.end_block(0, error="malformed_tool_call")
    events = drain(b)
    assert diagnostics(events) == []
    (end,) = (e for e in events if isinstance(e, BlockEnd))
    assert isinstance(end.block, ToolCallBlock)
    assert (end.block.error, end.block.arguments) == ("malformed_tool_call", {"a": "x"})


def test_synthetic_ids_are_deterministic_and_never_repeat_an_id_in_use() -> None:
    b = builder()
    b.start(None, None)
    b.open_tool_call(0, id="call_1", name="f")
    b.open_tool_call(1, name="g", synthesize_id=True)
    b.open_tool_call(2, name="h", synthesize_id=True)
    ids = [e.id for e in drain(b) if isinstance(e, ToolCallDelta)]
    assert ids == ["call_1", "call_2", "call_3"]

    custom = builder(call_id=lambda rid, n: f"x{n}")
    custom.start()
    custom.open_tool_call(0, name="f", synthesize_id=True)
    assert [e.id for e in drain(custom) if isinstance(e, ToolCallDelta)] == ["x0"]


def test_a_reserved_position_is_claimed_later_and_dropped_when_never_used() -> None:
    b = builder()
    b.start()
    b.reserve("late")
    b.reserve("never")
    b.open_text("now", text="streams first")
    b.place("late", ProviderBlock("test-api", "search", {"q": 1}))
    b.set_stop_reason("end")
    b.finish()
    events = drain(b)
    done = events[-1]
    assert isinstance(done, Done)
    assert done.content == (
        ProviderBlock("test-api", "search", {"q": 1}),
        TextBlock("streams first"),
    )
    assert [e.index for e in events if isinstance(e, TextDelta)] == [2]


def test_place_ends_an_open_block_with_the_given_final_block_once() -> None:
    b = builder()
    b.start()
    b.open_tool_call(0, id="c", name="f")
    b.append_arguments(0, "{}")
    relayed = ToolCallBlock("c", "f", {}, "{}", "sig", None)
    b.place(0, relayed)
    b.end_block(0)
    ends = [e for e in drain(b) if isinstance(e, BlockEnd)]
    assert ends == [BlockEnd(0, relayed)]


def test_a_signature_goes_onto_the_newest_undrained_delta_only_when_asked() -> None:
    b = builder()
    b.start()
    b.open_thinking(0)
    b.append_thinking(0, "hm")
    b.set_signature(0, "s1", onto_last_delta=True)
    assert drain(b)[-1] == ThinkingDelta(0, "hm", "s1")
    b.append_thinking(0, "more")
    b.set_signature(0, "s2")
    assert drain(b)[-2:] == [ThinkingDelta(0, "more", None), ThinkingDelta(0, "", "s2")]


def test_conclude_takes_the_relayed_identity_and_keeps_its_own_content() -> None:
    b = builder()
    b.start("m", "r")
    b.open_text(0, text="ok")
    b.open_tool_call(1, id="c", name="f")
    b.append_arguments(1, "{}")
    upstream = AssistantMessage(
        (TextBlock("ok <call>"),), "up-api", "m", StopReason.STOP, "end", Usage.of(3, 4), "r"
    )
    b.conclude(upstream)
    done = drain(b)[-1]
    assert isinstance(done, Done)
    assert done.message.api == "up-api" and done.message.usage == Usage.of(3, 4)
    assert done.stop_reason is StopReason.TOOL_USE
    assert [type(x) for x in done.content] == [TextBlock, ToolCallBlock]

    cut = builder()
    cut.start()
    cut.open_tool_call(0, id="c", name="f")
    failed = Error("truncated", "cut", None, upstream)
    cut.conclude(upstream, failed)
    end = drain(cut)[-1]
    assert isinstance(end, Error) and end.kind == "truncated"
    assert isinstance(end.message.content[0], ToolCallBlock)
    assert end.message.content[0].error == "incomplete"


def test_usage_is_emitted_only_when_it_changes() -> None:
    b = builder()
    b.start()
    b.set_usage(Usage.of(1, 1))
    b.set_usage(Usage.of(1, 1))
    b.set_usage(Usage.of(1, 2))
    assert [e.usage for e in drain(b) if isinstance(e, UsageUpdate)] == [
        Usage.of(1, 1),
        Usage.of(1, 2),
    ]


def test_redacted_thinking_holds_its_data_as_the_signature() -> None:
    b = builder()
    b.start()
    b.open_thinking(0, signature="opaque", redacted=True)
    b.append_thinking(0, "ignored")
    b.set_stop_reason("end")
    b.finish()
    events = drain(b)
    assert "unknown_delta" in diagnostics(events)
    done = events[-1]
    assert isinstance(done, Done) and done.content == (ThinkingBlock("", "opaque", True),)


@pytest.mark.parametrize("kind", ["truncated", "protocol", "limit", "upstream"])
def test_fail_is_a_terminal_error_of_that_kind(kind: str) -> None:
    b = builder()
    b.start()
    b.fail(kind, "why", "code")
    events = drain(b)
    assert isinstance(events[-1], Error) and kinds(events) == ["Start", "Error"]
    assert (events[-1].kind, events[-1].code, events[-1].message.error) == (kind, "code", "why")


def test_text_opens_the_block_under_a_new_key_and_appends_after() -> None:
    b = builder()
    b.start()
    b.text("r", "", refusal=True)  # opens, even without text
    b.text("t", "a")
    b.text("t", "b")
    b.end_block("t")
    b.text("t", "late")  # an ended block is not reopened
    events = drain(b)
    assert [(type(e).__name__, getattr(e, "index", None)) for e in events[1:]] == [
        ("TextDelta", 1),
        ("TextDelta", 1),
        ("BlockEnd", 1),
        ("NormalizationError", None),
    ]
    assert diagnostics(events) == ["delta_for_unknown_block"]
    b.set_stop_reason("end")
    b.finish()
    done = drain(b)[-1]
    assert isinstance(done, Done)
    assert done.content == (TextBlock("", refusal=True), TextBlock("ab"))


def test_thinking_opens_with_its_signature_and_signs_an_open_block_after_the_text() -> None:
    b = builder()
    b.start()
    b.thinking("k", "hm", signature="s1")
    b.thinking("k", "more", signature="s2")
    b.thinking("k", "still")
    b.thinking("k", "", signature="s2")  # unchanged: nothing
    assert drain(b)[1:] == [
        ThinkingDelta(0, "hm", "s1"),
        ThinkingDelta(0, "more", None),
        ThinkingDelta(0, "", "s2"),
        ThinkingDelta(0, "still", None),
    ]
    b.open_text("x")
    b.thinking("x", "no")  # a text block under that key: reported, not reopened
    assert diagnostics(drain(b)) == ["unknown_delta"]


def test_tool_call_opens_once_then_sets_the_identity() -> None:
    b = builder()
    b.start()
    b.tool_call("f", synthesize_id=True)
    b.tool_call("f", name="get")
    b.tool_call("f", name="other", synthesize_id=True)
    b.append_arguments("f", "{}")
    b.end_block("f")
    events = drain(b)
    assert diagnostics(events) == ["tool_name_changed"]
    opened = [e for e in events if isinstance(e, ToolCallDelta)]
    assert len(opened) == 2 and opened[0].id == opened[1].id == "call_0"
    (end,) = (e for e in events if isinstance(e, BlockEnd))
    assert isinstance(end.block, ToolCallBlock)
    assert (end.block.id, end.block.name, end.block.arguments) == ("call_0", "get", {})


def test_pieces_join_once_on_demand_and_keep_the_join() -> None:
    pieces = Pieces("a")
    for n in range(5000):  # past the fold threshold: folded runs, same text
        pieces.append(str(n % 10))
    expected = "a" + "".join(str(n % 10) for n in range(5000))
    assert pieces.text() == expected
    assert pieces.parts == [expected]  # joined once, kept
    pieces.append("!")
    assert pieces.text() == expected + "!" and bool(pieces)
    assert Pieces().text() == "" and not Pieces()


def test_merged_entries_merge_by_index_and_append_only_text_fields() -> None:
    merged = MergedEntries(frozenset({"text"}))
    merged.merge({"index": 0, "type": "t", "text": "he", "n": 1})
    merged.merge({"index": 1, "type": "u"})
    merged.merge({"index": 0, "text": "llo", "n": 2, "type": None})
    merged.merge({"text": "no index: a new entry"})
    merged.merge({"index": 1, "text": "x"})  # no earlier text: replaces
    assert merged.json() == (
        '[{"index":0,"type":"t","text":"hello","n":2},'
        '{"index":1,"type":"u","text":"x"},{"text":"no index: a new entry"}]'
    )
    merged.merge({"index": 0, "text": "!"})
    assert merged.entries()[0]["text"] == "hello!"
    merged.merge({"index": 0, "text": 5})  # not a string: replaces
    assert merged.entries()[0]["text"] == 5


def test_merge_entry_holds_a_list_for_the_decoder_and_its_json() -> None:
    b = builder()
    assert b.merged_json("d") == "[]"
    b.merge_entry("d", {"index": 0, "text": "a"}, text_fields=frozenset({"text"}))
    b.merge_entry("d", {"index": 0, "text": "b"})
    assert b.merged_json("d") == '[{"index":0,"text":"ab"}]'


def test_provider_entries_open_the_block_and_merge_into_its_list() -> None:
    b = builder()
    b.start()
    b.provider_entries("x", "executed", "tools", [{"index": 0, "name": "a"}, "junk"])
    b.provider_entries("x", "executed", "tools", [{"index": 0, "output": "o"}, {"index": 1}])
    b.open_text("t")
    b.provider_entries("t", "executed", "tools", [{"index": 0}])  # not a provider block
    assert diagnostics(drain(b)) == ["unknown_delta"]
    b.set_stop_reason("end")
    b.finish()
    done = drain(b)[-1]
    assert isinstance(done, Done)
    assert done.content[0] == ProviderBlock(
        "test-api", "executed", {"tools": [{"index": 0, "name": "a", "output": "o"}, {"index": 1}]}
    )
