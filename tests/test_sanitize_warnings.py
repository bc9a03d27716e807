"""Whatever sanitize drops or downgrades, it says so (issue 28 items 1 and 4):
one ``SanitizeWarning`` per block that lost opaque state and per message
left out; foreign reasoning turned into text never runs into the next text."""

from __future__ import annotations

import pytest

from streamnorm import (
    AssistantMessage,
    Message,
    ProviderBlock,
    Reasoning,
    Request,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
    encode_request,
)
from streamnorm.sanitize import SanitizeWarning, sanitize_with_warnings

SIG = "EqQBCkYIBxgCKkDl5nGm3k2Y0uXxqS9Pj0Wm1bPw4sVZt0nWcJ8h1kCq2r3xYbLz"


def claude(*content: object, stop: StopReason = StopReason.STOP) -> AssistantMessage:
    return AssistantMessage(
        tuple(content),  # type: ignore[arg-type]
        "anthropic-messages",
        "claude-sonnet-4-5",
        stop,
        None,
        Usage(),
        "msg_1",
        provider="anthropic",
    )


THOUGHT = ThinkingBlock("I should answer safely.", SIG)
ANSWER = TextBlock("Here's how to do it.")


def _kinds(warnings: tuple[SanitizeWarning, ...]) -> list[tuple[int | None, int | None, str]]:
    return [(w.message, w.block, w.kind) for w in warnings]


@pytest.mark.parametrize(
    ("mode", "text", "kind"),
    [
        ("text", "I should answer safely.\n\nHere's how to do it.", "thinking_as_text"),
        (
            "tagged",
            "<thinking>\nI should answer safely.\n</thinking>\n\nHere's how to do it.",
            "thinking_tagged",
        ),
        ("drop", "Here's how to do it.", "thinking_dropped"),
    ],
)
def test_foreign_reasoning_mode_separator_and_warning(mode: str, text: str, kind: str) -> None:
    """The issue's example: a foreign thinking block then text, sent to Chat
    Completions, read ``"…safely.Here's how…"``. Every mode says what it did."""
    request = Request("gpt-4.1", (UserMessage("q"), claude(THOUGHT, ANSWER), UserMessage("more")))
    wire = encode_request(
        request,
        "openai-completions",
        provider="openai",
        foreign_thinking=mode,  # type: ignore[arg-type]
    )
    assert wire.body["messages"][1]["content"] == text
    assert _kinds(wire.warnings) == [(1, 0, kind)]


def test_default_is_tagged() -> None:
    request = Request("gpt-4.1", (UserMessage("q"), claude(THOUGHT, ANSWER)))
    wire = encode_request(request, "openai-completions", provider="openai")
    assert wire.body["messages"][1]["content"].startswith("<thinking>\nI should")


def test_unknown_mode_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="foreign_thinking must be one of"):
        encode_request(Request("m", (UserMessage("q"),)), "anthropic", foreign_thinking="x")  # type: ignore[arg-type]


def test_each_kind_of_loss_is_named() -> None:
    search = ProviderBlock("anthropic-messages", "web_search_tool_result", {"tool_use_id": "s"})
    cited = TextBlock("Paris.", citations=({"type": "web_search_result_location"},))
    history: list[Message] = [
        UserMessage("q"),
        claude(
            ThinkingBlock("", "REDACTED", redacted=True),
            search,
            cited,
            ToolCallBlock("toolu_1", "f", {}, "{}", signature="sig-of-call"),
            stop=StopReason.TOOL_USE,
        ),
        ToolResultMessage("toolu_1", "f", "ok"),
        ToolResultMessage("nobody", "f", "orphan"),
        claude(TextBlock("half"), stop=StopReason.ERROR),
        UserMessage("again"),
    ]
    _, warnings = sanitize_with_warnings(history, "openai", "gpt-5", api="openai-responses")
    assert _kinds(warnings) == [
        (1, 0, "thinking_dropped"),
        (1, 1, "provider_block_dropped"),
        (1, 2, "citations_removed"),
        (1, 3, "signature_removed"),
        (3, None, "result_dropped"),
        (4, None, "turn_dropped"),
    ]
    assert str(warnings[0]) == (
        "messages[1].content[0]: thinking_dropped: redacted reasoning of another issuer dropped"
    )


def test_same_issuer_and_blank_blocks_give_no_warning() -> None:
    history: list[Message] = [
        UserMessage("q"),
        claude(THOUGHT, TextBlock("  "), ThinkingBlock(" "), ANSWER),
    ]
    out, warnings = sanitize_with_warnings(history, "anthropic", "claude-sonnet-4-5")
    assert warnings == ()
    assert isinstance(out[1], AssistantMessage)
    assert out[1].content == (THOUGHT, ANSWER)


def test_thinking_turned_off_is_a_warning() -> None:
    """Anthropic refuses a thinking tool loop whose last turn does not start
    with thinking; the encoder turns thinking off, and says so."""
    foreign = AssistantMessage(
        (ThinkingBlock("plan", "sig"), ToolCallBlock("call_1", "f", {}, "{}")),
        "openai-completions",
        "deepseek-reasoner",
        StopReason.TOOL_USE,
        None,
        Usage(),
        None,
        provider="deepseek",
    )
    history = (UserMessage("q"), foreign, ToolResultMessage("call_1", "f", "ok"))
    request = Request("claude-sonnet-4-5", history, reasoning=Reasoning(budget_tokens=2048))
    wire = encode_request(request, "anthropic-messages", provider="anthropic")
    assert "thinking" not in wire.body
    assert _kinds(wire.warnings) == [(1, 0, "thinking_tagged"), (1, None, "thinking_off")]
