"""Every real request body decodes and re-encodes for its own api to the same
body, which the api's structural rules, its official SDK's request types and
the SDK client itself accept unchanged.

The comparison is of whole bodies after one documented normalisation
(:func:`normalized`), written here independently of the codec; each rule
names its reason. SDK gaps — real bodies or fields the installed SDK does not
type — are listed with the SDK version, never skipped.
"""

from __future__ import annotations

import copy
import random
import re
from importlib.metadata import version
from typing import Any

import pytest
from pydantic import ValidationError

from streamnorm import (
    Request,
    decode_request,
    encode_request,
    sanitize_messages_for_target,
    validate_history_for_target,
    validate_request_body,
)

from .request_support import (
    JUNK,
    REQUESTS,
    body_id,
    camel,
    genai_request,
    genai_view,
    json_files,
    leaves,
    load_json,
    request_path,
    sdk_send,
    sdk_validate,
    set_at,
)
from .support import needs_fixtures

pytestmark = needs_fixtures

BODIES = json_files(REQUESTS)


def _without_nulls(value: Any) -> Any:
    """JSON ``null`` fields are absent ones for every api here."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _anthropic(body: dict[str, Any]) -> None:
    for m in body["messages"]:
        if m["role"] == "assistant" and isinstance(m["content"], str):
            # String content is one text block (the API says so); blocks are written.
            m["content"] = [{"type": "text", "text": m["content"]}]
        for block in m["content"] if isinstance(m["content"], list) else ():
            if block.get("is_error") is False:
                del block["is_error"]  # the default
    for tool in body.get("tools", ()):
        if tool.get("description") == "":
            del tool["description"]  # an empty description is none


def _responses(body: dict[str, Any]) -> None:
    if isinstance(body["input"], str):
        # A string input is one user message (the API says so).
        body["input"] = [{"role": "user", "content": body["input"]}]
    for item in body["input"]:
        if "role" in item and item.get("type") == "message" and item["role"] != "assistant":
            del item["type"]  # an input message's type is optional
        if item.get("type") == "function_call":
            item.pop("status", None)  # output state, not read on input
        for part in item.get("content") if isinstance(item.get("content"), list) else ():
            part.pop("logprobs", None)  # output-only
    for tool in body.get("tools", ()):
        if tool.get("type") == "function":
            tool.setdefault("strict", True)  # Responses functions are strict by default


def _completions(body: dict[str, Any]) -> None:
    for m in body["messages"]:
        if m["role"] == "tool":
            # The call's name (kept as ToolResultMessage.tool_name); the
            # current tool message type has no such field.
            m.pop("name", None)
        if m["role"] == "assistant" and m.get("tool_calls") and m.get("content") == "":
            del m["content"]  # empty content beside tool calls is none


def _google(original: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = camel(original)
    for tool in body.get("tools", ()):
        for declaration in tool.get("functionDeclarations", ()):
            if declaration.get("description") == "":
                del declaration["description"]
    return body


def normalized(body: dict[str, Any], api: str) -> dict[str, Any]:
    """``body`` with the documented equivalences applied (a copy)."""
    out: dict[str, Any] = _without_nulls(copy.deepcopy(body))
    if out.get("stream") is False:
        del out["stream"]  # the default of every api that has the field
    if api == "anthropic-messages":
        _anthropic(out)
    elif api == "openai-responses":
        _responses(out)
    elif api == "openai-completions":
        _completions(out)
    else:
        out = _google(out)
    return out


def _round_trip(path: Any) -> tuple[str, dict[str, Any], Request, dict[str, Any]]:
    api = path.parent.name
    body = load_json(path)
    request = decode_request(body, api, path=request_path(api))
    encoded = dict(encode_request(request, api, sanitize=False).body)
    return api, body, request, encoded


@pytest.mark.parametrize("path", BODIES, ids=body_id)
def test_round_trip_gives_the_same_body(path: Any) -> None:
    api, body, _, encoded = _round_trip(path)
    assert normalized(encoded, api) == normalized(body, api)


def test_every_api_has_request_fixtures() -> None:
    counts = {
        api: len(json_files(REQUESTS, api))
        for api in ("anthropic-messages", "google-generative-ai")
    }
    assert all(n >= 10 for n in counts.values()), counts
    assert len(BODIES) >= 80


@pytest.mark.parametrize("path", BODIES, ids=body_id)
def test_decoded_request_survives_to_dict(path: Any) -> None:
    _, _, request, _ = _round_trip(path)
    assert Request.from_dict(request.to_dict()) == request


@pytest.mark.parametrize("path", BODIES, ids=body_id)
def test_reencoded_body_keeps_the_structural_rules(path: Any) -> None:
    api, _, _, encoded = _round_trip(path)
    assert validate_request_body(encoded, api) == []


# ---------------------------------------------------------------------------
# The official SDKs

_ANTHROPIC = f"anthropic {version('anthropic')}"
_OPENAI = f"openai {version('openai')}"

#: Real bodies the installed SDK's request types reject, with the reason.
SDK_REJECTS = {
    "anthropic-messages/advisor-tool-replay.json": f"{_ANTHROPIC}: no advisor_tool_result block",
    "anthropic-messages/mcp-servers-tool-use-result-replay.json": (
        f"{_ANTHROPIC}: no mcp_tool_use / mcp_tool_result blocks outside the beta resource"
    ),
    "anthropic-messages/go-computer-use-screenshot-result.json": (
        f"{_ANTHROPIC}: no computer_20251124 tool outside the beta resource"
    ),
    "anthropic-messages/bedrock-invoke-tool-result.json": (
        f"{_ANTHROPIC}: model is required; a Bedrock body has it in the URL"
    ),
    "anthropic-messages/vertex-rawpredict-tool-result.json": (
        f"{_ANTHROPIC}: model is required; a Vertex body has it in the URL"
    ),
    "openai-responses/web-search-call-replay-gpt-4o.json": (
        f"{_OPENAI}: web_search_call action.sources typed as a list, the API sends null"
    ),
    "openai-responses/image-generation-call-replay.json": (
        f"{_OPENAI}: image_generation_call requires result and status; the replay has id and type"
    ),
}

#: Fields real bodies send that the installed SDK's types do not know (the
#: TypedDict validation drops them), by file.
SDK_UNKNOWN = {
    "anthropic-messages/output-format-strict-tools-tool-result.json": {"output_format"},
    "anthropic-messages/thinking-tool-result-temperature.json": {"temperature"},
    "openai-completions/groq-reasoning-effort.json": {"reasoning_format"},
    "openai-completions/llama-cpp-reasoning-content-replay.json": {"messages[2].reasoning_content"},
    "openai-completions/openrouter-reasoning-details-replay.json": {
        "reasoning",
        "usage",
        "messages[2].reasoning",
        "messages[2].reasoning_details",
    },
}

_TYPED = [p for p in BODIES if p.parent.name != "google-generative-ai"]


@pytest.mark.parametrize("path", _TYPED, ids=body_id)
def test_sdk_request_types_accept_the_encoded_body(path: Any) -> None:
    api, _, _, encoded = _round_trip(path)
    name = body_id(path)
    if name in SDK_REJECTS:
        with pytest.raises(ValidationError):
            sdk_validate(api, encoded)
        return
    assert set(sdk_validate(api, encoded)) == SDK_UNKNOWN.get(name, set())


@pytest.mark.parametrize("api", ["anthropic-messages", "openai-responses", "openai-completions"])
def test_sdk_validator_rejects_a_wrong_role(api: str) -> None:
    """The check above iterates pydantic's lazy ``Iterable`` fields: a wrong
    role deep in the list is caught, not waved through."""
    key = "input" if api == "openai-responses" else "messages"
    good = {"model": "m", "max_tokens": 5, key: [{"role": "user", "content": "hi"}]}
    bad = {**good, key: [{"role": "user", "content": "hi"}, {"role": "robot", "content": "x"}]}
    if api != "anthropic-messages":
        del good["max_tokens"], bad["max_tokens"]
    assert sdk_validate(api, good) == []
    with pytest.raises(ValidationError):
        sdk_validate(api, bad)


def test_sdk_validator_rejects_a_wrong_block_type() -> None:
    bad = {
        "model": "m",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": [{"type": "txt", "text": "hi"}]}],
    }
    with pytest.raises(ValidationError):
        sdk_validate("anthropic-messages", bad)


@pytest.mark.parametrize("path", BODIES, ids=body_id)
def test_sdk_client_sends_the_encoded_body_unchanged(path: Any) -> None:
    api, _, _, encoded = _round_trip(path)
    if "model" not in encoded and api == "anthropic-messages":
        # Vertex and Bedrock bodies: the first-party client requires a model
        # (their own clients put it in the URL and need cloud credentials).
        with pytest.raises(TypeError, match="model"):
            sdk_send(api, encoded)
        return
    if api == "google-generative-ai" and body_id(path) in GENAI_REJECTS:
        with pytest.raises(ValidationError):
            genai_request(encoded)
        return
    sent = sdk_send(api, encoded)
    if api == "google-generative-ai":
        sent, encoded = genai_view(sent), genai_view(encoded)
    assert sent == encoded


_GENAI = f"google-genai {version('google-genai')}"

#: Real Gemini bodies google-genai's models reject.
GENAI_REJECTS = {
    "google-generative-ai/int-enum-request-go.json": (
        f"{_GENAI}: safetySettings and schema types as enum numbers (enum-encoding=int)"
    ),
}


def test_genai_models_read_contents_and_config_as_sent() -> None:
    """google-genai's own models hold what the body says: a function call,
    its signature bytes, the thinking config."""
    path = REQUESTS / "google-generative-ai" / "go-thinking-config-signature-gemini-3.json"
    _, body, _, encoded = _round_trip(path)
    contents, config = genai_request(encoded)
    call_part = contents[1].parts[0]
    assert call_part.function_call.name == "weather"
    assert call_part.thought_signature is not None
    assert config.thinking_config.thinking_level.value == "HIGH"
    assert config.thinking_config.include_thoughts is True
    assert body["contents"][1]["parts"][0]["functionCall"]["args"] == call_part.function_call.args


_PROVIDERS = {
    "anthropic-messages": "anthropic",
    "openai-responses": "openai",
    "openai-completions": "openai",
    "google-generative-ai": "google",
}


@pytest.mark.parametrize("path", BODIES, ids=body_id)
def test_sanitized_reencoding_keeps_every_rule(path: Any) -> None:
    """Decoded with the host it was sent to and encoded with ``sanitize``, a
    real history passes the target's history checks and structural rules."""
    api = path.parent.name
    provider = _PROVIDERS[api]
    request = decode_request(load_json(path), api, path=request_path(api), provider=provider)
    sanitized = sanitize_messages_for_target(request.messages, provider, request.model, api=api)
    assert validate_history_for_target(sanitized, provider, request.model, api=api) == []
    body = encode_request(request, api, provider=provider).body
    assert validate_request_body(body, api) == []


# ---------------------------------------------------------------------------
# Bad bodies


@pytest.mark.parametrize("path", BODIES, ids=body_id)
def test_a_damaged_body_raises_only_value_error(path: Any) -> None:
    """Any field of a real body replaced by a value of another type: the
    body decodes (and encodes), or ``ValueError`` names what is wrong; no
    other exception escapes. Seeded per file: the same cases every run."""
    api, body = path.parent.name, load_json(path)
    rng = random.Random(body_id(path))
    for _ in range(25):
        damaged = copy.deepcopy(body)
        for _ in range(rng.randint(1, 3)):
            set_at(damaged, rng.choice(leaves(damaged)), copy.deepcopy(rng.choice(JUNK)))
        try:
            request = decode_request(damaged, api, path=request_path(api))
            encode_request(request, api, sanitize=False)
        except ValueError as error:
            # "<field>: <what is wrong>", the field spelled as in the body.
            assert re.match(r"^[A-Za-z_][\w.\[\]]*: ", str(error)), str(error)
