"""Bedrock ``Converse`` / ``ConverseStream`` request bodies (docs/bedrock.md).

The model is in the path (``/model/{modelId}/converse-stream``, from the host
table), never in the body. Content blocks are single-key unions (``text``,
``image``, ``document``, ``toolUse``, ``toolResult``, ``reasoningContent``);
tool results travel in user turns and roles alternate, so consecutive user
turns and results merge into one. What Converse does not carry as a field is
model-specific and goes into ``additionalModelRequestFields`` in the model
vendor's words: ``top_k`` and Anthropic's ``thinking`` budget.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import unquote

from ...hosts.table import HOSTS
from ...hosts.wire import operation_path
from ...messages import (
    AssistantMessage,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    UserContent,
    UserMessage,
)
from ...request import Reasoning, Request, ResponseFormat, Tool, WireRequest
from ...sanitize.report import SanitizeWarning
from ..codecbase import Fields, MediaTypes, Turn, deep_merge, extra_for, fail, provider_tools

__all__ = ["MEDIA", "decode_request", "encode_request", "validate_body"]

API = "bedrock-converse-stream"

MEDIA = MediaTypes(
    ("image/jpeg", "image/png", "image/gif", "image/webp"),
    (
        "application/pdf",
        "text/csv",
        "application/msword",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.ms-excel",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "text/html",
        "text/plain",
        "text/markdown",
    ),
)

#: Converse's ``format`` of each media type, and back.
_FORMATS = {
    "image/jpeg": "jpeg",
    "image/png": "png",
    "image/gif": "gif",
    "image/webp": "webp",
    "application/pdf": "pdf",
    "text/csv": "csv",
    "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html",
    "text/plain": "txt",
    "text/markdown": "md",
}
_IMAGE_TYPES = {v: k for k, v in _FORMATS.items() if k.startswith("image/")}
_DOC_TYPES = {v: k for k, v in _FORMATS.items() if not k.startswith("image/")}


# ---------------------------------------------------------------------------
# Encoding


def _media(block: ImageBlock | DocumentBlock, where: str) -> dict[str, Any]:
    if block.data is None:
        raise ValueError(f"{where}: Converse takes media as bytes; a URL or file id cannot go")
    source = {"bytes": block.data}
    fmt = _FORMATS[block.mime_type.lower()]
    if isinstance(block, ImageBlock):
        return {"image": {"format": fmt, "source": source}}
    return {"document": {"format": fmt, "name": block.name or "document", "source": source}}


def _user_part(block: UserContent, where: str) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"text": block.text}
    if isinstance(block, (ImageBlock, DocumentBlock)):
        return _media(block, where)
    raise ValueError(f"{where}: {type(block).__name__} cannot be sent to {API}")


def _parts(content: str | tuple[UserContent, ...], where: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    return [_user_part(b, f"{where}[{i}]") for i, b in enumerate(content)]


def _assistant_part(block: ContentBlock, where: str) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"text": block.text} if block.text else None
    if isinstance(block, ThinkingBlock):
        if block.redacted:
            return {"reasoningContent": {"redactedContent": block.signature or ""}}
        text: dict[str, Any] = {"text": block.thinking}
        if block.signature:
            text["signature"] = block.signature
        return {"reasoningContent": {"reasoningText": text}}
    if isinstance(block, ToolCallBlock):
        return {"toolUse": {"toolUseId": block.id, "name": block.name, "input": block.arguments}}
    raise ValueError(f"{where}: {type(block).__name__} cannot be sent to {API}")


def _result(message: ToolResultMessage, where: str) -> dict[str, Any]:
    result: dict[str, Any] = {
        "toolUseId": message.tool_call_id,
        "content": _parts(message.content, f"{where}.content") or [{"text": ""}],
    }
    if message.is_error:
        result["status"] = "error"
    return {"toolResult": result}


def _turns(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The system blocks (system messages before the first turn) and the
    alternating turns."""
    system: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if isinstance(m, SystemMessage):
            if turns:
                raise ValueError(f"{where}: {API} takes system text only before the conversation")
            system.extend(_parts(m.content, where))
            continue
        if isinstance(m, AssistantMessage):
            role = "assistant"
            parts = [
                p for j, b in enumerate(m.content) if (p := _assistant_part(b, f"{where}[{j}]"))
            ]
        elif isinstance(m, ToolResultMessage):
            role, parts = "user", [_result(m, where)]
        else:
            role, parts = "user", _parts(m.content, f"{where}.content")
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(parts)
        else:
            turns.append({"role": role, "content": parts})
    return system, turns


