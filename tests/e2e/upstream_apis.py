"""The four wire APIs of the scripted upstream: checks, answers, streams.

Each ``handle_<api>`` checks a request as the real API does (raising
``Refusal`` with the real API's wording), picks the script's turn and writes
the answer as that API's whole body or its stream events, the way the real
service writes them (Anthropic's thinking opens with an empty signature and
gets it in a ``signature_delta``; Responses items are added, streamed and
done; Gemini signs the first function call, or the last text part).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .upstream import (
    THINKING,
    Answer,
    Exchange,
    Handler,
    Refusal,
    ScriptedUpstream,
    Turn,
    choose_turn,
    sse,
)

JSON = dict[str, Any]
CREATED = 1764900000
USAGE_IN, USAGE_OUT = 120, 40


def error_body(api: str, refusal: Refusal) -> JSON:
    """The real API's error body for a refusal."""
    message = str(refusal)
    if api == "anthropic-messages":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    if api == "google-generative-ai":
        return {"error": {"code": refusal.status, "message": message, "status": "INVALID_ARGUMENT"}}
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    }


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# --- Anthropic Messages -------------------------------------------------------------------


def _check_anthropic_thinking(body: JSON) -> bool:
    thinking = body.get("thinking") or {}
    if thinking.get("type") != "enabled":
        return thinking.get("type") == "adaptive"
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < 1024:
        raise Refusal(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        )
    if budget >= int(body.get("max_tokens") or 0):
        raise Refusal(
            "`max_tokens` must be greater than `thinking.budget_tokens`. "
            "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/"
            "extended-thinking#max-tokens-and-context-window-size"
        )
    return True


def _check_anthropic_block(up: ScriptedUpstream, block: JSON, where: str) -> None:
    if block.get("type") == "thinking":
        up.check_state(str(block.get("signature")), f"{where}.signature", block.get("thinking"))
    elif block.get("type") == "redacted_thinking":
        up.check_state(str(block.get("data")), f"{where}.data")


def _anthropic_blocks(message: JSON) -> list[JSON]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _check_anthropic_messages(up: ScriptedUpstream, messages: list[JSON], thinking: bool) -> None:
    previous_calls: set[str] = set()
    last_assistant: list[JSON] = []
    for i, message in enumerate(messages):
        blocks = _anthropic_blocks(message)
        for j, block in enumerate(blocks):
            _check_anthropic_block(up, block, f"messages.{i}.content.{j}")
            if (
                block.get("type") == "tool_result"
                and block.get("tool_use_id") not in previous_calls
            ):
                raise Refusal(
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                    f"blocks: {block.get('tool_use_id')}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message."
                )
        previous_calls = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}
        if message.get("role") == "assistant":
            last_assistant = blocks
    calls = any(b.get("type") == "tool_use" for b in last_assistant)
    first = last_assistant[0].get("type") if last_assistant else None
    if thinking and calls and first not in ("thinking", "redacted_thinking"):
        raise Refusal(
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, a final "
            "`assistant` message must start with a thinking block (preceeding the lastmost set of "
            "`tool_use` and `tool_result` blocks)."
        )


def _anthropic_results(messages: list[JSON]) -> list[str] | None:
    if not messages or messages[-1].get("role") != "user":
        return None
    results = [
        json.dumps(b.get("content"))
        for b in _anthropic_blocks(messages[-1])
        if b.get("type") == "tool_result"
    ]
    return results or None


