"""Server tools across APIs: mapped to the target's own, or refused, or dropped
with a warning; never dropped silently. Bodies are shaped as the real clients
send them: Claude Code's WebSearch/WebFetch requests, Codex's tool list."""

from __future__ import annotations

from typing import Any

import pytest

from streamnorm import Request, WireRequest, decode_request, encode_request

#: Claude Code's WebSearch tool request (its forced ``web_search`` sub-request).
CLAUDE_CODE_WEB_SEARCH: dict[str, Any] = {
    "model": "claude-haiku-4-5-20251001",
    "max_tokens": 8000,
    "system": [
        {"type": "text", "text": "You are Claude Code, Anthropic's official CLI for Claude."},
        {"type": "text", "text": "You are an assistant for performing a web search tool use"},
    ],
    "messages": [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Perform a web search for the query: streamnorm"}],
        }
    ],
    "tools": [
        {
            "type": "web_search_20250305",
            "name": "web_search",
            "max_uses": 8,
            "allowed_domains": ["pypi.org"],
            "blocked_domains": [],
        }
    ],
    "tool_choice": {"type": "tool", "name": "web_search"},
    "stream": True,
}

WEB_FETCH = {"type": "web_fetch_20250910", "name": "web_fetch", "max_uses": 5}

#: Codex CLI's tools: a function, hosted web search (cached mode), an MCP namespace.
CODEX: dict[str, Any] = {
    "model": "gpt-5-codex",
    "instructions": "You are Codex.",
    "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    ],
    "tools": [
        {
            "type": "function",
            "name": "shell",
            "description": "Runs a shell command",
            "strict": False,
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
        {"type": "web_search", "external_web_access": False},
        {
            "type": "namespace",
            "name": "mcp__docs",
            "description": "Docs server",
            "tools": [
                {
                    "type": "function",
                    "name": "lookup",
                    "strict": False,
                    "parameters": {"type": "object", "properties": {}},
                }
            ],
        },
    ],
    "tool_choice": "auto",
    "stream": True,
}


def _claude(**changes: Any) -> Request:
    return decode_request({**CLAUDE_CODE_WEB_SEARCH, **changes}, "anthropic-messages")


def _codex() -> Request:
    return decode_request(CODEX, "openai-responses")


def _said(wire: WireRequest) -> list[str]:
    return [str(w) for w in wire.warnings]


def test_claude_code_web_search_becomes_responses_web_search() -> None:
    wire = encode_request(_claude(), "openai-responses")
    assert wire.body["tools"] == [
        {"type": "web_search", "filters": {"allowed_domains": ["pypi.org"]}}
    ]
    assert "tool_choice" not in wire.body  # it named a tool the target does not have
    assert any("max_uses not carried" in w for w in _said(wire))
    assert any("tool_choice 'web_search'" in w for w in _said(wire))
    assert not any("blocked_domains" in w for w in _said(wire))  # [] says nothing


def test_claude_code_web_search_and_fetch_become_gemini_grounding_tools() -> None:
    wire = encode_request(
        _claude(
            tools=[*CLAUDE_CODE_WEB_SEARCH["tools"], WEB_FETCH],
            tool_choice=None,
            model="gemini-2.5-flash",
        ),
        "google-generative-ai",
    )
    assert wire.body["tools"] == [{"googleSearch": {}}, {"urlContext": {}}]
    assert any("allowed_domains, max_uses not carried" in w for w in _said(wire))


def test_web_fetch_has_no_responses_equivalent_and_is_dropped_with_a_warning() -> None:
    wire = encode_request(_claude(tools=[WEB_FETCH], tool_choice=None), "openai-responses")
    assert "tools" not in wire.body
    assert _said(wire) == [
        "tools[0] (anthropic-messages web_fetch_20250910): openai-responses has no equivalent;"
        " dropped",
    ]
    assert [w.kind for w in wire.warnings] == ["tool_dropped"]


def test_chat_completions_has_no_server_tools_warn_or_refuse() -> None:
    wire = encode_request(_claude(), "openai-completions")
    assert "tools" not in wire.body and "tool_choice" not in wire.body
    assert any("openai-completions has no equivalent; dropped" in w for w in _said(wire))
    with pytest.raises(ValueError, match=r"tools\[0\] .*web_search_20250305.* no equivalent"):
        encode_request(_claude(), "openai-completions", server_tools="refuse")


def test_codex_web_search_reaches_anthropic_and_the_namespace_is_not_dropped_silently() -> None:
    wire = encode_request(_codex(), "anthropic-messages")
    tools = wire.body["tools"]
    assert [t.get("name") for t in tools] == ["shell", "web_search"]
    assert tools[1] == {"type": "web_search_20250305", "name": "web_search"}
    assert "tools[1] (openai-responses web_search): external_web_access not carried" in " ".join(
        _said(wire)
    )
    assert any(w.startswith("tools[2] (openai-responses namespace)") for w in _said(wire))
    with pytest.raises(ValueError, match=r"tools\[2\] \(openai-responses namespace\)"):
        encode_request(_codex(), "anthropic-messages", server_tools="refuse")


def test_gemini_search_tools_in_either_spelling_reach_anthropic_with_the_fetch_beta() -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "tools": [{"google_search": {}}, {"urlContext": {}}],
    }
    request = decode_request(body, "gemini", path="/v1beta/models/claude-x:generateContent")
    wire = encode_request(request, "anthropic-messages")
    assert wire.body["tools"] == [
        {"type": "web_search_20250305", "name": "web_search"},
        {"type": "web_fetch_20250910", "name": "web_fetch"},
    ]
    assert wire.headers["anthropic-beta"] == "web-fetch-2025-09-10"
    assert wire.warnings == ()


