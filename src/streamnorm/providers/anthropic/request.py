"""``anthropic-messages`` request bodies ↔ canonical requests (requests.md §1–§9.1).

Decoding maps what the canonical model covers and leaves the rest in
``Request.extra``; a block whose canonical form would not re-encode to the
same JSON (an image from a file id, a text block with citations in a user
turn, server tool blocks) is kept as a ``ProviderBlock`` and replayed
verbatim. Signatures and redacted data that are envelopes (encoding.md §9)
restore the original block and its issuer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

from ...envelope import Envelope
from ...messages import (
    AssistantMessage,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    ProviderBlock,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from ...models.catalog import default_max_tokens, model_info
from ...models.reasoning import ReasoningPlan, plan_reasoning
from ...request import (
    TOOL_CHOICE_MODES,
    ProviderTool,
    Reasoning,
    Request,
    ResponseFormat,
    Tool,
    WireRequest,
)
from ..codecbase import (
    Fields,
    MediaTypes,
    Turn,
    deep_merge,
    extra_for,
    fail,
    named_results,
    plan_warnings,
    provider_tools,
    standard_base64,
    system_content,
    system_note,
    tool_call,
)

__all__ = [
    "MEDIA",
    "WEB_FETCH_BETA",
    "decode_request",
    "encode_request",
    "server_tool",
    "server_tool_spec",
    "validate_body",
]

API = "anthropic-messages"
VERSION = "2023-06-01"

#: Image sources and document blocks the API takes (plain text as a text source).
MEDIA = MediaTypes(
    ("image/jpeg", "image/png", "image/gif", "image/webp"), ("application/pdf", "text/plain")
)

_CHOICES = {"auto": "auto", "none": "none", "any": "required"}
_CHOICES_BACK = {v: k for k, v in _CHOICES.items()}


# ---------------------------------------------------------------------------
# Encoding


def _cache_control(cache: str | None) -> dict[str, Any] | None:
    if cache is None:
        return None
    return {"type": "ephemeral"} if cache == "ephemeral" else {"type": "ephemeral", "ttl": cache}


def _with_cache(part: dict[str, Any], cache: str | None) -> dict[str, Any]:
    control = _cache_control(cache)
    if control is not None:
        part["cache_control"] = control
    return part


def _user_part(block: UserContent) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return _with_cache({"type": "text", "text": block.text}, block.cache)
    if isinstance(block, ImageBlock):
        source: dict[str, Any] = (
            {"type": "base64", "media_type": block.mime_type, "data": standard_base64(block.data)}
            if block.data is not None
            else {"type": "url", "url": block.url}
        )
        return _with_cache({"type": "image", "source": source}, block.cache)
    if isinstance(block, DocumentBlock):
        return _with_cache(_document(block), block.cache)
    return dict(block.data) if block.api == API else None


def _document(block: DocumentBlock) -> dict[str, Any]:
    if block.file_id is not None:
        source: dict[str, Any] = {"type": "file", "file_id": block.file_id}
    elif block.url is not None:
        source = {"type": "url", "url": block.url}
    elif block.mime_type == "text/plain":
        source = {"type": "text", "media_type": "text/plain", "data": block.data or ""}
    else:
        data = standard_base64(block.data or "")
        source = {"type": "base64", "media_type": block.mime_type, "data": data}
    part: dict[str, Any] = {"type": "document", "source": source}
    if block.name:
        part["title"] = block.name
    return part


def _parts(content: str | tuple[UserContent, ...]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    return [p for p in map(_user_part, content) if p is not None]


def _result(m: ToolResultMessage) -> dict[str, Any]:
    part: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": m.tool_call_id,
        "content": _parts(m.content),
    }
    if m.is_error:
        part["is_error"] = True
    return _with_cache(part, m.cache)


def _assistant_part(block: ContentBlock) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        if not block.text:
            return None  # the API rejects empty text blocks
        part: dict[str, Any] = {"type": "text", "text": block.text}
        if block.citations:
            part["citations"] = list(block.citations)
        return _with_cache(part, block.cache)
    if isinstance(block, ThinkingBlock):
        if block.redacted:
            return {"type": "redacted_thinking", "data": block.signature or ""}
        part = {"type": "thinking", "thinking": block.thinking}
        if block.signature is not None:
            part["signature"] = block.signature
        return part
    if isinstance(block, ToolCallBlock):
        return _with_cache(
            {
                "type": "tool_use",
                "id": block.id,
                "name": block.name,
                "input": dict(block.arguments),
            },
            block.cache,
        )
    return dict(block.data) if block.api == API else None


def _messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Canonical messages as Anthropic turns: tool results go into the next
    user turn (results first), same-role neighbours are merged."""
    out: list[dict[str, Any]] = []

    def push(role: str, parts: str | list[dict[str, Any]]) -> None:
        if not parts:
            return
        if out and out[-1]["role"] == role:
            last = out[-1]
            if isinstance(last["content"], str):
                last["content"] = [{"type": "text", "text": last["content"]}]
            extra = [{"type": "text", "text": parts}] if isinstance(parts, str) else parts
            last["content"].extend(extra)
            return
        out.append({"role": role, "content": parts})

    for m in messages:
        if isinstance(m, UserMessage):
            push("user", _parts(m.content))
        elif isinstance(m, ToolResultMessage):
            push("user", [_result(m)])
        elif isinstance(m, SystemMessage):
            # Not every model or platform takes a system message here: a marked note.
            push("user", [{"type": "text", "text": system_note(m)}])
        else:
            push("assistant", [p for p in map(_assistant_part, m.content) if p is not None])
    return out


