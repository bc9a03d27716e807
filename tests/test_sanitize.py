"""The scenarios of ``sanitize.md`` §9, one test each (numbered as there),
plus the target and model-matching rules of §1 and §2."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from streamnorm.apis import READ_ONLY_APIS
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
    UserMessage,
)
from streamnorm.sanitize import (
    models_match,
    resolve_target,
    sanitize_messages_for_target,
    validate_history_for_target,
)

from .sanitize_support import (
    ANTHROPIC_SIG,
    GEMINI_SIG,
    LONG_ID,
    REASONING_SIG,
    REASONING_SIG_NO_ENC,
    RESPONSES_CALL_SIG,
    RESPONSES_TEXT_SIG,
    as_turn,
    assistant,
    call,
    compact,
    result,
    tool_calls,
)
from .support import FIXTURES, needs_fixtures

SENTINEL = "skip_thought_signature_validator"
PLAIN = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def sanitize(history: Sequence[Message], provider: str, model: str, **kw: object) -> list[Message]:
    # ``kw`` is untyped on purpose: test_31 passes option values that the
    # signature's ``Literal`` types rule out, to check that they are refused.
    return sanitize_messages_for_target(history, provider, model, **kw)  # type: ignore[arg-type]


def claude(
    *content: ContentBlock,
    provider: str | None = "anthropic",
    model: str | None = "claude-sonnet-4-5",
    stop: StopReason = StopReason.STOP,
    response_model: str | None = None,
) -> AssistantMessage:
    """An Anthropic ``claude-sonnet-4-5`` turn (the "A" of §9)."""
    return assistant(
        content, provider=provider, model=model, stop=stop, response_model=response_model
    )


def responses(
    *content: ContentBlock, model: str = "gpt-5", provider: str | None = "openai"
) -> AssistantMessage:
    return assistant(content, provider=provider, api="openai-responses", model=model)


def gemini(*content: ContentBlock, model: str = "gemini-2.5-flash") -> AssistantMessage:
    return assistant(content, provider="google", api="google-generative-ai", model=model)


def only_turn(out: list[Message]) -> AssistantMessage:
    (turn,) = [m for m in out if isinstance(m, AssistantMessage)]
    return turn


def results(out: list[Message]) -> list[ToolResultMessage]:
    return [m for m in out if isinstance(m, ToolResultMessage)]


def signatures(out: list[Message]) -> list[str]:
    return [
        b.signature
        for m in out
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, (TextBlock, ThinkingBlock, ToolCallBlock)) and b.signature
    ]


# ---------------------------------------------------------------------------
# §9 scenarios


def test_01_same_model_full_fidelity() -> None:
    h: list[Message] = [
        UserMessage("list files"),
        claude(
            ThinkingBlock("I should run ls.", ANTHROPIC_SIG),
            TextBlock("Listing."),
            call("toolu_01A"),
            stop=StopReason.TOOL_USE,
        ),
        result("toolu_01A"),
    ]
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == h


def test_02_dated_vs_alias_model() -> None:
    h = [
        claude(
            ThinkingBlock("hm", ANTHROPIC_SIG), TextBlock("x"), model="claude-sonnet-4-5-20250929"
        )
    ]
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == h


def test_03_relabelled_model() -> None:
    msg = claude(
        ThinkingBlock("hm", ANTHROPIC_SIG),
        TextBlock("x"),
        provider="openrouter",
        model="claude-sonnet-4-5",
        response_model="anthropic/claude-4.5-sonnet-20250929",
    )
    assert sanitize([msg], "openrouter", "claude-sonnet-4-5", api="anthropic") == [msg]
    # The name the proxy reported also identifies the issuer.
    assert sanitize([msg], "openrouter", "anthropic/claude-4.5-sonnet", api="anthropic") == [msg]


def test_04_anthropic_to_responses() -> None:
    h: list[Message] = [
        claude(
            ThinkingBlock("Plan.", ANTHROPIC_SIG), call("toolu_01XyZ"), stop=StopReason.TOOL_USE
        ),
        result("toolu_01XyZ"),
    ]
    out = sanitize(h, "openai", "gpt-5", api="openai-responses")
    turn = only_turn(out)
    assert turn.content[0] == TextBlock("<thinking>\nPlan.\n</thinking>\n\n")
    assert turn.tool_calls[0].id == "toolu_01XyZ"
    assert signatures(out) == []
    assert results(out)[0].tool_call_id == "toolu_01XyZ"


def test_05_copilot_responses_to_anthropic() -> None:
    assert len(LONG_ID) >= 450 and "|" in LONG_ID and "+" in LONG_ID and "/" in LONG_ID
    h: list[Message] = [responses(call(LONG_ID), provider="github-copilot"), result(LONG_ID)]
    out = sanitize(h, "anthropic", "claude-sonnet-4-5")
    new = only_turn(out).tool_calls[0].id
    assert PLAIN.fullmatch(new)
    assert results(out)[0].tool_call_id == new


def test_06_shared_prefix_ids() -> None:
    a, b = "call_X|" + "a" * 300, "call_X|" + "b" * 300
    h: list[Message] = [
        responses(call(a), call(b), provider="github-copilot"),
        result(b),
        result(a),
    ]
    out = sanitize(h, "anthropic", "claude-sonnet-4-5")
    ids = [c.id for c in only_turn(out).tool_calls]
    assert len(set(ids)) == 2 and all(PLAIN.fullmatch(i) for i in ids)
    assert [r.tool_call_id for r in results(out)] == [ids[1], ids[0]]


def test_07_openai_chat_completions_target() -> None:
    h: list[Message] = [responses(call(LONG_ID), provider="github-copilot"), result(LONG_ID)]
    out = sanitize(h, "openai", "gpt-4.1", api="openai-completions")
    new = only_turn(out).tool_calls[0].id
    assert re.fullmatch(r"[a-zA-Z0-9_.:-]{1,40}", new)
    assert results(out)[0].tool_call_id == new


def test_08_mistral_target() -> None:
    ids = ["toolu_01ABCdef", "ns.bash:0", ""]
    h: list[Message] = [claude(*(call(i) for i in ids)), *(result(i) for i in ids)]
    out = sanitize(h, "mistral", "mistral-large-latest", api="openai-completions")
    new = [c.id for c in only_turn(out).tool_calls]
    assert all(re.fullmatch(r"[a-zA-Z0-9]{9}", i) for i in new)
    assert len(set(new)) == 3
    assert [r.tool_call_id for r in results(out)] == new


def test_08b_mistral_by_model_name_on_another_host() -> None:
    h: list[Message] = [claude(call("toolu_01ABCdef")), result("toolu_01ABCdef")]
    out = sanitize(h, "openrouter", "mistralai/devstral-small", api="openai-completions")
    assert re.fullmatch(r"[a-zA-Z0-9]{9}", only_turn(out).tool_calls[0].id)


def test_09_kimi_ids_on_kimi() -> None:
    kimi = assistant(
        (call("functions.bash:0"),), provider="moonshot", api="openai-completions", model="kimi-k2"
    )
    h: list[Message] = [kimi, result("functions.bash:0")]
    assert sanitize(h, "moonshot", "kimi-k2", api="openai-completions") == h
    # Also unchanged for another Chat Completions host: the id is valid there.
    first = as_turn(sanitize(h, "deepseek", "deepseek-chat", api="openai-completions")[0])
    assert first.tool_calls[0].id == ("functions.bash:0")


def test_10_duplicate_ids_across_turns() -> None:
    h: list[Message] = [
        UserMessage("a"),
        claude(call("call_0", n=1)),
        result("call_0", content="first"),
        claude(call("call_0", n=2)),
        result("call_0", content="second"),
    ]
    out = sanitize(h, "anthropic", "claude-opus-4-6")
    turns = [m for m in out if isinstance(m, AssistantMessage)]
    first, second = turns[0].tool_calls[0].id, turns[1].tool_calls[0].id
    assert first == "call_0" and second != "call_0"
    assert second == "call_" + hashlib.sha256(b"call_0\x000").hexdigest()[:24]
    assert [(r.tool_call_id, r.content) for r in results(out)] == [
        (first, "first"),
        (second, "second"),
    ]
    assert out.index(results(out)[1]) == out.index(turns[1]) + 1


def test_11_errored_turn_and_its_result_dropped() -> None:
    h: list[Message] = [
        UserMessage("go"),
        claude(ThinkingBlock("x", ANTHROPIC_SIG), call("toolu_1"), stop=StopReason.ERROR),
        result("toolu_1"),
    ]
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == [UserMessage("go")]


def test_11b_result_of_dropped_turn_not_given_to_earlier_call() -> None:
    h: list[Message] = [
        claude(call("toolu_1")),
        claude(call("toolu_1"), stop=StopReason.ERROR),
        result("toolu_1", content="belongs to the failed turn"),
    ]
    out = sanitize(h, "anthropic", "claude-sonnet-4-5")
    assert len(out) == 2
    assert isinstance(out[1], ToolResultMessage) and out[1].is_error
    assert out[1].content == "No result provided"


def test_12_aborted_last_turn_dropped() -> None:
    h: list[Message] = [UserMessage("go"), claude(TextBlock("partial"), stop=StopReason.ABORTED)]
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == [UserMessage("go")]


def test_13_interrupted_call() -> None:
    h: list[Message] = [
        claude(call("toolu_a"), call("toolu_b", name="read")),
        result("toolu_a"),
        UserMessage("stop"),
    ]
    out = sanitize(h, "anthropic", "claude-sonnet-4-5")
    assert out[:2] == h[:2]
    assert out[2] == ToolResultMessage("toolu_b", "read", "No result provided", is_error=True)
    assert out[3] == UserMessage("stop")


def test_14_unanswered_calls_at_the_end() -> None:
    h: list[Message] = [UserMessage("go"), claude(call("toolu_a"))]
    out = sanitize(h, "anthropic", "claude-sonnet-4-5")
    assert out[-1] == ToolResultMessage("toolu_a", "bash", "No result provided", is_error=True)


def test_15_orphan_results() -> None:
    h: list[Message] = [
        UserMessage("go"),
        result("toolu_nobody"),
        claude(call("toolu_a")),
        UserMessage("wait"),
        result("toolu_a"),
    ]
    out = sanitize(h, "anthropic", "claude-sonnet-4-5")
    assert out == [
        UserMessage("go"),
        h[2],
        ToolResultMessage("toolu_a", "bash", "No result provided", is_error=True),
        UserMessage("wait"),
    ]


def test_15b_second_result_for_the_same_call_dropped() -> None:
    h: list[Message] = [
        claude(call("toolu_a")),
        result("toolu_a", content="one"),
        result("toolu_a", content="two"),
    ]
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == h[:2]


def test_16_redacted_thinking() -> None:
    h = [claude(ThinkingBlock("", ANTHROPIC_SIG, redacted=True), TextBlock("ok"))]
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == h
    assert only_turn(sanitize(h, "anthropic", "claude-opus-4-6")).content == (TextBlock("ok"),)


def test_17_empty_signed_thinking() -> None:
    h = [claude(ThinkingBlock("", ANTHROPIC_SIG), TextBlock("ok"))]
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == h
    assert only_turn(sanitize(h, "anthropic", "claude-opus-4-6")).content == (TextBlock("ok"),)


def test_18_unsigned_thinking_anthropic_target_dropped_not_demoted() -> None:
    h = [claude(ThinkingBlock("thought without signature_delta"), TextBlock("ok"))]
    assert only_turn(sanitize(h, "anthropic", "claude-sonnet-4-5")).content == (TextBlock("ok"),)


def test_19_foreign_anthropic_compatible_signatures() -> None:
    kimi = assistant(
        (
            ThinkingBlock("Kimi thinks.", "kimi-sig"),
            TextBlock("answer"),
            call("toolu_k", signature="s"),
        ),
        provider="moonshot",
        model="kimi-k2",
    )
    out = sanitize([kimi, result("toolu_k")], "anthropic", "claude-sonnet-4-5")
    assert only_turn(out).content[:2] == (
        TextBlock("<thinking>\nKimi thinks.\n</thinking>\n\n"),
        TextBlock("answer"),
    )
    assert signatures(out) == []


def test_19b_unknown_host_is_foreign_whatever_the_model() -> None:
    """An unknown host (``provider=None``) no longer lets api and model decide:
    its signature goes nowhere, even with the target's own model name."""
    kimi = assistant((ThinkingBlock("Kimi thinks.", "kimi-sig"),), provider=None, model="kimi-k2")
    assert only_turn(sanitize([kimi], "anthropic", "claude-sonnet-4-5")).content == (
        TextBlock("<thinking>\nKimi thinks.\n</thinking>"),
    )
    same_name = claude(ThinkingBlock("Claude thinks.", ANTHROPIC_SIG), provider=None)
    assert only_turn(sanitize([same_name], "anthropic", "claude-sonnet-4-5")).content == (
        TextBlock("<thinking>\nClaude thinks.\n</thinking>"),
    )


