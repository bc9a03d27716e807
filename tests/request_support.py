"""Helpers for the request-codec tests: the recorded request and response
bodies, the official SDKs as validators of request bodies, and the SDK
clients sending a body through a mock transport."""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import httpx
from pydantic import TypeAdapter

from .support import FIXTURES

REQUESTS = FIXTURES / "requests"
RESPONSES = FIXTURES / "responses"
APIS = ("anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai")


def json_files(root: Path, api: str | None = None) -> list[Path]:
    """Every ``.json`` body under ``root`` (of one api), sorted; [] when absent."""
    if not root.is_dir():
        return []
    apis = [api] if api else list(APIS)
    return sorted(p for a in apis for p in (root / a).glob("*.json"))


def body_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


#: The URL path a Gemini body was sent to holds its model; the recorded
#: bodies come without it.
GEMINI_PATH = "/v1beta/models/gemini-recorded:streamGenerateContent?alt=sse"


def request_path(api: str) -> str | None:
    """The path to decode a recorded request body of ``api`` with."""
    return GEMINI_PATH if api == "google-generative-ai" else None


def load_json(path: Path) -> dict[str, Any]:
    value = json.loads(path.read_text())
    assert isinstance(value, dict)
    return value


# ---------------------------------------------------------------------------
# SDK request types as validators


def force(value: Any) -> Any:
    """Run every lazy ``Iterable`` validator pydantic left in ``value``: a
    TypedDict ``Iterable[...]`` field is validated only when iterated, so a
    check that never iterates accepts any role or block."""
    if isinstance(value, dict):
        return {k: force(v) for k, v in value.items()}
    if isinstance(value, (str, bytes, int, float, bool)) or value is None:
        return value
    if isinstance(value, Iterable):
        return [force(v) for v in value]
    return value


def dropped(sent: Any, kept: Any, path: str = "") -> list[str]:
    """Paths of the fields of ``sent`` that validation dropped: the fields
    the SDK's types do not know (TypedDict validation ignores extra keys)."""
    if isinstance(sent, dict) and isinstance(kept, dict):
        out = [f"{path}.{k}".lstrip(".") for k in sent if k not in kept]
        for k in sent:
            if k in kept:
                out.extend(dropped(sent[k], kept[k], f"{path}.{k}"))
        return out
    if isinstance(sent, list) and isinstance(kept, list) and len(sent) == len(kept):
        return [
            p
            for i, (a, b) in enumerate(zip(sent, kept, strict=True))
            for p in dropped(a, b, f"{path}[{i}]")
        ]
    return []


def _adapters() -> dict[str, Callable[[Any], Any]]:
    from anthropic.types.message_create_params import MessageCreateParamsStreaming
    from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
    from openai.types.responses.response_create_params import ResponseCreateParamsStreaming

    adapters: dict[str, TypeAdapter[Any]] = {
        "anthropic-messages": TypeAdapter(MessageCreateParamsStreaming),
        "openai-completions": TypeAdapter(CompletionCreateParamsStreaming),
        "openai-responses": TypeAdapter(ResponseCreateParamsStreaming),
    }
    return {api: adapter.validate_python for api, adapter in adapters.items()}


_VALIDATE: dict[str, Callable[[Any], Any]] = {}


def sdk_validate(api: str, body: Mapping[str, Any]) -> list[str]:
    """Validate a streaming request body against the SDK's own request type
    (every lazy field forced); raises ``pydantic.ValidationError`` when it
    does not fit. Returns the paths the types do not know. Gemini bodies are
    checked by :func:`genai_config` instead."""
    if not _VALIDATE:
        _VALIDATE.update(_adapters())
    streaming = {**body, "stream": True}
    if api == "openai-completions":
        streaming.setdefault("stream_options", {"include_usage": True})
    kept = force(_VALIDATE[api](streaming))
    return dropped(streaming, kept)


# ---------------------------------------------------------------------------
# google-genai: contents and config built by its own models


_CONFIG_FIELDS = (
    "systemInstruction",
    "tools",
    "toolConfig",
    "safetySettings",
    "cachedContent",
    "labels",
)


def genai_request(body: Mapping[str, Any]) -> tuple[list[Any], Any]:
    """``(contents, config)`` as google-genai's ``Content`` and
    ``GenerateContentConfig`` models read them from a body."""
    from google.genai import types

    contents = [types.Content.model_validate(c) for c in body.get("contents", [])]
    config: dict[str, Any] = dict(body.get("generationConfig") or {})
    config.update({k: body[k] for k in _CONFIG_FIELDS if k in body})
    return contents, types.GenerateContentConfig.model_validate(config)


# ---------------------------------------------------------------------------
# The SDK clients through a mock transport


class Captured:
    """A mock transport that records the JSON body of every request and
    answers with ``status`` and ``reply``. ``http`` is the HTTP package the
    SDK uses (anthropic 2.x uses ``httpx2``, the others ``httpx``)."""

    def __init__(self, status: int, reply: Any, http: Any = httpx) -> None:
        self.bodies: list[Any] = []
        self.urls: list[str] = []
        self.status, self.reply, self.http = status, reply, http

    def __call__(self, request: Any) -> Any:
        self.bodies.append(json.loads(request.content))
        self.urls.append(str(request.url))
        return self.http.Response(self.status, json=self.reply)

    def client(self) -> Any:
        return self.http.Client(transport=self.http.MockTransport(self))


