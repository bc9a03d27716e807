"""Round trip: histories built from normalized fixture messages, and rich
hand-built multi-provider histories, sanitized for every target, satisfy that
target's validator (and a second pass changes nothing)."""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

import pytest

from streamnorm.messages import (
    AssistantMessage,
    Message,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from streamnorm.sanitize import sanitize_messages_for_target, validate_history_for_target

from .sanitize_support import (
    ANTHROPIC_SIG,
    GEMINI_SIG,
    LONG_ID,
    REASONING_SIG,
    REASONING_SIG_NO_ENC,
    RESPONSES_CALL_SIG,
    RESPONSES_TEXT_SIG,
    TARGETS,
    assistant,
    call,
    compact,
    result,
    target_id,
)
from .support import FIXTURES, needs_fixtures

FIXTURE_FILES = sorted(FIXTURES.glob("*/*.sse")) if FIXTURES.is_dir() else []

#: Responses items the client executes and answers by ``call_id``.
CLIENT_CALLS = {"custom_tool_call", "apply_patch_call", "computer_call", "local_shell_call"}

#: A provider to name the fixture's own host when replaying to it.
OWN_PROVIDER = {
    "anthropic-messages": "anthropic",
    "openai-responses": "openai",
    "openai-completions": "openrouter",
    "google-generative-ai": "google",
}


def answers(msg: AssistantMessage, text: str = "result") -> list[Message]:
    """A tool result for every call the message makes."""
    out: list[Message] = []
    for b in msg.content:
        if isinstance(b, ToolCallBlock):
            out.append(ToolResultMessage(b.id, b.name, text))
        elif isinstance(b, ProviderBlock) and b.kind in CLIENT_CALLS and b.data.get("call_id"):
            out.append(ToolResultMessage(str(b.data["call_id"]), b.kind, text))
    return out


def check(history: list[Message], provider: str, api: str, model: str) -> list[Message]:
    out = sanitize_messages_for_target(history, provider, model, api=api)
    assert validate_history_for_target(out, provider, model, api=api) == []
    assert sanitize_messages_for_target(out, provider, model, api=api) == out
    return out


# ---------------------------------------------------------------------------
# Fixtures, through the stream normalizer


def normalized(path: Path) -> AssistantMessage:
    """The fixture's message, labelled with its host as the HTTP adapters
    label what they read (a message without a host keeps nothing opaque)."""
    from streamnorm import Done, Error, normalize

    from .support import api_of

    api = api_of(path)
    events = list(normalize([path.read_bytes()], api=api, provider=OWN_PROVIDER.get(api)))
    end = events[-1]
    assert isinstance(end, (Done, Error))
    return end.message


@needs_fixtures
@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_round_trip(path: Path) -> None:
    msg = normalized(path)
    history = [UserMessage("go"), msg, *answers(msg), UserMessage("thanks")]
    own = (OWN_PROVIDER[msg.api], msg.api, msg.model or "")
    for provider, api, model in (*TARGETS, own):
        out = check(history, provider, api, model)
        if msg.stop_reason in (StopReason.ERROR, StopReason.ABORTED):
            assert not any(isinstance(m, AssistantMessage) for m in out)


@needs_fixtures
def test_all_fixtures_in_one_conversation() -> None:
    history: list[Message] = []
    for path in FIXTURE_FILES:
        msg = normalized(path)
        history += [UserMessage(path.name), msg, *answers(msg)]
    for provider, api, model in TARGETS:
        out = check(history, provider, api, model)
        assert len(out) >= len(FIXTURE_FILES)


# ---------------------------------------------------------------------------
# Hand-built histories (independent of the normalizer)


class Origin(TypedDict):
    """Who issued a turn: keyword arguments of ``assistant``."""

    provider: str
    api: str
    model: str


KIMI = Origin(provider="moonshot", api="openai-completions", model="kimi-k2")
DEEPSEEK = Origin(provider="deepseek", api="openai-completions", model="deepseek-reasoner")
COPILOT = Origin(provider="github-copilot", api="openai-responses", model="gpt-5-codex")
OPENAI = Origin(provider="openai", api="openai-responses", model="gpt-5")
GEMINI3 = Origin(provider="google", api="google-generative-ai", model="gemini-3-pro-preview")
MISTRAL = Origin(provider="mistral", api="openai-completions", model="mistral-large-latest")
CLAUDE = Origin(provider="anthropic", api="anthropic-messages", model="claude-sonnet-4-5")

OWN_TARGETS = tuple(
    (d["provider"], d["api"], d["model"])
    for d in (KIMI, DEEPSEEK, COPILOT, OPENAI, GEMINI3, MISTRAL)
)


def rich_history() -> list[Message]:
    """Seven providers, every block kind, reused and hostile ids, missing,
    late, duplicate and orphaned results, failed turns."""
    a1 = assistant(
        [
            ThinkingBlock("Search first.", ANTHROPIC_SIG),
            ThinkingBlock("", "RWRhY3RlZA==", redacted=True),
            ProviderBlock(
                "anthropic-messages", "server_tool_use", {"id": "srvtoolu_1", "name": "web_search"}
            ),
            ProviderBlock(
                "anthropic-messages", "web_search_tool_result", {"tool_use_id": "srvtoolu_1"}
            ),
            TextBlock("Found it.", citations=({"type": "web_search_result_location", "url": "u"},)),
            call("toolu_01A"),
            call("toolu_01B", name="read", path="a.py"),
        ],
        **CLAUDE,
    )
    a2 = assistant(
        [
            ThinkingBlock("Plan.", REASONING_SIG),
            TextBlock("Running the tools.", RESPONSES_TEXT_SIG),
            call(LONG_ID, signature=RESPONSES_CALL_SIG),
            ThinkingBlock("More.", REASONING_SIG_NO_ENC),
            call("call_Xq1|" + "Zz+/" * 110 + "ab==", signature=compact({"id": "fc_2"})),
            ThinkingBlock("Trailing.", REASONING_SIG),
        ],
        stop=StopReason.TOOL_USE,
        **COPILOT,
    )
    a3 = assistant(
        [
            ThinkingBlock("reasoning_content"),
            TextBlock("Let me look."),
            call("call_00_ioIn7yN9p1ZOMNp"),
        ],
        **DEEPSEEK,
    )
    a4 = assistant([call("functions.bash:0"), call("functions.bash:1")], **KIMI)
    a5 = assistant(
        [
            ThinkingBlock("Gemini thinks.", GEMINI_SIG),
            TextBlock("", GEMINI_SIG),
            call("dv8szvqe", signature=GEMINI_SIG),
            call("j80tal12"),
            call("call_0", signature="not base64!"),
        ],
        **GEMINI3,
    )
    a6 = assistant([call("nqjf8Hqe1"), call("ATcpCKul3"), call("call_0")], **MISTRAL)
    a7 = assistant(
        [
            ThinkingBlock("Use SQL.", REASONING_SIG),
            ProviderBlock(
                "openai-responses",
                "custom_tool_call",
                {"call_id": "call_ctc", "name": "sql", "input": "select 1"},
            ),
        ],
        **OPENAI,
    )
    failed = assistant(
        [ThinkingBlock("half", ANTHROPIC_SIG), call("toolu_01A")], stop=StopReason.ERROR
    )
    aborted = assistant([TextBlock("partial \ud83d")], stop=StopReason.ABORTED, **KIMI)
    return [
        UserMessage("Fix the bug \ud83d"),
        a1,
        result("toolu_01B", name="read"),
        result("toolu_01A"),
        result("toolu_01A", content="duplicate"),
        a2,
        result(LONG_ID),
        UserMessage("stop, try something else"),
        result("call_Xq1|" + "Zz+/" * 110 + "ab==", content="late"),
        a3,
        result("call_00_ioIn7yN9p1ZOMNp", content="x\ud83d"),
        a4,
        result("functions.bash:1"),
        result("functions.bash:0"),
        result("nobody"),
        a5,
        result("dv8szvqe"),
        result("j80tal12"),
        result("call_0"),
        a6,
        result("call_0"),
        result("nqjf8Hqe1"),
        a7,
        ToolResultMessage("call_ctc", "sql", "1 row"),
        failed,
        result("toolu_01A", content="for the failed turn"),
        UserMessage("again"),
        assistant([call("call_0"), call("toolu_01A")], **CLAUDE),
        aborted,
    ]


@pytest.mark.parametrize("target", (*TARGETS, *OWN_TARGETS), ids=target_id)
def test_rich_history_round_trip(target: tuple[str, str, str]) -> None:
    provider, api, model = target
    out = check(rich_history(), provider, api, model)
    turns = [m for m in out if isinstance(m, AssistantMessage)]
    # Failed turns are gone; every other turn keeps at least its calls.
    assert all(m.stop_reason not in (StopReason.ERROR, StopReason.ABORTED) for m in turns)
    calls = [b for m in turns for b in m.content if isinstance(b, ToolCallBlock)]
    assert len(calls) == 2 + 2 + 1 + 2 + 3 + 3 + 2
    results = [m for m in out if isinstance(m, ToolResultMessage)]
    assert len(results) == len(calls) + (
        1 if api == "openai-responses" and provider == "openai" else 0
    )
    assert sum(r.content == "No result provided" for r in results) == 4


def test_rich_history_same_issuer_keeps_its_own_blocks() -> None:
    h = rich_history()
    out = check(h, "anthropic", "anthropic-messages", "claude-sonnet-4-5")
    assert out[1] == h[1]  # signed and redacted thinking, server tools, citations, ids
    out = check(h, "github-copilot", "openai-responses", "gpt-5-codex")
    copilot = out[4]
    assert isinstance(copilot, AssistantMessage) and copilot.model == "gpt-5-codex"
    kinds = [type(b).__name__ for b in copilot.content]
    assert kinds == ["ThinkingBlock", "TextBlock", "ToolCallBlock", "ToolCallBlock"]
    first_call, second_call = copilot.tool_calls  # content[2] and content[3]
    assert second_call.signature is None  # its reasoning had no encrypted content
    assert first_call.signature == RESPONSES_CALL_SIG