def _tool(tool: Tool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name, "inputSchema": {"json": dict(tool.parameters)}}
    if tool.description:
        spec["description"] = tool.description
    return {"toolSpec": spec}


def _tool_config(request: Request) -> tuple[dict[str, Any] | None, list[SanitizeWarning]]:
    tools = [t for t in provider_tools(request.tools, API) if isinstance(t, Tool)]
    if not tools:
        return None, []
    config: dict[str, Any] = {"tools": [_tool(t) for t in tools]}
    choice = request.tool_choice
    warnings: list[SanitizeWarning] = []
    if choice == "auto":
        config["toolChoice"] = {"auto": {}}
    elif choice == "required":
        config["toolChoice"] = {"any": {}}
    elif choice == "none":
        said = "tool_choice 'none': Converse has no such choice; the model decides"
        warnings.append(SanitizeWarning(None, None, "tool_choice_dropped", said))
    elif choice is not None:
        config["toolChoice"] = {"tool": {"name": choice}}
    return config, warnings


def _model_fields(request: Request) -> tuple[dict[str, Any], list[SanitizeWarning]]:
    """``additionalModelRequestFields``: ``top_k`` and Anthropic's thinking."""
    fields: dict[str, Any] = {}
    if request.top_k is not None:
        fields["top_k"] = request.top_k
    reasoning = request.reasoning
    if reasoning is None or not reasoning.enabled:
        return fields, []
    if reasoning.budget_tokens is not None:
        fields["thinking"] = {"type": "enabled", "budget_tokens": reasoning.budget_tokens}
        return fields, []
    said = "reasoning without budget_tokens: Converse carries a model's thinking budget only"
    return fields, [SanitizeWarning(None, None, "thinking_off", said)]