def _object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Anthropic takes only an object at the root: a schema without a type
    is given one; another root type has no object form (an empty one)."""
    kind = schema.get("type")
    if kind == "object":
        return dict(schema)
    if kind is None:
        return {"type": "object", **schema}
    return {"type": "object", "properties": {}}


def _tool(tool: Tool | ProviderTool) -> dict[str, Any]:
    if isinstance(tool, ProviderTool):
        return dict(tool.data)
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = _object_schema(tool.parameters)
    if tool.strict is not None:
        out["strict"] = tool.strict
    _with_cache(out, tool.cache)
    return deep_merge(out, extra_for(tool.extra, API))


#: Server tools by kind: the type each is written with, and the options carried.
_SERVER_TOOLS = {
    "web_search": (
        "web_search_20250305",
        ("allowed_domains", "blocked_domains", "user_location", "max_uses"),
    ),
    "web_fetch": ("web_fetch_20250910", ("allowed_domains", "blocked_domains", "max_uses")),
}
#: Option values that say nothing (Claude Code sends ``blocked_domains: []``).
_UNSET: tuple[Any, ...] = (None, [], {})
#: The beta a web fetch tool needs.
WEB_FETCH_BETA = "web-fetch-2025-09-10"


def server_tool_spec(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a server tool of this API does, in the neutral form of
    ``providers.server_tools`` (None: no other API has its like)."""
    kind = str(data.get("type", ""))
    for name, (_, options) in _SERVER_TOOLS.items():
        if kind.startswith(name + "_"):
            spec = {k: data[k] for k in options if data.get(k) not in _UNSET}
            lost = [
                k for k in data if k not in (*options, "type", "name") and data[k] not in _UNSET
            ]
            return {"kind": name, **spec, "lost": lost}
    return None


def server_tool(spec: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]] | None:
    """This API's server tool for a neutral spec, and the options it cannot
    carry (None: it has none of that kind)."""
    entry = _SERVER_TOOLS.get(spec["kind"])
    if entry is None:
        return None
    kind, options = entry
    tool: dict[str, Any] = {"type": kind, "name": spec["kind"]}
    tool.update((k, spec[k]) for k in options if k in spec)
    return tool, [k for k in spec if k not in (*options, "kind", "lost")]


def _server_betas(tools: list[dict[str, Any]]) -> dict[str, str]:
    """The ``anthropic-beta`` header the server tools of a body need."""
    if any(str(t.get("type", "")).startswith("web_fetch_") for t in tools):
        return {"anthropic-beta": WEB_FETCH_BETA}
    return {}


