"""Builders shared by the ``test_sanitize*`` modules: issuers, signatures in
each api's real shape, messages, targets, and hypothesis strategies for
random histories."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from streamnorm.messages import (
    AssistantMessage,
    ContentBlock,
    Message,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
)

USAGE = Usage()


def compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# Signatures shaped as each api really sends them (providers.md).
ANTHROPIC_SIG = "EqQBCkYIBxgCKkBpY29uIHNpZ25hdHVyZSBmb3IgdGVzdHM="
GEMINI_SIG = "CiQBjz1rX2FyZS1iYXNlNjQtYnl0ZXMtZm9yLXRlc3Rz"
REASONING_SIG = compact(
    {
        "id": "rs_0a1",
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "Plan"}],
        "encrypted_content": "gAAAAABoZ-enc",
    }
)
REASONING_SIG_NO_ENC = compact(
    {"id": "rs_0a2", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"}]}
)
RESPONSES_TEXT_SIG = compact({"id": "msg_0a3", "phase": "commentary"})
RESPONSES_CALL_SIG = compact({"id": "fc_0a4"})
OPENROUTER_SIG = compact([{"type": "reasoning.encrypted", "data": "gAAAA-or", "index": 0}])


def signature(api: str, kind: str) -> str:
    """A signature of ``kind`` (thinking, redacted, text, call) issued by ``api``."""
    table = {
        "anthropic-messages": dict.fromkeys(
            ("thinking", "redacted", "text", "call"), ANTHROPIC_SIG
        ),
        "openai-responses": {
            "thinking": REASONING_SIG,
            "redacted": REASONING_SIG,
            "text": RESPONSES_TEXT_SIG,
            "call": RESPONSES_CALL_SIG,
        },
        "openai-completions": {
            "thinking": OPENROUTER_SIG,
            "redacted": OPENROUTER_SIG,
            "text": "opaque-text-signature",
            "call": "opaque-call-signature",
        },
        "google-generative-ai": dict.fromkeys(("thinking", "redacted", "text", "call"), GEMINI_SIG),
    }
    return table[api][kind]


@dataclass(frozen=True)
class Issuer:
    """A provider of the survival matrix: who issues, and a second model."""

    key: str
    provider: str
    api: str
    model: str
    other_model: str

    def message(
        self,
        content: Sequence[ContentBlock],
        *,
        model: str | None = None,
        stop: StopReason = StopReason.STOP,
        provider: str | None = "",
        response_model: str | None = None,
    ) -> AssistantMessage:
        return assistant(
            content,
            provider=self.provider if provider == "" else provider,
            api=self.api,
            model=model or self.model,
            stop=stop,
            response_model=response_model,
        )


ISSUERS: dict[str, Issuer] = {
    i.key: i
    for i in (
        Issuer(
            "anthropic", "anthropic", "anthropic-messages", "claude-sonnet-4-5", "claude-opus-4-6"
        ),
        Issuer("openai", "openai", "openai-responses", "gpt-5", "gpt-5-mini"),
        Issuer("openai-completions", "openai", "openai-completions", "gpt-4.1", "gpt-4o"),
        Issuer(
            "google", "google", "google-generative-ai", "gemini-2.5-flash", "gemini-3-pro-preview"
        ),
        Issuer(
            "mistral",
            "mistral",
            "openai-completions",
            "mistral-large-latest",
            "magistral-medium-latest",
        ),
    )
}


def assistant(
    content: Sequence[ContentBlock],
    *,
    provider: str | None = "anthropic",
    api: str = "anthropic-messages",
    model: str | None = "claude-sonnet-4-5",
    stop: StopReason = StopReason.STOP,
    response_model: str | None = None,
) -> AssistantMessage:
    return AssistantMessage(
        tuple(content), api, model, stop, None, USAGE, None, provider, response_model
    )


def call(id: str, name: str = "bash", signature: str | None = None, **args: Any) -> ToolCallBlock:
    arguments = args or {"cmd": "ls"}
    return ToolCallBlock(id, name, arguments, compact(arguments), signature)


def result(id: str, name: str = "bash", content: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(id, name, content)


#: Targets of the round trip: every validator and every id rule.
TARGETS: tuple[tuple[str, str, str], ...] = (
    ("anthropic", "anthropic-messages", "claude-sonnet-4-5"),
    ("bedrock", "anthropic-messages", "anthropic.claude-sonnet-4-5"),
    ("openai", "openai-responses", "gpt-5"),
    ("openai", "openai-completions", "gpt-4.1"),
    ("deepseek", "openai-completions", "deepseek-chat"),
    ("google", "google-generative-ai", "gemini-2.5-flash"),
    ("google", "google-generative-ai", "gemini-3-pro-preview"),
    ("mistral", "openai-completions", "mistral-large-latest"),
)


def target_id(t: tuple[str, str, str]) -> str:
    return "/".join(t)


def as_turn(message: Message) -> AssistantMessage:
    """``message``, asserted to be an assistant turn."""
    assert isinstance(message, AssistantMessage), message
    return message


def as_result(message: Message) -> ToolResultMessage:
    """``message``, asserted to be a tool result."""
    assert isinstance(message, ToolResultMessage), message
    return message


def tool_calls(messages: Sequence[Message]) -> list[tuple[int, ToolCallBlock]]:
    return [
        (i, b)
        for i, m in enumerate(messages)
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolCallBlock)
    ]


# ---------------------------------------------------------------------------
# Hypothesis: random histories

LONG_ID = "call_Xq1|" + ("Ab+/" * 110) + "cD=="
WEIRD_IDS = (
    "toolu_01ABC",
    "call_0",
    "call_0",
    LONG_ID,
    "call_Xq1|" + ("Ab+/" * 110) + "zz==",
    "call_a\ncall_b",
    "ns.bash:0",
    "functions.bash:0",
    "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
    "",
    "ünï",
    "\ud83d",
    "call_",
    "abc123XYZ",
    # Invalid for every target's rule, whoever issued them.
    "toolu_\u00e9",
    "toolu/../x",
    "toolu_" + "a" * 200,
)

STRINGS = st.sampled_from(
    ["", " ", "hello", "think hard", "a\ud83db", "\ud83d\ude00 pair", "x\udc00", "plain"]
)
SIGS = st.sampled_from(
    [
        None,
        "",
        ANTHROPIC_SIG,
        GEMINI_SIG,
        "not base64!",
        REASONING_SIG,
        REASONING_SIG_NO_ENC,
        RESPONSES_TEXT_SIG,
        RESPONSES_CALL_SIG,
        "skip_thought_signature_validator",
    ]
)
ARGS: st.SearchStrategy[dict[str, Any]] = st.sampled_from(
    [{}, {"q": 1}, {"path": "a\ud83d"}, {"k\udc00": ["v", {"n": "\ud83d"}]}]
)

#: Issuers of random messages: each round-trip target, the same with an
#: unknown host, and some that are never a target.
RANDOM_ISSUERS: tuple[tuple[str | None, str, str], ...] = (
    *TARGETS,
    *((None, api, model) for _, api, model in TARGETS),
    ("moonshot", "anthropic-messages", "kimi-k2"),
    ("github-copilot", "openai-responses", "gpt-5"),
    ("openrouter", "openai-completions", "qwen3-max"),
    ("google", "google-generative-ai", "gemini-2.0-flash"),
)


@st.composite
def blocks(draw: st.DrawFn, ids: Sequence[str], api: str, counter: list[int]) -> ContentBlock:
    kind = draw(st.sampled_from(["thinking", "text", "call", "call", "provider", "provider"]))
    if kind == "thinking":
        return ThinkingBlock(draw(STRINGS), draw(SIGS), draw(st.booleans()))
    if kind == "text":
        cites = draw(st.sampled_from([(), ({"url": "https://x", "title": "t\ud83d"},)]))
        return TextBlock(draw(STRINGS), draw(SIGS), cites)
    if kind == "call":
        counter[0] += 1
        args = dict(draw(ARGS), n=counter[0])  # ``n`` tags the call across a rewrite
        return ToolCallBlock(
            draw(st.sampled_from(ids)),
            draw(st.sampled_from(["bash", "read\ud83d", "f"])),
            args,
            compact(args),
            draw(SIGS),
            draw(st.sampled_from([None, None, "incomplete"])),
        )
    counter[0] += 1
    pkind = draw(st.sampled_from(PROVIDER_KINDS))
    data: dict[str, Any] = {"id": f"it_{counter[0]}", "name": "sql", "input": "a\ud83d"}
    if pkind in ("custom_tool_call", "tool_search_call"):
        # A verbatim call_id, sometimes one that another turn uses too.
        data["call_id"] = draw(st.sampled_from([f"ctc_{counter[0]}", "call_X"]))
    if pkind == "tool_search_call":
        data["execution"] = draw(st.sampled_from(["client", "server"]))
    return ProviderBlock(
        draw(st.sampled_from([api, "openai-responses", "anthropic-messages"])), pkind, data
    )


#: Provider block kinds of random messages: server items (no ``call_id``),
#: client-executed ones, and a tool search run by either side.
PROVIDER_KINDS = (
    "server_tool_use",
    "custom_tool_call",
    "custom_tool_call",
    "web_search_call",
    "tool_search_call",
)


def client_calls(message: AssistantMessage) -> list[tuple[str, str]]:
    """(id, name) of every call a result may answer, restated from the wire
    rule (providers.md §2): tool calls, and Responses items with a
    ``call_id`` that are not server-executed (no output item is generated)."""
    return [
        (b.id, b.name) if isinstance(b, ToolCallBlock) else (str(b.data["call_id"]), "sql")
        for b in message.content
        if isinstance(b, ToolCallBlock)
        or (
            isinstance(b, ProviderBlock)
            and b.api == "openai-responses"
            and "call_id" in b.data
            and b.data.get("execution") != "server"
        )
    ]


@st.composite
def histories(
    draw: st.DrawFn, issuers: Sequence[tuple[str | None, str, str]] = RANDOM_ISSUERS
) -> list[Message]:
    """Random conversations: turns from ``issuers`` with reused, weird and
    duplicate ids, results that answer, repeat, miss or arrive late.
    """
    counter = [0]
    out: list[Message] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["user", "assistant", "assistant", "stray"]))
        if kind == "user":
            out.append(UserMessage(draw(STRINGS)))
            continue
        if kind == "stray":
            out.append(ToolResultMessage(draw(st.sampled_from(WEIRD_IDS)), "bash", draw(STRINGS)))
            continue
        provider, api, model = draw(st.sampled_from(list(issuers)))
        content = draw(st.lists(blocks(WEIRD_IDS, api, counter), max_size=5))
        stop = draw(st.sampled_from(list(StopReason)))
        turn = AssistantMessage(tuple(content), api, model, stop, None, USAGE, None, provider, None)
        out.append(turn)
        answerable = client_calls(turn)
        if answerable:
            picks = draw(st.lists(st.sampled_from(answerable), max_size=len(answerable) + 1))
            for call_id, name in picks:
                out.append(ToolResultMessage(call_id, name, f"res{len(out)}|{draw(STRINGS)}"))
    return out