def _output_config(fmt: ResponseFormat | None) -> dict[str, Any] | None:
    if fmt is None or fmt.type != "json_schema" or fmt.schema is None:
        return None
    schema: dict[str, Any] = {"schema": json.dumps(dict(fmt.schema)), "name": fmt.name or "output"}
    if fmt.description:
        schema["description"] = fmt.description
    return {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": schema}}}


def _inference(request: Request) -> dict[str, Any]:
    pairs = (
        ("maxTokens", request.max_tokens),
        ("temperature", request.temperature),
        ("topP", request.top_p),
        ("stopSequences", list(request.stop) or None),
    )
    return {k: v for k, v in pairs if v is not None}


def encode_request(
    request: Request, messages: list[Message], provider: str | None = None
) -> WireRequest:
    """The Converse (``stream=False``) or ConverseStream request for ``request``."""
    path = operation_path(HOSTS["bedrock"], "stream" if request.stream else "whole", request.model)
    system, turns = _turns(messages)
    if request.system is not None:
        system = [*_parts(request.system, "system"), *system]
    body: dict[str, Any] = {"messages": turns}
    if system:
        body["system"] = system
    tool_config, warnings = _tool_config(request)
    model_fields, reasoning_warnings = _model_fields(request)
    for key, value in (
        ("inferenceConfig", _inference(request)),
        ("toolConfig", tool_config),
        ("additionalModelRequestFields", model_fields),
        ("outputConfig", _output_config(request.response_format)),
        ("requestMetadata", dict(request.metadata) if request.metadata else None),
    ):
        if value:
            body[key] = value
    deep_merge(body, extra_for(request.extra, API))
    headers = {"content-type": "application/json"}
    return WireRequest("POST", path or "", headers, body, (*warnings, *reasoning_warnings))


# ---------------------------------------------------------------------------
# Decoding


def _decode_media(part: Mapping[str, Any], key: str, where: str) -> UserContent:
    value = Fields(part[key], f"{where}.{key}")
    fmt = value.typed("format", str, required=True) or ""
    source = value.obj("source")
    data = source.typed("bytes", str) if source is not None else None
    if data is None:
        raise fail(f"{where}.{key}.source.bytes", "base64 bytes", None)
    if key == "image":
        return ImageBlock(_IMAGE_TYPES.get(fmt, f"image/{fmt}"), data)
    return DocumentBlock(_DOC_TYPES.get(fmt, fmt), data, name=value.typed("name", str))


def _decode_user_part(part: Any, where: str) -> UserContent:
    if not isinstance(part, Mapping):
        raise fail(where, "a content block", part)
    if "text" in part:
        return TextBlock(str(part["text"]))
    for key in ("image", "document"):
        if key in part:
            return _decode_media(part, key, where)
    raise fail(where, "a text, image or document block", part)


def _decode_assistant_part(part: Any, where: str) -> ContentBlock:
    if not isinstance(part, Mapping):
        raise fail(where, "a content block", part)
    if "text" in part:
        return TextBlock(str(part["text"]))
    if "toolUse" in part:
        use = Fields(part["toolUse"], f"{where}.toolUse")
        arguments = use.typed("input", dict) or {}
        call_id = use.typed("toolUseId", str, required=True) or ""
        name = use.typed("name", str, required=True) or ""
        return ToolCallBlock(call_id, name, arguments, json.dumps(arguments))
    reasoning = part.get("reasoningContent")
    if isinstance(reasoning, Mapping) and "redactedContent" in reasoning:
        return ThinkingBlock("", str(reasoning["redactedContent"]), redacted=True)
    if isinstance(reasoning, Mapping) and isinstance(reasoning.get("reasoningText"), Mapping):
        text = reasoning["reasoningText"]
        return ThinkingBlock(str(text.get("text", "")), text.get("signature"))
    raise fail(where, "a text, toolUse or reasoningContent block", part)


def _decode_user_turn(content: list[Any], where: str) -> list[Message]:
    """One user turn: its tool results, then its own content as one message."""
    out: list[Message] = []
    own: list[UserContent] = []
    for j, part in enumerate(content):
        if isinstance(part, Mapping) and "toolResult" in part:
            result = Fields(part["toolResult"], f"{where}[{j}].toolResult")
            parts = result.typed("content", list) or []
            blocks = tuple(_decode_user_part(p, f"{where}[{j}].content") for p in parts)
            out.append(
                ToolResultMessage(
                    result.typed("toolUseId", str, required=True) or "",
                    "",
                    blocks,
                    is_error=result.typed("status", str) == "error",
                )
            )
        else:
            own.append(_decode_user_part(part, f"{where}[{j}]"))
    if own:
        out.append(UserMessage(tuple(own)))
    return out


def _decode_messages(value: Any, model: str | None, provider: str | None) -> list[Message]:
    if not isinstance(value, list):
        raise fail("messages", "an array", value)
    out: list[Message] = []
    for i, turn in enumerate(value):
        fields = Fields(turn, f"messages[{i}]")
        role = fields.typed("role", str, required=True)
        content = fields.typed("content", list) or []
        where = f"messages[{i}].content"
        if role == "assistant":
            turn_ = Turn(API, model, provider)
            for j, part in enumerate(content):
                turn_.add(_decode_assistant_part(part, f"{where}[{j}]"))
            message = turn_.message()
            if message is not None:
                out.append(message)
        elif role == "user":
            out.extend(_decode_user_turn(content, where))
        else:
            raise fail(f"messages[{i}].role", "user or assistant", role)
    return out


def _model_and_stream(path: str | None) -> tuple[str | None, bool]:
    """``/model/{modelId}/converse`` or ``…/converse-stream``."""
    if not path or not path.startswith("/model/"):
        return None, False
    model, _, operation = path.split("?", 1)[0][len("/model/") :].rpartition("/")
    return unquote(model) or None, operation == "converse-stream"


def _decode_reasoning(fields: dict[str, Any]) -> Reasoning | None:
    thinking = fields.get("thinking")
    if not isinstance(thinking, Mapping) or thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int):
        return None
    del fields["thinking"]
    return Reasoning(budget_tokens=budget)