def _tool_choice(request: Request) -> dict[str, Any] | None:
    choice = request.tool_choice
    if choice is None and request.parallel_tool_calls is None:
        return None
    if choice is None or choice == "auto":
        out: dict[str, Any] = {"type": "auto"}
    elif choice in TOOL_CHOICE_MODES:
        out = {"type": _CHOICES_BACK[choice]}
    else:
        out = {"type": "tool", "name": choice}
    if request.parallel_tool_calls is not None and out["type"] != "none":
        out["disable_parallel_tool_use"] = not request.parallel_tool_calls
    return out


def _reasoning(plan: ReasoningPlan, summary: str | None, body: dict[str, Any]) -> None:
    """The plan (already fitted to the model, models/reasoning.py) in this
    api's spelling: a budget is manual thinking, an effort or the model's own
    choice adaptive thinking."""
    if plan.kind == "omit":
        return
    if plan.kind == "off":
        body["thinking"] = {"type": "disabled"}
    elif plan.kind == "budget":
        body["thinking"] = {"type": "enabled", "budget_tokens": plan.budget}
    else:
        body["thinking"] = {"type": "adaptive"}
        if plan.effort is not None:
            effort = "low" if plan.effort == "minimal" else plan.effort
            body.setdefault("output_config", {})["effort"] = effort
    if summary == "none":
        body["thinking"]["display"] = "omitted"


def _max_tokens_and_reasoning(
    request: Request, provider: str | None
) -> tuple[int, ReasoningPlan | None]:
    """``max_tokens`` (required: the request's, else the model's output
    limit capped, docs/models.md) and the reasoning plan for the model."""
    info = model_info(request.model, provider)
    max_tokens = request.max_tokens if request.max_tokens is not None else default_max_tokens(info)
    if request.reasoning is None:
        return max_tokens, None
    plan = plan_reasoning(request.reasoning, max_tokens, info)
    return plan.max_tokens or max_tokens, plan


def _system(system: str | tuple[TextBlock, ...]) -> str | list[dict[str, Any]]:
    if isinstance(system, str):
        return system
    return [_with_cache({"type": "text", "text": b.text}, b.cache) for b in system]


def encode_request(
    request: Request, messages: list[Message], provider: str | None = None
) -> WireRequest:
    """The Messages API request for ``request`` (``messages`` already sanitized)."""
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    body["max_tokens"], plan = _max_tokens_and_reasoning(request, provider)
    if request.system is not None:
        body["system"] = _system(request.system)
    body["messages"] = _messages(messages)
    tools = provider_tools(request.tools, API)
    if tools:
        body["tools"] = [_tool(t) for t in tools]
    choice = _tool_choice(request)
    if choice is not None:
        body["tool_choice"] = choice
    for key, value in (
        ("temperature", request.temperature),
        ("top_p", request.top_p),
        ("top_k", request.top_k),
    ):
        if value is not None:
            body[key] = value
    if request.stop:
        body["stop_sequences"] = list(request.stop)
    if plan is not None and request.reasoning is not None:
        _reasoning(plan, request.reasoning.summary, body)
    fmt = request.response_format
    if fmt is not None and fmt.type == "json_schema" and fmt.schema is not None:
        body.setdefault("output_config", {})["format"] = {
            "type": "json_schema",
            "schema": dict(fmt.schema),
        }
    if request.stream:
        body["stream"] = True
    deep_merge(body, extra_for(request.extra, API))
    _thinking_rules(body)
    headers = {"content-type": "application/json", "anthropic-version": VERSION}
    headers.update(_server_betas(body.get("tools", [])))
    return WireRequest("POST", "/v1/messages", headers, body, plan_warnings(plan))


def _thinking_rules(body: dict[str, Any]) -> None:
    """What the API refuses with thinking on (requests.md §6, §9.1 rule 2),
    settled the documented way: manual thinking with a forced tool choice
    lets the model choose (``auto``); a tool loop whose last assistant turn
    does not start with thinking (another issuer's thinking was dropped)
    is sent with thinking off."""
    thinking = body.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind not in ("enabled", "adaptive"):
        return
    choice = body.get("tool_choice")
    if kind == "enabled" and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        choice.pop("name", None)
        choice["type"] = "auto"
    if _loop_without_thinking(body["messages"]):
        del body["thinking"]
        config = body.get("output_config")
        if isinstance(config, dict):
            config.pop("effort", None)
            if not config:
                del body["output_config"]