ENCRYPTED_SEARCH = ProviderBlock(
    "anthropic-messages",
    "web_search_tool_result",
    {
        "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "url": "https://x", "encrypted_content": "Eq=="}],
    },
)
SERVER_USE = ProviderBlock(
    "anthropic-messages",
    "server_tool_use",
    {"id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
)


def _opaque_state(out: list[Message]) -> list[object]:
    """Everything only its issuer can verify: signatures, provider blocks,
    reasoning (a ThinkingBlock is kept only with its issuer's signature)."""
    return [
        b
        for m in out
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, (ProviderBlock, ThinkingBlock))
        or (isinstance(b, (TextBlock, ToolCallBlock)) and b.signature)
    ]


#: (case, turn from an unknown host, target (provider, model, api)): each kept
#: its opaque state before, because ``provider=None`` matched any host.
UNKNOWN_HOST_CASES = [
    (
        "anthropic search results to bedrock",
        claude(SERVER_USE, ENCRYPTED_SEARCH, TextBlock("found"), provider=None),
        ("bedrock", "claude-sonnet-4-5", "anthropic-messages"),
    ),
    (
        "xai web search item to openai",
        responses(
            ProviderBlock("openai-responses", "web_search_call", {"id": "ws_1", "action": {}}),
            TextBlock("found", RESPONSES_TEXT_SIG),
            provider=None,
        ),
        ("openai", "gpt-5", "openai-responses"),
    ),
    (
        "azure code interpreter item to openai",
        responses(
            ProviderBlock("openai-responses", "code_interpreter_call", {"id": "ci_1", "code": "1"}),
            TextBlock("ran"),
            provider=None,
        ),
        ("openai", "gpt-5", "openai-responses"),
    ),
    (
        "encrypted reasoning of a host reporting gpt-5",
        assistant(
            (ThinkingBlock("plan", REASONING_SIG), TextBlock("answer", RESPONSES_TEXT_SIG)),
            provider=None,
            api="openai-responses",
            model=None,
            response_model="gpt-5",
        ),
        ("openai", "gpt-5", "openai-responses"),
    ),
    (
        "anthropic signature to vertex",
        claude(ThinkingBlock("t", ANTHROPIC_SIG), TextBlock("x"), provider=None),
        ("vertex", "claude-sonnet-4-5", "anthropic-messages"),
    ),
    (
        "anthropic signature to moonshot",
        claude(ThinkingBlock("t", ANTHROPIC_SIG), TextBlock("x"), provider=None),
        ("moonshot", "claude-sonnet-4-5", "anthropic-messages"),
    ),
]