def test_responses_user_location_reaches_anthropic_and_is_a_warning_for_gemini() -> None:
    location = {"type": "approximate", "country": "FR", "city": "Paris"}
    body = {
        "model": "m",
        "input": "hi",
        "tools": [{"type": "web_search", "user_location": location}],
    }
    request = decode_request(body, "openai-responses")
    anthropic = encode_request(request, "anthropic-messages")
    assert anthropic.body["tools"][0]["user_location"] == location
    gemini = encode_request(request, "google-generative-ai")
    assert gemini.body["tools"] == [{"googleSearch": {}}]
    assert _said(gemini) == [
        "tools[0] (openai-responses web_search): user_location not carried to google-generative-ai",
    ]


def test_same_api_tools_are_untouched_and_warn_of_nothing() -> None:
    wire = encode_request(_claude(), "anthropic-messages", server_tools="refuse")
    assert wire.body["tools"] == CLAUDE_CODE_WEB_SEARCH["tools"]
    assert wire.body["tool_choice"] == {"type": "tool", "name": "web_search"}
    assert wire.warnings == ()


def test_an_unknown_policy_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="server_tools: 'ignore'"):
        encode_request(_claude(), "openai-completions", server_tools="ignore")


def test_wire_request_warnings_survive_to_dict() -> None:
    wire = encode_request(_claude(), "openai-completions")
    again = WireRequest.from_dict(wire.to_dict())
    assert again == wire and again.warnings == wire.warnings and wire.warnings


def test_gemini_2_cannot_have_search_beside_functions_so_it_is_dropped_or_refused() -> None:
    request = decode_request({**CODEX, "model": "gemini-2.5-flash"}, "openai-responses")
    wire = encode_request(request, "google-generative-ai")
    assert wire.body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "shell",
                    "description": "Runs a shell command",
                    "parametersJsonSchema": CODEX["tools"][0]["parameters"],
                }
            ]
        }
    ]
    assert "includeServerSideToolInvocations" not in wire.body.get("toolConfig", {})
    assert (
        "tools[1] (openai-responses web_search): gemini-2.5-flash takes no built-in tool"
        " beside function declarations; dropped"
    ) in _said(wire)
    with pytest.raises(ValueError, match=r"tools\[1\] .*gemini-2.5-flash takes no built-in"):
        encode_request(request, "google-generative-ai", server_tools="refuse")


def test_gemini_3_takes_search_beside_functions_when_told_to() -> None:
    request = decode_request({**CODEX, "model": "gemini-3-pro-preview"}, "openai-responses")
    wire = encode_request(request, "google-generative-ai")
    tools = wire.body["tools"]
    assert tools[0]["functionDeclarations"][0]["name"] == "shell"
    assert tools[1] == {"googleSearch": {}}
    assert wire.body["toolConfig"]["includeServerSideToolInvocations"] is True
    assert wire.body["toolConfig"]["functionCallingConfig"] == {"mode": "AUTO"}
