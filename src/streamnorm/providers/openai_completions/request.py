"""``openai-completions`` request bodies ↔ canonical requests (requests.md §1–§9.3).

An assistant message becomes one canonical turn: its reasoning (the first of
the host fields that carry it, providers.md §3.1), text, refusal and tool
calls, in that order; the ``tool`` messages after it its results. Reasoning
goes back in the dialect of the host (requests.md §4.4): OpenRouter's
``reasoning`` + ``reasoning_details`` when the block is signed by them, else
``reasoning_content`` — never to OpenAI itself, which has no such field.
``reasoning_details`` entries whose data is an envelope (encoding.md §9)
restore the original block and its issuer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..._json import dumps_compact
from ...messages import (
    AssistantMessage,
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
from ...models.catalog import model_info
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
    arguments_text,
    data_url,
    deep_merge,
    embedded_json,
    extra_for,
    fail,
    inline_document,
    leading_system,
    named_results,
    parse_data_url,
    plan_warnings,
    provider_tools,
    standard_base64,
    system_content,
    tool_call,
)
from .decoder import REASONING_FIELDS
from .extra_content import google_extra, google_signature

__all__ = ["MEDIA", "decode_request", "encode_request", "validate_body"]

API = "openai-completions"

#: ``input_audio`` formats by media type, and the media type of each format.
AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/vnd.wave": "wav",
    "audio/mp3": "mp3",
    "audio/mpeg": "mp3",
}
_AUDIO_TYPES = {"wav": "audio/wav", "mp3": "audio/mp3"}

#: Images; PDF files (the only ``file`` parts Chat takes), WAV/MP3 audio, and
#: plain text (sent as a text part, as OpenAI's file guide says).
MEDIA = MediaTypes(
    ("image/",), ("application/pdf", "text/plain", *AUDIO_FORMATS), image_detail=True
)

#: Hosts that take ``max_completion_tokens`` and no reasoning replay fields.
OPENAI_HOSTS = frozenset(("openai", "azure"))


# ---------------------------------------------------------------------------
# Encoding


def _part(block: UserContent) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ImageBlock):
        url = data_url(block.mime_type, block.data) if block.data is not None else block.url
        image: dict[str, Any] = {"url": url}
        if block.detail is not None:
            image["detail"] = block.detail
        return {"type": "image_url", "image_url": image}
    audio = AUDIO_FORMATS.get(block.mime_type.lower()) if isinstance(block, DocumentBlock) else None
    if isinstance(block, DocumentBlock) and audio is not None and block.data is not None:
        data = standard_base64(block.data)
        return {"type": "input_audio", "input_audio": {"data": data, "format": audio}}
    if isinstance(block, DocumentBlock) and block.mime_type.lower() == "text/plain" and block.data:
        return {"type": "text", "text": f"[{block.name or 'document'}]\n{block.data}"}
    if isinstance(block, DocumentBlock):
        file: dict[str, Any] = {}
        if block.file_id is not None:
            file["file_id"] = block.file_id
        elif block.data is not None:
            file["file_data"] = data_url(block.mime_type, block.data)
        else:
            # A file part takes data or a file id, not a URL: the URL as text.
            return {"type": "text", "text": f"[{block.name or 'document'}: {block.url}]"}
        if block.name is not None:
            file["filename"] = block.name
        return {"type": "file", "file": file}
    return dict(block.data) if block.api == API else None


def _content(content: str | tuple[UserContent, ...]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    return [p for p in map(_part, content) if p is not None]


def _reasoning_fields(
    thinking: list[ThinkingBlock], provider: str | None, out: dict[str, Any]
) -> None:
    text = "".join(b.thinking for b in thinking if not b.redacted)
    details: list[Any] = []
    for block in thinking:
        value = embedded_json(block.signature)
        if isinstance(value, list):
            details.extend(value)
    if details:
        out["reasoning"] = text
        out["reasoning_details"] = details
    elif text and (provider or "").lower() not in OPENAI_HOSTS:
        out["reasoning_content"] = text


def _assistant(m: AssistantMessage, provider: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"role": "assistant"}
    text = "".join(b.text for b in m.content if isinstance(b, TextBlock) and not b.refusal)
    refusal = "".join(b.text for b in m.content if isinstance(b, TextBlock) and b.refusal)
    calls = [b for b in m.content if isinstance(b, ToolCallBlock)]
    out["content"] = text if text or not calls else None
    if refusal:
        out["refusal"] = refusal
    thinking = [b for b in m.content if isinstance(b, ThinkingBlock)]
    if thinking:
        _reasoning_fields(thinking, provider, out)
    if calls:
        out["tool_calls"] = [_call(c) for c in calls]
    if text:
        _text_signature(m, out)
    for block in m.content:
        if isinstance(block, ProviderBlock) and block.api == API and block.kind != "executed_tools":
            out.update(block.data)  # a message field kept verbatim (executed_tools is output-only)
    return out


def _text_signature(m: AssistantMessage, out: dict[str, Any]) -> None:
    """The signature of the message's text (Chat has one text per message:
    the last signed block's), where Google's endpoint put it."""
    signed = [b.signature for b in m.content if isinstance(b, TextBlock) and b.signature]
    if signed:
        out["extra_content"] = google_extra(signed[-1])


def _call(c: ToolCallBlock) -> dict[str, Any]:
    """One tool call; its signature (only ever the target's own, after
    sanitize) goes back where Google's endpoint put it."""
    out: dict[str, Any] = {
        "id": c.id,
        "type": "function",
        "function": {"name": c.name, "arguments": arguments_text(c)},
    }
    if c.signature:
        out["extra_content"] = google_extra(c.signature)
    return out


