"""Tool-call id rewriting (``sanitize.md`` §4): the per-target rules, the real
ids that must pass through them, and injectivity over random histories."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, example, given, settings

from streamnorm.messages import (
    AssistantMessage,
    Message,
    ProviderBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserMessage,
)
from streamnorm.sanitize import (
    ID_RULES,
    id_rule_for,
    resolve_target,
    sanitize_messages_for_target,
    validate_history_for_target,
)
from streamnorm.sanitize.core import SYNTHETIC_RESULT_TEXT

from .sanitize_support import (
    LONG_ID,
    TARGETS,
    as_result,
    as_turn,
    assistant,
    call,
    client_calls,
    histories,
    result,
    target_id,
)

#: The id rules of sanitize.md §4.1, restated: (provider, api, model) -> regex.
RULES = {
    ("anthropic", "anthropic-messages", "claude-sonnet-4-5"): r"[a-zA-Z0-9_-]{1,64}",
    ("bedrock", "anthropic-messages", "anthropic.claude-sonnet-4-5"): r"[a-zA-Z0-9_-]{1,64}",
    ("openai", "openai-responses", "gpt-5"): r"[a-zA-Z0-9_-]{0,63}[a-zA-Z0-9-]",
    ("openai", "openai-completions", "gpt-4.1"): r"[a-zA-Z0-9_.:-]{1,40}",
    ("azure", "openai-completions", "gpt-4.1"): r"[a-zA-Z0-9_.:-]{1,40}",
    ("deepseek", "openai-completions", "deepseek-chat"): r"[a-zA-Z0-9_.:-]{1,64}",
    ("google", "google-generative-ai", "gemini-2.5-flash"): r"[a-zA-Z0-9_-]{1,64}",
    ("google", "google-generative-ai", "gemini-3-pro-preview"): r"[a-zA-Z0-9_-]{1,64}",
    ("mistral", "openai-completions", "mistral-large-latest"): r"[a-zA-Z0-9]{9}",
    ("openrouter", "openai-completions", "mistralai/codestral-2508"): r"[a-zA-Z0-9]{9}",
    ("vllm", "anthropic-messages", "Ministral-8B"): r"[a-zA-Z0-9]{9}",
}

REAL_IDS = (
    LONG_ID,  # Copilot/Codex: call_…|<base64 with + / => (pi-mono #1022)
    "call_Xq1|" + "Zz+/" * 110 + "ab==",  # same part before the | (pi-mono #6854)
    "call_Xq1\nfc_0123456789abcdef",  # joined with a newline (oh-my-pi #11844)
    "functions.bash:0",  # Kimi
    "toolu_01A09q90qw90lq917835lq9",  # Anthropic
    "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",  # DeepSeek
    "call_3f2a9c01_0",  # synthesised by the normalizer
    "ns.bash:0",  # inline parsers
    "ünïcødé-ïd",
    "id with spaces",
    "call_",
    "",
)


def _foreign_turn(*ids: str) -> AssistantMessage:
    return assistant(
        [call(i, n=k) for k, i in enumerate(ids)],
        provider="github-copilot",
        api="openai-responses",
        model="gpt-5-codex",
    )


def test_rule_table_covers_every_target_family() -> None:
    assert set(ID_RULES) == {
        "anthropic",
        "bedrock",
        "openai-responses",
        "openai-completions",
        "google",
        "mistral",
        "default",
    }
    for (provider, api, model), pattern in RULES.items():
        rule = id_rule_for(resolve_target(provider, model, api))
        for sample in ("abc123XYZ", "call_1", "a.b:c", "x_", "A" * 40, "A" * 41, "A" * 65, ""):
            assert rule.is_valid(sample) is bool(re.fullmatch(pattern, sample)), (rule.name, sample)


@pytest.mark.parametrize("target", list(RULES), ids=target_id)
def test_real_ids_rewritten_valid_distinct_and_followed(target: tuple[str, str, str]) -> None:
    provider, api, model = target
    history: list[Message] = [UserMessage("go"), _foreign_turn(*REAL_IDS)]
    history += [result(i, content=f"r{k}") for k, i in enumerate(REAL_IDS)]
    out = sanitize_messages_for_target(history, provider, model, api=api)
    turn = out[1]
    assert isinstance(turn, AssistantMessage)
    new = [c.id for c in turn.tool_calls]
    assert len(new) == len(REAL_IDS) and len(set(new)) == len(new)
    assert all(re.fullmatch(RULES[target], i) for i in new), new
    assert [(m.tool_call_id, m.content) for m in out[2:] if isinstance(m, ToolResultMessage)] == [
        (new[k], f"r{k}") for k in range(len(REAL_IDS))
    ]
    # Valid ids are kept as they are.
    for old, kept in zip(REAL_IDS, new, strict=True):
        if re.fullmatch(RULES[target], old):
            assert kept == old


def test_long_responses_id_to_each_family() -> None:
    assert len(LONG_ID) >= 450 and {"|", "+", "/", "="} <= set(LONG_ID)
    h: list[Message] = [_foreign_turn(LONG_ID), result(LONG_ID)]
    expected = {
        "anthropic": LONG_ID.replace("|", "_").replace("+", "_").replace("/", "_")[:64],
        "openai-completions": LONG_ID.replace("|", "_").replace("+", "_").replace("/", "_")[:40],
    }
    out = sanitize_messages_for_target(h, "anthropic", "claude-sonnet-4-5")
    assert as_turn(out[0]).tool_calls[0].id == expected["anthropic"]
    out = sanitize_messages_for_target(h, "openai", "gpt-4.1", api="openai-completions")
    assert as_turn(out[0]).tool_calls[0].id == expected["openai-completions"]


def test_ids_differing_only_after_the_bar() -> None:
    a = "call_Q|" + "x" * 200
    b = "call_Q|" + "x" * 199 + "y"
    for provider, api, model in RULES:
        out = sanitize_messages_for_target(
            [_foreign_turn(a, b), result(b, content="B"), result(a, content="A")],
            provider,
            model,
            api=api,
        )
        ids = [c.id for c in as_turn(out[0]).tool_calls]
        assert ids[0] != ids[1]
        assert [(m.tool_call_id, m.content) for m in map(as_result, out[1:])] == [
            (ids[1], "B"),
            (ids[0], "A"),
        ]


def test_trailing_underscore_for_responses() -> None:
    out = sanitize_messages_for_target(
        [assistant([call("call_abc_")]), result("call_abc_")],
        "openai",
        "gpt-5",
        api="openai-responses",
    )
    assert as_turn(out[0]).tool_calls[0].id == "call_abc"
    # A cleaned id that collides is derived instead.
    out = sanitize_messages_for_target(
        [assistant([call("call_abc"), call("call_abc_")])],
        "openai",
        "gpt-5",
        api="openai-responses",
    )
    first, second = (c.id for c in as_turn(out[0]).tool_calls)
    assert first == "call_abc" and re.fullmatch(r"call_[0-9a-f]{24}", second)


def test_same_issuer_ids_follow_the_target_rule() -> None:
    """A target's own ids get no exemption: one its rule rejects is rejected
    whoever issued it, so it is rewritten and its result follows."""
    mine = assistant(
        [call("ns.bash:0"), call(""), call("a\nb"), call("Ab3dE6gH9")],
        provider="mistral",
        api="openai-completions",
        model="mistral-large-latest",
    )
    out = sanitize_messages_for_target(
        [mine], "mistral", "mistral-large-latest", api="openai-completions"
    )
    ids = [c.id for c in as_turn(out[0]).tool_calls]
    assert ids[3] == "Ab3dE6gH9"
    assert len(set(ids)) == 4 and all(re.fullmatch(r"[a-zA-Z0-9]{9}", i) for i in ids)
    bad = ("toolu_\u00e9", "toolu/../x", "toolu_" + "a" * 200)
    h: list[Message] = [assistant([call(i, n=k) for k, i in enumerate(bad)])]
    h += [result(i, content=f"r{k}") for k, i in enumerate(bad)]
    out = sanitize_messages_for_target(h, "anthropic", "claude-sonnet-4-5")
    new = [c.id for c in as_turn(out[0]).tool_calls]
    assert new == ["toolu__", "toolu____x", ("toolu_" + "a" * 200)[:64]]
    assert [(as_result(m).tool_call_id, as_result(m).content) for m in out[1:]] == [
        (n, f"r{k}") for k, n in enumerate(new)
    ]
    assert validate_history_for_target(out, "anthropic", "claude-sonnet-4-5") == []
    assert len(validate_history_for_target(h, "anthropic", "claude-sonnet-4-5")) == 3


def test_same_client_item_id_in_two_turns() -> None:
    """A client-executed Responses item's ``call_id`` is an id like the others:
    the second turn's copy is rewritten with its result, not reused."""

    def turn(n: int) -> AssistantMessage:
        data = {"id": f"ctc_{n}", "call_id": "call_X", "name": "sql", "input": "q"}
        item = ProviderBlock("openai-responses", "custom_tool_call", data)
        return assistant([item], provider="openai", api="openai-responses", model="gpt-5")

    h: list[Message] = [
        turn(1),
        result("call_X", "sql", "a"),
        turn(2),
        result("call_X", "sql", "b"),
    ]
    target = ("openai", "gpt-5")
    assert validate_history_for_target(h, *target, api="openai-responses") == [
        "message 2: tool call id 'call_X' reused from message 0"
    ]
    out = sanitize_messages_for_target(h, *target, api="openai-responses")
    assert out[:2] == h[:2]
    (second,) = as_turn(out[2]).content
    assert isinstance(second, ProviderBlock)
    new = second.data["call_id"]
    assert new != "call_X" and re.fullmatch(r"call_[0-9a-f]{24}", new)
    assert {k: v for k, v in second.data.items() if k != "call_id"} == {
        "id": "ctc_2",
        "name": "sql",
        "input": "q",
    }
    assert as_result(out[3]) == ToolResultMessage(new, "sql", "b")
    assert validate_history_for_target(out, *target, api="openai-responses") == []
    assert sanitize_messages_for_target(out, *target, api="openai-responses") == out


