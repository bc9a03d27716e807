"""A conversation that started on one api continues on any other.

For every recorded response: its final message, a tool result for each of
its calls and a new user turn, encoded for each of the four targets, is a
history the target accepts (``validate_history_for_target``, the target's
structural rules, its SDK's request types), and decoding the body back keeps
every text (another issuer's thinking arrives as text), every tool call
(name, arguments), every tool result, and — for the same issuer — every
signature that sanitizing kept.
"""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from streamnorm import (
    AssistantMessage,
    ImageBlock,
    Message,
    Request,
    StopReason,
    TextBlock,
    ThinkingBlock,
    Tool,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
    decode_request,
    decode_response,
    encode_request,
    sanitize_messages_for_target,
    validate_history_for_target,
    validate_request_body,
)

from .request_support import (
    RESPONSES,
    body_id,
    genai_request,
    genai_view,
    json_files,
    load_json,
    sdk_send,
    sdk_validate,
)
from .support import needs_fixtures

pytestmark = needs_fixtures

TARGETS = {
    "anthropic-messages": ("anthropic", "claude-sonnet-4-5"),
    "openai-responses": ("openai", "gpt-5"),
    # A host that takes reasoning back (reasoning_content): OpenAI itself has no field.
    "openai-completions": ("deepseek", "deepseek-chat"),
    "google-generative-ai": ("google", "gemini-2.5-flash"),
}


def _answer(body: dict[str, Any]) -> bool:
    """A response that is an answer, not an error body."""
    return "error" not in body or body.get("type") == "message" or "output" in body


ANSWERS = [p for p in json_files(RESPONSES) if _answer(load_json(p))]
PAIRS = [(p, target) for p in ANSWERS for target in TARGETS]

_OPENAI = f"openai {version('openai')}"

#: Fields the target SDK's types do not know, by (response, target).
SDK_UNTYPED: dict[tuple[str, str], str] = {
    ("openai-responses/r09_file_search_results.json", "openai-responses"): (
        f"{_OPENAI}: file_search_call results[].vector_store_id"
    ),
}
_ANTHROPIC = f"anthropic {version('anthropic')}"

#: Bodies the target SDK's request types reject, by (response, target): the
#: same api's own blocks replayed verbatim, which the SDK does not type yet.
SDK_REJECTS: dict[tuple[str, str], str] = {
    ("anthropic-messages/a14_mcp_tool_use_result.json", "anthropic-messages"): (
        f"{_ANTHROPIC}: no mcp_tool_use / mcp_tool_result blocks outside the beta resource"
    ),
    ("anthropic-messages/a16_compaction_iterations.json", "anthropic-messages"): (
        f"{_ANTHROPIC}: no compaction block outside the beta resource"
    ),
}

#: Reasoning replay fields of Chat Completions hosts (requests.md §4.4),
#: which the openai SDK does not type.
HOST_REASONING = re.compile(r"messages\[\d+\]\.(reasoning_content|reasoning|reasoning_details)")


def _history(message: AssistantMessage) -> list[Message]:
    results = [
        ToolResultMessage(c.id, c.name, f"result of {c.name} #{i}")
        for i, c in enumerate(message.tool_calls)
    ]
    return [UserMessage("Start."), message, *results, UserMessage("Go on.")]


def _tools(message: AssistantMessage) -> tuple[Tool, ...]:
    names = dict.fromkeys(c.name for c in message.tool_calls)
    return tuple(Tool(n, f"the {n} tool", {"type": "object", "properties": {}}) for n in names)


def _said(messages: Any) -> str:
    """Everything the assistant turns say, text and thinking alike."""
    return "\n".join(
        b.text if isinstance(b, TextBlock) else b.thinking
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, (TextBlock, ThinkingBlock))
    )


def _texts(messages: Any, *, thinking: bool = False) -> list[str]:
    """The non-empty texts (and with ``thinking`` the thinking) of the
    assistant turns: sanitizing never drops a text, only thinking it cannot
    replay."""
    kinds = (TextBlock, ThinkingBlock) if thinking else (TextBlock,)
    return [
        b.text if isinstance(b, TextBlock) else b.thinking
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, kinds) and (b.text if isinstance(b, TextBlock) else b.thinking)
    ]


def _signatures(messages: Any) -> list[str]:
    return [
        b.signature
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, (TextBlock, ThinkingBlock, ToolCallBlock)) and b.signature
    ]


def _calls(messages: Any) -> list[tuple[str, dict[str, Any]]]:
    return [
        (b.name, dict(b.arguments))
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolCallBlock)
    ]