def _loop_without_thinking(messages: list[dict[str, Any]]) -> bool:
    """Whether the history ends in a tool loop (its last user turn holds
    tool results) whose last assistant turn does not start with thinking."""
    if len(messages) < 2 or messages[-1]["role"] != "user":
        return False
    last_user, last_assistant = messages[-1]["content"], messages[-2]["content"]
    if not isinstance(last_user, list) or not any(
        b.get("type") == "tool_result" for b in last_user
    ):
        return False
    first = last_assistant[0] if isinstance(last_assistant, list) and last_assistant else {}
    return first.get("type") not in ("thinking", "redacted_thinking")


# ---------------------------------------------------------------------------
# Decoding


def _cache_of(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, dict) or value.get("type") != "ephemeral":
        raise fail(where, "an ephemeral cache_control", value)
    ttl = value.get("ttl")
    return ttl if isinstance(ttl, str) else "ephemeral"


def _canonical_part(part: dict[str, Any], where: str) -> UserContent | None:
    """The canonical form of a user part, None when it has none."""
    kind = part.get("type")
    cache = _cache_of(part.get("cache_control"), f"{where}.cache_control")
    if kind == "text":
        text = part.get("text")
        if not isinstance(text, str):
            raise fail(f"{where}.text", "a string", text)
        return TextBlock(text, cache=cache)
    source = part.get("source")
    if kind in ("image", "document") and not isinstance(source, dict):
        raise fail(f"{where}.source", "an object", source)
    if kind == "image":
        assert isinstance(source, dict)
        text = _source_strings(source, f"{where}.source")
        if source.get("type") == "base64":
            return ImageBlock(text("media_type") or "", text("data"), cache=cache)
        if source.get("type") == "url":
            return ImageBlock("", url=text("url"), cache=cache)
    if kind == "document":
        assert isinstance(source, dict)
        text = _source_strings(source, f"{where}.source")
        name = part.get("title")
        return DocumentBlock(
            text("media_type") or "",
            text("data"),
            text("url"),
            text("file_id"),
            name if isinstance(name, str) else None,
            cache,
        )
    return None


def _source_strings(source: dict[str, Any], where: str) -> Callable[[str], str | None]:
    """A reader of a media source's string fields: absent is None, anything
    but a string a ``ValueError`` naming the field."""

    def text(key: str) -> str | None:
        value = source.get(key)
        if value is not None and not isinstance(value, str):
            raise fail(f"{where}.{key}", "a string", value)
        return value

    return text


def _user_block(part: Any, where: str) -> UserContent:
    """A user part: canonical when that re-encodes to the same JSON, else
    kept verbatim (this api only)."""
    if not isinstance(part, dict):
        raise fail(where, "an object", part)
    canonical = _canonical_part(part, where)
    expected = {k: v for k, v in part.items() if v is not None}
    if canonical is not None and _user_part(canonical) == expected:
        return canonical
    kind = part.get("type")
    return ProviderBlock(API, kind if isinstance(kind, str) else "unknown", part)


def _content(value: Any, where: str) -> str | tuple[UserContent, ...]:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if not isinstance(value, list):
        raise fail(where, "a string or an array", value)
    return tuple(_user_block(p, f"{where}[{i}]") for i, p in enumerate(value))


def _tool_result(part: dict[str, Any], where: str) -> ToolResultMessage:
    call_id = part.get("tool_use_id")
    if not isinstance(call_id, str):
        raise fail(f"{where}.tool_use_id", "a string", call_id)
    return ToolResultMessage(
        call_id,
        "",
        _content(part.get("content"), f"{where}.content"),
        part.get("is_error") is True,
        _cache_of(part.get("cache_control"), f"{where}.cache_control"),
    )