@pytest.mark.parametrize(
    ("turn", "target"), [pytest.param(t, g, id=case) for case, t, g in UNKNOWN_HOST_CASES]
)
def test_19c_opaque_state_never_crosses_to_another_host(
    turn: AssistantMessage, target: tuple[str, str, str]
) -> None:
    provider, model, api = target
    h: list[Message] = [UserMessage("q"), turn]
    assert _opaque_state(h)
    out = sanitize(h, provider, model, api=api)
    assert _opaque_state(out) == []
    assert validate_history_for_target(out, provider, model, api=api) == []
    assert validate_history_for_target(h, provider, model, api=api) != []
    # The caller says it is the same host: everything opaque is kept.
    own = [h[0], replace(turn, provider=provider, model=turn.model and model)]
    assert _opaque_state(sanitize(own, provider, model, api=api)) == _opaque_state(own)


def test_20_gemini3_target_with_foreign_calls() -> None:
    h: list[Message] = [
        claude(call("toolu_a"), call("toolu_b")),
        result("toolu_a"),
        result("toolu_b"),
    ]
    out3 = sanitize(h, "google", "gemini-3-pro-preview")
    assert [c.signature for c in only_turn(out3).tool_calls] == [SENTINEL, SENTINEL]
    out2 = sanitize(h, "google", "gemini-2.5-flash")
    assert [c.signature for c in only_turn(out2).tool_calls] == [None, None]
    # A second pass leaves the sentinel in place.
    assert sanitize(out3, "google", "gemini-3-pro-preview") == out3