def _sdk_accepts(name: str, target: str, body: dict[str, Any]) -> None:
    """The target SDK's request types take ``body`` (google-genai: its models
    build it) and its client sends it as it is."""
    sent = sdk_send(target, body)
    if target == "google-generative-ai":
        assert genai_view(sent) == genai_view(body)
        return
    assert sent == body
    if (name, target) in SDK_REJECTS:
        with pytest.raises(ValidationError):
            sdk_validate(target, body)
        return
    unknown = [p for p in sdk_validate(target, body) if not HOST_REASONING.fullmatch(p)]
    assert bool(unknown) == ((name, target) in SDK_UNTYPED), unknown


@pytest.mark.parametrize(("path", "target"), PAIRS, ids=[f"{body_id(p)}->{t}" for p, t in PAIRS])
def test_history_continues_on_every_api(path: Any, target: str) -> None:
    source = path.parent.name
    provider, model = TARGETS[target]
    message = decode_response(path.read_bytes(), source, provider=TARGETS[source][0])
    if source == target:
        model = message.model or model  # the same issuer: its own model
    history = _history(message)
    request = Request(model, tuple(history), tools=_tools(message), max_tokens=256)

    sanitized = sanitize_messages_for_target(history, provider, model, api=target)
    assert validate_history_for_target(sanitized, provider, model, api=target) == []
    wire = encode_request(request, target, provider=provider)
    body = dict(wire.body)
    assert validate_request_body(body, target) == []
    _sdk_accepts(body_id(path), target, body)

    back = decode_request(body, target, path=wire.path, provider=provider)
    said = _said(back.messages)
    for text in _texts([message]) + _texts(sanitized, thinking=True):
        assert text in said
    assert _calls(back.messages) == [(c.name, dict(c.arguments)) for c in message.tool_calls]
    results = [m for m in back.messages if isinstance(m, ToolResultMessage)]
    assert [r.content for r in results] == [
        r.content for r in history if isinstance(r, ToolResultMessage)
    ]
    if source == target:
        assert _signatures(back.messages) == _signatures(sanitized)


# ---------------------------------------------------------------------------
# The same property over generated histories

_ISSUERS = [(api, *TARGETS[api]) for api in TARGETS]
_words = st.text(alphabet="abcdefgh xyz", min_size=1, max_size=12).filter(str.strip)
_args = st.dictionaries(
    st.sampled_from(["city", "n", "flag", "q"]),
    st.one_of(st.integers(-5, 5), _words, st.booleans()),
    max_size=3,
)


@st.composite
def _histories(draw: st.DrawFn) -> list[Message]:
    messages: list[Message] = []
    calls = 0
    for _ in range(draw(st.integers(1, 3))):
        text = draw(_words)
        image = draw(st.sampled_from([None, "iVBORw0KGgo=", "R0lGODlhAQABAAAAACw="]))
        content = (TextBlock(text), ImageBlock("image/png", image)) if image else text
        messages.append(UserMessage(content))
        api, provider, model = draw(st.sampled_from(_ISSUERS))
        blocks: list[Any] = []
        if draw(st.booleans()):
            blocks.append(ThinkingBlock(draw(_words)))
        blocks.append(TextBlock(draw(_words)))
        for _ in range(draw(st.integers(0, 2))):
            args = draw(_args)
            blocks.append(
                ToolCallBlock(
                    f"call_{calls}", draw(st.sampled_from(["f", "g"])), args, json.dumps(args)
                )
            )
            calls += 1
        turn = AssistantMessage(
            tuple(blocks), api, model, StopReason.STOP, None, Usage(), None, provider
        )
        messages.append(turn)
        messages += [ToolResultMessage(c.id, c.name, f"r{c.id}") for c in turn.tool_calls]
    messages.append(UserMessage(draw(_words)))
    return messages


@settings(max_examples=40, derandomize=True, deadline=None)
@given(history=_histories(), target=st.sampled_from(list(TARGETS)))
def test_generated_histories_continue_on_every_api(history: list[Message], target: str) -> None:
    provider, model = TARGETS[target]
    request = Request(model, tuple(history), tools=(Tool("f"), Tool("g")))
    wire = encode_request(request, target, provider=provider)
    body = dict(wire.body)
    assert validate_request_body(body, target) == []
    if target == "google-generative-ai":
        genai_request(body)
    else:
        assert [p for p in sdk_validate(target, body) if not HOST_REASONING.fullmatch(p)] == []
    back = decode_request(body, target, path=wire.path, provider=provider)
    said = _said(back.messages)
    assert all(text in said for text in _texts(history))
    assert _calls(back.messages) == _calls(history)
    results = [m.content for m in back.messages if isinstance(m, ToolResultMessage)]
    assert results == [m.content for m in history if isinstance(m, ToolResultMessage)]
    assert _images(back.messages) == _images(history)


def _images(messages: Any) -> list[str | None]:
    return [
        b.data
        for m in messages
        if isinstance(m, UserMessage) and not isinstance(m.content, str)
        for b in m.content
        if isinstance(b, ImageBlock)
    ]
