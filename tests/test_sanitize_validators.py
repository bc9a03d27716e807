"""Each validator rejects what its target rejects: one broken history per
rule, and the dispatch from a target to its validator."""

from __future__ import annotations

import pytest

from streamnorm.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolResultMessage,
    UserMessage,
)
from streamnorm.sanitize import (
    VALIDATORS,
    resolve_target,
    validate_history_for_target,
    validator_for,
)

from .sanitize_support import (
    ANTHROPIC_SIG,
    GEMINI_SIG,
    REASONING_SIG,
    REASONING_SIG_NO_ENC,
    assistant,
    call,
    result,
)

SENTINEL = "skip_thought_signature_validator"
CLAUDE = ("anthropic", "claude-sonnet-4-5", "anthropic")
GPT5 = ("openai", "gpt-5", "openai-responses")
GPT41 = ("openai", "gpt-4.1", "openai-completions")
DEEPSEEK = ("deepseek", "deepseek-chat", "openai-completions")
GEMINI3 = ("google", "gemini-3-pro-preview", "google")
GEMINI25 = ("google", "gemini-2.5-flash", "google")
MISTRAL = ("mistral", "mistral-large-latest", "openai-completions")
BEDROCK = ("bedrock", "claude-sonnet-4-5", "anthropic")


def problems(history: list[Message], target: tuple[str, str, str]) -> list[str]:
    provider, model, api = target
    return validate_history_for_target(history, provider, model, api=api)


def gpt5(*content: ContentBlock) -> AssistantMessage:
    return assistant(content, provider="openai", api="openai-responses", model="gpt-5")


def gemini(*content: ContentBlock, model: str = "gemini-3-pro-preview") -> AssistantMessage:
    return assistant(content, provider="google", api="google-generative-ai", model=model)


def kimi(*content: ContentBlock) -> AssistantMessage:
    return assistant(content, provider="moonshot", model="kimi-k2")


def test_six_validators() -> None:
    assert set(VALIDATORS) == {
        "anthropic",
        "bedrock",
        "openai-responses",
        "openai-completions",
        "google",
        "mistral",
    }
    names = {
        CLAUDE: "anthropic",
        BEDROCK: "bedrock",
        GPT5: "openai-responses",
        GPT41: "openai-completions",
        DEEPSEEK: "openai-completions",
        GEMINI3: "google",
        MISTRAL: "mistral",
        ("openrouter", "mistralai/magistral-medium", "openai-completions"): "mistral",
    }
    for (provider, model, api), name in names.items():
        assert validator_for(resolve_target(provider, model, api)).name == name


GOOD: list[Message] = [
    UserMessage("go"),
    assistant([TextBlock("hi"), call("toolu_1")]),
    result("toolu_1"),
]

