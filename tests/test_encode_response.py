"""``encode_response``: the non-streaming body of every fixture's message, for
every api, validates as that SDK's own response model, and the model holds
the message's text, thinking, tool calls, stop value and usage."""

from __future__ import annotations

import base64
import json
import typing
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pydantic
import pytest

from streamnorm import Error, StopReason, TextBlock, ThinkingBlock, ToolCallBlock, encode_response
from streamnorm.envelope import unwrap

from .encode_oracles import STOP, arguments, expected
from .support import (
    APIS,
    FIXTURES,
    api_of,
    fixture_id,
    fixture_paths,
    needs_fixtures,
    run_bytes,
    terminal,
)

anthropic_types = pytest.importorskip("anthropic.types")
chat_types = pytest.importorskip("openai.types.chat")
responses_types = pytest.importorskip("openai.types.responses")
genai_types = pytest.importorskip("google.genai.types")

PAIRS = [(p, target) for p in fixture_paths() for target in APIS]
IDS = [f"{fixture_id(p)}->{target}" for p, target in PAIRS]


#: The block and item types streamnorm itself writes; anything else in a body
#: is a provider block stored verbatim from the recorded stream.
OWN_TYPES = frozenset(("text", "thinking", "redacted_thinking", "tool_use"))
OWN_ITEMS = frozenset(("message", "reasoning", "function_call"))


def _validate(model: Any, body: dict[str, Any], key: str, own: frozenset[str]) -> Any:
    """``model.model_validate(body)``. Provider blocks and citations are the
    recorded server's own objects, which an SDK release may not model (newer
    server tools, hosts' partial items): when validation fails only inside
    those, the body without them must validate, and the SDK's loose parse
    (the one its client uses) must keep every block."""
    try:
        return model.model_validate(body)
    except pydantic.ValidationError:
        loose = model.construct(**body)
        assert [b["type"] for b in loose.model_dump()[key]] == [b["type"] for b in body[key]]
        kept = [_without_citations(b) for b in body[key] if b["type"] in own]
        return model.model_validate({**body, key: kept})


def _without_citations(block: dict[str, Any]) -> dict[str, Any]:
    if block["type"] != "message":
        return block
    parts = [{**p, "annotations": []} if "annotations" in p else p for p in block["content"]]
    return {**block, "content": parts}


def _anthropic(body: dict[str, Any]) -> tuple[str, str, list[Any], Any, tuple[int, ...]]:
    m = _validate(anthropic_types.Message, body, "content", OWN_TYPES)
    text = "".join(b.text for b in m.content if b.type == "text")
    thinking = "".join(b.thinking for b in m.content if b.type == "thinking")
    calls = [(b.id, b.name, b.input) for b in m.content if b.type == "tool_use"]
    u = m.usage
    usage = (u.input_tokens, u.output_tokens, u.cache_read_input_tokens or 0)
    return text, thinking, calls, m.stop_reason, (*usage, u.cache_creation_input_tokens or 0)


def _chat(body: dict[str, Any]) -> tuple[str, str, list[Any], Any, tuple[int, ...]]:
    c = chat_types.ChatCompletion.model_validate(body)
    message = c.choices[0].message
    text = (message.content or "") + (message.refusal or "")
    thinking = (message.model_extra or {}).get("reasoning_content") or ""
    calls = [
        (t.id, t.function.name, arguments(t.function.arguments)) for t in message.tool_calls or []
    ]
    u = c.usage
    assert u is not None and u.prompt_tokens_details is not None
    cached = u.prompt_tokens_details.cached_tokens or 0
    written = u.prompt_tokens_details.cache_write_tokens or 0
    usage = (u.prompt_tokens - cached - written, u.completion_tokens, cached, written)
    return text, thinking, calls, c.choices[0].finish_reason, usage


def _sdk_error_codes() -> frozenset[str]:
    """The codes the SDK's ``ResponseError.code`` lists."""
    annotation = responses_types.ResponseError.model_fields["code"].annotation
    return frozenset(typing.get_args(annotation))


