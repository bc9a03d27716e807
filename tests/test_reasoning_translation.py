"""Reasoning settings of real client bodies encoded into values the target
model accepts, per the model catalog (docs/models.md, issues #27/5, #28/3,
#30/2).

The bodies are the shapes the clients send: Claude Code's manual thinking
(``max_tokens`` 32000, ``budget_tokens`` 31999), Gemini CLI's
``thinkingConfig`` (``includeThoughts`` with a budget of 8192, -1 or 0 and
no ``maxOutputTokens``) and Codex CLI's ``reasoning: {effort, summary}``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from streamnorm import (
    Reasoning,
    Request,
    UserMessage,
    decode_request,
    encode_request,
    model_info,
    validate_request_body,
    with_reasoning_continuity,
)

HELLO = [{"role": "user", "content": "Say hi."}]

CLAUDE_CODE: dict[str, Any] = {
    "model": "claude-sonnet-4-5-20250929",
    "max_tokens": 32000,
    "thinking": {"type": "enabled", "budget_tokens": 31999},
    "system": [{"type": "text", "text": "You are Claude Code."}],
    "messages": [{"role": "user", "content": [{"type": "text", "text": "Say hi."}]}],
    "stream": True,
}
GEMINI_PATH = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"


def gemini_cli(budget: int) -> dict[str, Any]:
    return {
        "contents": [{"role": "user", "parts": [{"text": "Say hi."}]}],
        "generationConfig": {
            "temperature": 0,
            "topP": 1,
            "thinkingConfig": {"includeThoughts": True, "thinkingBudget": budget},
        },
    }


def codex(effort: str = "medium") -> dict[str, Any]:
    return {
        "model": "gpt-5-codex",
        "instructions": "You are Codex.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
        ],
        "tools": [],
        "tool_choice": "auto",
        "parallel_tool_calls": False,
        "reasoning": {"effort": effort, "summary": "auto"},
        "store": False,
        "stream": True,
        "include": ["reasoning.encrypted_content"],
    }


def translate(
    body: dict[str, Any], source: str, target: str, model: str, path: str | None = None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    request = replace(decode_request(body, source, path=path), model=model)
    wire = encode_request(request, target)
    return dict(wire.body), tuple(str(w) for w in map(str, wire.warnings))


def thinking_config(body: dict[str, Any]) -> Any:
    return body["generationConfig"]["thinkingConfig"]


# ---------------------------------------------------------------------------
# Claude Code (budget_tokens 31999, max_tokens 32000)


def test_claude_code_same_model_unchanged() -> None:
    body, warnings = translate(
        CLAUDE_CODE, "anthropic-messages", "anthropic-messages", "claude-sonnet-4-5"
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 31999}
    assert body["max_tokens"] == 32000 and warnings == ()


def test_claude_code_to_gemini_25_flash_is_clamped_and_asks_for_thoughts() -> None:
    body, warnings = translate(
        CLAUDE_CODE, "anthropic-messages", "google-generative-ai", "gemini-2.5-flash"
    )
    assert thinking_config(body) == {"includeThoughts": True, "thinkingBudget": 24576}
    assert body["generationConfig"]["maxOutputTokens"] == 32000
    assert any("31999" in w and "24576" in w for w in warnings)


def test_claude_code_to_gemini_25_pro_fits() -> None:
    body, warnings = translate(
        CLAUDE_CODE, "anthropic-messages", "google-generative-ai", "gemini-2.5-pro"
    )
    assert thinking_config(body) == {"includeThoughts": True, "thinkingBudget": 31999}
    assert warnings == ()


def test_claude_code_to_gemini_3_takes_a_level() -> None:
    body, warnings = translate(
        CLAUDE_CODE, "anthropic-messages", "google-generative-ai", "gemini-3-pro-preview"
    )
    assert thinking_config(body) == {"includeThoughts": True, "thinkingLevel": "HIGH"}
    assert any("effort 'high'" in w for w in warnings)


@pytest.mark.parametrize("target", ["openai-responses", "openai-completions"])
def test_claude_code_to_gpt5_takes_an_effort(target: str) -> None:
    body, warnings = translate(CLAUDE_CODE, "anthropic-messages", target, "gpt-5")
    if target == "openai-responses":
        assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    else:
        assert body["reasoning_effort"] == "high"
    assert any("31999" in w for w in warnings)


def test_claude_code_to_a_claude_that_refuses_budgets_is_adaptive() -> None:
    """Claude 4.7 and later refuse ``budget_tokens`` (Anthropic's extended
    thinking page): the budget becomes adaptive thinking with its effort."""
    body, warnings = translate(
        CLAUDE_CODE, "anthropic-messages", "anthropic-messages", "claude-sonnet-5"
    )
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "high"}
    assert any("31999 sent as adaptive thinking" in w for w in warnings)


def test_claude_code_to_a_model_without_reasoning_says_so() -> None:
    body, warnings = translate(CLAUDE_CODE, "anthropic-messages", "openai-responses", "gpt-4o")
    assert "reasoning" not in body
    assert any("does not reason" in w for w in warnings)


# ---------------------------------------------------------------------------
# Gemini CLI (thinkingBudget 8192 / -1 / 0, no maxOutputTokens)


def test_gemini_cli_8192_to_claude_gets_room_above_the_budget() -> None:
    body, warnings = translate(
        gemini_cli(8192),
        "google-generative-ai",
        "anthropic-messages",
        "claude-sonnet-4-5",
        GEMINI_PATH,
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 32000  # the model's limit (64000) capped, above the budget
    assert validate_request_body(body, "anthropic-messages") == []
    assert warnings == ()


def test_gemini_cli_8192_to_an_unknown_model_raises_max_tokens() -> None:
    body, warnings = translate(
        gemini_cli(8192),
        "google-generative-ai",
        "anthropic-messages",
        "house-model",
        GEMINI_PATH,
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] == 8192 + 4096
    assert any("max_tokens 4096 raised to 12288" in w for w in warnings)


def test_gemini_cli_dynamic_to_a_budget_only_claude() -> None:
    body, warnings = translate(
        gemini_cli(-1),
        "google-generative-ai",
        "anthropic-messages",
        "claude-sonnet-4-5",
        GEMINI_PATH,
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert any("dynamic thinking sent as budget_tokens 8192" in w for w in warnings)


def test_gemini_cli_dynamic_to_an_adaptive_claude() -> None:
    body, warnings = translate(
        gemini_cli(-1),
        "google-generative-ai",
        "anthropic-messages",
        "claude-opus-4-6",
        GEMINI_PATH,
    )
    assert body["thinking"] == {"type": "adaptive"} and "output_config" not in body
    assert warnings == ()


def test_gemini_cli_dynamic_same_api_unchanged() -> None:
    body, warnings = translate(
        gemini_cli(-1),
        "google-generative-ai",
        "google-generative-ai",
        "gemini-2.5-pro",
        GEMINI_PATH,
    )
    assert thinking_config(body) == {"includeThoughts": True, "thinkingBudget": -1}
    assert warnings == ()


@pytest.mark.parametrize(
    ("target", "model", "expected", "warned"),
    [
        ("anthropic-messages", "claude-sonnet-4-5", {"thinking": {"type": "disabled"}}, False),
        (
            "openai-responses",
            "gpt-5.1",
            {"reasoning": {"effort": "none", "summary": "auto"}},
            False,
        ),
        (
            "openai-responses",
            "gpt-5",
            {"reasoning": {"effort": "minimal", "summary": "auto"}},
            True,
        ),
        ("openai-completions", "o4-mini", {"reasoning_effort": "low"}, True),
    ],
)
def test_gemini_cli_off(target: str, model: str, expected: dict[str, Any], warned: bool) -> None:
    body, warnings = translate(gemini_cli(0), "google-generative-ai", target, model, GEMINI_PATH)
    assert {k: body[k] for k in expected} == expected
    assert bool(warnings) is warned


def test_gemini_cli_off_on_gemini_25_pro_is_its_minimum() -> None:
    body, warnings = translate(
        gemini_cli(0),
        "google-generative-ai",
        "google-generative-ai",
        "gemini-2.5-pro",
        GEMINI_PATH,
    )
    assert thinking_config(body)["thinkingBudget"] == 128
    assert any("cannot turn thinking off" in w for w in warnings)


def test_a_budget_below_anthropics_minimum_is_raised() -> None:
    body, warnings = translate(
        gemini_cli(512),
        "google-generative-ai",
        "anthropic-messages",
        "claude-sonnet-4-5",
        GEMINI_PATH,
    )
    assert body["thinking"]["budget_tokens"] == 1024
    assert any("clamped to 1024" in w for w in warnings)


# ---------------------------------------------------------------------------
# Codex CLI (reasoning: {effort, summary})


def test_codex_same_api_unchanged() -> None:
    body, warnings = translate(codex(), "openai-responses", "openai-responses", "gpt-5-codex")
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"] and body["store"] is False
    assert warnings == ()


def test_codex_to_a_budget_only_claude_gets_a_budget() -> None:
    body, warnings = translate(
        codex(), "openai-responses", "anthropic-messages", "claude-sonnet-4-5"
    )
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert "output_config" not in body and body["max_tokens"] == 32000
    assert validate_request_body(body, "anthropic-messages") == []
    assert any("effort 'medium' sent as budget_tokens 8192" in w for w in warnings)


def test_codex_to_an_adaptive_claude_keeps_the_effort() -> None:
    body, warnings = translate(codex(), "openai-responses", "anthropic-messages", "claude-opus-4-6")
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "medium"} and warnings == ()


def test_codex_minimal_to_an_adaptive_claude_is_its_lowest() -> None:
    body, warnings = translate(
        codex("minimal"), "openai-responses", "anthropic-messages", "claude-opus-4-6"
    )
    assert body["output_config"] == {"effort": "low"}
    assert any("'minimal' sent as 'low'" in w for w in warnings)


def test_codex_to_gemini_25_flash() -> None:
    body, warnings = translate(
        codex(), "openai-responses", "google-generative-ai", "gemini-2.5-flash"
    )
    assert thinking_config(body) == {"includeThoughts": True, "thinkingBudget": 8192}
    assert any("budget_tokens 8192" in w for w in warnings)


def test_codex_to_gemini_3_pro_takes_a_level_it_has() -> None:
    body, warnings = translate(
        codex(), "openai-responses", "google-generative-ai", "gemini-3-pro-preview"
    )
    assert thinking_config(body) == {"includeThoughts": True, "thinkingLevel": "HIGH"}
    assert any("'medium' sent as 'high'" in w for w in warnings)


# ---------------------------------------------------------------------------
# Library requests


def request(model: str, **options: Any) -> Request:
    return Request(model, (UserMessage("hi"),), **options)


def test_effort_on_a_budget_only_claude_is_a_budget() -> None:
    wire = encode_request(
        request("claude-sonnet-4-5", reasoning=Reasoning(effort="high")), "anthropic"
    )
    assert wire.body["thinking"] == {"type": "enabled", "budget_tokens": 24576}
    assert "output_config" not in wire.body


@pytest.mark.parametrize(
    ("model", "expected"),
    [("claude-sonnet-4-5", 32000), ("claude-3-5-sonnet-20240620", 8192), ("house-model", 4096)],
)
def test_default_max_tokens_comes_from_the_model(model: str, expected: int) -> None:
    assert encode_request(request(model), "anthropic").body["max_tokens"] == expected


def test_a_max_tokens_under_the_budget_is_raised_within_the_limit() -> None:
    wire = encode_request(
        request("claude-opus-4-1", max_tokens=2000, reasoning=Reasoning(budget_tokens=40000)),
        "anthropic",
    )
    thinking, max_tokens = wire.body["thinking"], wire.body["max_tokens"]
    assert thinking["budget_tokens"] < max_tokens <= 32000  # opus-4-1 writes at most 32000
    assert validate_request_body(dict(wire.body), "anthropic-messages") == []
    assert wire.warnings


# ---------------------------------------------------------------------------
# Reasoning continuity on a Responses upstream (#27 finding 6)


def test_another_apis_client_asks_a_responses_upstream_for_encrypted_reasoning() -> None:
    canonical = replace(decode_request(CLAUDE_CODE, "anthropic-messages"), model="gpt-5")
    body = encode_request(with_reasoning_continuity(canonical), "openai-responses").body
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["store"] is False


def test_a_store_the_request_set_is_kept() -> None:
    canonical = request(
        "gpt-5", reasoning=Reasoning(effort="low"), extra={"openai-responses": {"store": True}}
    )
    body = encode_request(with_reasoning_continuity(canonical), "openai-responses").body
    assert body["include"] == ["reasoning.encrypted_content"] and body["store"] is True


def test_no_reasoning_no_include() -> None:
    canonical = request("gpt-4o")
    assert with_reasoning_continuity(canonical) is canonical


def test_a_responses_clients_body_is_not_changed_by_the_encoder() -> None:
    body = {"model": "gpt-5", "input": "hi", "reasoning": {"effort": "low"}}
    out = encode_request(decode_request(body, "openai-responses"), "openai-responses").body
    assert "include" not in out and "store" not in out


@pytest.mark.parametrize(
    ("api", "field"),
    [("openai-completions", "max_tokens"), ("openai-responses", "max_output_tokens")],
)
def test_the_max_tokens_a_warning_names_is_the_one_sent(api: str, field: str) -> None:
    wire = encode_request(
        request("house-model", max_tokens=1000, reasoning=Reasoning(budget_tokens=3000)),
        api,
        provider="house",
    )
    assert wire.body[field] == 4000
    assert any("max_tokens 1000 raised to 4000" in w for w in map(str, wire.warnings))


# ---------------------------------------------------------------------------
# Every client body to every target api: a body the target's rules accept

CHAT_CLIENT: dict[str, Any] = {
    "model": "gpt-5",
    "messages": [{"role": "user", "content": "Say hi."}],
    "reasoning_effort": "high",
    "stream": True,
    "stream_options": {"include_usage": True},
}
SOURCES = {
    "claude-code": (CLAUDE_CODE, "anthropic-messages", None),
    "gemini-cli-8192": (gemini_cli(8192), "google-generative-ai", GEMINI_PATH),
    "gemini-cli-dynamic": (gemini_cli(-1), "google-generative-ai", GEMINI_PATH),
    "gemini-cli-off": (gemini_cli(0), "google-generative-ai", GEMINI_PATH),
    "codex": (codex(), "openai-responses", None),
    "chat": (CHAT_CLIENT, "openai-completions", None),
}
TARGETS = {
    "anthropic-messages": ("claude-sonnet-4-5", "claude-opus-4-6", "claude-haiku-4-5"),
    "google-generative-ai": ("gemini-2.5-flash", "gemini-2.5-pro", "gemini-3-pro-preview"),
    "openai-responses": ("gpt-5", "gpt-5.1", "o4-mini"),
    "openai-completions": ("gpt-5", "o4-mini", "gpt-4o"),
}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("target", TARGETS)
def test_every_pair_gives_values_the_target_model_takes(source: str, target: str) -> None:
    body, api, path = SOURCES[source]
    for model in TARGETS[target]:
        out, _ = translate(body, api, target, model, path)
        assert validate_request_body(out, target) == [], (source, model)
        info = model_info(model, None)
        spec = info.reasoning
        if target == "anthropic-messages":
            thinking = out.get("thinking", {})
            if thinking.get("type") == "enabled":
                assert 1024 <= thinking["budget_tokens"] < out["max_tokens"], model
                assert out["max_tokens"] <= (info.max_output_tokens or 0), model
            assert thinking.get("type") != "adaptive" or spec.mode == "adaptive", model
        elif target == "google-generative-ai":
            config = out["generationConfig"].get("thinkingConfig", {})
            budget = config.get("thinkingBudget")
            if budget not in (None, -1, 0):
                assert spec.budget_min is not None and spec.budget_max is not None
                assert spec.budget_min <= budget <= spec.budget_max, model
            if budget == 0:
                assert spec.can_disable, model
            level = config.get("thinkingLevel")
            assert level is None or level.lower() in spec.efforts, model
        else:
            effort = (
                out.get("reasoning", {}).get("effort")
                if target == "openai-responses"
                else out.get("reasoning_effort")
            )
            assert effort is None or effort in spec.efforts, model