def _user(content: Any, where: str) -> list[Message]:
    """A user turn: its tool results first, then a user message with the rest."""
    if isinstance(content, str):
        return [UserMessage(content)]
    if not isinstance(content, list):
        raise fail(where, "a string or an array", content)
    results: list[Message] = []
    parts: list[UserContent] = []
    for i, part in enumerate(content):
        at = f"{where}[{i}]"
        if isinstance(part, dict) and part.get("type") == "tool_result":
            results.append(_tool_result(part, at))
        else:
            parts.append(_user_block(part, at))
    if parts or not results:
        results.append(UserMessage(tuple(parts)))
    return results


def _opaque(turn: Turn, value: Any, block: ThinkingBlock) -> ThinkingBlock | None:
    """A thinking block whose signature or data may be an envelope: the
    original restored (None for a carrier, which only signs other blocks)."""
    envelope: Envelope | None = turn.opened(value)
    if envelope is None:
        return block
    if turn.carrier(envelope):
        return None
    signature = envelope.signature if isinstance(envelope.signature, str) else None
    if envelope.kind == "redacted":
        return ThinkingBlock("", signature, redacted=True)
    return ThinkingBlock(block.thinking, signature)


def _assistant_block(turn: Turn, part: Any, where: str) -> ContentBlock | None:
    if not isinstance(part, dict):
        raise fail(where, "an object", part)
    kind = part.get("type")
    if kind == "text" and set(part) <= {"type", "text", "citations", "cache_control"}:
        text = part.get("text")
        if not isinstance(text, str):
            raise fail(f"{where}.text", "a string", text)
        citations = part.get("citations") or []
        if not isinstance(citations, list):
            raise fail(f"{where}.citations", "an array", citations)
        cache = _cache_of(part.get("cache_control"), f"{where}.cache_control")
        return TextBlock(text, citations=tuple(citations), cache=cache)
    if kind == "thinking" and set(part) <= {"type", "thinking", "signature"}:
        signature = part.get("signature")
        thinking = ThinkingBlock(str(part.get("thinking") or ""), signature)
        return _opaque(turn, signature, thinking)
    if kind == "redacted_thinking" and set(part) <= {"type", "data"}:
        data = part.get("data")
        return _opaque(turn, data, ThinkingBlock("", data, redacted=True))
    if kind == "tool_use" and set(part) <= {"type", "id", "name", "input", "cache_control"}:
        call_id, name = part.get("id"), part.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise fail(f"{where}.id", "a string id and name", call_id)
        block = tool_call(call_id, name, part.get("input"), f"{where}.input")
        cache = _cache_of(part.get("cache_control"), f"{where}.cache_control")
        return replace(block, cache=cache) if cache else block
    return ProviderBlock(API, kind if isinstance(kind, str) else "unknown", part)


def _assistant(
    content: Any, where: str, model: str | None, provider: str | None
) -> AssistantMessage | None:
    turn = Turn(API, model, provider)
    if isinstance(content, str):
        turn.add(TextBlock(content))
    elif isinstance(content, list):
        for i, part in enumerate(content):
            block = _assistant_block(turn, part, f"{where}[{i}]")
            if block is not None:
                turn.add(block)
    else:
        raise fail(where, "a string or an array", content)
    return turn.message()


def _decode_messages(value: Any, model: str | None, provider: str | None) -> list[Message]:
    if not isinstance(value, list):
        raise fail("messages", "an array", value)
    out: list[Message] = []
    for i, raw in enumerate(value):
        m = Fields(raw, f"messages[{i}]")
        role = m.pop("role")
        content = m.pop("content")
        where = f"messages[{i}].content"
        if role == "user":
            out.extend(_user(content, where))
        elif role == "assistant":
            message = _assistant(content, where, model, provider)
            if message is not None:
                out.append(message)
        elif role == "system":  # a system message in the conversation (newer models)
            out.append(SystemMessage(system_content(_content(content, where), where, content)))
        else:
            raise fail(f"messages[{i}].role", '"user", "assistant" or "system"', role)
    return named_results(out)


