"""The scripted upstream refuses what the real APIs refuse (the e2e cells
trust it as their judge), and accepts the same requests made right."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from .upstream import FINAL_TEXT, THINKING, ScriptedUpstream

JSON = dict[str, Any]
BASH = {"name": "Bash", "input_schema": {"type": "object"}}


@pytest.fixture(scope="module")
def upstream() -> Iterator[ScriptedUpstream]:
    server = ScriptedUpstream().start()
    yield server
    server.stop()


def post(upstream: ScriptedUpstream, path: str, body: JSON) -> tuple[int, JSON]:
    request = urllib.request.Request(
        upstream.base_url + path, json.dumps(body).encode(), {"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def anthropic_turn_1(upstream: ScriptedUpstream) -> JSON:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [BASH],
        "messages": [{"role": "user", "content": "run it"}],
    }
    status, answer = post(upstream, "/v1/messages", body)
    assert status == 200
    return answer


def anthropic_turn_2(turn_1: JSON, **change: Any) -> JSON:
    thinking, call = turn_1["content"]
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": "e2e-tool-ran"}
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 4096,
        "thinking": {"type": "enabled", "budget_tokens": 2048},
        "tools": [BASH],
        "messages": [
            {"role": "user", "content": "run it"},
            {"role": "assistant", "content": [dict(thinking, **change), call]},
            {"role": "user", "content": [result]},
        ],
    }


def test_anthropic_answers_a_turn_whose_thinking_came_back_unchanged(
    upstream: ScriptedUpstream,
) -> None:
    turn_1 = anthropic_turn_1(upstream)
    assert [b["type"] for b in turn_1["content"]] == ["thinking", "tool_use"]
    status, answer = post(upstream, "/v1/messages", anthropic_turn_2(turn_1))
    assert (status, answer["content"][0]["text"]) == (200, FINAL_TEXT)


@pytest.mark.parametrize(
    "change",
    [
        {"signature": "QUJD"},
        {"thinking": THINKING + " (edited)"},
        {"signature": ""},
    ],
    ids=["unknown-signature", "altered-thinking", "empty-signature"],
)
def test_anthropic_refuses_a_signature_it_did_not_issue_for_that_thinking(
    upstream: ScriptedUpstream, change: JSON
) -> None:
    turn_1 = anthropic_turn_1(upstream)
    status, answer = post(upstream, "/v1/messages", anthropic_turn_2(turn_1, **change))
    assert status == 400
    assert answer["error"]["type"] == "invalid_request_error"


def test_anthropic_refuses_a_tool_turn_without_its_thinking(upstream: ScriptedUpstream) -> None:
    body = anthropic_turn_2(anthropic_turn_1(upstream))
    body["messages"][1]["content"] = body["messages"][1]["content"][1:]
    status, answer = post(upstream, "/v1/messages", body)
    assert status == 400
    assert "must start with a thinking block" in answer["error"]["message"]


@pytest.mark.parametrize("budget,max_tokens", [(512, 4096), (8192, 4096), (4096, 4096)])
def test_anthropic_refuses_budgets_under_1024_or_not_under_max_tokens(
    upstream: ScriptedUpstream, budget: int, max_tokens: int
) -> None:
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": max_tokens,
        "thinking": {"type": "enabled", "budget_tokens": budget},
        "messages": [{"role": "user", "content": "hi"}],
    }
    assert post(upstream, "/v1/messages", body)[0] == 400


def test_anthropic_refuses_a_tool_result_without_its_call(upstream: ScriptedUpstream) -> None:
    result = {"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "x"}
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": [result]}],
    }
    status, answer = post(upstream, "/v1/messages", body)
    assert status == 400
    assert "toolu_nowhere" in answer["error"]["message"]


def responses_turn_1(upstream: ScriptedUpstream, **extra: Any) -> JSON:
    body = {"model": "gpt-5", "input": "run it", "tools": [{"type": "function", "name": "shell"}]}
    status, answer = post(upstream, "/v1/responses", dict(body, **extra))
    assert status == 200
    return answer


def responses_turn_2(turn_1: JSON, reasoning: JSON, store: bool) -> JSON:
    call = turn_1["output"][1]
    output = {"type": "function_call_output", "call_id": call["call_id"], "output": "e2e-tool-ran"}
    return {
        "model": "gpt-5",
        "store": store,
        "input": [{"role": "user", "content": "run it"}, reasoning, call, output],
        "tools": [{"type": "function", "name": "shell"}],
    }


def test_responses_with_store_false_needs_the_encrypted_content_back(
    upstream: ScriptedUpstream,
) -> None:
    include = ["reasoning.encrypted_content"]
    turn_1 = responses_turn_1(upstream, store=False, include=include)
    reasoning = turn_1["output"][0]
    assert reasoning["encrypted_content"]
    whole = post(upstream, "/v1/responses", responses_turn_2(turn_1, reasoning, False))
    assert whole[0] == 200
    bare = {k: v for k, v in reasoning.items() if k != "encrypted_content"}
    status, answer = post(upstream, "/v1/responses", responses_turn_2(turn_1, bare, False))
    assert status == 400
    assert "Items are not persisted when `store` is set to false" in answer["error"]["message"]
    altered = dict(reasoning, encrypted_content=reasoning["encrypted_content"][:-4] + "AAAA")
    assert post(upstream, "/v1/responses", responses_turn_2(turn_1, altered, False))[0] == 400


def test_responses_refuses_a_call_output_without_its_call(upstream: ScriptedUpstream) -> None:
    output = {"type": "function_call_output", "call_id": "call_nowhere", "output": "x"}
    status, answer = post(upstream, "/v1/responses", {"model": "gpt-5", "input": [output]})
    assert status == 400
    assert "call_nowhere" in answer["error"]["message"]


def test_chat_refuses_a_tool_message_without_its_call(upstream: ScriptedUpstream) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_nowhere", "content": "x"},
    ]
    status, _ = post(upstream, "/v1/chat/completions", {"model": "m", "messages": messages})
    assert status == 400


GEMINI_3 = "/v1beta/models/gemini-3-pro-preview:generateContent"
GEMINI_TOOLS = [{"functionDeclarations": [{"name": "run_shell_command"}]}]


def gemini_turn_2(upstream: ScriptedUpstream, **change: Any) -> JSON:
    contents: list[JSON] = [{"role": "user", "parts": [{"text": "run it"}]}]
    status, turn_1 = post(upstream, GEMINI_3, {"contents": contents, "tools": GEMINI_TOOLS})
    assert status == 200
    call_part = turn_1["candidates"][0]["content"]["parts"][-1]
    assert call_part["thoughtSignature"]
    response = {"functionResponse": {"name": "run_shell_command", "response": {"output": "x"}}}
    contents += [
        {"role": "model", "parts": [dict(call_part, **change)]},
        {"role": "user", "parts": [response]},
    ]
    return {"contents": contents, "tools": GEMINI_TOOLS}


def test_gemini_3_needs_the_call_signature_back_in_either_base64_alphabet(
    upstream: ScriptedUpstream,
) -> None:
    body = gemini_turn_2(upstream)
    assert post(upstream, GEMINI_3, body)[0] == 200
    part = body["contents"][1]["parts"][0]
    part["thoughtSignature"] = part["thoughtSignature"].replace("+", "-").replace("/", "_")
    assert post(upstream, GEMINI_3, body)[0] == 200
    part.pop("thoughtSignature")
    status, answer = post(upstream, GEMINI_3, body)
    assert status == 400
    assert "missing a thought_signature" in answer["error"]["message"]


@pytest.mark.parametrize(
    "signature,status",
    [("QUJDRA==", 400), ("skip_thought_signature_validator", 200)],
    ids=["unknown", "documented-skip-value"],
)
def test_gemini_refuses_unknown_signatures_but_takes_the_documented_skip_value(
    upstream: ScriptedUpstream, signature: str, status: int
) -> None:
    body = gemini_turn_2(upstream, thoughtSignature=signature)
    assert post(upstream, GEMINI_3, body)[0] == status


def test_gemini_refuses_a_function_response_without_its_call(upstream: ScriptedUpstream) -> None:
    response = {"functionResponse": {"name": "run_shell_command", "response": {}}}
    body = {"contents": [{"role": "user", "parts": [response]}]}
    assert post(upstream, GEMINI_3, body)[0] == 400
