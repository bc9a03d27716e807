"""The request codec on hand-built requests: the shape each api gets for each
canonical block and option, bad bodies, and envelopes (encoding.md §9) that
carry a foreign issuer's opaque state back to it."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from streamnorm import (
    AssistantMessage,
    DocumentBlock,
    ImageBlock,
    Message,
    ProviderTool,
    Reasoning,
    Request,
    ResponseFormat,
    StopReason,
    TextBlock,
    ThinkingBlock,
    Tool,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
    WireRequest,
    decode_request,
    encode_request,
    validate_request_body,
)
from streamnorm.envelope import Issuer, wrap, wrap_bytes

from .request_support import genai_request, sdk_send, sdk_validate

APIS = ("anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai")
PROVIDERS = dict(zip(APIS, ("anthropic", "openai", "openai", "google"), strict=True))
PNG = "iVBORw0KGgo="
WEATHER = Tool(
    "get_weather",
    "Weather in a city",
    {"type": "object", "properties": {"city": {"type": "string"}}},
)


def assistant(
    *blocks: Any,
    api: str = "anthropic-messages",
    model: str = "claude-sonnet-4-5",
    provider: str | None = "anthropic",
) -> AssistantMessage:
    calls = any(isinstance(b, ToolCallBlock) for b in blocks)
    stop = StopReason.TOOL_USE if calls else StopReason.STOP
    return AssistantMessage(tuple(blocks), api, model, stop, None, Usage(), None, provider)


def call(call_id: str = "toolu_1", name: str = "get_weather", **args: Any) -> ToolCallBlock:
    args = args or {"city": "Paris"}
    return ToolCallBlock(call_id, name, args, json.dumps(args))


def history() -> list[Message]:
    return [
        UserMessage((TextBlock("What is on this?"), ImageBlock("image/png", PNG))),
        assistant(ThinkingBlock("Let me look.", "sig-1"), TextBlock("Checking."), call()),
        ToolResultMessage("toolu_1", "get_weather", "sunny"),
        UserMessage("Thanks, and tomorrow?"),
    ]


def encoded(api: str, **options: Any) -> WireRequest:
    request = Request(
        model=options.pop("model", "m-1"),
        messages=tuple(options.pop("messages", history())),
        tools=(WEATHER,),
        **options,
    )
    return encode_request(request, api, sanitize=False)


# ---------------------------------------------------------------------------
# Types


def test_request_to_dict_round_trip() -> None:
    request = Request(
        model="m",
        messages=tuple(history()),
        system=(TextBlock("Be brief.", cache="1h"),),
        tools=(
            WEATHER,
            ProviderTool(
                "anthropic-messages", {"type": "web_search_20250305", "name": "web_search"}
            ),
        ),
        tool_choice="get_weather",
        parallel_tool_calls=False,
        max_tokens=100,
        temperature=0.5,
        stop=("END",),
        reasoning=Reasoning(effort="high", summary="auto"),
        response_format=ResponseFormat("json_schema", {"type": "object"}, "out", strict=True),
        metadata={"k": "v"},
        extra={"openai-completions": {"seed": 1}},
        system_role="developer",
    )
    d = request.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert Request.from_dict(d) == request
    wire = encode_request(request, "openai-responses")
    assert WireRequest.from_dict(wire.to_dict()) == wire


# ---------------------------------------------------------------------------
# Paths, headers, streaming flags


def test_paths_and_headers() -> None:
    a = encoded("anthropic-messages")
    assert (a.method, a.path) == ("POST", "/v1/messages")
    assert a.headers["anthropic-version"] == "2023-06-01"
    assert a.body["stream"] is True and a.body["max_tokens"] == 4096  # required: a default
    assert encoded("openai-responses").path == "/v1/responses"
    chat = encoded("openai-completions")
    assert chat.path == "/v1/chat/completions"
    assert chat.body["stream_options"] == {"include_usage": True}
    g = encoded("google-generative-ai", model="models/gemini-2.5-flash")
    assert g.path == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert encoded("gemini", model="gemini-2.5-flash", stream=False).path.endswith(
        ":generateContent"
    )
    assert "stream" not in encoded("openai-completions", stream=False).body
    assert not any(
        "key" in k.lower() or k.lower() == "authorization" for w in (a, chat, g) for k in w.headers
    )


def test_unknown_api_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown api"):
        encoded("cohere-chat")
    with pytest.raises(ValueError, match="unknown api"):
        decode_request({}, "auto")


# ---------------------------------------------------------------------------
# Blocks in every api


def test_anthropic_blocks() -> None:
    messages = encoded("anthropic-messages").body["messages"]
    assert messages[0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }
    assert [b["type"] for b in messages[1]["content"]] == ["thinking", "text", "tool_use"]
    assert messages[1]["content"][0]["signature"] == "sig-1"
    assert messages[1]["content"][2]["input"] == {"city": "Paris"}
    # The result and the next user text are one user turn, the result first.
    assert [b["type"] for b in messages[2]["content"]] == ["tool_result", "text"]
    assert len(messages) == 3


def test_responses_blocks() -> None:
    items = encoded("openai-responses").body["input"]
    assert items[0]["content"][1] == {
        "type": "input_image",
        "image_url": f"data:image/png;base64,{PNG}",
        "detail": "auto",
    }
    # An unsigned thinking block has nothing to replay; text without an item id is a plain message.
    assert items[1] == {"role": "assistant", "content": "Checking."}
    assert items[2] == {
        "type": "function_call",
        "call_id": "toolu_1",
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
    }
    assert items[3] == {"type": "function_call_output", "call_id": "toolu_1", "output": "sunny"}
    tool = encoded("openai-responses").body["tools"][0]
    assert tool["strict"] is False  # Responses is strict by default: a foreign schema is not


def test_responses_same_issuer_items_are_replayed() -> None:
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "hm"}],
        "encrypted_content": "ENC",
    }
    message = assistant(
        ThinkingBlock("hm", json.dumps(reasoning)),
        TextBlock("a", '{"id":"msg_1","phase":"final_answer"}'),
        TextBlock("b", '{"id":"msg_1","phase":"final_answer"}'),
        ToolCallBlock("call_1", "f", {}, "{}", '{"id":"fc_1"}'),
        api="openai-responses",
        model="gpt-5",
        provider="openai",
    )
    body = encoded("openai-responses", messages=[UserMessage("q"), message]).body
    items = body["input"][1:]
    assert items[0] == reasoning
    assert items[1]["id"] == "msg_1" and items[1]["phase"] == "final_answer"
    assert [p["text"] for p in items[1]["content"]] == ["a", "b"]
    assert items[2]["id"] == "fc_1"
    assert validate_request_body(body, "openai-responses") == []


def test_completions_blocks_and_images_from_tool_results() -> None:
    messages = [
        UserMessage("look"),
        assistant(call()),
        ToolResultMessage(
            "toolu_1", "get_weather", (TextBlock("chart:"), ImageBlock("image/png", PNG))
        ),
        UserMessage("next"),
    ]
    body = encoded("openai-completions", messages=messages).body
    sent = body["messages"]
    assert (
        sent[1]["content"] is None and sent[1]["tool_calls"][0]["function"]["name"] == "get_weather"
    )
    assert sent[2] == {
        "role": "tool",
        "tool_call_id": "toolu_1",
        "content": [{"type": "text", "text": "chart:"}],
    }
    # Tool messages hold text only: the image follows in a user message.
    assert sent[3]["role"] == "user" and sent[3]["content"][1]["image_url"]["url"].startswith(
        "data:image/png"
    )
    assert sent[4] == {"role": "user", "content": "next"}
    assert validate_request_body(body, "openai-completions") == []


def test_completions_reasoning_dialects() -> None:
    thinking = assistant(
        ThinkingBlock("because"),
        TextBlock("ok"),
        api="openai-completions",
        model="deepseek-reasoner",
        provider="deepseek",
    )
    request = Request("deepseek-reasoner", (UserMessage("q"), thinking))
    body = encode_request(request, "openai-completions", provider="deepseek", sanitize=False).body
    assert body["messages"][1]["reasoning_content"] == "because"
    assert "max_tokens" not in body
    limited = Request("deepseek-reasoner", (UserMessage("q"),), max_tokens=10)
    assert (
        encode_request(limited, "openai-completions", provider="deepseek").body["max_tokens"] == 10
    )
    assert (
        encode_request(limited, "openai-completions", provider="openai").body[
            "max_completion_tokens"
        ]
        == 10
    )
    openai = encode_request(request, "openai-completions", provider="openai", sanitize=False).body
    assert "reasoning_content" not in openai["messages"][1]


def test_google_blocks() -> None:
    messages = [
        UserMessage((TextBlock("see"), DocumentBlock("application/pdf", "JVBE"))),
        assistant(
            ThinkingBlock("hm", "c2ln"),
            ToolCallBlock("", "get_weather", {"city": "Rome"}, "{}", "c2lnMg=="),
            api="google-generative-ai",
            model="gemini-2.5-flash",
            provider="google",
        ),
        ToolResultMessage("", "get_weather", '{"temp": 20}'),
        ToolResultMessage("x", "other", "plain", is_error=True),
    ]
    body = encoded("google-generative-ai", messages=messages).body
    contents = body["contents"]
    assert contents[0]["parts"][1] == {
        "inlineData": {"mimeType": "application/pdf", "data": "JVBE"}
    }
    assert contents[1]["parts"] == [
        {"text": "hm", "thought": True, "thoughtSignature": "c2ln"},
        {
            "functionCall": {"name": "get_weather", "args": {"city": "Rome"}},
            "thoughtSignature": "c2lnMg==",
        },
    ]
    responses = [p["functionResponse"] for p in contents[2]["parts"]]
    assert responses[0] == {"name": "get_weather", "response": {"temp": 20}}
    assert responses[1] == {"id": "x", "name": "other", "response": {"error": "plain"}}
    assert body["tools"] == [
        {
            "functionDeclarations": [
                {
                    "name": "get_weather",
                    "description": "Weather in a city",
                    "parametersJsonSchema": dict(WEATHER.parameters),
                }
            ]
        }
    ]


def test_google_tools_keep_their_order_and_groups() -> None:
    search = ProviderTool("google-generative-ai", {"googleSearch": {}})
    other = ProviderTool(
        "anthropic-messages", {"type": "web_search_20250305", "name": "web_search"}
    )
    request = Request(
        "gemini-2.5-flash", (UserMessage("q"),), tools=(search, WEATHER, Tool("b"), other)
    )
    tools = encode_request(request, "gemini").body["tools"]
    assert tools[0] == {"googleSearch": {}}
    assert [d["name"] for d in tools[1]["functionDeclarations"]] == ["get_weather", "b"]
    assert len(tools) == 2  # the other api's web search is this googleSearch: sent once


# ---------------------------------------------------------------------------
# Options


@pytest.mark.parametrize(
    ("api", "path", "expected"),
    [
        (
            "anthropic-messages",
            ("tool_choice",),
            {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": True},
        ),
        ("openai-responses", ("tool_choice",), {"type": "function", "name": "get_weather"}),
        (
            "openai-completions",
            ("tool_choice",),
            {"type": "function", "function": {"name": "get_weather"}},
        ),
        (
            "google-generative-ai",
            ("toolConfig",),
            {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["get_weather"]}},
        ),
    ],
)
def test_named_tool_choice(api: str, path: tuple[str, ...], expected: Any) -> None:
    body = encoded(api, tool_choice="get_weather", parallel_tool_calls=False).body
    assert body[path[0]] == expected
    if api in ("openai-responses", "openai-completions"):
        assert body["parallel_tool_calls"] is False


def test_required_tool_choice() -> None:
    assert encoded("anthropic-messages", tool_choice="required").body["tool_choice"] == {
        "type": "any"
    }
    assert encoded("openai-completions", tool_choice="required").body["tool_choice"] == "required"
    assert encoded("gemini", tool_choice="none").body["toolConfig"] == {
        "functionCallingConfig": {"mode": "NONE"}
    }


def test_reasoning_options() -> None:
    budget = Reasoning(budget_tokens=4000, summary="auto")
    assert encoded("anthropic-messages", reasoning=budget).body["thinking"] == {
        "type": "enabled",
        "budget_tokens": 4000,
    }
    effort = Reasoning(effort="high")
    a = encoded("anthropic-messages", reasoning=effort).body
    assert a["thinking"] == {"type": "adaptive"} and a["output_config"] == {"effort": "high"}
    assert encoded("openai-responses", reasoning=budget).body["reasoning"] == {
        "effort": "medium",
        "summary": "auto",
    }
    assert (
        encoded("openai-completions", reasoning=Reasoning(enabled=False)).body["reasoning_effort"]
        == "none"
    )
    g3 = encoded(
        "gemini", model="gemini-3-pro-preview", reasoning=Reasoning(effort="low", summary="auto")
    ).body
    assert g3["generationConfig"]["thinkingConfig"] == {
        "includeThoughts": True,
        "thinkingLevel": "LOW",
    }
    g2 = encoded("gemini", model="gemini-2.5-flash", reasoning=Reasoning(effort="low")).body
    assert g2["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 1024}


def test_structured_output_and_sampling() -> None:
    fmt = ResponseFormat("json_schema", {"type": "object"}, strict=True)
    opts: dict[str, Any] = {
        "response_format": fmt,
        "temperature": 0.2,
        "stop": ("X",),
        "max_tokens": 50,
    }
    assert encoded("anthropic-messages", **opts).body["output_config"] == {
        "format": {"type": "json_schema", "schema": {"type": "object"}}
    }
    r = encoded("openai-responses", **opts).body
    assert r["text"] == {
        "format": {
            "type": "json_schema",
            "name": "output",
            "schema": {"type": "object"},
            "strict": True,
        }
    }
    assert "stop" not in r and r["max_output_tokens"] == 50  # Responses has no stop
    c = encoded("openai-completions", **opts).body
    assert c["response_format"]["json_schema"]["name"] == "output" and c["stop"] == ["X"]
    g = encoded("gemini", **opts).body["generationConfig"]
    assert g == {
        "maxOutputTokens": 50,
        "temperature": 0.2,
        "stopSequences": ["X"],
        "responseMimeType": "application/json",
        "responseJsonSchema": {"type": "object"},
    }


def test_cache_breakpoints_on_anthropic() -> None:
    messages = [UserMessage((TextBlock("long context", cache="ephemeral"),))]
    body = encoded(
        "anthropic-messages", messages=messages, system=(TextBlock("sys", cache="1h"),)
    ).body
    assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert body["system"] == [
        {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    ]
    assert decode_request(body, "anthropic").messages == tuple(messages)


def test_system_roles() -> None:
    assert encoded("openai-responses", system="S").body["instructions"] == "S"
    r = encoded("openai-responses", system="S", system_role="developer").body
    assert r["input"][0] == {"role": "developer", "content": "S"} and "instructions" not in r
    assert encoded("openai-completions", system="S").body["messages"][0] == {
        "role": "system",
        "content": "S",
    }
    assert encoded("gemini", system="S").body["systemInstruction"] == {
        "role": "user",
        "parts": [{"text": "S"}],
    }


def test_extra_is_merged_for_its_own_api_only() -> None:
    extra = {
        "openai-completions": {"seed": 7, "stream_options": {"include_usage": False}},
        "google-generative-ai": {"generationConfig": {"seed": 7}},
    }
    chat = encoded("openai-completions", extra=extra).body
    assert chat["seed"] == 7 and chat["stream_options"] == {"include_usage": False}
    g = encoded("gemini", extra=extra, temperature=0.1).body
    assert g["generationConfig"] == {"temperature": 0.1, "seed": 7}  # merged, not replaced
    assert "seed" not in encoded("openai-responses", extra=extra).body


# ---------------------------------------------------------------------------
# Decoding


def test_decoded_turns_and_names() -> None:
    body = encoded("openai-completions").body
    request = decode_request(body, "openai-completions", provider="openai")
    turn = request.messages[1]
    assert isinstance(turn, AssistantMessage)
    assert (turn.api, turn.provider, turn.model) == ("openai-completions", "openai", "m-1")
    assert turn.stop_reason is StopReason.TOOL_USE
    result = request.messages[2]
    assert isinstance(result, ToolResultMessage) and result.tool_name == "get_weather"


def test_google_model_and_method_from_path() -> None:
    body = {"contents": [{"parts": [{"text": "hi"}]}]}
    request = decode_request(body, "gemini", path="/v1beta/models/gemini-2.5-pro:generateContent")
    assert (request.model, request.stream) == ("gemini-2.5-pro", False)
    assert request.messages == (UserMessage((TextBlock("hi"),)),)
    streaming = decode_request(
        body, "gemini", path="/v1/models/gemini-3-flash:streamGenerateContent?alt=sse"
    )
    assert (streaming.model, streaming.stream) == ("gemini-3-flash", True)


def test_google_snake_case_reads_as_camel_case() -> None:
    snake = {
        "contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "function_call": {"name": "f", "args": {"a_b": 1}},
                        "thought_signature": "c2ln",
                    }
                ],
            },
            {
                "role": "user",
                "parts": [{"function_response": {"name": "f", "response": {"output": "x"}}}],
            },
        ],
        "generation_config": {
            "max_output_tokens": 5,
            "thinking_config": {"include_thoughts": True},
        },
    }
    camel = {
        "contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "f", "args": {"a_b": 1}}, "thoughtSignature": "c2ln"}
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "f", "response": {"output": "x"}}}],
            },
        ],
        "generationConfig": {"maxOutputTokens": 5, "thinkingConfig": {"includeThoughts": True}},
    }
    assert decode_request(snake, "gemini") == decode_request(camel, "gemini")
    call_block = decode_request(snake, "gemini").messages[1].content[0]
    assert isinstance(call_block, ToolCallBlock) and call_block.arguments == {"a_b": 1}


@pytest.mark.parametrize(
    ("api", "body", "field"),
    [
        ("anthropic-messages", {"model": "m", "max_tokens": 1}, "messages"),
        (
            "anthropic-messages",
            {"messages": [{"role": "robot", "content": "x"}]},
            r"messages\[0\].role",
        ),
        (
            "anthropic-messages",
            {"messages": [{"role": "user", "content": 5}]},
            r"messages\[0\].content",
        ),
        ("anthropic-messages", {"messages": [], "max_tokens": "many"}, "max_tokens"),
        (
            "anthropic-messages",
            {"messages": [], "tools": [{"input_schema": {}}]},
            r"tools\[0\].name",
        ),
        (
            "anthropic-messages",
            {"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": 1}]}]},
            r"messages\[0\].content\[0\]",
        ),
        ("openai-responses", {"input": 3}, "input"),
        ("openai-responses", {"input": [7]}, r"input\[0\]"),
        (
            "openai-responses",
            {"input": [{"type": "function_call", "name": "f"}]},
            r"input\[0\].call_id",
        ),
        ("openai-responses", {"input": "x", "temperature": "hot"}, "temperature"),
        (
            "openai-completions",
            {"messages": [{"role": "tool", "content": "x"}]},
            r"messages\[0\].tool_call_id",
        ),
        ("openai-completions", {"messages": [{"role": "wizard"}]}, r"messages\[0\].role"),
        (
            "openai-completions",
            {"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}]},
            r"messages\[0\].tool_calls\[0\].function",
        ),
        (
            "google-generative-ai",
            {"contents": [{"role": "narrator", "parts": []}]},
            r"contents\[0\].role",
        ),
        (
            "google-generative-ai",
            {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]},
            r"contents\[0\].parts\[0\].functionCall.name",
        ),
        ("google-generative-ai", {"contents": {}}, "contents"),
    ],
)
def test_bad_bodies_name_the_field(api: str, body: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}"):
        decode_request(body, api)


def test_body_that_is_not_json() -> None:
    with pytest.raises(ValueError, match="body: not JSON"):
        decode_request(b"{", "anthropic")
    with pytest.raises(ValueError, match="body: expected a JSON object"):
        decode_request(b"[]", "anthropic")


# ---------------------------------------------------------------------------
# Envelopes: a foreign issuer's state comes back through the client's api

GEMINI = Issuer("google-generative-ai", "google", "gemini-2.5-flash")
CLAUDE = Issuer("anthropic-messages", "anthropic", "claude-sonnet-4-5")
GPT = Issuer("openai-responses", "openai", "gpt-5")
REASONING_ITEM = {
    "type": "reasoning",
    "id": "rs_9",
    "summary": [{"type": "summary_text", "text": "plan"}],
    "encrypted_content": "gAAAA",
}


def _only_turn(request: Request) -> AssistantMessage:
    turns = [m for m in request.messages if isinstance(m, AssistantMessage)]
    assert len(turns) == 1
    return turns[0]


def test_anthropic_thinking_envelope_restores_a_gemini_turn() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "thinking",
                        "thinking": "hm",
                        "signature": wrap(GEMINI, "thinking", "c2lnLXRoaW5r"),
                    },
                    {"type": "text", "text": "a"},
                ],
            },
            {"role": "user", "content": "more"},
        ],
    }
    request = decode_request(body, "anthropic", provider="anthropic")
    turn = _only_turn(request)
    assert (turn.api, turn.provider, turn.model) == (
        "google-generative-ai",
        "google",
        "gemini-2.5-flash",
    )
    assert turn.content[0] == ThinkingBlock("hm", "c2lnLXRoaW5r")
    again = Request("gemini-2.5-flash", request.messages)
    contents = encode_request(again, "gemini", provider="google").body["contents"]
    assert contents[1]["parts"][0] == {
        "text": "hm",
        "thought": True,
        "thoughtSignature": "c2lnLXRoaW5r",
    }


def test_anthropic_turn_carrier_signs_text_and_calls() -> None:
    entries = [[0, "text", '{"id":"msg_7"}'], [1, "toolcall", '{"id":"fc_7"}']]
    body = {
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "", "signature": wrap(GPT, "turn", entries)},
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "call_7", "name": "f", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "call_7", "content": "done"}],
            },
        ]
    }
    turn = _only_turn(decode_request(body, "anthropic"))
    assert turn.api == "openai-responses" and turn.model == "gpt-5"
    assert turn.content == (
        TextBlock("calling", '{"id":"msg_7"}'),
        ToolCallBlock("call_7", "f", {}, "{}", '{"id":"fc_7"}'),
    )
    items = encode_request(
        Request("gpt-5", decode_request(body, "anthropic").messages),
        "openai-responses",
        provider="openai",
    ).body["input"]
    assert items[1]["id"] == "msg_7" and items[2]["id"] == "fc_7"


def test_responses_encrypted_content_envelope_restores_claude_thinking() -> None:
    body = {
        "model": "gpt-5",
        "input": [
            {"role": "user", "content": "q"},
            {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "thought"}],
                "encrypted_content": wrap(CLAUDE, "thinking", "EqQBsig"),
            },
            {"type": "function_call", "call_id": "toolu_1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "toolu_1", "output": "r"},
            {
                "type": "reasoning",
                "id": "rs_2",
                "summary": [],
                "encrypted_content": wrap(CLAUDE, "redacted", "REDACTED"),
            },
            {"role": "assistant", "content": "ok"},
        ],
    }
    request = decode_request(body, "openai-responses")
    first, second = (m for m in request.messages if isinstance(m, AssistantMessage))
    assert first.api == second.api == "anthropic-messages"
    assert first.content[0] == ThinkingBlock("thought", "EqQBsig")
    assert second.content[0] == ThinkingBlock("", "REDACTED", redacted=True)
    messages = encode_request(
        Request("claude-sonnet-4-5", request.messages), "anthropic", provider="anthropic"
    ).body["messages"]
    assert messages[1]["content"][0] == {
        "type": "thinking",
        "thinking": "thought",
        "signature": "EqQBsig",
    }
    assert messages[3]["content"][0] == {"type": "redacted_thinking", "data": "REDACTED"}


def test_gemini_thought_signature_envelope_restores_a_reasoning_item() -> None:
    item = json.dumps(REASONING_ITEM, separators=(",", ":"))
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "text": "plan",
                        "thought": True,
                        "thoughtSignature": wrap_bytes(GPT, "thinking", item),
                    },
                    {"text": "answer"},
                ],
            },
            {"role": "user", "parts": [{"text": "next"}]},
        ]
    }
    request = decode_request(body, "gemini", path="/v1beta/models/gemini-2.5-flash:generateContent")
    turn = _only_turn(request)
    assert (turn.api, turn.model) == ("openai-responses", "gpt-5")
    assert turn.content[0] == ThinkingBlock("plan", item)
    items = encode_request(
        Request("gpt-5", request.messages), "openai-responses", provider="openai"
    ).body["input"]
    assert items[1] == REASONING_ITEM


def test_chat_reasoning_details_envelope() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": "a",
                "reasoning": "why",
                "reasoning_details": [
                    {"type": "reasoning.encrypted", "data": wrap(CLAUDE, "thinking", "EqQBsig")}
                ],
            },
            {"role": "user", "content": "b"},
        ]
    }
    turn = _only_turn(decode_request(body, "openai-completions"))
    assert turn.api == "anthropic-messages"
    assert turn.content == (ThinkingBlock("why", "EqQBsig"), TextBlock("a"))


def test_a_turn_without_envelope_is_the_client_apis() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [{"type": "thinking", "thinking": "t", "signature": "plain-sig"}],
            },
        ]
    }
    turn = _only_turn(decode_request(body, "anthropic", provider="anthropic"))
    assert (turn.api, turn.provider, turn.model) == ("anthropic-messages", "anthropic", None)
    assert turn.content == (ThinkingBlock("t", "plain-sig"),)


def test_sanitize_demotes_a_foreign_turn() -> None:
    foreign = assistant(
        ThinkingBlock("deep thought", "sig"), TextBlock("a"), api="anthropic-messages"
    )
    request = Request("gemini-2.5-flash", (UserMessage("q"), foreign, UserMessage("b")))
    parts = encode_request(request, "gemini", provider="google").body["contents"][1]["parts"]
    # no signature reaches Gemini; the reasoning reads as what it was
    assert parts == [{"text": "<thinking>\ndeep thought\n</thinking>\n\n"}, {"text": "a"}]


@pytest.mark.parametrize("api", APIS)
def test_encoded_history_keeps_the_rules_and_fits_the_sdk(api: str) -> None:
    options: dict[str, Any] = {
        "system": "Be brief.",
        "tool_choice": "auto",
        "reasoning": Reasoning(effort="low"),
        "response_format": ResponseFormat("json_schema", {"type": "object"}),
        "max_tokens": 64,
    }
    request = Request("m-1", tuple(history()), tools=(WEATHER,), **options)
    body = dict(encode_request(request, api, provider=PROVIDERS[api]).body)
    assert validate_request_body(body, api) == []
    if api == "google-generative-ai":
        genai_request(body)
        assert "contents" in sdk_send(api, body)
    else:
        assert sdk_validate(api, body) == []
        assert sdk_send(api, body) == body


@pytest.mark.parametrize(
    ("api", "body", "problem"),
    [
        (
            "anthropic-messages",
            {"max_tokens": 1, "messages": [{"role": "assistant", "content": "x"}]},
            "first turn",
        ),
        (
            "anthropic-messages",
            {
                "max_tokens": 1,
                "messages": [
                    {"role": "user", "content": "q"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "a"}]},
                    {"role": "user", "content": "no"},
                ],
            },
            "tool_use without",
        ),
        (
            "openai-responses",
            {"input": [{"type": "reasoning", "id": "rs_1"}]},
            "reasoning not followed",
        ),
        (
            "openai-responses",
            {"input": [{"type": "function_call_output", "call_id": "x"}]},
            "unknown call",
        ),
        (
            "openai-responses",
            {"input": [{"type": "message", "id": "m1", "role": "assistant"}]},
            "msg_",
        ),
        (
            "openai-completions",
            {
                "messages": [
                    {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}]},
                    {"role": "user", "content": "x"},
                ]
            },
            "no tool message",
        ),
        (
            "google-generative-ai",
            {
                "contents": [
                    {"role": "user", "parts": []},
                    {"role": "model", "parts": [{"functionCall": {}}]},
                    {"role": "user", "parts": [{"text": "x"}]},
                ]
            },
            "1 function calls, 0 responses",
        ),
    ],
)
def test_structural_validators_find_problems(api: str, body: dict[str, Any], problem: str) -> None:
    assert any(problem in p for p in validate_request_body(body, api)), validate_request_body(
        body, api
    )


def test_responses_turn_carrier_signs_gemini_text_and_calls() -> None:
    entries = [[0, "text", "c2ln"], [1, "toolcall", "c2lnMg=="]]
    body = {
        "input": [
            {"role": "user", "content": "q"},
            {
                "type": "reasoning",
                "id": "rs_c",
                "summary": [],
                "encrypted_content": wrap(GEMINI, "turn", entries),
            },
            {
                "type": "message",
                "role": "assistant",
                "id": "msg_c",
                "content": [{"type": "output_text", "text": "a", "annotations": []}],
            },
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "r"},
        ]
    }
    request = decode_request(body, "openai-responses")
    turn = _only_turn(request)
    assert (turn.api, turn.model) == ("google-generative-ai", "gemini-2.5-flash")
    assert turn.content == (TextBlock("a", "c2ln"), ToolCallBlock("c1", "f", {}, "{}", "c2lnMg=="))
    parts = encode_request(
        Request("gemini-2.5-flash", request.messages), "gemini", provider="google"
    ).body["contents"][1]["parts"]
    assert parts == [
        {"text": "a", "thoughtSignature": "c2ln"},
        {"functionCall": {"id": "c1", "name": "f", "args": {}}, "thoughtSignature": "c2lnMg=="},
    ]


def test_gemini_redacted_envelope_and_junk_entries() -> None:
    carrier = wrap_bytes(CLAUDE, "turn", [[5, "text", "x"], [0, "toolcall", "y"], "junk"])
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "q"}]},
            {
                "role": "model",
                "parts": [
                    {
                        "text": "",
                        "thought": True,
                        "thoughtSignature": wrap_bytes(CLAUDE, "redacted", "DATA"),
                    },
                    {"text": "", "thought": True, "thoughtSignature": carrier},
                    {"text": "a"},
                ],
            },
        ]
    }
    turn = _only_turn(decode_request(body, "gemini"))
    # Entries out of range or of the wrong kind sign nothing.
    assert turn.content == (ThinkingBlock("", "DATA", redacted=True), TextBlock("a"))
    assert turn.api == "anthropic-messages"


def test_an_ordinary_signature_is_not_an_envelope() -> None:
    body = {
        "contents": [
            {
                "role": "model",
                "parts": [{"text": "t", "thought": True, "thoughtSignature": "c252MQ=="}],
            }
        ]
    }
    turn = _only_turn(
        decode_request(body, "gemini", path="/v1beta/models/gemini-2.5-flash:generateContent")
    )
    assert (turn.api, turn.model, turn.content) == (
        "google-generative-ai",
        "gemini-2.5-flash",
        (ThinkingBlock("t", "c252MQ=="),),
    )


def test_anthropic_thinking_rules() -> None:
    foreign = assistant(
        TextBlock("calling"), call(), api="openai-responses", model="gpt-5", provider="openai"
    )
    loop: list[Message] = [
        UserMessage("q"),
        foreign,
        ToolResultMessage("toolu_1", "get_weather", "sunny"),
    ]
    request = Request(
        "claude-sonnet-4-5",
        tuple(loop),
        tools=(WEATHER,),
        reasoning=Reasoning(budget_tokens=2048),
        tool_choice="required",
    )
    body = encode_request(request, "anthropic", provider="anthropic").body
    # The last assistant turn of the loop cannot start with thinking: thinking is off.
    assert "thinking" not in body
    assert validate_request_body(body, "anthropic") == []
    fresh = Request(
        "claude-sonnet-4-5",
        (UserMessage("q"),),
        tools=(WEATHER,),
        reasoning=Reasoning(budget_tokens=2048),
        tool_choice="get_weather",
    )
    body = encode_request(fresh, "anthropic").body
    # Manual thinking with a forced tool is refused: the model chooses.
    assert body["thinking"]["type"] == "enabled" and body["tool_choice"] == {"type": "auto"}


def test_anthropic_tool_schema_root_is_an_object() -> None:
    tools = (
        Tool("a", parameters={}),
        Tool("b", parameters={"type": "string"}),
        Tool("c", parameters={"properties": {"x": {}}}),
    )
    sent = encode_request(Request("m", (UserMessage("q"),), tools=tools), "anthropic").body["tools"]
    assert [t["input_schema"] for t in sent] == [
        {"type": "object"},
        {"type": "object", "properties": {}},
        {"type": "object", "properties": {"x": {}}},
    ]


def test_gemini_cached_content_strips_what_it_holds() -> None:
    request = Request(
        "gemini-2.5-flash",
        (UserMessage("q"),),
        system="S",
        tools=(WEATHER,),
        tool_choice="auto",
        extra={"google-generative-ai": {"cachedContent": "cachedContents/abc"}},
    )
    body = encode_request(request, "gemini").body
    assert body["cachedContent"] == "cachedContents/abc"
    assert not {"systemInstruction", "tools", "toolConfig"} & set(body)
    assert validate_request_body(body, "gemini") == []


def test_gemini_needs_a_model() -> None:
    with pytest.raises(ValueError, match=r"^model"):
        encode_request(Request(None, (UserMessage("q"),)), "gemini")


def test_headers_that_change_the_meaning_are_kept_for_their_api() -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "q"}],
    }
    sent = {
        "Anthropic-Beta": "interleaved-thinking-2025-05-14",
        "anthropic-version": "2023-06-01",
        "x-api-key": "secret",
        "Authorization": "Bearer secret",
    }
    request = decode_request(body, "anthropic", headers=sent)
    assert request.headers == {
        "anthropic-messages": {
            "anthropic-beta": "interleaved-thinking-2025-05-14",
            "anthropic-version": "2023-06-01",
        }
    }
    assert "secret" not in json.dumps(request.to_dict())
    assert (
        encode_request(request, "anthropic").headers["anthropic-beta"]
        == "interleaved-thinking-2025-05-14"
    )
    assert "anthropic-beta" not in encode_request(request, "openai-responses").headers
    assert Request.from_dict(request.to_dict()) == request


def test_documents_in_every_api() -> None:
    pdf = DocumentBlock("application/pdf", "JVBE", name="a.pdf")
    linked = DocumentBlock("application/pdf", url="https://example.com/b.pdf")
    messages = [UserMessage((pdf, linked))]
    a = encoded("anthropic-messages", messages=messages).body["messages"][0]["content"]
    assert a[0] == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBE"},
        "title": "a.pdf",
    }
    assert a[1]["source"] == {"type": "url", "url": "https://example.com/b.pdf"}
    r = encoded("openai-responses", messages=messages).body["input"][0]["content"]
    assert r == [
        {
            "type": "input_file",
            "file_data": "data:application/pdf;base64,JVBE",
            "filename": "a.pdf",
        },
        {"type": "input_file", "file_url": "https://example.com/b.pdf"},
    ]
    c = encoded("openai-completions", messages=messages).body["messages"][0]["content"]
    assert c[0] == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "a.pdf"},
    }
    assert c[1] == {"type": "text", "text": "[document: https://example.com/b.pdf]"}
    g = encoded("gemini", messages=messages).body["contents"][0]["parts"]
    assert g[1] == {
        "fileData": {"mimeType": "application/pdf", "fileUri": "https://example.com/b.pdf"}
    }
    for api in APIS:
        back = decode_request(
            encoded(api, messages=messages).body, api, path="/v1beta/models/m:generateContent"
        )
        first = back.messages[0].content[0]
        assert isinstance(first, DocumentBlock) and first.data == "JVBE"


def test_gemini_file_data_gets_a_type() -> None:
    body = {
        "max_tokens": 5,
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "image",
                        "source": {"type": "url", "url": "https://example.com/cat.png"},
                    }
                ],
            }
        ],
    }
    request = decode_request(body, "anthropic")
    sent = encode_request(replace(request, model="gemini-2.5-flash"), "gemini").body
    part = sent["contents"][0]["parts"][0]
    assert part == {"fileData": {"mimeType": "image/png", "fileUri": "https://example.com/cat.png"}}


def test_chat_assistant_content_parts() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "q"},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "a"}, {"type": "refusal", "refusal": "no"}],
            },
        ]
    }
    turn = _only_turn(decode_request(body, "openai-completions"))
    assert turn.content == (TextBlock("a"), TextBlock("no", refusal=True))
    bad = {"messages": [{"role": "assistant", "content": [{"type": "image_url"}]}]}
    with pytest.raises(
        ValueError, match=r"^messages\[0\]\.content\[0\]: expected a text or refusal part"
    ):
        decode_request(bad, "openai-completions")