def test_21_gemini_same_model_bad_signature() -> None:
    for model, expected in (("gemini-2.5-flash", None), ("gemini-3-pro-preview", SENTINEL)):
        h: list[Message] = [
            gemini(
                TextBlock("a", GEMINI_SIG),
                call("c1", signature="not base64!"),
                call("c2", signature=GEMINI_SIG),
                model=model,
            ),
            result("c1"),
            result("c2"),
        ]
        turn = only_turn(sanitize(h, "google", model))
        assert turn.content[0] == TextBlock("a", GEMINI_SIG)
        assert [c.signature for c in turn.tool_calls] == [expected, GEMINI_SIG]


def test_21b_gemini_signature_shapes() -> None:
    # Either alphabet, one per signature: "ab_-" (URL-safe) was refused before.
    for bad in ("", "abc", "ab==c===", "a b=", "a+b-", "ab/_", "ab=-"):
        h = [gemini(TextBlock("t", bad))]
        assert only_turn(sanitize(h, "google", "gemini-2.5-flash")).content == (TextBlock("t"),)
        assert validate_history_for_target(h, "google", "gemini-2.5-flash") != []
    for good in ("abcd", "ab+/", "abc=", "ab==", "ab_-", "a-_="):
        h = [gemini(TextBlock("t", good))]
        assert sanitize(h, "google", "gemini-2.5-flash") == h
        assert validate_history_for_target(h, "google", "gemini-2.5-flash") == []