def test_same_id_in_one_message_matched_in_order() -> None:
    h: list[Message] = [
        assistant([call("call_0", n=1), call("call_0", n=2)]),
        ToolResultMessage("call_0", "bash", "first"),
        ToolResultMessage("call_0", "bash", "second"),
    ]
    out = sanitize_messages_for_target(h, "anthropic", "claude-opus-4-6")
    first, second = (c.id for c in as_turn(out[0]).tool_calls)
    assert first != second
    assert [(m.tool_call_id, m.content) for m in map(as_result, out[1:])] == [
        (first, "first"),
        (second, "second"),
    ]


# ---------------------------------------------------------------------------
# Properties over random histories


def _call_tags(messages: list[Message]) -> list[tuple[int, str]]:
    """(tag ``n`` of the input call, id) for every call, in order."""
    return [
        (int(b.arguments["n"]), b.id)
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolCallBlock)
    ]


def _answerable(m: AssistantMessage) -> set[str]:
    """Ids a result may answer: tool calls and client-executed Responses items."""
    return {call_id for call_id, _ in client_calls(m)}


def _tagged(history: list[Message]) -> list[Message]:
    """``history`` with each tool result's content prefixed by ``#<position>|``:
    a label no two results share, and that sanitizing leaves intact (ASCII).
    Labels taken from the content itself can be empty or repeated."""
    out: list[Message] = []
    for k, m in enumerate(history):
        if isinstance(m, ToolResultMessage):
            assert isinstance(m.content, str)
            m = replace(m, content=f"#{k}|{m.content}")
        out.append(m)
    return out