def _split(
    create: Callable[..., Any], body: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Keyword arguments the SDK method takes, and the rest (``extra_body``)."""
    names = set(inspect.signature(create).parameters) - {
        "extra_body",
        "extra_headers",
        "extra_query",
    }
    return {k: v for k, v in body.items() if k in names}, {
        k: v for k, v in body.items() if k not in names
    }


def _call(
    create: Callable[..., Any], body: Mapping[str, Any], errors: tuple[type[Exception], ...]
) -> None:
    kwargs, extra = _split(create, body)
    with contextlib.suppress(*errors):  # the mock answers 400 once the request is captured
        create(**kwargs, extra_body=extra or None)


def sdk_send(api: str, body: Mapping[str, Any]) -> Any:
    """The JSON body the official SDK sends for ``body`` (streaming or not)."""
    error = {"type": "error", "error": {"type": "invalid_request_error", "message": "mock"}}
    if api == "anthropic-messages":
        import anthropic
        import httpx2

        captured = Captured(400, error, httpx2)
        a = anthropic.Anthropic(api_key="test", http_client=captured.client(), max_retries=0)
        _call(a.messages.create, body, (anthropic.APIStatusError,))
    elif api in ("openai-completions", "openai-responses"):
        import openai

        captured = Captured(400, error)
        o = openai.OpenAI(api_key="test", http_client=captured.client(), max_retries=0)
        create = o.chat.completions.create if api == "openai-completions" else o.responses.create
        _call(create, body, (openai.APIStatusError,))
    else:
        return _genai_send(body)
    assert len(captured.bodies) == 1
    return captured.bodies[0]


#: Where the google-genai client below sends its next request.
_GENAI_CAPTURE: list[Captured] = []


@functools.cache
def _genai_client() -> Any:
    """One client for every send, its requests captured by the last
    ``Captured`` in ``_GENAI_CAPTURE``: building a google-genai client loads
    the CA bundle three times (60 ms), and the client keeps nothing from one
    request to the next."""
    from google import genai
    from google.genai import types

    transport = httpx.MockTransport(lambda request: _GENAI_CAPTURE[-1](request))
    options = types.HttpOptions(httpx_client=httpx.Client(transport=transport))
    return genai.Client(api_key="test", http_options=options)


def _genai_send(body: Mapping[str, Any]) -> Any:
    reply = {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}
        ]
    }
    captured = Captured(200, reply)
    _GENAI_CAPTURE[:] = [captured]
    contents, config = genai_request(body)
    _genai_client().models.generate_content(
        model="gemini-2.5-flash", contents=contents, config=config
    )
    assert len(captured.bodies) == 1
    return captured.bodies[0]


# ---------------------------------------------------------------------------
# Damaging bodies

#: Values of every JSON type, to put where another type belongs.
JUNK: tuple[Any, ...] = (None, 1, "x", [], {}, [1], {"a": 1}, True, 2.5)


def leaves(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The path of every field and element below ``value``."""
    out = [path] if path else []
    items: Any = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        out.extend(leaves(item, (*path, key)))
    return out


def set_at(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for key in path[:-1]:
        value = value[key]
    value[path[-1]] = new


# ---------------------------------------------------------------------------
# Gemini spellings

#: Structural snake_case keys that real Gemini clients send (google-genai
#: itself, llm-gemini); the API reads both spellings, the codec writes camelCase.
GEMINI_SNAKE = {
    "function_call": "functionCall",
    "function_response": "functionResponse",
    "include_thoughts": "includeThoughts",
    "thinking_level": "thinkingLevel",
    "response_mime_type": "responseMimeType",
    "response_schema": "responseSchema",
    "parameters_json_schema": "parametersJsonSchema",
    "mime_type": "mimeType",
    "file_uri": "fileUri",
}

#: Data the schema and argument objects hold (their keys are not structural).
_DATA_KEYS = frozenset(("args", "response", "parametersJsonSchema", "responseSchema", "properties"))


def camel(value: Any) -> Any:
    """``value`` with the structural snake_case keys in camelCase."""
    if isinstance(value, list):
        return [camel(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        key = GEMINI_SNAKE.get(key, key)
        out[key] = item if key in _DATA_KEYS else camel(item)
    return out


def _b64(value: str) -> str:
    """Thought signatures and inline data are proto bytes: google-genai
    re-encodes them in another base64 alphabet (the same bytes)."""
    return re.sub("=+$", "", value.replace("-", "+").replace("_", "/"))


def _upper_types(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_upper_types(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _upper_types(v) if k in ("items", "anyOf") else v for k, v in schema.items()}
    if isinstance(schema.get("type"), str):
        out["type"] = schema["type"].upper()
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _upper_types(v) for k, v in schema["properties"].items()}
    return out


def genai_view(body: dict[str, Any]) -> dict[str, Any]:
    """What google-genai changes on the way without changing meaning: it
    writes some structural keys in snake_case, leaves out an empty
    ``generationConfig``, re-encodes signature and inline data bytes, writes the type names
    of OpenAPI-form schemas (``parameters``, ``responseSchema``) in upper
    case and adds the response schema's property order as given."""
    out: dict[str, Any] = camel(body)
    if out.get("generationConfig") == {}:
        del out["generationConfig"]
    config = out.get("generationConfig") or {}
    if "responseSchema" in config:
        schema = config["responseSchema"] = _upper_types(config["responseSchema"])
        if schema.pop("property_ordering", None) not in (None, list(schema.get("properties", ()))):
            raise AssertionError("google-genai ordered the properties differently")
    for tool in out.get("tools", ()):
        for declaration in tool.get("functionDeclarations", ()):
            if "parameters" in declaration:
                declaration["parameters"] = _upper_types(declaration["parameters"])
    for content in out.get("contents", ()):
        for part in content.get("parts", ()):
            if "thoughtSignature" in part:
                part["thoughtSignature"] = _b64(part["thoughtSignature"])
            inline = part.get("inlineData")
            if isinstance(inline, dict) and isinstance(inline.get("data"), str):
                part["inlineData"] = {**inline, "data": _b64(inline["data"])}
    return out