def handle_anthropic(up: ScriptedUpstream, path: str, body: JSON, ex: Exchange) -> Answer:
    thinking = _check_anthropic_thinking(body)
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    _check_anthropic_messages(up, messages, thinking)
    tools = [str(t.get("name")) for t in body.get("tools") or []]
    turn = choose_turn(tools, _anthropic_results(messages), up)
    ex.kind = turn.kind
    content: list[JSON] = []
    if thinking and turn.kind == "call":
        # display "omitted": the block comes without its text, the signature still signs it.
        omitted = (body.get("thinking") or {}).get("display") == "omitted"
        text = "" if omitted else THINKING
        signature = up.issue("anthropic", text)
        ex.issued.append(signature)
        content.append({"type": "thinking", "thinking": text, "signature": signature})
    if turn.kind == "call":
        content.append(
            {
                "type": "tool_use",
                "id": "toolu_" + turn.call_id,
                "name": turn.tool,
                "input": turn.arguments,
            }
        )
    else:
        content.append({"type": "text", "text": turn.text})
    message = {
        "id": f"msg_e2e{up.next_id()}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": "tool_use" if turn.kind == "call" else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": USAGE_IN,
            "output_tokens": USAGE_OUT,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        },
    }
    return Answer(events=_anthropic_events(message)) if ex.stream else Answer(body=message)


def _anthropic_block_events(index: int, block: JSON) -> list[bytes]:
    kind = block["type"]
    if kind == "thinking":
        start: JSON = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [
            {"type": "thinking_delta", "thinking": block["thinking"]},
            {"type": "signature_delta", "signature": block["signature"]},
        ]
    elif kind == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": _compact(block["input"])}]
    else:
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": block["text"]}]
    events = [
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
    ]
    for delta in deltas:
        events.append(
            sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        )
    events.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _anthropic_events(message: JSON) -> list[bytes]:
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events = [
        sse("message_start", {"type": "message_start", "message": start}),
        sse("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        events += _anthropic_block_events(index, block)
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(
        sse(
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": USAGE_OUT}},
        )
    )
    events.append(sse("message_stop", {"type": "message_stop"}))
    return events


# --- OpenAI Responses ---------------------------------------------------------------------


def _responses_items(body: JSON) -> list[JSON]:
    items = body.get("input")
    if isinstance(items, str):
        return [{"type": "message", "role": "user", "content": items}]
    return [i for i in items or [] if isinstance(i, dict)]


def _check_responses_item(
    up: ScriptedUpstream, item: JSON, i: int, store: bool, calls: set[str]
) -> None:
    kind = item.get("type")
    if kind == "reasoning":
        if item.get("encrypted_content") is not None:
            up.check_state(str(item["encrypted_content"]), f"input[{i}].encrypted_content")
        elif not store:
            raise Refusal(
                f"Item with id '{item.get('id')}' not found. Items are not persisted when `store` "
                "is set to false. Try again with `store` set to true, or remove this item from "
                "your input."
            )
        else:
            up.check_state(str(item.get("id")), f"input[{i}].id")
    elif kind == "item_reference":
        up.check_state(str(item.get("id")), f"input[{i}].id")
    elif kind == "function_call":
        calls.add(str(item.get("call_id")))
    elif kind == "function_call_output" and item.get("call_id") not in calls:
        raise Refusal(
            f"No tool call found for function call output with call_id {item.get('call_id')}."
        )


def _responses_results(items: list[JSON]) -> list[str] | None:
    results: list[str] = []
    for item in reversed(items):
        if item.get("type") == "function_call_output":
            results.append(json.dumps(item.get("output")))
        elif item.get("type") != "function_call" and item.get("type") != "reasoning":
            break
    return results or None


def handle_responses(up: ScriptedUpstream, path: str, body: JSON, ex: Exchange) -> Answer:
    items = _responses_items(body)
    store = body.get("store", True) is not False
    calls: set[str] = set()
    for i, item in enumerate(items):
        _check_responses_item(up, item, i, store, calls)
    tools = [str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
    turn = choose_turn(tools, _responses_results(items), up)
    ex.kind = turn.kind
    output = _responses_output(up, body, turn, ex)
    response = {
        "id": f"resp_e2e{up.next_id()}",
        "object": "response",
        "created_at": CREATED,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": body.get("max_output_tokens"),
        "model": body.get("model"),
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": "medium", "summary": None},
        "store": store,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": USAGE_IN,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": USAGE_OUT,
            "output_tokens_details": {"reasoning_tokens": 20},
            "total_tokens": USAGE_IN + USAGE_OUT,
        },
        "metadata": {},
    }
    return Answer(events=_responses_events(response)) if ex.stream else Answer(body=response)


def _responses_output(up: ScriptedUpstream, body: JSON, turn: Turn, ex: Exchange) -> list[JSON]:
    if turn.kind != "call":
        text = {"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}
        message = {"id": f"msg_e2e{up.next_id()}", "type": "message", "status": "completed"}
        return [dict(message, role="assistant", content=[text])]
    reasoning_id = up.issue("responses-id")
    reasoning: JSON = {"id": reasoning_id, "type": "reasoning", "summary": []}
    if (body.get("reasoning") or {}).get("summary"):
        reasoning["summary"] = [{"type": "summary_text", "text": THINKING}]
    if "reasoning.encrypted_content" in (body.get("include") or []):
        reasoning["encrypted_content"] = up.issue("responses", THINKING)
        ex.issued.append(reasoning["encrypted_content"])
    elif body.get("store", True) is not False:
        ex.issued.append(reasoning_id)
    call = {
        "id": f"fc_e2e{up.next_id()}",
        "type": "function_call",
        "status": "completed",
        "arguments": _compact(turn.arguments),
        "call_id": turn.call_id,
        "name": turn.tool,
    }
    return [reasoning, call]


def _responses_item_events(index: int, item: JSON) -> list[JSON]:
    kind = item["type"]
    ids = {"item_id": item["id"], "output_index": index}
    if kind == "reasoning":
        added = {k: v for k, v in item.items() if k != "encrypted_content"}
        events: list[JSON] = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": dict(added, summary=[]),
            }
        ]
        for s, part in enumerate(item["summary"]):
            empty = dict(part, text="")
            events += [
                dict(
                    ids, type="response.reasoning_summary_part.added", summary_index=s, part=empty
                ),
                dict(
                    ids,
                    type="response.reasoning_summary_text.delta",
                    summary_index=s,
                    delta=part["text"],
                ),
                dict(
                    ids,
                    type="response.reasoning_summary_text.done",
                    summary_index=s,
                    text=part["text"],
                ),
                dict(ids, type="response.reasoning_summary_part.done", summary_index=s, part=part),
            ]
    elif kind == "function_call":
        events = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": dict(item, arguments="", status="in_progress"),
            },
            dict(ids, type="response.function_call_arguments.delta", delta=item["arguments"]),
            dict(ids, type="response.function_call_arguments.done", arguments=item["arguments"]),
        ]
    else:
        part = item["content"][0]
        at = dict(ids, content_index=0)
        events = [
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": dict(item, content=[], status="in_progress"),
            },
            dict(at, type="response.content_part.added", part=dict(part, text="")),
            dict(at, type="response.output_text.delta", delta=part["text"], logprobs=[]),
            dict(at, type="response.output_text.done", text=part["text"], logprobs=[]),
            dict(at, type="response.content_part.done", part=part),
        ]
    events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return events