def _request_signatures(value: object) -> Iterator[str]:
    """Every ``thoughtSignature`` / ``thought_signature`` in a request body."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("thoughtSignature", "thought_signature") and isinstance(v, str):
                yield v
            else:
                yield from _request_signatures(v)
    elif isinstance(value, list):
        for v in value:
            yield from _request_signatures(v)


@needs_fixtures
def test_21c_real_url_safe_signatures_kept_verbatim() -> None:
    """Real Gemini requests send signatures back URL-safe: same issuer, they
    are kept exactly as received and pass validation (Gemini 3 included)."""
    sigs = [
        sig
        for path in sorted((FIXTURES / "requests" / "google-generative-ai").glob("*.json"))
        for sig in _request_signatures(json.loads(path.read_text()))
    ]
    url_safe = [s for s in sigs if set(s) & set("-_")]
    assert len(url_safe) >= 10 and len(sigs) > len(url_safe)
    for model in ("gemini-2.5-flash", "gemini-3-pro-preview"):
        turn = gemini(
            *(call(f"c{k}", signature=sig) for k, sig in enumerate(sigs)),
            TextBlock("done", sigs[0]),
            model=model,
        )
        h: list[Message] = [turn, *(result(f"c{k}") for k in range(len(sigs)))]
        assert sanitize(h, "google", model) == h
        assert validate_history_for_target(h, "google", model) == []


def test_22_responses_reasoning_without_encrypted_content() -> None:
    sig = compact({"id": "fc_1", "namespace": "crm"})
    h: list[Message] = [
        responses(ThinkingBlock("plan", REASONING_SIG_NO_ENC), call("call_1", signature=sig)),
        result("call_1"),
    ]
    turn = only_turn(sanitize(h, "openai", "gpt-5", api="openai-responses"))
    assert turn.content == (call("call_1", signature=compact({"namespace": "crm"})),)
    h2 = [
        responses(
            ThinkingBlock("plan", REASONING_SIG_NO_ENC), call("c", signature=RESPONSES_CALL_SIG)
        )
    ]
    assert (
        only_turn(sanitize(h2, "openai", "gpt-5", api="openai-responses")).tool_calls[0].signature
        is None
    )


def test_23_trailing_and_consecutive_reasoning() -> None:
    r1 = ThinkingBlock("one", REASONING_SIG)
    r2 = ThinkingBlock("two", REASONING_SIG.replace("rs_0a1", "rs_0b2"))
    r3 = ThinkingBlock("three", REASONING_SIG.replace("rs_0a1", "rs_0c3"))
    text = TextBlock("answer", RESPONSES_TEXT_SIG)
    h = [responses(r1, r2, text, r3)]
    assert only_turn(sanitize(h, "openai", "gpt-5", api="openai-responses")).content == (r2, text)


def test_24_encrypted_reasoning_same_model_unchanged() -> None:
    h: list[Message] = [
        UserMessage("q"),
        responses(ThinkingBlock("plan", REASONING_SIG), TextBlock("answer", RESPONSES_TEXT_SIG)),
        UserMessage("follow-up"),
    ]
    assert sanitize(h, "openai", "gpt-5", api="openai-responses") == h
    assert sanitize(h, "openai", "gpt-5-2025-08-07", api="openai-responses") == h


def test_25_text_signatures() -> None:
    for msg, target in (
        (responses(TextBlock("t", RESPONSES_TEXT_SIG)), ("openai", "gpt-5", "openai-responses")),
        (gemini(TextBlock("t", GEMINI_SIG)), ("google", "gemini-2.5-flash", "google")),
    ):
        provider, model, api = target
        assert sanitize([msg], provider, model, api=api) == [msg]
        other = only_turn(sanitize([msg], provider, model + "-lite", api=api))
        assert other.content == (TextBlock("t"),)


def test_26_provider_blocks() -> None:
    blocks = (
        ProviderBlock(
            "anthropic-messages", "server_tool_use", {"id": "srvtoolu_1", "name": "web_search"}
        ),
        ProviderBlock(
            "anthropic-messages", "web_search_tool_result", {"tool_use_id": "srvtoolu_1"}
        ),
        TextBlock("found"),
    )
    h = [claude(*blocks)]
    assert only_turn(sanitize(h, "anthropic", "claude-opus-4-6")).content == blocks
    assert only_turn(sanitize(h, "google", "gemini-2.5-flash")).content == (TextBlock("found"),)
    assert only_turn(sanitize(h, "bedrock", "claude-sonnet-4-5", api="anthropic")).content == (
        TextBlock("found"),
    )


def test_27_citations() -> None:
    cite = {"type": "web_search_result_location", "url": "https://a", "encrypted_index": "Eo8B"}
    h = [claude(TextBlock("cited", citations=(cite,)))]
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == h
    assert only_turn(sanitize(h, "anthropic", "claude-opus-4-6")).content == (TextBlock("cited"),)


def test_28_surrogates() -> None:
    pair_as_two = "\ud83d\ude00"
    h: list[Message] = [
        UserMessage("hi \ud83d there " + pair_as_two),
        claude(
            ToolCallBlock(
                "toolu_1",
                "bash",
                {"cmd": "echo \ud83d", "k\udc00": ["\ud800"]},
                '{"cmd":"x\ud83d"}',
            )
        ),
        ToolResultMessage("toolu_1", "bash", (TextBlock("out \ud83d"),)),
    ]
    out = sanitize(h, "anthropic", "claude-sonnet-4-5")
    assert out[0] == UserMessage("hi  there \U0001f600")
    c = only_turn(out).tool_calls[0]
    assert c.arguments == {"cmd": "echo ", "k": [""]}
    assert c.raw_arguments == '{"cmd":"x"}'
    assert out[2] == ToolResultMessage("toolu_1", "bash", (TextBlock("out "),))
    for m in out:
        json.dumps(m.to_dict(), ensure_ascii=False).encode("utf-8")


def test_29_purity() -> None:
    args = {"cmd": "echo \ud83d", "nested": {"a": ["\ud800"]}}
    h: list[Message] = [
        claude(ThinkingBlock("t", ANTHROPIC_SIG), ToolCallBlock("bad|id", "bash", args, "{}")),
        ToolResultMessage("bad|id", "bash", "r\ud83d"),
    ]
    before = copy.deepcopy(h)
    out = sanitize(h, "google", "gemini-3-pro-preview")
    assert h == before
    assert args == {"cmd": "echo \ud83d", "nested": {"a": ["\ud800"]}}
    new_args = only_turn(out).tool_calls[0].arguments
    assert new_args is not args and new_args["nested"] is not args["nested"]


def test_30_idempotent_and_deterministic_across_processes() -> None:
    h: list[Message] = [
        claude(call(LONG_ID), call("call_0"), call("call_0")),
        result(LONG_ID),
        result("call_0"),
    ]
    once = sanitize(h, "mistral", "mistral-large-latest", api="openai-completions")
    assert sanitize(once, "mistral", "mistral-large-latest", api="openai-completions") == once
    assert sanitize(h, "mistral", "mistral-large-latest", api="openai-completions") == once
    code = (
        "from streamnorm.sanitize import sanitize_messages_for_target as s\n"
        "from tests.sanitize_support import assistant, call, result, LONG_ID\n"
        "h = [assistant([call(LONG_ID), call('call_0'), call('call_0')]),\n"
        "     result(LONG_ID), result('call_0')]\n"
        "out = s(h, 'mistral', 'mistral-large-latest', api='openai-completions')\n"
        "print([c.id for c in out[0].tool_calls])"
    )
    ids = [c.id for c in only_turn(once).tool_calls]
    for seed in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={
                "PYTHONHASHSEED": seed,
                "PYTHONPATH": str(__import__("pathlib").Path(__file__).resolve().parents[1]),
            },
            check=True,
        )
        assert proc.stdout.strip() == repr(ids)


def test_31_target_resolution() -> None:
    assert resolve_target("anthropic", "claude-sonnet-4-5", None).api == "anthropic-messages"
    assert resolve_target("Google", "gemini-2.5-flash", None).api == "google-generative-ai"
    assert resolve_target("openai", "gpt-5", "gemini").api == "google-generative-ai"
    for provider, api in (
        ("openai", None),
        ("openrouter", None),
        ("vertex", None),
        ("x", "auto"),
        ("x", "openai"),
        ("x", "nope"),
    ):
        with pytest.raises(ValueError):
            sanitize([], provider, "m", api=api)
    # Apis that are only read: nothing is sent to them.
    for api in READ_ONLY_APIS:
        with pytest.raises(ValueError, match="does not write"):
            sanitize([], "x", "m", api=api)
        with pytest.raises(ValueError, match="does not write"):
            validate_history_for_target([], "x", "m", api=api)
    with pytest.raises(ValueError):
        sanitize([], "anthropic", "m", foreign_thinking="tags")


def test_32_truncated_call_kept() -> None:
    c = ToolCallBlock("toolu_t", "write", {"path": "a"}, '{"path": "a", "cont', error="incomplete")
    h: list[Message] = [
        claude(c, stop=StopReason.LENGTH),
        ToolResultMessage("toolu_t", "write", "truncated", is_error=True),
    ]
    for target in (
        ("anthropic", "claude-sonnet-4-5", None),
        ("openai", "gpt-5", "openai-responses"),
    ):
        out = sanitize(h, target[0], target[1], api=target[2])
        assert out == h


# ---------------------------------------------------------------------------
# §2 model matching, §3 message rules


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5-20250929", True),
        ("gpt-5", "gpt-5-2025-08-07", True),
        ("gemini-2.5-flash", "models/gemini-2.5-flash", True),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5", True),
        ("Claude-Sonnet-4-5", "claude-sonnet-4-5", True),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5-20251101", False),
        ("gpt-4o", "gpt-4o-mini", False),
        ("claude-3-5-sonnet-latest", "claude-3-5-sonnet", False),
        (None, "gpt-5", False),
        ("", "", False),
    ],
)
def test_models_match(a: str | None, b: str | None, same: bool) -> None:
    assert models_match(a, b) is same
    assert models_match(b, a) is same


def test_same_api_other_provider_is_foreign() -> None:
    h = [claude(ThinkingBlock("t", ANTHROPIC_SIG), TextBlock("x"), provider="vertex")]
    out = sanitize(h, "anthropic", "claude-sonnet-4-5", foreign_thinking="text")
    assert only_turn(out).content[0] == TextBlock("t\n\n")
    assert sanitize(h, "VERTEX", "claude-sonnet-4-5", api="anthropic") == h


def test_empty_turn_dropped_and_origin_kept() -> None:
    h: list[Message] = [
        UserMessage("q"),
        claude(ThinkingBlock("", ANTHROPIC_SIG, redacted=True)),
        UserMessage("again"),
    ]
    assert sanitize(h, "openai", "gpt-5", api="openai-responses") == [
        UserMessage("q"),
        UserMessage("again"),
    ]


def test_blank_text_dropped_unless_its_signature_is_replayed() -> None:
    h: list[Message] = [
        gemini(TextBlock("", GEMINI_SIG), TextBlock("  "), call("c1", signature=GEMINI_SIG)),
        result("c1"),
    ]
    same = only_turn(sanitize(h, "google", "gemini-2.5-flash"))
    assert same.content == (TextBlock("", GEMINI_SIG), call("c1", signature=GEMINI_SIG))
    other = only_turn(sanitize(h, "anthropic", "claude-sonnet-4-5"))
    assert other.content == (call("c1"),)


def test_client_executed_provider_calls_need_results() -> None:
    ctc = ProviderBlock(
        "openai-responses", "custom_tool_call", {"call_id": "call_ctc", "name": "sql", "input": "x"}
    )
    h: list[Message] = [responses(ctc), ToolResultMessage("call_ctc", "sql", "rows")]
    assert sanitize(h, "openai", "gpt-5-mini", api="openai-responses") == h
    # Unanswered: a synthetic result; replayed elsewhere: the block and its result go.
    out = sanitize(h[:1], "openai", "gpt-5", api="openai-responses")
    assert out[1] == ToolResultMessage("call_ctc", "sql", "No result provided", is_error=True)
    assert sanitize(h, "anthropic", "claude-sonnet-4-5") == []


def test_validators_accept_scenario_outputs() -> None:
    h: list[Message] = [
        UserMessage("go"),
        responses(
            ThinkingBlock("plan", REASONING_SIG),
            call(LONG_ID, signature=RESPONSES_CALL_SIG),
            provider="github-copilot",
        ),
        result(LONG_ID),
        claude(ThinkingBlock("t", ANTHROPIC_SIG), call("toolu_1")),
        assistant((call("ns.bash:0"),), provider="vllm", api="openai-completions", model="qwen3"),
        result("ns.bash:0"),
    ]
    for provider, model, api in (
        ("anthropic", "claude-sonnet-4-5", "anthropic"),
        ("openai", "gpt-5", "openai-responses"),
        ("google", "gemini-3-pro-preview", "google"),
        ("mistral", "mistral-small-latest", "openai-completions"),
    ):
        out = sanitize(h, provider, model, api=api)
        assert validate_history_for_target(out, provider, model, api=api) == []
        assert validate_history_for_target(h, provider, model, api=api) != []
        assert len(tool_calls(out)) == 3
