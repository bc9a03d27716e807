"""Non-streaming responses: every recorded body decodes, and agrees with the
official SDK's own response model parsed from the same JSON on text,
thinking, signatures, tool calls, stop reason and usage. Bodies the installed
SDK models reject are listed with the reason (streamnorm still decodes them).
The non-streaming form gives the message the streaming form gives."""

from __future__ import annotations

import base64
import copy
import json
import random
from importlib.metadata import version
from typing import Any

import pytest
from pydantic import ValidationError

from streamnorm import (
    AssistantMessage,
    ProviderBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    decode_response,
    detect_response_api,
)

from .request_support import JUNK, RESPONSES, body_id, json_files, leaves, load_json, set_at
from .support import needs_fixtures, run_bytes

pytestmark = needs_fixtures

BODIES = json_files(RESPONSES)

_A, _O, _G = (f"{p} {version(p)}" for p in ("anthropic", "openai", "google-genai"))

#: Real bodies the installed SDK's response model rejects.
SDK_REJECTS = {
    "anthropic-messages/a09_pause_turn.json": f"{_A}: usage lacks web_fetch_requests",
    "anthropic-messages/a14_mcp_tool_use_result.json": f"{_A}: no mcp_tool_use block outside beta",
    "anthropic-messages/a16_compaction_iterations.json": f"{_A}: no compaction block outside beta",
    "google-generative-ai/g08_code_execution.json": f"{_G}: usageMetadata.serviceTier unknown",
    "google-generative-ai/g13_max_tokens_thinking_empty.json": f"{_G}: usageMetadata.serviceTier",
    "google-generative-ai/g20_cached_content_tokens.json": f"{_G}: usageMetadata.serviceTier",
    "google-generative-ai/g18_vertex_enum_int.json": f"{_G}: finishReason as a number",
    "openai-completions/c10_groq_compound_executed_tools.json": f"{_O}: service_tier on_demand",
    "openai-completions/c21_groq_qwen3_reasoning.json": f"{_O}: service_tier on_demand",
    "openai-responses/r15_compaction_object.json": f"{_O}: object response.compaction",
}


def _error_body(body: dict[str, Any]) -> bool:
    return "error" in body and body.get("type") != "message" and "output" not in body


@pytest.mark.parametrize("path", BODIES, ids=body_id)
def test_every_response_decodes(path: Any) -> None:
    api, body = path.parent.name, load_json(path)
    message = decode_response(path.read_bytes(), api)
    assert isinstance(message, AssistantMessage)
    assert message.api == api
    if _error_body(body):
        error = body["error"]
        assert message.stop_reason is StopReason.ERROR
        assert message.error and message.error.startswith(error["message"].split("\n")[0][:40])
    else:
        assert message.stop_reason is not StopReason.ERROR
        assert detect_response_api(path.read_bytes()) == api


# ---------------------------------------------------------------------------
# What both sides say, in one shape


def _ours(m: AssistantMessage) -> dict[str, Any]:
    blocks = [b for b in m.content if not isinstance(b, ProviderBlock)]
    return {
        "texts": [b.text for b in blocks if isinstance(b, TextBlock)],
        "thinking": [
            (b.thinking, b.signature)
            for b in blocks
            if isinstance(b, ThinkingBlock) and not b.redacted
        ],
        "calls": [
            (b.id, b.name, dict(b.arguments)) for b in blocks if isinstance(b, ToolCallBlock)
        ],
        "stop": m.raw_stop_reason,
        "usage": (
            m.usage.input_tokens,
            m.usage.output_tokens,
            m.usage.cache_read_tokens,
            m.usage.cache_write_tokens,
        ),
    }


def _anthropic(body: dict[str, Any]) -> dict[str, Any]:
    import anthropic.types as t

    msg = t.Message.model_validate(body)
    u = msg.usage
    return {
        "texts": [b.text for b in msg.content if b.type == "text"],
        "thinking": [(b.thinking, b.signature) for b in msg.content if b.type == "thinking"],
        "calls": [(b.id, b.name, b.input) for b in msg.content if b.type == "tool_use"],
        "stop": msg.stop_reason,
        "usage": (
            u.input_tokens,
            u.output_tokens,
            u.cache_read_input_tokens or 0,
            u.cache_creation_input_tokens or 0,
        ),
    }


def _completions(body: dict[str, Any]) -> dict[str, Any]:
    from openai.types.chat import ChatCompletion

    c = ChatCompletion.model_validate(body)
    m = c.choices[0].message
    extra = m.model_extra or {}
    reasoning = next((extra[k] for k in ("reasoning_content", "reasoning") if extra.get(k)), None)
    texts = [m.content] if m.content else []
    texts += [m.refusal] if m.refusal else []
    calls = [
        (tc.id, tc.function.name, json.loads(tc.function.arguments or "{}"))
        for tc in m.tool_calls or ()
        if tc.type == "function"
    ]
    if m.function_call is not None:  # legacy: the call has no id, streamnorm names one
        calls.append(("", m.function_call.name, json.loads(m.function_call.arguments)))
    u = c.usage
    details = u.prompt_tokens_details if u else None
    cached = (details.cached_tokens or 0) if details else 0
    written = (getattr(details, "cache_write_tokens", 0) or 0) if details else 0
    hits = (u.model_extra or {}).get("prompt_cache_hit_tokens") if u is not None else None
    if not cached and hits:
        cached = hits  # DeepSeek
    return {
        "texts": texts,
        "thinking": [reasoning] if reasoning else [],
        "calls": calls,
        "stop": c.choices[0].finish_reason,
        "usage": (
            (u.prompt_tokens - cached - written) if u else 0,
            u.completion_tokens if u else 0,
            cached,
            written,
        ),
    }