def _responses_events(response: JSON) -> list[bytes]:
    opening = dict(response, status="in_progress", output=[], usage=None)
    events: list[JSON] = [
        {"type": "response.created", "response": opening},
        {"type": "response.in_progress", "response": opening},
    ]
    for index, item in enumerate(response["output"]):
        events += _responses_item_events(index, item)
    events.append({"type": "response.completed", "response": response})
    return [sse(e["type"], dict(e, sequence_number=n)) for n, e in enumerate(events)]


# --- Chat Completions ---------------------------------------------------------------------


def _check_chat(messages: list[JSON]) -> None:
    open_calls: set[str] = set()
    for i, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                raise Refusal(
                    f"Invalid parameter: messages[{i}]: messages with role 'tool' must be a "
                    "response to a preceeding message with 'tool_calls'."
                )
            continue
        calls = message.get("tool_calls") or [] if role == "assistant" else []
        open_calls = {str(c.get("id")) for c in calls if isinstance(c, dict)}


def handle_chat(up: ScriptedUpstream, path: str, body: JSON, ex: Exchange) -> Answer:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    _check_chat(messages)
    results = [json.dumps(m.get("content")) for m in messages[-1:] if m.get("role") == "tool"]
    tools = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or []]
    turn = choose_turn(tools, results or None, up)
    ex.kind = turn.kind
    message: JSON = {"role": "assistant", "content": turn.text or None}
    if turn.kind == "call":
        message["reasoning_content"] = THINKING
        function = {"name": turn.tool, "arguments": _compact(turn.arguments)}
        message["tool_calls"] = [{"id": turn.call_id, "type": "function", "function": function}]
    finish = "tool_calls" if turn.kind == "call" else "stop"
    usage = {
        "prompt_tokens": USAGE_IN,
        "completion_tokens": USAGE_OUT,
        "total_tokens": USAGE_IN + USAGE_OUT,
    }
    head = {"id": f"chatcmpl-e2e{up.next_id()}", "created": CREATED, "model": body.get("model")}
    if not ex.stream:
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        return Answer(body=dict(head, object="chat.completion", choices=[choice], usage=usage))
    with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    return Answer(
        events=_chat_events(
            dict(head, object="chat.completion.chunk"),
            message,
            finish,
            usage if with_usage else None,
        )
    )


