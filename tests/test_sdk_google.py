"""Differential test against the official ``google-genai`` SDK.

The same recorded bytes go through the SDK's own streaming path
(``client.models.generate_content_stream``) with an ``httpx.MockTransport``
in place of the network, and the chunks it yields are put together the way a
user of the SDK does it: text and thought parts concatenated, function calls
collected (their ``partialArgs`` assembled by JSON path), signatures, the last
usage metadata, the last finish reason. The result must agree with
streamnorm's final message. Where the SDK cannot read valid SSE, a named test
shows it.
"""

from __future__ import annotations

import base64
import functools
import re
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from streamnorm import (
    Done,
    Message,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from streamnorm.apis import ApiName
from streamnorm.integrations.sdk import iter_chunk_events
from streamnorm.sanitize import sanitize_messages_for_target, validate_history_for_target

from .support import fixture_id, fixture_paths, load, needs_fixtures, run_bytes, terminal

genai = pytest.importorskip("google.genai")
httpx = pytest.importorskip("httpx")
from google.genai import errors as genai_errors  # noqa: E402
from google.genai import types  # noqa: E402

API: ApiName = "google-generative-ai"
PATHS = fixture_paths(API)


#: The response body the clients below answer their next request with.
_REPLY = [b""]


def _respond(request: Any) -> Any:
    assert request.url.params.get("alt") == "sse"
    assert request.url.path.endswith(":streamGenerateContent")
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=_REPLY[0])


@functools.cache
def _client(vertex: bool) -> Any:
    """One client (of the Gemini API, or Vertex AI) for every read: building
    a google-genai client loads the CA bundle three times (60 ms), and the
    client keeps nothing from one request to the next."""
    options = types.HttpOptions(client_args={"transport": httpx.MockTransport(_respond)})
    if not vertex:
        return genai.Client(api_key="key", http_options=options)
    from google.oauth2.credentials import Credentials

    return genai.Client(
        vertexai=True,
        project="project",
        location="us-central1",
        # google-auth ships without type hints.
        credentials=Credentials(token="token"),  # type: ignore[no-untyped-call]
        http_options=options,
    )


def sdk_chunks(data: bytes, *, vertex: bool = False) -> list[Any]:
    """What ``generate_content_stream`` yields for a response body of ``data``."""
    _REPLY[0] = data
    client = _client(vertex)
    return list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))


_PATH_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _set(tree: dict[str, Any], json_path: str, value: Any, extend: bool) -> None:
    """Set ``value`` at a ``$.a[0].b`` path, as a user assembling
    ``partial_args`` would (strings for the same path concatenate)."""
    keys: list[str | int] = [
        name if name else int(index) for name, index in _PATH_SEGMENT.findall(json_path[1:])
    ]
    node: Any = tree
    for key, following in pairwise(keys):
        empty: Any = [] if isinstance(following, int) else {}
        if isinstance(node, list):
            assert isinstance(key, int)
            while len(node) <= key:
                node.append(None)
            if node[key] is None:
                node[key] = empty
            node = node[key]
        else:
            node = node.setdefault(key, empty)
    last = keys[-1]
    if isinstance(node, list):
        assert isinstance(last, int)
        while len(node) <= last:
            node.append(None)
        old = node[last]
    else:
        old = node.get(last)
    node[last] = old + value if extend and isinstance(old, str) else value


def assemble(chunks: list[Any]) -> dict[str, Any]:
    """The user's view of an SDK stream (candidate 0)."""
    text: list[str] = []
    thoughts: list[str] = []
    calls: list[dict[str, Any]] = []
    signatures: list[str] = []
    other: list[dict[str, Any]] = []
    finish, usage, grounding, url_context = None, None, None, None
    last_path: str | None = None
    for response in chunks:
        usage = response.usage_metadata or usage
        for candidate in response.candidates or []:
            if (candidate.index or 0) != 0:
                continue
            if candidate.finish_reason:
                finish = candidate.finish_reason.value
            if candidate.grounding_metadata and candidate.grounding_metadata.model_dump(
                exclude_none=True
            ):
                grounding = candidate.grounding_metadata
            if candidate.url_context_metadata:
                url_context = candidate.url_context_metadata
            for part in (candidate.content.parts if candidate.content else None) or []:
                if part.thought_signature:
                    signatures.append(base64.b64encode(part.thought_signature).decode())
                if part.text is not None:
                    (thoughts if part.thought else text).append(part.text)
                for kind in ("executable_code", "code_execution_result", "inline_data"):
                    if getattr(part, kind) is not None:
                        other.append(_wire(getattr(part, kind)))
                fc = part.function_call
                if fc is None:
                    continue
                if fc.name:
                    calls.append({"id": fc.id, "name": fc.name, "args": dict(fc.args or {})})
                    last_path = None
                for arg in fc.partial_args or []:
                    if arg.string_value is not None:
                        value: Any = arg.string_value
                    elif arg.number_value is not None:
                        value = arg.number_value
                    elif arg.bool_value is not None:
                        value = arg.bool_value
                    else:
                        value = None
                    _set(calls[-1]["args"], arg.json_path, value, arg.json_path == last_path)
                    last_path = arg.json_path
    return {
        "text": "".join(text),
        "thoughts": "".join(thoughts),
        "calls": calls,
        "signatures": signatures,
        "other_parts": other,
        "finish": finish,
        "usage": usage,
        "grounding": grounding,
        "url_context": url_context,
        "model": chunks[0].model_version if chunks else None,
        "response_id": chunks[0].response_id if chunks else None,
    }