def _tool_message(m: ToolResultMessage) -> tuple[dict[str, Any], list[UserContent]]:
    """The ``tool`` message, and the images it cannot hold (they go into a
    user message after the results, requests.md §4.2)."""
    if isinstance(m.content, str):
        content: Any = f"Error: {m.content}" if m.is_error else m.content
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": content}, []
    texts = [b for b in m.content if isinstance(b, TextBlock)]
    moved: list[UserContent] = [b for b in m.content if not isinstance(b, TextBlock)]
    parts = [{"type": "text", "text": b.text} for b in texts]
    return {"role": "tool", "tool_call_id": m.tool_call_id, "content": parts}, moved


def _system(role: str, system: str | tuple[TextBlock, ...]) -> dict[str, Any]:
    content: Any = (
        system if isinstance(system, str) else [{"type": "text", "text": b.text} for b in system]
    )
    return {"role": role, "content": content}


def _role(role: str | None, provider: str | None) -> str:
    """A system message's role: ``developer`` for OpenAI's own hosts only
    (many compatible servers know ``system`` alone)."""
    openai = (provider or "openai").lower() in OPENAI_HOSTS
    return "developer" if role == "developer" and openai else "system"


def _messages(request: Request, messages: list[Message], provider: str | None) -> list[Any]:
    out: list[dict[str, Any]] = []
    if request.system is not None:
        out.append(_system(_role(request.system_role, provider), request.system))
    moved: list[UserContent] = []
    for m in messages:
        if not isinstance(m, ToolResultMessage) and moved:
            out.append({"role": "user", "content": _moved(moved)})
            moved = []
        if isinstance(m, UserMessage):
            out.append({"role": "user", "content": _content(m.content)})
        elif isinstance(m, SystemMessage):
            out.append(_system(_role(m.role, provider), m.content))
        elif isinstance(m, ToolResultMessage):
            message, images = _tool_message(m)
            out.append(message)
            moved.extend(images)
        else:
            out.append(_assistant(m, provider))
    if moved:
        out.append({"role": "user", "content": _moved(moved)})
    return out


def _moved(blocks: list[UserContent]) -> list[dict[str, Any]]:
    intro = {"type": "text", "text": "Attached image(s) from tool result:"}
    return [intro, *(p for p in map(_part, blocks) if p is not None)]


def _tool(tool: Tool | ProviderTool) -> dict[str, Any]:
    if isinstance(tool, ProviderTool):
        return dict(tool.data)
    function: dict[str, Any] = {"name": tool.name}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = dict(tool.parameters)
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": deep_merge(function, extra_for(tool.extra, API))}


def _format(fmt: ResponseFormat) -> dict[str, Any]:
    if fmt.type != "json_schema":
        return {"type": fmt.type}
    schema: dict[str, Any] = {"name": fmt.name or "output", "schema": dict(fmt.schema or {})}
    if fmt.strict is not None:
        schema["strict"] = fmt.strict
    if fmt.description is not None:
        schema["description"] = fmt.description
    return {"type": "json_schema", "json_schema": schema}