def _chat_events(head: JSON, message: JSON, finish: str, usage: JSON | None) -> list[bytes]:
    def chunk(delta: JSON, reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": reason, "logprobs": None}
        return sse(None, dict(head, choices=[choice]))

    events = [chunk({"role": "assistant", "content": ""})]
    if message.get("reasoning_content"):
        events.append(chunk({"reasoning_content": message["reasoning_content"]}))
    if message.get("content"):
        events.append(chunk({"content": message["content"]}))
    for n, call in enumerate(message.get("tool_calls") or []):
        opening = {"name": call["function"]["name"], "arguments": ""}
        events.append(
            chunk(
                {
                    "tool_calls": [
                        {"index": n, "id": call["id"], "type": "function", "function": opening}
                    ]
                }
            )
        )
        args = {"arguments": call["function"]["arguments"]}
        events.append(chunk({"tool_calls": [{"index": n, "function": args}]}))
    events.append(chunk({}, finish))
    if usage is not None:
        events.append(sse(None, dict(head, choices=[], usage=usage)))
    events.append(sse(None, "[DONE]"))
    return events


# --- Gemini -------------------------------------------------------------------------------

#: The values Gemini documents for a function call whose signature another model
#: or an edited history could not keep: it accepts them and skips the check.
GEMINI_SKIP_SIGNATURES = (
    "skip_thought_signature_validator",
    "context_engineering_is_the_way_to_go",
)
GEMINI_PATH = re.compile(
    r"^/v1(?:beta|alpha)?/models/([^/:?]+):(streamGenerateContent|generateContent)"
)


def _check_gemini_contents(up: ScriptedUpstream, contents: list[JSON], gemini3: bool) -> None:
    last_user_text = max(
        (
            i
            for i, c in enumerate(contents)
            if c.get("role") != "model" and any("text" in p for p in c.get("parts") or [])
        ),
        default=-1,
    )
    previous_calls = 0
    for i, content in enumerate(contents):
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        for j, part in enumerate(parts):
            signature = part.get("thoughtSignature") or part.get("thought_signature")
            if signature is not None and signature not in GEMINI_SKIP_SIGNATURES:
                up.check_state(
                    str(signature), f"contents[{i}].parts[{j}]: Corrupted thought signature"
                )
        responses = sum(1 for p in parts if "functionResponse" in p or "function_response" in p)
        if responses and not previous_calls:
            raise Refusal(
                "Please ensure that function response turn comes immediately after a function "
                "call turn."
            )
        calls = [p for p in parts if "functionCall" in p or "function_call" in p]
        previous_calls = len(calls) if content.get("role") == "model" else 0
        signed = calls and (calls[0].get("thoughtSignature") or calls[0].get("thought_signature"))
        if gemini3 and i > last_user_text and calls and not signed:
            name = (calls[0].get("functionCall") or calls[0].get("function_call") or {}).get("name")
            raise Refusal(
                "Function call is missing a thought_signature in functionCall parts. This is "
                "required for tools to work correctly, and missing thought_signature may lead to "
                f"degraded model performance. Additional data, function call `default_api:{name}` "
                f", position {parts.index(calls[0]) + 1}. Please refer to https://ai.google.dev/gemini-api/docs/"
                "thought-signatures for more details."
            )


def _gemini_tools(body: JSON) -> list[str]:
    names = []
    for tool in body.get("tools") or []:
        for decl in tool.get("functionDeclarations") or tool.get("function_declarations") or []:
            names.append(str(decl.get("name")))
    return names


def handle_gemini(up: ScriptedUpstream, path: str, body: JSON, ex: Exchange) -> Answer:
    match = GEMINI_PATH.match(path)
    model = match.group(1) if match else "gemini"
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    _check_gemini_contents(up, contents, model.startswith("gemini-3"))
    last = contents[-1].get("parts") or [] if contents else []
    results = [
        json.dumps(p.get("functionResponse") or p.get("function_response"))
        for p in last
        if "functionResponse" in p or "function_response" in p
    ]
    turn = choose_turn(_gemini_tools(body), results or None, up)
    ex.kind = turn.kind
    config = body.get("generationConfig") or body.get("generation_config") or {}
    thinking = config.get("thinkingConfig") or config.get("thinking_config") or {}
    parts: list[JSON] = []
    if thinking.get("includeThoughts") or thinking.get("include_thoughts"):
        parts.append({"text": THINKING, "thought": True})
    signature = up.issue("gemini", "")
    ex.issued.append(signature)
    if turn.kind == "call":
        parts.append(
            {
                "functionCall": {"name": turn.tool, "args": turn.arguments},
                "thoughtSignature": signature,
            }
        )
    else:
        parts.append({"text": turn.text, "thoughtSignature": signature})
    usage = {
        "promptTokenCount": USAGE_IN,
        "candidatesTokenCount": USAGE_OUT - 20,
        "thoughtsTokenCount": 20,
        "totalTokenCount": USAGE_IN + USAGE_OUT,
    }
    head = {"modelVersion": model, "responseId": f"e2e{up.next_id()}"}
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    whole = dict(head, candidates=[candidate], usageMetadata=usage)
    if not ex.stream:
        return Answer(body=whole)
    chunks = []
    if len(parts) > 1:
        first = {"content": {"role": "model", "parts": parts[:1]}, "index": 0}
        chunks.append(
            dict(head, candidates=[first], usageMetadata=dict(usage, candidatesTokenCount=0))
        )
        candidate = dict(candidate, content={"role": "model", "parts": parts[1:]})
    chunks.append(dict(head, candidates=[candidate], usageMetadata=usage))
    if "alt=sse" in path:
        return Answer(events=[f"data: {_compact(c)}\r\n\r\n".encode() for c in chunks])
    return Answer(events=[("[" + ",\r\n".join(_compact(c) for c in chunks) + "]").encode()])


def route(path: str) -> tuple[str, Handler, bool] | None:
    """The API, handler and streaming flag of a request path (None: not served)."""
    bare = path.split("?")[0]
    if bare == "/v1/messages":
        return "anthropic-messages", handle_anthropic, False
    if bare == "/v1/responses":
        return "openai-responses", handle_responses, False
    if bare == "/v1/chat/completions":
        return "openai-completions", handle_chat, False
    match = GEMINI_PATH.match(bare)
    if match:
        return "google-generative-ai", handle_gemini, match.group(2) == "streamGenerateContent"
    return None