def _responses(body: dict[str, Any]) -> dict[str, Any]:
    from openai.types.responses import Response

    r = Response.model_validate(_with_cache_write(body))
    texts, thinking, calls = [], [], []
    for item in r.output:
        if item.type == "message":
            texts += [p.text if p.type == "output_text" else p.refusal for p in item.content]
        elif item.type == "reasoning":
            summary = "\n\n".join(
                [s.text for s in item.summary] + [c.text for c in item.content or ()]
            )
            thinking.append((summary, item.encrypted_content))
        elif item.type == "function_call":
            calls.append((item.call_id, item.name, json.loads(item.arguments)))
    u = r.usage
    cached = u.input_tokens_details.cached_tokens if u else 0
    written = u.input_tokens_details.cache_write_tokens if u else 0
    stop = r.incomplete_details.reason if r.incomplete_details else r.status
    return {
        "texts": texts,
        "thinking": thinking,
        "calls": calls,
        "stop": stop,
        "usage": (
            (u.input_tokens - cached - written) if u else 0,
            u.output_tokens if u else 0,
            cached,
            written,
        ),
    }


def _with_cache_write(body: dict[str, Any]) -> dict[str, Any]:
    """openai 3.57.0 requires ``usage.input_tokens_details.cache_write_tokens``,
    which real Responses bodies (all of the recorded ones) do not send: the
    model is given a 0 there. That this is still needed is checked by
    :func:`test_responses_sdk_requires_cache_write_tokens`."""
    usage = body.get("usage")
    if not isinstance(usage, dict):
        return body
    details = usage.get("input_tokens_details") or {}
    if "cache_write_tokens" in details:
        return body
    patched = {**details, "cache_write_tokens": 0}
    return {**body, "usage": {**usage, "input_tokens_details": patched}}


def test_responses_sdk_requires_cache_write_tokens() -> None:
    from openai.types.responses import Response

    body = load_json(RESPONSES / "openai-responses" / "r01_text_basic.json")
    with pytest.raises(ValidationError, match="cache_write_tokens"):
        Response.model_validate(body)
    Response.model_validate(_with_cache_write(body))


def _google(body: dict[str, Any]) -> dict[str, Any]:
    from google.genai.types import GenerateContentResponse

    r = GenerateContentResponse.model_validate(body)
    candidate = r.candidates[0] if r.candidates else None
    parts = (candidate.content.parts or []) if candidate and candidate.content else []
    u = r.usage_metadata
    cached = (u.cached_content_token_count or 0) if u else 0
    prompt = ((u.prompt_token_count or 0) + (u.tool_use_prompt_token_count or 0)) if u else 0
    thoughts = (u.thoughts_token_count or 0) if u else 0
    return {
        "parts": [
            (
                "thought" if p.thought else "call" if p.function_call else "text",
                p.text if p.function_call is None else p.function_call.name,
                p.function_call.args if p.function_call else None,
                base64.b64encode(p.thought_signature).decode() if p.thought_signature else None,
            )
            for p in parts
            if p.text is not None or p.function_call is not None
        ],
        "stop": candidate.finish_reason.value if candidate and candidate.finish_reason else None,
        "usage": (
            prompt - cached,
            (u.candidates_token_count or 0) + thoughts if u else 0,
            cached,
            0,
        ),
    }


_SDK = {
    "anthropic-messages": _anthropic,
    "openai-completions": _completions,
    "openai-responses": _responses,
}

_COMPARED = [p for p in BODIES if not _error_body(load_json(p))]


@pytest.mark.parametrize("path", _COMPARED, ids=body_id)
def test_agrees_with_the_sdk_response_model(path: Any) -> None:
    api, body = path.parent.name, load_json(path)
    ours = decode_response(body, api)
    name = body_id(path)
    model = {**_SDK, "google-generative-ai": _google}[api]
    if name in SDK_REJECTS:
        with pytest.raises(ValidationError):
            model(body)
        return
    theirs = model(body)
    if api == "google-generative-ai":
        _agree_google(ours, theirs)
        return
    view = _ours(ours)
    if api == "openai-completions":
        view["thinking"] = [t for t, _ in view["thinking"]]
        # A legacy function_call has no id; streamnorm synthesises one.
        view["calls"] = [
            ("" if not theirs_call[0] else ours_call[0], *ours_call[1:])
            for ours_call, theirs_call in zip(view["calls"], theirs["calls"], strict=False)
        ]
    if api == "openai-responses":
        view["thinking"] = [
            (t, json.loads(s).get("encrypted_content")) for t, s in view["thinking"]
        ]
    assert view == theirs