def _assert_results_follow(history: list[Message], out: list[Message]) -> None:
    """Every result of ``out`` follows its call: it answers a call of the
    nearest preceding assistant message, with only results in between, at
    most once; a kept result answers the call that had its id in the input
    (a tool call through its tag ``n``, a client-executed item through its
    item ``id``: a ``call_id`` that another turn reused is rewritten too);
    any other result is a synthetic error result."""
    input_id = dict(_call_tags(history))  # call tag -> id it had in the input
    item_call_id = {  # item id -> the call_id it had in the input
        b.data["id"]: b.data["call_id"]
        for m in history
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ProviderBlock) and "call_id" in b.data
    }
    result_of = {  # result label -> id it answered in the input
        m.content.split("|", 1)[0]: m.tool_call_id
        for m in history
        if isinstance(m, ToolResultMessage) and isinstance(m.content, str)
    }
    assert len(result_of) == sum(isinstance(m, ToolResultMessage) for m in history)
    current: AssistantMessage | None = None
    answered: set[str] = set()
    for m in out:
        if isinstance(m, AssistantMessage):
            current, answered = m, set()
        elif isinstance(m, UserMessage):
            current = None
        else:
            assert isinstance(m, ToolResultMessage) and isinstance(m.content, str)
            assert current is not None
            assert m.tool_call_id in _answerable(current)
            assert m.tool_call_id not in answered
            answered.add(m.tool_call_id)
            if m.content == SYNTHETIC_RESULT_TEXT:
                assert m.is_error
                continue
            label = m.content.split("|", 1)[0]
            assert label in result_of, m
            owners = [b for b in current.tool_calls if b.id == m.tool_call_id]
            if owners:
                assert input_id[int(owners[0].arguments["n"])] == result_of[label]
                continue
            (item, *_) = (
                b
                for b in current.content
                if isinstance(b, ProviderBlock) and b.data.get("call_id") == m.tool_call_id
            )
            assert item_call_id[item.data["id"]] == result_of[label]