BROKEN: list[tuple[str, tuple[str, str, str], list[Message], str]] = [
    ("id pattern", CLAUDE, [kimi(call("a|b")), result("a|b")], "does not match"),
    ("empty id", CLAUDE, [kimi(call("")), result("")], "does not match"),
    (
        "own id with a newline",
        CLAUDE,
        [assistant([call("a\nb")]), result("a\nb")],
        "does not match",
    ),
    ("bedrock id length", BEDROCK, [kimi(call("x" * 65)), result("x" * 65)], "does not match"),
    ("openai 40 characters", GPT41, [kimi(call("x" * 41)), result("x" * 41)], "does not match"),
    ("responses trailing _", GPT5, [kimi(call("call_1_")), result("call_1_")], "not ending in _"),
    (
        "mistral 9 alphanumerics",
        MISTRAL,
        [kimi(call("call_1")), result("call_1")],
        "does not match",
    ),
    (
        "duplicate ids",
        CLAUDE,
        [
            assistant([call("toolu_1")]),
            result("toolu_1"),
            assistant([call("toolu_1")]),
            result("toolu_1"),
        ],
        "reused",
    ),
    (
        "unanswered call",
        CLAUDE,
        [assistant([call("toolu_1")]), UserMessage("next")],
        "has no result",
    ),
    ("unanswered at the end", GEMINI25, [assistant([call("toolu_1")])], "has no result"),
    ("orphan result", CLAUDE, [UserMessage("go"), result("toolu_1")], "does not follow"),
    (
        "result after a user message",
        DEEPSEEK,
        [assistant([call("toolu_1")]), UserMessage("wait"), result("toolu_1")],
        "does not follow",
    ),
    (
        "result twice",
        CLAUDE,
        [assistant([call("toolu_1")]), result("toolu_1"), result("toolu_1")],
        "does not follow",
    ),
    ("empty assistant", GPT41, [assistant([])], "without content"),
    ("foreign thinking", CLAUDE, [kimi(ThinkingBlock("t", "kimi-sig"))], "reasoning of another"),
    ("foreign unsigned thinking", GPT41, [kimi(ThinkingBlock("t"), TextBlock("x"))], "reasoning"),
    ("foreign text signature", GEMINI25, [kimi(TextBlock("t", "sig"))], "text signature"),
    ("foreign citations", CLAUDE, [kimi(TextBlock("t", citations=({"url": "u"},)))], "citations"),
    (
        "foreign call signature",
        GEMINI25,
        [kimi(call("toolu_1", signature="sig")), result("toolu_1")],
        "tool call signature",
    ),
    (
        "sentinel on Gemini 2",
        GEMINI25,
        [kimi(call("toolu_1", signature=SENTINEL)), result("toolu_1")],
        "tool call signature",
    ),
    (
        "provider block of another api",
        GPT5,
        [gpt5(ProviderBlock("anthropic-messages", "server_tool_use", {}), TextBlock("x"))],
        "provider block",
    ),
    (
        "provider block of another host",
        CLAUDE,
        [kimi(ProviderBlock("anthropic-messages", "server_tool_use", {}), TextBlock("x"))],
        "provider block",
    ),
    ("surrogate in user text", GPT41, [UserMessage("a\ud83d")], "surrogate"),
    (
        "surrogate in a result",
        CLAUDE,
        [assistant([call("toolu_1")]), ToolResultMessage("toolu_1", "bash", "\udc00")],
        "surrogate",
    ),
    (
        "surrogate in arguments",
        GEMINI25,
        [assistant([call("t1", k="\ud800")]), result("t1")],
        "surrogate",
    ),
    (
        "unsigned thinking",
        CLAUDE,
        [assistant([ThinkingBlock("t"), TextBlock("x")])],
        "without signature",
    ),
    (
        "bedrock unsigned thinking",
        BEDROCK,
        [assistant([ThinkingBlock("t"), TextBlock("x")], provider="bedrock")],
        "without signature",
    ),
    ("blank text", CLAUDE, [assistant([TextBlock(" "), TextBlock("x")])], "empty text"),
    (
        "reasoning without encrypted content",
        GPT5,
        [gpt5(ThinkingBlock("t", REASONING_SIG_NO_ENC), TextBlock("x"))],
        "encrypted_content",
    ),
    (
        "trailing reasoning",
        GPT5,
        [gpt5(TextBlock("x"), ThinkingBlock("t", REASONING_SIG))],
        "following item",
    ),
    (
        "consecutive reasoning",
        GPT5,
        [
            gpt5(
                ThinkingBlock("t", REASONING_SIG), ThinkingBlock("u", REASONING_SIG), TextBlock("x")
            )
        ],
        "following item",
    ),
    (
        "gemini signature not base64",
        GEMINI25,
        [gemini(TextBlock("t", "not base64!"), model="gemini-2.5-flash")],
        "base64",
    ),
    (
        "gemini 3 unsigned call",
        GEMINI3,
        [gemini(call("c1")), result("c1")],
        "without thought signature",
    ),
]


@pytest.mark.parametrize(
    ("name", "target", "history", "needle"), BROKEN, ids=[b[0] for b in BROKEN]
)
def test_validator_reports(
    name: str, target: tuple[str, str, str], history: list[Message], needle: str
) -> None:
    found = problems(history, target)
    assert any(needle in p for p in found), found


@pytest.mark.parametrize("target", [CLAUDE, BEDROCK, GPT41, DEEPSEEK, GEMINI25], ids=str)
def test_clean_history_has_no_problems(target: tuple[str, str, str]) -> None:
    assert problems(GOOD, target) == []


def test_accepted_shapes() -> None:
    assert problems([gpt5(ThinkingBlock("t", REASONING_SIG), TextBlock("x"))], GPT5) == []
    assert problems([gemini(call("c1", signature=GEMINI_SIG)), result("c1")], GEMINI3) == []
    assert problems([kimi(call("c1", signature=SENTINEL)), result("c1")], GEMINI3) == []
    assert problems([kimi(call("functions.bash:0")), result("functions.bash:0")], DEEPSEEK) == []
    assert (
        problems(
            [assistant([ThinkingBlock("", ANTHROPIC_SIG, redacted=True), TextBlock("x")])], CLAUDE
        )
        == []
    )
    # A failed turn is the caller's business, not a request rule.
    assert problems([assistant([TextBlock("x")], stop=StopReason.ERROR)], CLAUDE) == []