def _agree_google(ours: AssistantMessage, theirs: dict[str, Any]) -> None:
    assert ours.raw_stop_reason == theirs["stop"]
    assert _ours(ours)["usage"] == theirs["usage"]
    texts = "".join(t for kind, t, _, _ in theirs["parts"] if kind == "text")
    thoughts = "".join(t for kind, t, _, _ in theirs["parts"] if kind == "thought")
    assert "".join(b.text for b in ours.content if isinstance(b, TextBlock)) == texts
    assert "".join(b.thinking for b in ours.content if isinstance(b, ThinkingBlock)) == thoughts
    calls = [(n, a, s) for kind, n, a, s in theirs["parts"] if kind == "call"]
    assert [(c.name, dict(c.arguments), c.signature) for c in ours.tool_calls] == calls
    signatures = [s for kind, _, _, s in theirs["parts"] if kind != "call" and s]
    ours_signed = [
        b.signature
        for b in ours.content
        if isinstance(b, (TextBlock, ThinkingBlock)) and b.signature
    ]
    assert ours_signed == signatures


# ---------------------------------------------------------------------------
# The same message as the streaming form


def _anthropic_stream(body: dict[str, Any]) -> bytes:
    """The stream the Messages API sends for ``body``, written by hand from
    the documented events (text and thinking in two deltas each)."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**body, "content": [], "stop_reason": None}}
    ]
    for i, block in enumerate(body["content"]):
        start = dict(block)
        deltas: list[dict[str, Any]] = []
        if block["type"] == "text":
            start["text"] = ""
            half = len(block["text"]) // 2
            deltas = [
                {"type": "text_delta", "text": block["text"][:half]},
                {"type": "text_delta", "text": block["text"][half:]},
            ]
        elif block["type"] == "thinking":
            start.update(thinking="", signature="")
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        elif block["type"] == "tool_use":
            start["input"] = {}
            # The body holds the parsed input: its raw text is the compact
            # serialisation (a stream's own spacing is not in the body).
            raw = json.dumps(block["input"], separators=(",", ":"), ensure_ascii=False)
            deltas = [{"type": "input_json_delta", "partial_json": raw}]
        events.append({"type": "content_block_start", "index": i, "content_block": start})
        events += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": body["stop_reason"]},
            "usage": body["usage"],
        }
    )
    events.append({"type": "message_stop"})
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


@pytest.mark.parametrize(
    "name",
    ["a01_text_simple.json", "a03_tool_use_parallel.json", "a04_thinking_signature_tool_use.json"],
)
def test_anthropic_message_equals_its_stream(name: str) -> None:
    body = load_json(RESPONSES / "anthropic-messages" / name)
    streamed = run_bytes(_anthropic_stream(body), "anthropic-messages")[-1]
    message = decode_response(body, "anthropic-messages")
    assert streamed.to_dict()["message"] == message.to_dict()


def test_gemini_body_equals_its_one_chunk_stream() -> None:
    path = RESPONSES / "google-generative-ai" / "g04_thought_parts_function_call.json"
    stream = b"data: " + path.read_bytes().replace(b"\n", b"") + b"\n\n"
    streamed = run_bytes(stream, "google-generative-ai")[-1]
    assert streamed.to_dict()["message"] == decode_response(path.read_bytes(), "gemini").to_dict()


def test_detect_tells_a_body_from_a_stream() -> None:
    assert detect_response_api(b"event: message_start\ndata: {}\n\n") is None
    assert detect_response_api(b'data: {"choices": []}\n\n') is None
    assert (
        detect_response_api(b'  {"object": "chat.completion", "choices": []}')
        == "openai-completions"
    )
    assert detect_response_api(b'{"type": "message", "content": []}') == "anthropic-messages"
    assert detect_response_api(b'{"object": "response", "output": []}') == "openai-responses"
    assert detect_response_api(b'{"candidates": []}') == "google-generative-ai"
    assert detect_response_api(b'{"error": {"message": "x"}}') == "error"
    assert detect_response_api(b"[1, 2]") is None
    assert detect_response_api(b"{not json") is None


def test_bad_response_body_raises_value_error() -> None:
    with pytest.raises(ValueError, match="response: not JSON"):
        decode_response(b"{oops", "anthropic")
    with pytest.raises(ValueError, match="expected a JSON object"):
        decode_response(b"[1]", "openai-responses")


@pytest.mark.parametrize("path", BODIES, ids=body_id)
def test_a_damaged_response_still_decodes(path: Any) -> None:
    """Fields of a real response replaced by values of other types: a
    response is read as a stream is, so nothing raises; a message comes back."""
    api, body = path.parent.name, load_json(path)
    rng = random.Random(body_id(path))
    for _ in range(20):
        damaged = copy.deepcopy(body)
        for _ in range(rng.randint(1, 3)):
            found = leaves(damaged)
            if found:
                set_at(damaged, rng.choice(found), copy.deepcopy(rng.choice(JUNK)))
        assert isinstance(decode_response(damaged, api), AssistantMessage)