def _listed_error_code(body: dict[str, Any]) -> dict[str, Any]:
    """``body``, a code the SDK does not list in its ``error`` replaced by one
    it does. OpenAI's own failed responses carry such codes
    (``insufficient_quota``: test_openai_sends_error_codes_the_sdk_does_not_list),
    and so does a body of the same api that keeps its code."""
    error = body.get("error")
    if not error or error["code"] in _sdk_error_codes():
        return body
    read = responses_types.Response.construct(**body).error  # what the SDK's client reads
    assert read is not None and read.code == error["code"]
    return {**body, "error": {**error, "code": "server_error"}}


@needs_fixtures
def test_openai_sends_error_codes_the_sdk_does_not_list() -> None:
    """The SDK's ``Response`` refuses OpenAI's own recorded failed response:
    its ``error.code`` is ``insufficient_quota``, which the SDK's literal lacks."""
    data = (FIXTURES / "openai-responses" / "error-response-failed.sse").read_text()
    failed = next(
        json.loads(line[6:])
        for line in data.splitlines()
        if line.startswith("data: ") and '"response.failed"' in line
    )
    response = failed["response"]
    assert response["error"]["code"] == "insufficient_quota"
    with pytest.raises(pydantic.ValidationError, match=r"error\.code"):
        responses_types.Response.model_validate(response)
    responses_types.Response.model_validate(_listed_error_code(response))


def _responses(body: dict[str, Any]) -> tuple[str, str, list[Any], Any, tuple[int, ...]]:
    r = _validate(responses_types.Response, _listed_error_code(body), "output", OWN_ITEMS)
    text = thinking = ""
    calls = []
    for item in r.output:
        if item.type == "message":
            text += "".join(p.text if p.type == "output_text" else p.refusal for p in item.content)
        elif item.type == "reasoning":
            parts = [s.text for s in item.summary] + [c.text for c in item.content or []]
            thinking += "\n\n".join(parts)
        elif item.type == "function_call":
            calls.append((item.call_id, item.name, arguments(item.arguments)))
    stop = r.incomplete_details.reason if r.incomplete_details else r.status
    u = r.usage
    assert u is not None
    cached, written = (
        u.input_tokens_details.cached_tokens,
        u.input_tokens_details.cache_write_tokens,
    )
    usage = (u.input_tokens - cached - (written or 0), u.output_tokens, cached, written or 0)
    return text, thinking, calls, stop, usage


def _google(body: dict[str, Any]) -> tuple[str, str, list[Any], Any, tuple[int, ...]]:
    g = genai_types.GenerateContentResponse.model_validate(body)
    candidate = (g.candidates or [])[0]
    text = thinking = ""
    calls = []
    for part in (candidate.content.parts if candidate.content else None) or []:
        if part.function_call is not None:
            calls.append((part.function_call.id, part.function_call.name, part.function_call.args))
        elif part.text is not None and part.thought:
            thinking += part.text
        elif part.text is not None:
            text += part.text
    u = g.usage_metadata
    assert u is not None
    cached, thoughts = u.cached_content_token_count or 0, u.thoughts_token_count or 0
    usage = ((u.prompt_token_count or 0) - cached, (u.candidates_token_count or 0) + thoughts)
    stop = candidate.finish_reason.value if candidate.finish_reason else None
    return text, thinking, calls, stop, (*usage, cached, 0)


VALIDATORS = {
    "anthropic-messages": _anthropic,
    "openai-completions": _chat,
    "openai-responses": _responses,
    "google-generative-ai": _google,
}


@needs_fixtures
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(("path", "target"), PAIRS, ids=IDS)
def test_response_body_validates_as_the_sdk_model(path: Path, target: str) -> None:
    end = terminal(run_bytes(path.read_bytes(), api_of(path)))
    message = end.message
    body = json.loads(json.dumps(encode_response(message, target)))  # JSON, as sent
    text, thinking, calls, stop, usage = VALIDATORS[target](body)
    if isinstance(end, Error):  # what was received before the failure, in a valid body
        assert text == message.text
        if target == "openai-responses":
            assert body["status"] == "failed" and body["error"]["message"] == message.error
        return
    want = expected(message, target, False)
    # Non-streaming bodies keep refusals apart; the SDKs' views join them back.
    assert text == want.text
    assert thinking == want.thinking
    assert calls == want.calls
    assert stop == want.stop
    assert usage == want.usage[:4]