#: Two stray results with the same content, each answering a call of its own
#: turn: content alone cannot tell them apart.
_SAME_CONTENT_STRAYS: list[Message] = [
    assistant([call("call_a", n=1)]),
    ToolResultMessage("call_a", "bash", "hello"),
    assistant([call("call_b", n=2)]),
    ToolResultMessage("call_b", "bash", "hello"),
]


#: Two client-executed items of one turn with the same ``call_id``: the
#: second is given a new one, and so is the result that answers it.
_SHARED_ITEM_CALL_ID: list[Message] = [
    assistant(
        [
            ProviderBlock(
                "openai-responses",
                "custom_tool_call",
                {"id": f"it_{n}", "name": "sql", "input": "q", "call_id": "call_X"},
            )
            for n in (1, 2)
        ],
        provider="openai",
        api="openai-responses",
        model="gpt-5",
    ),
    ToolResultMessage("call_X", "sql", "a"),
    ToolResultMessage("call_X", "sql", "b"),
]


@example(_SHARED_ITEM_CALL_ID)
@example(_SAME_CONTENT_STRAYS)
@example([assistant([call("call_a", n=1)]), ToolResultMessage("call_a", "bash", "")])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_rewrite_is_injective_and_results_follow(history: list[Message]) -> None:
    history = _tagged(history)
    for provider, api, model in TARGETS:
        out = sanitize_messages_for_target(history, provider, model, api=api)
        tags = _call_tags(out)
        ids = [i for _, i in tags]
        assert len(set(ids)) == len(ids), "two calls share an output id"
        assert len({t for t, _ in tags}) == len(tags)
        _assert_results_follow(history, out)
        # Ids not issued by the target itself follow the target's rule.
        rule = id_rule_for(resolve_target(provider, model, api))
        for m in out:
            if isinstance(m, AssistantMessage) and m.api != api:
                assert all(rule.is_valid(c.id) for c in m.tool_calls)