def _decode_system(body: Fields) -> str | tuple[TextBlock, ...] | None:
    system = body.peek("system")
    if system is None or isinstance(system, str):
        body.pop("system")
        return system
    if not isinstance(system, list):
        raise fail("system", "a string or an array", system)
    blocks = []
    for i, raw in enumerate(system):
        if not (isinstance(raw, dict) and raw.get("type") == "text"):
            return None  # not text blocks only: kept verbatim in extra
        if not set(raw) <= {"type", "text", "cache_control"}:
            return None
        text = raw.get("text")
        if not isinstance(text, str):
            raise fail(f"system[{i}].text", "a string", text)
        blocks.append(TextBlock(text, cache=_cache_of(raw.get("cache_control"), f"system[{i}]")))
    body.pop("system")
    return tuple(blocks)


def _decode_tool(raw: Any, where: str) -> Tool | ProviderTool:
    tool = Fields(raw, where)
    kind = tool.peek("type")
    if kind not in (None, "custom") or not tool.has("input_schema"):
        return ProviderTool(API, raw)
    name = tool.typed("name", str, required=True)
    description = tool.typed("description", str) or ""
    schema = tool.typed("input_schema", dict, required=True)
    strict = tool.typed("strict", bool)
    cache = _cache_of(tool.pop("cache_control"), tool.at("cache_control"))
    rest = tool.rest()
    assert name is not None and schema is not None
    return Tool(name, description, schema, strict, cache, {API: rest} if rest else None)


def _decode_tool_choice(body: Fields) -> tuple[str | None, bool | None]:
    raw = body.peek("tool_choice")
    if raw is None:
        return None, None
    if not isinstance(raw, dict):
        raise fail("tool_choice", "an object", raw)
    kind = raw.get("type")
    if not set(raw) <= {"type", "name", "disable_parallel_tool_use"}:
        return None, None  # kept verbatim in extra
    disable = raw.get("disable_parallel_tool_use")
    parallel = None if not isinstance(disable, bool) else not disable
    if isinstance(kind, str) and kind in _CHOICES and "name" not in raw:
        body.pop("tool_choice")
        return _CHOICES[kind], parallel
    if kind == "tool" and isinstance(raw.get("name"), str):
        body.pop("tool_choice")
        return raw["name"], parallel
    raise fail("tool_choice.type", '"auto", "any", "none" or "tool" with a name', kind)


def _decode_reasoning(body: Fields) -> Reasoning | None:
    thinking = body.obj("thinking")
    if thinking is None:
        return None
    kind = thinking.pop("type")
    display = thinking.peek("display")
    # Thinking on shows its (summarised) text unless omitted: the canonical
    # "auto", so that another api's target is asked for visible thoughts.
    summary = None if kind == "disabled" else "auto"
    if display == "omitted":
        thinking.pop("display")
        summary = "none"
    if kind == "disabled":
        reasoning = Reasoning(enabled=False, summary=summary)
    elif kind == "enabled":
        budget = thinking.typed("budget_tokens", int, required=True)
        reasoning = Reasoning(budget_tokens=budget, summary=summary)
    elif kind == "adaptive":
        config = body.obj("output_config")
        effort = config.typed("effort", str) if config is not None else None
        body.put_back("output_config", config)
        reasoning = Reasoning(effort=effort, summary=summary)
    else:
        raise fail("thinking.type", '"enabled", "adaptive" or "disabled"', kind)
    body.put_back("thinking", thinking)
    return reasoning


def _decode_format(body: Fields) -> ResponseFormat | None:
    config = body.obj("output_config")
    if config is None:
        return None
    fmt = config.peek("format")
    out = None
    if isinstance(fmt, dict) and set(fmt) == {"type", "schema"} and fmt["type"] == "json_schema":
        config.pop("format")
        out = ResponseFormat("json_schema", fmt["schema"])
    body.put_back("output_config", config)
    return out