def test_refusal_is_kept_in_the_response_body() -> None:
    from streamnorm import AssistantMessage, Usage

    message = AssistantMessage(
        (TextBlock("No.", refusal=True),),
        "openai-completions",
        "m",
        StopReason.CONTENT_FILTER,
        "content_filter",
        Usage(),
        "chatcmpl-1",
    )
    chat = encode_response(message, "openai-completions")["choices"][0]
    assert chat["message"] == {"role": "assistant", "content": None, "refusal": "No."}
    assert chat["finish_reason"] == "content_filter"
    responses = encode_response(message, "openai-responses")
    assert responses["output"][0]["content"] == [{"type": "refusal", "refusal": "No."}]
    assert responses["incomplete_details"] == {"reason": "content_filter"}
    assert STOP["anthropic-messages"][StopReason.CONTENT_FILTER] == "refusal"
    assert encode_response(message, "anthropic")["stop_reason"] == "refusal"


def test_foreign_signatures_are_wrapped_in_the_target_field() -> None:
    from streamnorm import AssistantMessage, Usage

    message = AssistantMessage(
        (
            ThinkingBlock("hmm", "c2lnQQ=="),
            TextBlock("hi", signature="dGV4dA=="),
            ToolCallBlock("c1", "f", {"a": 1}, '{"a":1}', signature="Y2FsbA=="),
        ),
        "google-generative-ai",
        "gemini-3",
        StopReason.TOOL_USE,
        "STOP",
        Usage(),
        "r1",
        provider="google",
    )
    content = encode_response(message, "anthropic-messages")["content"]
    thinking = unwrap(content[0]["signature"])
    assert thinking is not None and (thinking.kind, thinking.signature) == ("thinking", "c2lnQQ==")
    assert thinking.issuer.api == "google-generative-ai" and thinking.issuer.provider == "google"
    turn = unwrap(content[1]["signature"])  # the carrier, just before the blocks it signs
    assert content[1]["type"] == "thinking" and content[1]["thinking"] == ""
    assert [b["type"] for b in content] == ["thinking", "thinking", "text", "tool_use"]
    assert turn is not None and turn.kind == "turn"
    assert turn.signature == [[1, "text", "dGV4dA=="], [2, "toolcall", "Y2FsbA=="]]
    item = encode_response(message, "openai-responses")["output"][0]
    reasoning = unwrap(item["encrypted_content"])
    assert reasoning is not None and reasoning.signature == "c2lnQQ=="
    details = encode_response(message, "openai-completions")["choices"][0]["message"]
    entry = details["reasoning_details"][0]
    assert entry["type"] == "reasoning.encrypted" and unwrap(entry["data"]).signature == "c2lnQQ=="  # type: ignore[union-attr]
    same = encode_response(message, "google-generative-ai")["candidates"][0]["content"]["parts"]
    assert [p.get("thoughtSignature") for p in same] == ["c2lnQQ==", "dGV4dA==", "Y2FsbA=="]
    anthropic_source = AssistantMessage(
        (ThinkingBlock("x", "anthropic-sig"),),
        "anthropic-messages",
        "claude",
        StopReason.STOP,
        "end_turn",
        Usage(),
        "msg_1",
    )
    parts = encode_response(anthropic_source, "google")["candidates"][0]["content"]["parts"]
    # the thought part is unsigned; the turn's last part carries the block whole
    assert parts == [{"text": "x", "thought": True}, {"text": "", "thoughtSignature": ANY}]
    base64.b64decode(parts[1]["thoughtSignature"], validate=True)  # standard base64
    wrapped = unwrap(parts[1]["thoughtSignature"])
    assert wrapped is not None and wrapped.kind == "turn"
    assert wrapped.signature == [[0, "thinking", "anthropic-sig", "x"]]


@pytest.mark.parametrize("status", ["queued", "in_progress"])
def test_a_background_response_still_running_keeps_its_status_and_validates(status: str) -> None:
    from streamnorm import decode_response

    body = {
        "id": "resp_bg1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-5",
        "status": status,
        "background": True,
        "output": [],
        "error": None,
        "incomplete_details": None,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    message = decode_response(body, "openai-responses")
    out = encode_response(message, "openai-responses")
    parsed = responses_types.Response.model_validate(out)
    assert parsed.status == status and parsed.incomplete_details is None