def _decode_format(fields: Fields) -> ResponseFormat | None:
    output = fields.obj("outputConfig")
    if output is None:
        return None
    text = output.peek("textFormat")
    schema = text.get("structure", {}).get("jsonSchema") if isinstance(text, Mapping) else None
    if not isinstance(schema, Mapping) or not isinstance(schema.get("schema"), str):
        fields.put_back("outputConfig", output)
        return None
    output.pop("textFormat")
    fields.put_back("outputConfig", output)
    return ResponseFormat(
        schema=json.loads(schema["schema"]),
        name=schema.get("name"),
        description=schema.get("description"),
    )


def _decode_tools(fields: Fields) -> tuple[tuple[Tool, ...], str | None]:
    config = fields.obj("toolConfig")
    if config is None:
        return (), None
    tools: list[Tool] = []
    for i, entry in enumerate(config.typed("tools", list) or []):
        spec = Fields(Fields(entry, f"toolConfig.tools[{i}]").pop("toolSpec"), "toolSpec")
        schema = spec.obj("inputSchema")
        parameters = schema.typed("json", dict) if schema is not None else None
        tools.append(
            Tool(
                spec.typed("name", str, required=True) or "",
                spec.typed("description", str) or "",
                parameters or {"type": "object", "properties": {}},
            )
        )
    choice = config.typed("toolChoice", dict) or {}
    named = choice.get("tool")
    mode = "required" if "any" in choice else "auto" if "auto" in choice else None
    fields.put_back("toolConfig", config)
    return tuple(tools), named.get("name") if isinstance(named, Mapping) else mode


def decode_request(
    body: Mapping[str, Any], *, path: str | None = None, provider: str | None = None
) -> Request:
    """A Converse or ConverseStream body as a canonical request; the model
    and whether it streams come from ``path``."""
    model, stream = _model_and_stream(path)
    fields = Fields(body, "")
    messages = _decode_messages(fields.pop("messages"), model, provider or "bedrock")
    system_parts = fields.typed("system", list) or []
    system = tuple(b for b in (_decode_user_part(p, "system") for p in system_parts))
    tools, choice = _decode_tools(fields)
    inference = fields.typed("inferenceConfig", dict) or {}
    model_fields = dict(fields.typed("additionalModelRequestFields", dict) or {})
    reasoning = _decode_reasoning(model_fields)
    top_k = model_fields.pop("top_k", None)
    metadata = fields.typed("requestMetadata", dict)
    request = Request(
        model=model,
        messages=tuple(messages),
        system=tuple(b for b in system if isinstance(b, TextBlock)) or None,
        tools=tools,
        tool_choice=choice,
        max_tokens=inference.get("maxTokens"),
        temperature=inference.get("temperature"),
        top_p=inference.get("topP"),
        top_k=top_k if isinstance(top_k, int) else None,
        stop=tuple(inference.get("stopSequences") or ()),
        reasoning=reasoning,
        response_format=_decode_format(fields),
        stream=stream,
        metadata=metadata,
    )
    rest = fields.rest()
    if model_fields:
        rest["additionalModelRequestFields"] = model_fields
    return replace(request, extra={API: rest}) if rest else request


def validate_body(body: Mapping[str, Any]) -> list[str]:
    """Problems Converse would reject: a conversation that does not start
    with a user turn, roles that do not alternate, an empty turn."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["messages: at least one message is required"]
    problems: list[str] = []
    previous = "assistant"
    for i, turn in enumerate(messages):
        role = turn.get("role") if isinstance(turn, Mapping) else None
        if role == previous:
            problems.append(f"messages[{i}]: roles must alternate, starting with user")
        if not (isinstance(turn, Mapping) and turn.get("content")):
            problems.append(f"messages[{i}].content: a turn needs at least one block")
        previous = role if isinstance(role, str) else previous
    return problems