def sdk_usage(meta: Any) -> Usage:
    """The SDK's ``usage_metadata`` mapped as providers.md §4.4 says."""
    cached = meta.cached_content_token_count or 0
    thoughts = meta.thoughts_token_count or 0
    prompt = (meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0)
    return Usage.of(
        input_tokens=max(prompt - cached, 0),
        output_tokens=(meta.candidates_token_count or 0) + thoughts,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


def _wire(model: Any) -> dict[str, Any]:
    return dict(model.model_dump(mode="json", by_alias=True, exclude_none=True))


def compare(name: str, data: bytes) -> None:
    sdk = assemble(sdk_chunks(data, vertex=name.startswith("vertex-")))
    end = terminal(run_bytes(data, API))
    assert isinstance(end, Done)
    msg = end.message
    content = msg.content

    assert sdk["text"] == "".join(b.text for b in content if isinstance(b, TextBlock))
    assert sdk["thoughts"] == "".join(b.thinking for b in content if isinstance(b, ThinkingBlock))
    calls = [b for b in content if isinstance(b, ToolCallBlock)]
    assert [c["name"] for c in sdk["calls"]] == [c.name for c in calls]
    assert [c["args"] for c in sdk["calls"]] == [dict(c.arguments) for c in calls]
    for want, got in zip(sdk["calls"], calls, strict=True):
        assert got.id == (want["id"] or got.id) and got.id.startswith(want["id"] or "call_")
    ours = [
        b.data.get("thoughtSignature") if isinstance(b, ProviderBlock) else b.signature
        for b in content
    ]
    assert sdk["signatures"] == [s for s in ours if s]
    assert sdk["finish"] == msg.raw_stop_reason
    assert sdk["usage"] is not None and sdk_usage(sdk["usage"]) == msg.usage
    assert (sdk["model"], sdk["response_id"]) == (msg.response_model, msg.response_id)
    metadata = {b.kind: b.data for b in content if isinstance(b, ProviderBlock)}
    assert sdk["other_parts"] == [
        b.data[b.kind]
        for b in content
        if isinstance(b, ProviderBlock)
        and b.kind not in ("groundingMetadata", "urlContextMetadata")
    ]
    if sdk["grounding"] is not None:
        assert _wire(sdk["grounding"]) == metadata["groundingMetadata"]
    else:
        assert "groundingMetadata" not in metadata
    if sdk["url_context"] is not None:
        assert _wire(sdk["url_context"]) == metadata["urlContextMetadata"]


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_agrees_with_google_genai(path: Path) -> None:
    compare(path.name, path.read_bytes())


@needs_fixtures
def test_agreement_count() -> None:
    agreed = 0
    for path in PATHS:
        compare(path.name, path.read_bytes())
        agreed += 1
    assert agreed == len(PATHS) == 20


# ---------------------------------------------------------------------------
# The chunk bridge over the SDK's own chunk objects

#: Usage fields the SDK's ``GenerateContentResponseUsageMetadata`` has:
#: others (``serviceTier``) are dropped by its parsing and cannot come back.
_SDK_USAGE_FIELDS = {
    f.alias or name for name, f in types.GenerateContentResponseUsageMetadata.model_fields.items()
}


def _as_the_sdk_keeps_it(event: dict[str, Any]) -> dict[str, Any]:
    usage = event["message"]["usage"]
    usage["raw"] = {k: v for k, v in (usage["raw"] or {}).items() if k in _SDK_USAGE_FIELDS}
    return event


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_chunk_bridge_equals_the_raw_bytes(path: Path) -> None:
    """``iter_chunk_events`` over what ``generate_content_stream`` yields gives
    the message read from the raw bytes: thought signatures byte for byte
    (pydantic writes ``bytes`` URL-safe; the wire is standard base64), and no
    ``null`` of an absent field read as a value."""
    data = path.read_bytes()
    bridged = terminal(list(iter_chunk_events(sdk_chunks(data), API)))
    ours = terminal(run_bytes(data, API))
    assert isinstance(bridged, Done) and isinstance(ours, Done)
    assert _as_the_sdk_keeps_it(bridged.to_dict()) == _as_the_sdk_keeps_it(ours.to_dict())


@needs_fixtures
def test_bridged_signatures_survive_sanitize_for_gemini_3() -> None:
    data = load(f"{API}/function-call-thought-signature.sse")
    bridged = terminal(list(iter_chunk_events(sdk_chunks(data), API))).message
    (call,) = bridged.tool_calls
    assert call.signature == terminal(run_bytes(data, API)).message.tool_calls[0].signature
    assert call.signature is not None and set("+/") & set(call.signature)
    result = ToolResultMessage(call.id, call.name, "x")
    for model in ("gemini-3-pro-preview", "gemini-2.5-flash"):
        turn = replace(bridged, model=model, provider="google")
        h: list[Message] = [UserMessage("hi"), turn, result]
        out = sanitize_messages_for_target(h, "google", model)
        assert out == h
        assert validate_history_for_target(out, "google", model) == []


# ---------------------------------------------------------------------------
# Where the SDK is wrong


@needs_fixtures
def test_sdk_bug_rejects_data_without_space() -> None:
    """googleapis/python-genai #2584: ``data:`` without the optional space is
    valid SSE (WHATWG: one leading space is removed *if present*); the SDK only
    strips ``"data: "`` and fails on the rest. streamnorm reads it."""
    data = load(f"{API}/text-basic.sse")
    squeezed = data.replace(b"data: ", b"data:")
    assert squeezed != data
    with pytest.raises(genai_errors.UnknownApiResponseError):
        sdk_chunks(squeezed)
    ours = terminal(run_bytes(squeezed, API))
    assert ours.to_dict() == terminal(run_bytes(data, API)).to_dict()
    assert (
        ours.message.text
        == assemble(sdk_chunks(data))["text"]
        == "The capital of France is Paris.\n"
    )