def decode_request(
    body: Mapping[str, Any], *, path: str | None = None, provider: str | None = None
) -> Request:
    """A Messages API request body as a canonical request. The model of a
    Vertex or Bedrock body (not in the body) comes from ``path``."""
    fields = Fields(body, "")
    model = fields.typed("model", str) or _model_from_path(path)
    messages = _decode_messages(fields.pop("messages"), model, provider)
    system = _decode_system(fields)
    tools_raw = fields.typed("tools", list) or []
    tools = tuple(_decode_tool(t, f"tools[{i}]") for i, t in enumerate(tools_raw))
    tool_choice, parallel = _decode_tool_choice(fields)
    reasoning = _decode_reasoning(fields)
    response_format = _decode_format(fields)
    stop = fields.typed("stop_sequences", list) or []
    request = Request(
        model=model,
        messages=tuple(messages),
        system=system,
        tools=tools,
        tool_choice=tool_choice,
        parallel_tool_calls=parallel,
        max_tokens=fields.typed("max_tokens", int),
        temperature=fields.typed("temperature", float),
        top_p=fields.typed("top_p", float),
        top_k=fields.typed("top_k", int),
        stop=tuple(str(s) for s in stop),
        reasoning=reasoning,
        response_format=response_format,
        stream=fields.typed("stream", bool) or False,
    )
    rest = fields.rest()
    return replace(request, extra={API: rest}) if rest else request


def _model_from_path(path: str | None) -> str | None:
    """``…/models/<model>:rawPredict`` (Vertex) or ``/model/<id>/invoke`` (Bedrock)."""
    if not path:
        return None
    path = path.split("?", 1)[0]
    if "/models/" in path:
        return path.rsplit("/models/", 1)[1].split(":", 1)[0] or None
    if path.startswith("/model/"):  # the id is URL-quoted (``…-v1%3A0``, ARNs)
        return unquote(path[len("/model/") :].split("/", 1)[0]) or None
    return None


# ---------------------------------------------------------------------------
# Structural validation (requests.md §9.1)


def validate_body(body: Mapping[str, Any]) -> list[str]:
    """Problems the Messages API would reject in an encoded body: roles
    alternate starting with a user turn; every ``tool_use`` is answered by a
    ``tool_result`` in the next message, results first; no assistant turn
    ends with thinking; no empty text blocks; a thinking-enabled tool loop's
    last assistant turn starts with thinking."""
    problems: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages: empty or missing"]
    if not isinstance(body.get("max_tokens"), int):
        problems.append("max_tokens: missing")
    previous: str | None = None
    for i, m in enumerate(messages):
        role, content = m.get("role"), m.get("content")
        if role == previous:
            problems.append(f"messages[{i}]: two {role} turns in a row")
        if i == 0 and role != "user":
            problems.append("messages[0]: the first turn is not a user turn")
        previous = role
        blocks = content if isinstance(content, list) else []
        problems.extend(_block_problems(i, role, blocks))
        calls = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        if calls:
            problems.extend(_answered(i, calls, messages))
    if isinstance(body.get("thinking"), dict) and body["thinking"].get("type") == "enabled":
        problems.extend(_thinking_first(messages))
    return problems


def _block_problems(i: int, role: Any, blocks: list[Any]) -> list[str]:
    problems = []
    for j, b in enumerate(blocks):
        if b.get("type") == "text" and not b.get("text"):
            problems.append(f"messages[{i}].content[{j}]: empty text block")
    if role == "assistant" and blocks and blocks[-1].get("type") == "thinking":
        problems.append(f"messages[{i}]: an assistant turn ends with thinking")
    return problems


def _answered(i: int, calls: list[Any], messages: list[Any]) -> list[str]:
    following = messages[i + 1]["content"] if i + 1 < len(messages) else None
    if not isinstance(following, list):
        return [f"messages[{i}]: tool_use without tool_result in the next message"]
    results = [b.get("tool_use_id") for b in following if b.get("type") == "tool_result"]
    problems = []
    if set(calls) - set(results):
        problems.append(
            f"messages[{i}]: tool_use ids {sorted(set(calls) - set(results))} unanswered"
        )
    kinds = [b.get("type") for b in following]
    if "tool_result" in kinds and kinds[: len(results)] != ["tool_result"] * len(results):
        problems.append(f"messages[{i + 1}]: tool_result blocks are not first")
    return problems


def _thinking_first(messages: list[Any]) -> list[str]:
    last = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    if last is None or not isinstance(last.get("content"), list) or not last["content"]:
        return []
    blocks = last["content"]
    if any(b.get("type") == "tool_use" for b in blocks) and blocks[0].get("type") not in (
        "thinking",
        "redacted_thinking",
    ):
        return ["the last assistant turn of a thinking tool loop does not start with thinking"]
    return []
