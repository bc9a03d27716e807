"""Property: any canonical message, streamed in any fragmentation, encodes for
every target into bytes the target's SDK reads as that message, and that
streamnorm reads back to the same content (less the documented losses)."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamnorm import (
    APIS,
    AssistantMessage,
    BlockEnd,
    Done,
    Event,
    Start,
    StopReason,
    TextBlock,
    TextDelta,
    ThinkingBlock,
    ThinkingDelta,
    ToolCallBlock,
    ToolCallDelta,
    Usage,
    encode_stream,
)

from .encode_oracles import READERS, expected
from .support import run_bytes, terminal
from .test_encode_roundtrip import carried

pytest.importorskip("anthropic")
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=30)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def blocks(draw: Any) -> list[Any]:
    out: list[Any] = []
    for kind in draw(
        st.lists(st.sampled_from(["text", "thinking", "call"]), min_size=1, max_size=4)
    ):
        if kind == "text":
            out.append(TextBlock(draw(_text)))
        elif kind == "thinking":
            out.append(
                ThinkingBlock(
                    draw(_text), draw(st.none() | st.text("abcXYZ09+/", min_size=4, max_size=12))
                )
            )
        else:
            args = draw(st.dictionaries(st.text(max_size=6), _json_values, max_size=3))
            raw = json.dumps(args, ensure_ascii=draw(st.booleans()))
            out.append(
                ToolCallBlock(f"call_{len(out)}", draw(st.sampled_from(["f", "get_x"])), args, raw)
            )
    return out


def _pieces(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in pairwise(points) if b > a]


def stream(msg: AssistantMessage, cuts: list[int]) -> list[Event]:
    events: list[Event] = [Start(msg.api, msg.model, msg.response_id)]
    for i, block in enumerate(msg.content):
        if isinstance(block, TextBlock):
            events += [TextDelta(i, p) for p in _pieces(block.text, cuts)]
        elif isinstance(block, ThinkingBlock):
            events += [ThinkingDelta(i, p) for p in _pieces(block.thinking, cuts)]
            if block.signature:
                events.append(ThinkingDelta(i, "", block.signature))
        elif isinstance(block, ToolCallBlock):
            events.append(ToolCallDelta(i, block.id, block.name, ""))
            events += [
                ToolCallDelta(i, block.id, block.name, p)
                for p in _pieces(block.raw_arguments, cuts)
            ]
        events.append(BlockEnd(i, block))
    return [*events, Done(msg)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    blocks(),
    st.sampled_from(
        ["anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai"]
    ),
    st.lists(st.integers(0, 200), max_size=6),
)
def test_any_message_reaches_every_sdk(content: list[Any], source: str, cuts: list[int]) -> None:
    calls = any(isinstance(b, ToolCallBlock) for b in content)
    msg = AssistantMessage(
        tuple(content),
        source,
        "m",
        StopReason.TOOL_USE if calls else StopReason.STOP,
        None,
        Usage.of(7, 11, 2, 0, 0),
        "resp-x",
    )
    events = stream(msg, cuts)
    for target in APIS:
        data = b"".join(encode_stream(events, target))
        got, want = READERS[target](data), expected(msg, target, False)
        assert (got.text, got.thinking, got.calls, got.stop, got.usage) == (
            want.text,
            want.thinking,
            want.calls,
            want.stop,
            want.usage,
        ), target
        back = terminal(run_bytes(data, target)).message
        assert carried(back, target) == carried(msg, target), target