def _options(
    request: Request, provider: str | None, extra: dict[str, Any], plan: ReasoningPlan | None
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    max_tokens = plan.max_tokens if plan is not None else request.max_tokens
    if max_tokens is not None:
        # A legacy ``max_tokens`` the client sent (kept in extra) names the
        # field; else OpenAI's own name for OpenAI, the legacy one elsewhere.
        legacy = "max_tokens" in extra or (provider or "openai").lower() not in OPENAI_HOSTS
        extra.pop("max_tokens", None)
        body["max_tokens" if legacy else "max_completion_tokens"] = max_tokens
    for key, value in (("temperature", request.temperature), ("top_p", request.top_p)):
        if value is not None:
            body[key] = value
    if request.stop:
        body["stop"] = list(request.stop)
    if plan is not None:
        effort = plan.effort_level()
        if effort is not None:
            body["reasoning_effort"] = effort
    if request.response_format is not None:
        body["response_format"] = _format(request.response_format)
    if request.metadata is not None:
        body["metadata"] = dict(request.metadata)
    if request.stream:
        body["stream"] = True
        if "stream_options" not in extra:
            body["stream_options"] = {"include_usage": True}
    return body


def encode_request(
    request: Request, messages: list[Message], provider: str | None = None
) -> WireRequest:
    """The Chat Completions request for ``request`` (``messages`` already
    sanitized); ``provider`` picks the host dialect (token limit name,
    reasoning replay field)."""
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    body["messages"] = _messages(request, messages, provider)
    tools = provider_tools(request.tools, API)
    if tools:
        body["tools"] = [_tool(t) for t in tools]
    choice = request.tool_choice
    if choice is not None:
        body["tool_choice"] = (
            choice
            if choice in TOOL_CHOICE_MODES
            else {"type": "function", "function": {"name": choice}}
        )
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    extra = extra_for(request.extra, API)
    plan = None
    if request.reasoning is not None:
        info = model_info(request.model, provider)
        plan = plan_reasoning(request.reasoning, request.max_tokens, info)
    body.update(_options(request, provider, extra, plan))
    deep_merge(body, extra)
    headers = {"content-type": "application/json"}
    warnings = plan_warnings(plan)
    return WireRequest("POST", "/v1/chat/completions", headers, body, warnings)


# ---------------------------------------------------------------------------
# Decoding


def _canonical_part(part: dict[str, Any], where: str) -> UserContent | None:
    kind = part.get("type")
    if kind == "text":
        text = part.get("text")
        if not isinstance(text, str):
            raise fail(f"{where}.text", "a string", text)
        return TextBlock(text)
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else None
        if not isinstance(url, str):
            raise fail(f"{where}.image_url.url", "a string", url)
        detail = image.get("detail") if isinstance(image, dict) else None
        if not isinstance(detail, str | None):
            raise fail(f"{where}.image_url.detail", "a string", detail)
        inline = parse_data_url(url)
        mime, data = inline if inline else ("", None)
        return ImageBlock(mime, data, None if inline else url, detail=detail)
    if kind == "input_audio" and isinstance(part.get("input_audio"), dict):
        data, audio = part["input_audio"].get("data"), part["input_audio"].get("format")
        if isinstance(data, str) and audio in _AUDIO_TYPES:
            return DocumentBlock(_AUDIO_TYPES[audio], data)
        return None
    if kind == "file" and isinstance(part.get("file"), dict):
        file = part["file"]
        inline = (
            parse_data_url(file["file_data"]) if isinstance(file.get("file_data"), str) else None
        )
        name = file.get("filename")
        name = name if isinstance(name, str) else None
        if inline:
            return inline_document(inline[0], inline[1], None, file.get("file_id"), name)
        return DocumentBlock("", None, None, file.get("file_id"), name)
    return None


def _user_block(part: Any, where: str) -> UserContent:
    if not isinstance(part, dict):
        raise fail(where, "an object", part)
    canonical = _canonical_part(part, where)
    if canonical is not None and _part(canonical) == part:
        return canonical
    kind = part.get("type")
    return ProviderBlock(API, kind if isinstance(kind, str) else "unknown", part)


def _user_content(value: Any, where: str) -> str | tuple[UserContent, ...]:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise fail(where, "a string or an array", value)
    return tuple(_user_block(p, f"{where}[{i}]") for i, p in enumerate(value))


_PART_TEXT = {"text": "text", "refusal": "refusal"}


def _text_of(value: Any, where: str) -> tuple[str, str]:
    """Assistant ``content`` (a string, null, or text and refusal parts) as
    ``(text, refusal)``."""
    if value is None or isinstance(value, str):
        return value or "", ""
    if not isinstance(value, list):
        raise fail(where, "a string or text parts", value)
    found = {"text": "", "refusal": ""}
    for i, part in enumerate(value):
        kind = part.get("type") if isinstance(part, dict) else None
        field = _PART_TEXT.get(kind) if isinstance(kind, str) else None
        if field is None or not isinstance(part.get(field), str):
            raise fail(f"{where}[{i}]", "a text or refusal part", part)
        found[field] += part[field]
    return found["text"], found["refusal"]


def _thinking(turn: Turn, m: Fields) -> None:
    text = ""
    for name in REASONING_FIELDS:
        value = m.typed(name, str)
        text = text or (value or "")
    details = m.typed("reasoning_details", list)
    if details is None:
        if text:
            turn.add(ThinkingBlock(text))
        return
    kept: list[Any] = []
    for entry in details:
        envelope = turn.opened(entry.get("data")) if isinstance(entry, dict) else None
        if envelope is None:
            kept.append(entry)
        elif not turn.carrier(envelope):
            signature = envelope.signature if isinstance(envelope.signature, str) else None
            redacted = envelope.kind == "redacted"
            turn.add(ThinkingBlock("" if redacted else text, signature, redacted))
            text = ""
    if kept or text:
        turn.add(ThinkingBlock(text, dumps_compact(kept) if kept else None))


def _calls(turn: Turn, value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise fail(where, "an array", value)
    for i, raw in enumerate(value):
        call = Fields(raw, f"{where}[{i}]")
        function = call.obj("function")
        if function is None:
            raise fail(call.at("function"), "an object", None)
        call_id = call.typed("id", str) or ""
        name = function.typed("name", str, required=True)
        assert name is not None
        signature = google_signature(raw)
        arguments = function.pop("arguments")
        turn.add(tool_call(call_id, name, arguments, function.at("arguments"), signature))


def _assistant_message(
    raw: Fields, where: str, model: str | None, provider: str | None
) -> AssistantMessage | None:
    turn = Turn(API, model, provider)
    _thinking(turn, raw)
    text, refusal = _text_of(raw.pop("content"), f"{where}.content")
    signature = google_signature({"extra_content": raw.peek("extra_content")}) if text else None
    if signature is not None:
        raw.pop("extra_content")
    if text:
        turn.add(TextBlock(text, signature))
    refusal += raw.typed("refusal", str) or ""
    if refusal:
        turn.add(TextBlock(refusal, refusal=True))
    calls = raw.pop("tool_calls")
    if calls is not None:
        _calls(turn, calls, f"{where}.tool_calls")
    rest = raw.rest()
    if rest:
        turn.add(ProviderBlock(API, "message_fields", rest))
    return turn.message()


def _decode_messages(
    value: Any, model: str | None, provider: str | None
) -> tuple[list[Message], tuple[Any, str | None]]:
    if not isinstance(value, list):
        raise fail("messages", "an array", value)
    out: list[Message] = []
    leading: list[tuple[str | None, str | tuple[TextBlock, ...]]] = []
    for i, raw in enumerate(value):
        where = f"messages[{i}]"
        m = Fields(raw, where)
        role = m.pop("role")
        if role in ("system", "developer"):
            system = _system_content(m.pop("content"), f"{where}.content")
            if out:
                out.append(SystemMessage(system, role))
            else:  # before the first turn: part of the system prompt
                leading.append((None if role == "system" else role, system))
        elif role == "user":
            out.append(UserMessage(_user_content(m.pop("content"), f"{where}.content")))
        elif role == "assistant":
            message = _assistant_message(m, where, model, provider)
            if message is not None:
                out.append(message)
        elif role == "tool":
            call_id = m.typed("tool_call_id", str, required=True)
            name = m.typed("name", str) or ""
            assert call_id is not None
            content = _user_content(m.pop("content"), f"{where}.content")
            out.append(ToolResultMessage(call_id, name, content))
        else:
            raise fail(
                f"{where}.role", '"system", "developer", "user", "assistant" or "tool"', role
            )
    return named_results(out), leading_system(leading)


def _system_content(value: Any, where: str) -> str | tuple[TextBlock, ...]:
    return system_content(_user_content(value, where), where, value)


def _decode_tool(raw: Any, where: str) -> Tool | ProviderTool:
    tool = Fields(raw, where)
    if tool.peek("type") != "function" or set(raw) != {"type", "function"}:
        return ProviderTool(API, raw)
    function = tool.obj("function")
    if function is None:
        raise fail(tool.at("function"), "an object", None)
    name = function.typed("name", str, required=True)
    description = function.typed("description", str) or ""
    parameters = function.typed("parameters", dict) or {"type": "object", "properties": {}}
    strict = function.typed("strict", bool)
    rest = function.rest()
    assert name is not None
    return Tool(name, description, parameters, strict, extra={API: rest} if rest else None)


def _decode_choice(body: Fields) -> str | None:
    raw = body.peek("tool_choice")
    if raw in TOOL_CHOICE_MODES:
        body.pop("tool_choice")
        return str(raw)
    function = raw.get("function") if isinstance(raw, dict) else None
    if (
        isinstance(raw, dict)
        and set(raw) == {"type", "function"}
        and isinstance(function, dict)
        and set(function) == {"name"}
    ):
        body.pop("tool_choice")
        return str(function["name"])
    return None


def _decode_format(body: Fields) -> ResponseFormat | None:
    fmt = body.obj("response_format")
    if fmt is None:
        return None
    kind = fmt.typed("type", str, required=True)
    out = ResponseFormat(str(kind))
    if kind == "json_schema":
        schema = fmt.obj("json_schema")
        if schema is None:
            raise fail("response_format.json_schema", "an object", None)
        out = ResponseFormat(
            "json_schema",
            schema.typed("schema", dict),
            schema.typed("name", str),
            schema.typed("description", str),
            schema.typed("strict", bool),
        )
        fmt.put_back("json_schema", schema)
    body.put_back("response_format", fmt)
    return out


def _stop(body: Fields) -> tuple[str, ...]:
    stop = body.peek("stop")
    if isinstance(stop, list) and all(isinstance(s, str) for s in stop):
        body.pop("stop")
        return tuple(stop)
    return ()  # a single string (or nothing) stays as it was


def decode_request(
    body: Mapping[str, Any], *, path: str | None = None, provider: str | None = None
) -> Request:
    """A Chat Completions request body as a canonical request."""
    del path
    fields = Fields(body, "")
    model = fields.typed("model", str)
    messages, (system, system_role) = _decode_messages(fields.pop("messages"), model, provider)
    tools_raw = fields.typed("tools", list) or []
    max_tokens = fields.typed("max_completion_tokens", int)
    if max_tokens is None and isinstance(fields.peek("max_tokens"), int):
        max_tokens = fields.peek("max_tokens")  # kept in extra: the spelling to send back
    effort = fields.typed("reasoning_effort", str)
    request = Request(
        model=model,
        messages=tuple(messages),
        system=system,
        system_role=system_role,
        tools=tuple(_decode_tool(t, f"tools[{i}]") for i, t in enumerate(tools_raw)),
        tool_choice=_decode_choice(fields),
        parallel_tool_calls=fields.typed("parallel_tool_calls", bool),
        max_tokens=max_tokens,
        temperature=fields.typed("temperature", float),
        top_p=fields.typed("top_p", float),
        stop=_stop(fields),
        reasoning=Reasoning(effort=effort) if effort is not None else None,
        response_format=_decode_format(fields),
        metadata=fields.typed("metadata", dict),
        stream=fields.typed("stream", bool) or False,
    )
    rest = fields.rest()
    return replace(request, extra={API: rest}) if rest else request


# ---------------------------------------------------------------------------
# Structural validation (requests.md §9.3)


def validate_body(body: Mapping[str, Any]) -> list[str]:
    """Problems Chat Completions would reject in an encoded body: an
    assistant message with ``tool_calls`` not followed by a ``tool`` message
    for each call, a ``tool`` message that answers no such call, empty call
    ids, ``content`` null without tool calls, ``stream_options`` without
    ``stream``."""
    problems: list[str] = []
    if "stream_options" in body and body.get("stream") is not True:
        problems.append("stream_options: only valid with stream")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*problems, "messages: empty or missing"]
    pending: set[str] = set()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role == "tool":
            if m.get("tool_call_id") not in pending:
                problems.append(f"messages[{i}]: tool message answers no pending call")
            pending.discard(m.get("tool_call_id"))
            continue
        if pending:
            problems.append(f"messages[{i}]: calls {sorted(pending)} have no tool message")
            pending = set()
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if m.get("content") is None and not calls:
                problems.append(f"messages[{i}]: content null without tool_calls")
            for call in calls:
                if not call.get("id"):
                    problems.append(f"messages[{i}]: a tool call without an id")
                pending.add(call.get("id"))
    if pending:
        problems.append(f"calls {sorted(pending)} have no tool message")
    return problems
