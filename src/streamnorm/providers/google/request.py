"""``google-generative-ai`` request bodies ↔ canonical requests (requests.md §1–§9.4).

The model and the streaming method are in the URL path. Every part is its
own block: a model turn keeps its part order, and each ``thoughtSignature``
stays on the block of the part it came with (the API requires it back on
that exact part); parts the canonical model has no block for are
``ProviderBlock``s replayed verbatim. google-genai and hand-built clients
send snake_case keys: they are read as the camelCase the API documents (and
written back so). A ``thoughtSignature`` that is an envelope (encoding.md §9)
restores the original block and its issuer. A ``turn`` envelope on a
``functionCall`` or text part (where the encoders put another issuer's
reasoning, since Gemini clients drop thought parts) signs the turn's blocks
and brings back its thinking blocks whole, in place of the unsigned thought
parts a client may have kept.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..._json import dumps_compact
from ...envelope import unwrap
from ...messages import (
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
    deep_merge,
    document_base64,
    embedded_json,
    extra_for,
    fail,
    inline_document,
    plan_warnings,
    provider_tools,
    system_note,
    tool_call,
)
from .wire import METADATA_BLOCKS

__all__ = [
    "MEDIA",
    "decode_request",
    "encode_request",
    "server_tool",
    "server_tool_spec",
    "validate_body",
    "with_server_tools",
]

API = "google-generative-ai"

#: Inline and file data Gemini takes: images, audio, video, PDF and text
#: (code included); office documents are refused ("Unsupported MIME type").
MEDIA = MediaTypes(
    ("image/",),
    (
        "application/pdf",
        "application/json",
        "application/x-",
        "text/",
        "audio/",
        "video/",
        "image/",
    ),
)

_MODES = {"AUTO": "auto", "NONE": "none", "ANY": "required"}
_MODES_BACK = {v: k for k, v in _MODES.items()}

#: Schema ``Type`` in the order of its proto numbers (``enum-encoding=int``).
_TYPES = ("TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")

_MODEL_PATH = re.compile(r"(?:^|/)((?:tuned)?[mM]odels/[^/:?]+):(\w+)")


def _camel(value: Any) -> Any:
    """A structural object with snake_case keys read as camelCase (values
    untouched: they hold schemas and arguments with keys of their own)."""
    if not isinstance(value, dict) or not any("_" in k for k in value):
        return value
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): v for k, v in value.items()}


# ---------------------------------------------------------------------------
# Encoding


def _media(block: ImageBlock | DocumentBlock) -> dict[str, Any]:
    if block.data is not None:
        data = document_base64(block) if isinstance(block, DocumentBlock) else block.data
        return {"inlineData": {"mimeType": block.mime_type, "data": data}}
    uri = block.file_id if isinstance(block, DocumentBlock) and block.url is None else block.url
    # fileData needs a type; a URL from another api may come without one.
    mime = block.mime_type or mimetypes.guess_type(uri or "")[0] or "application/octet-stream"
    return {"fileData": {"mimeType": mime, "fileUri": uri}}


def _user_part(block: UserContent) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"text": block.text}
    if isinstance(block, (ImageBlock, DocumentBlock)):
        return _media(block)
    return dict(block.data) if block.api == API else None


def _response(m: ToolResultMessage) -> dict[str, Any]:
    """``functionResponse`` of a result: a JSON object result as itself,
    other text as ``{"output": …}``, errors as ``{"error": …}``; images in
    ``parts`` (Gemini 3 multimodal function responses)."""
    content = m.content
    if (
        not isinstance(content, str)
        and len(content) == 1
        and isinstance(content[0], ProviderBlock)
        and content[0].api == API
        and content[0].kind == "functionResponse"
    ):
        return dict(content[0].data)  # kept verbatim
    text = (
        content
        if isinstance(content, str)
        else "".join(b.text for b in content if isinstance(b, TextBlock))
    )
    out: dict[str, Any] = {}
    if m.tool_call_id:
        out["id"] = m.tool_call_id
    out["name"] = m.tool_name
    if m.is_error:
        out["response"] = {"error": text}
    else:
        parsed = _json_object(text)
        out["response"] = parsed if parsed is not None else {"output": text}
    if not isinstance(content, str):
        media = [_media(b) for b in content if isinstance(b, (ImageBlock, DocumentBlock))]
        if media:
            out["parts"] = media
    return {"functionResponse": out}


def _json_object(text: str) -> dict[str, Any] | None:
    value = embedded_json(text)
    return value if isinstance(value, dict) else None


def _model_part(block: ContentBlock) -> dict[str, Any] | None:
    if isinstance(block, ProviderBlock):
        # Response metadata (grounding, URL context) is no part to send back.
        keep = block.api == API and block.kind not in METADATA_BLOCKS
        return dict(block.data) if keep else None
    if isinstance(block, ThinkingBlock) and block.redacted:
        return None  # no such part (requests.md §11)
    if isinstance(block, ToolCallBlock):
        call: dict[str, Any] = {}
        if block.id:
            call["id"] = block.id
        call["name"] = block.name
        call["args"] = dict(block.arguments)
        part: dict[str, Any] = {"functionCall": call}
    elif isinstance(block, ThinkingBlock):
        part = {"text": block.thinking, "thought": True}
    else:
        part = {"text": block.text}
    if block.signature is not None:
        part["thoughtSignature"] = block.signature
    return part


def _contents(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def push(role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})

    for m in messages:
        if isinstance(m, UserMessage):
            content = m.content
            parts = (
                [{"text": content}]
                if isinstance(content, str)
                else [p for p in map(_user_part, content) if p is not None]
            )
            push("user", parts)
        elif isinstance(m, ToolResultMessage):
            push("user", [_response(m)])
        elif isinstance(m, SystemMessage):  # Gemini's only system prompt is the first
            push("user", [{"text": system_note(m)}])
        else:
            push("model", [p for p in map(_model_part, m.content) if p is not None])
    return out


def _tools(tools: list[Tool | ProviderTool]) -> list[dict[str, Any]]:
    """Function tools in one ``functionDeclarations`` object per run, at the
    place of the run's first; provider tools as their own objects."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        if isinstance(tool, ProviderTool):
            out.append(dict(tool.data))
            continue
        if not out or "functionDeclarations" not in out[-1] or len(out[-1]) != 1:
            out.append({"functionDeclarations": []})
        out[-1]["functionDeclarations"].append(_declaration(tool))
    return out


#: Server tools by kind: the key each is written with, and the keys read as it.
_SERVER_TOOLS = {
    "web_search": ("googleSearch", ("googleSearch", "googleSearchRetrieval")),
    "web_fetch": ("urlContext", ("urlContext",)),
}


def server_tool_spec(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a server tool of this API does, in the neutral form of
    ``providers.server_tools`` (None: no other API has its like)."""
    tool = _camel(dict(data))
    for kind, (_, keys) in _SERVER_TOOLS.items():
        key = next((k for k in keys if k in tool), None)
        if key is not None and len(tool) == 1:
            options = tool[key] if isinstance(tool[key], Mapping) else {}
            return {"kind": kind, "lost": [f"{key}.{k}" for k in options]}
    return None


def server_tool(spec: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]] | None:
    """This API's server tool for a neutral spec, and the options it cannot
    carry (None: it has none of that kind)."""
    entry = _SERVER_TOOLS.get(spec["kind"])
    if entry is None:
        return None
    return {entry[0]: {}}, [k for k in spec if k not in ("kind", "lost")]


def with_server_tools(request: Request) -> tuple[Request, str | None]:
    """``request``, whose tools now include server tools, made acceptable to
    Gemini, or the reason it cannot be: Gemini takes built-in tools beside
    function declarations only from Gemini 3 on, and only when
    ``toolConfig.includeServerSideToolInvocations`` asks for it."""
    if not any(isinstance(t, Tool) for t in request.tools):
        return request, None
    major = re.search(r"gemini-(\d+)", request.model or "")
    if major is None or int(major[1]) < 3:
        return request, f"{request.model} takes no built-in tool beside function declarations"
    flag = {"toolConfig": {"includeServerSideToolInvocations": True}}
    extra = dict(request.extra or {})
    extra[API] = deep_merge(flag, dict(extra.get(API) or {}))
    return replace(request, extra=extra), None


def _declaration(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    extra = extra_for(tool.extra, API)
    if "parameters" not in extra:  # an OpenAPI-form schema the client sent wins
        out["parametersJsonSchema"] = dict(tool.parameters)
    return deep_merge(out, extra)


def _thinking_config(reasoning: Reasoning, plan: ReasoningPlan, mode: str) -> dict[str, Any]:
    """The plan (fitted to the model, models/reasoning.py) as a
    ``thinkingConfig``: a budget (0 off, -1 dynamic) or a level for the
    models that take levels (``mode`` ``effort``)."""
    out: dict[str, Any] = {}
    if reasoning.summary is not None:
        out["includeThoughts"] = reasoning.summary != "none"
    if plan.kind == "off":
        out["thinkingBudget"] = 0
    elif plan.kind == "budget":
        out["thinkingBudget"] = plan.budget
    elif plan.kind == "effort" and plan.effort is not None:
        out["thinkingLevel"] = plan.effort.upper()
    elif plan.kind == "dynamic" and mode != "effort":
        out["thinkingBudget"] = -1
    return out


def _generation_config(request: Request, plan: ReasoningPlan | None, mode: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    max_tokens = plan.max_tokens if plan is not None else request.max_tokens
    for key, value in (
        ("maxOutputTokens", max_tokens),
        ("temperature", request.temperature),
        ("topP", request.top_p),
        ("topK", request.top_k),
    ):
        if value is not None:
            out[key] = value
    if request.stop:
        out["stopSequences"] = list(request.stop)
    fmt = request.response_format
    if fmt is not None and fmt.type != "text":
        out["responseMimeType"] = "application/json"
        if fmt.type == "json_schema" and fmt.schema is not None:
            out["responseJsonSchema"] = dict(fmt.schema)
    if plan is not None and request.reasoning is not None and plan.kind != "omit":
        out["thinkingConfig"] = _thinking_config(request.reasoning, plan, mode)
    return out


def _system(system: str | tuple[TextBlock, ...]) -> dict[str, Any]:
    texts = [system] if isinstance(system, str) else [b.text for b in system]
    return {"role": "user", "parts": [{"text": t} for t in texts]}


def encode_request(
    request: Request, messages: list[Message], provider: str | None = None
) -> WireRequest:
    """The ``generateContent`` request for ``request`` (``messages`` already
    sanitized): path with the model and method, body."""
    body: dict[str, Any] = {"contents": _contents(messages)}
    if request.system is not None:
        body["systemInstruction"] = _system(request.system)
    tools = provider_tools(request.tools, API)
    if tools:
        body["tools"] = _tools(tools)
    choice = request.tool_choice
    if choice is not None:
        config: dict[str, Any] = (
            {"mode": _MODES_BACK[choice]}
            if choice in TOOL_CHOICE_MODES
            else {"mode": "ANY", "allowedFunctionNames": [choice]}
        )
        body["toolConfig"] = {"functionCallingConfig": config}
    info = model_info(request.model, provider)
    plan = None
    if request.reasoning is not None:
        plan = plan_reasoning(request.reasoning, request.max_tokens, info)
    generation = _generation_config(request, plan, info.reasoning.mode)
    if generation:
        body["generationConfig"] = generation
    deep_merge(body, extra_for(request.extra, API))
    if "cachedContent" in body:
        # The cached content holds them; sending them too is a 400 (requests.md §8.5).
        for key in ("systemInstruction", "tools", "toolConfig"):
            body.pop(key, None)
    if not request.model:
        raise ValueError("model: required for google-generative-ai (it is part of the path)")
    model = request.model.removeprefix("models/")
    method = "streamGenerateContent?alt=sse" if request.stream else "generateContent"
    path = f"/v1beta/models/{model}:{method}"
    warnings = plan_warnings(plan)
    return WireRequest("POST", path, {"content-type": "application/json"}, body, warnings)


# ---------------------------------------------------------------------------
# Decoding


def _canonical_part(part: dict[str, Any]) -> UserContent | None:
    if set(part) == {"text"} and isinstance(part["text"], str):
        return TextBlock(part["text"])
    media = _camel(part.get("inlineData") or part.get("fileData"))
    if len(part) != 1 or not isinstance(media, dict):
        return None
    if not all(isinstance(value, str) for value in media.values()):
        return None  # not media this codec writes: the part is kept as it came
    mime = str(media.get("mimeType", ""))
    kind = ImageBlock if mime.startswith("image/") else DocumentBlock
    data = media.get("data")
    if "inlineData" in part and kind is DocumentBlock and isinstance(data, str):
        return inline_document(mime, data)
    if "inlineData" in part:
        return kind(mime, data)
    return kind(mime, url=media.get("fileUri"))


def _user_block(part: dict[str, Any]) -> UserContent:
    canonical = _canonical_part(part)
    if canonical is not None and _user_part(canonical) == _camel_media(part):
        return canonical
    return ProviderBlock(API, _kind(part), part)


def _camel_media(part: dict[str, Any]) -> dict[str, Any]:
    """``part`` as the encoder would write it: media keys in camelCase, a
    plain-text document's bytes in standard base64 (its text is what counts)."""
    out = {k: _camel(v) if k in ("inlineData", "fileData") else v for k, v in part.items()}
    inline = out.get("inlineData")
    if isinstance(inline, dict) and isinstance(inline.get("data"), str):
        document = inline_document(str(inline.get("mimeType", "")), inline["data"])
        if document.data != inline["data"]:  # read as text: the same text counts
            out["inlineData"] = {**inline, "data": document_base64(document)}
    return out


_MODIFIERS = frozenset(("thought", "thoughtSignature", "partMetadata", "videoMetadata"))


def _kind(part: dict[str, Any]) -> str:
    return next((k for k in part if k not in _MODIFIERS), "unknown")


def _result(part: dict[str, Any], where: str) -> ToolResultMessage:
    fr = _camel(part["functionResponse"])
    if not isinstance(fr, dict):
        raise fail(f"{where}.functionResponse", "an object", fr)
    call_id, name = fr.get("id") or "", fr.get("name")
    if not isinstance(name, str) or not isinstance(call_id, str):
        raise fail(f"{where}.functionResponse.name", "a string", name)
    response = fr.get("response")
    if set(fr) - {"id", "name", "response"} or not isinstance(response, dict):
        return ToolResultMessage(call_id, name, (ProviderBlock(API, "functionResponse", fr),))
    if set(response) == {"error"} and isinstance(response["error"], str):
        return ToolResultMessage(call_id, name, response["error"], True)
    if set(response) == {"output"} and isinstance(response["output"], str):
        content = response["output"]
        if _json_object(content) is None:
            return ToolResultMessage(call_id, name, content)
    return ToolResultMessage(call_id, name, dumps_compact(response))


def _user(parts: list[Any], where: str) -> list[Message]:
    results: list[Message] = []
    blocks: list[UserContent] = []
    for i, raw in enumerate(parts):
        part = _camel(raw)
        if not isinstance(part, dict):
            raise fail(f"{where}[{i}]", "an object", raw)
        if "functionResponse" in part:
            results.append(_result(part, f"{where}[{i}]"))
        else:
            blocks.append(_user_block(part))
    if blocks or not results:
        results.append(UserMessage(tuple(blocks)))
    return results


def _signed(turn: Turn, block: TextBlock | ThinkingBlock | ToolCallBlock) -> ContentBlock | None:
    """``block`` with its signature restored from an envelope. A ``turn``
    envelope rides on a call or text part, which stays (its own signature is
    an entry of the envelope); an empty part that only carried one is None."""
    envelope = turn.opened(block.signature)
    if envelope is None:
        return block
    if turn.carrier(envelope):
        if isinstance(block, ToolCallBlock) or (isinstance(block, TextBlock) and block.text):
            return replace(block, signature=None)
        return None
    signature = envelope.signature if isinstance(envelope.signature, str) else None
    if envelope.kind == "redacted":
        return ThinkingBlock("", signature, redacted=True)
    return replace(block, signature=signature)


def _model_block(turn: Turn, part: dict[str, Any], where: str) -> ContentBlock | None:
    signature = part.get("thoughtSignature")
    if not isinstance(signature, str | None):
        raise fail(f"{where}.thoughtSignature", "a string", signature)
    text = part.get("text")
    call = _camel(part.get("functionCall"))
    if isinstance(text, str) and set(part) <= {"text", "thought", "thoughtSignature"}:
        thought = part.get("thought") is True
        block: TextBlock | ThinkingBlock | ToolCallBlock = (
            ThinkingBlock(text, signature) if thought else TextBlock(text, signature)
        )
        return _signed(turn, block)
    if (
        isinstance(call, dict)
        and set(part) <= {"functionCall", "thoughtSignature"}
        and set(call) <= {"id", "name", "args"}
    ):
        name = call.get("name")
        if not isinstance(name, str):
            raise fail(f"{where}.functionCall.name", "a string", name)
        block = tool_call(
            str(call.get("id") or ""), name, call.get("args"), f"{where}.args", signature
        )
        return _signed(turn, block)
    return ProviderBlock(API, _kind(part), part)


def _held_thinking(part: dict[str, Any]) -> list[tuple[int, ThinkingBlock]]:
    """The thinking blocks a ``turn`` envelope on ``part`` brings back whole
    (entries ``[position, kind, signature, text]``), by position."""
    envelope = unwrap(part.get("thoughtSignature"))
    if envelope is None or envelope.kind != "turn" or not isinstance(envelope.signature, list):
        return []
    out: list[tuple[int, ThinkingBlock]] = []
    for entry in envelope.signature:
        if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], int)):
            continue
        position, kind, signature, text = entry
        if kind in ("thinking", "redacted") and isinstance(signature, str | None):
            block = ThinkingBlock(str(text or ""), signature, redacted=kind == "redacted")
            out.append((position, block))
    return out


def _restore(turn: Turn, held: list[tuple[int, ThinkingBlock]]) -> None:
    """Put held thinking blocks back at their positions, in place of the
    unsigned thought parts a client kept of them (or dropped)."""
    if not held:
        return
    turn.content = [
        b for b in turn.content if not (isinstance(b, ThinkingBlock) and not b.signature)
    ]
    for position, block in sorted(held, key=lambda entry: entry[0]):
        turn.content.insert(min(position, len(turn.content)), block)


def _model(parts: list[Any], where: str, model: str | None, provider: str | None) -> Message | None:
    turn = Turn(API, model, provider)
    held: list[tuple[int, ThinkingBlock]] = []
    for i, raw in enumerate(parts):
        part = _camel(raw)
        if not isinstance(part, dict):
            raise fail(f"{where}[{i}]", "an object", raw)
        block = _model_block(turn, part, f"{where}[{i}]")
        held += _held_thinking(part)
        if block is not None:
            turn.add(block)
    _restore(turn, held)
    return turn.message()


def _decode_contents(value: Any, model: str | None, provider: str | None) -> list[Message]:
    if not isinstance(value, list):
        raise fail("contents", "an array", value)
    out: list[Message] = []
    for i, raw in enumerate(value):
        content = Fields(_camel(raw), f"contents[{i}]")
        role = content.typed("role", str) or "user"
        parts = content.typed("parts", list) or []
        where = f"contents[{i}].parts"
        if role == "model":
            message = _model(parts, where, model, provider)
            if message is not None:
                out.append(message)
        elif role in ("user", "function"):
            out.extend(_user(parts, where))
        else:
            raise fail(f"contents[{i}].role", '"user" or "model"', role)
    return out


def _json_schema(schema: Any) -> Any:
    """An OpenAPI-subset ``Schema`` read as JSON Schema: type names in lower
    case (numbers of ``enum-encoding=int`` named first), at every level of
    ``items``, ``anyOf`` and ``properties``. Each node is copied into its
    slot and its own slots are queued: no recursion, so any depth."""
    root = [schema]
    todo: list[tuple[Any, Any]] = [(root, 0)]
    while todo:
        holder, key = todo.pop()
        node = holder[key]
        if isinstance(node, list):
            holder[key] = copy = list(node)
            todo.extend((copy, i) for i in range(len(copy)))
        elif isinstance(node, dict):
            holder[key] = out = dict(node)
            kind = node.get("type")
            if isinstance(kind, int) and 0 <= kind < len(_TYPES):
                kind = _TYPES[kind]
            if isinstance(kind, str):
                out["type"] = kind.lower()
            todo.extend((out, k) for k in ("items", "anyOf") if k in out)
            if isinstance(node.get("properties"), dict):
                out["properties"] = props = dict(node["properties"])
                todo.extend((props, k) for k in props)
    return root[0]


def _decode_tools(value: list[Any]) -> list[Tool | ProviderTool]:
    tools: list[Tool | ProviderTool] = []
    for i, raw in enumerate(value):
        tool = _camel(raw)
        if not isinstance(tool, dict):
            raise fail(f"tools[{i}]", "an object", raw)
        if set(tool) != {"functionDeclarations"}:
            tools.append(ProviderTool(API, raw))
            continue
        declarations = tool["functionDeclarations"]
        if not isinstance(declarations, list):
            raise fail(f"tools[{i}].functionDeclarations", "an array", declarations)
        for j, d in enumerate(declarations):
            tools.append(_decode_declaration(d, f"tools[{i}].functionDeclarations[{j}]"))
    return tools


def _decode_declaration(raw: Any, where: str) -> Tool:
    d = Fields(_camel(raw), where)
    name = d.typed("name", str, required=True)
    description = d.typed("description", str) or ""
    schema = d.typed("parametersJsonSchema", dict)
    if schema is None and isinstance(d.peek("parameters"), dict):
        schema = _json_schema(d.peek("parameters"))  # the original stays in extra
    rest = d.rest()
    assert name is not None
    return Tool(
        name,
        description,
        schema if schema is not None else {"type": "object", "properties": {}},
        extra={API: rest} if rest else None,
    )


def _decode_choice(body: Fields) -> str | None:
    config = body.obj("toolConfig")
    if config is None:
        return None
    calling = config.peek("functionCallingConfig")
    calling = _camel(calling)
    choice = None
    if isinstance(calling, dict):
        mode, names = calling.get("mode"), calling.get("allowedFunctionNames")
        if set(calling) == {"mode"} and isinstance(mode, str) and mode in _MODES:
            choice = _MODES[mode]
        elif (
            set(calling) == {"mode", "allowedFunctionNames"}
            and mode == "ANY"
            and isinstance(names, list)
            and len(names) == 1
            and isinstance(names[0], str)
        ):
            choice = names[0]
        if choice is not None:
            config.pop("functionCallingConfig")
    body.put_back("toolConfig", config)
    return choice


def _decode_thinking(config: Fields) -> Reasoning | None:
    thinking = config.obj("thinkingConfig")
    if thinking is None:
        return None
    thinking = Fields(_camel(thinking.rest()), thinking.where)
    include = thinking.typed("includeThoughts", bool)
    budget = thinking.typed("thinkingBudget", int)
    level = thinking.typed("thinkingLevel", str)
    config.put_back("thinkingConfig", thinking)
    summary = None if include is None else ("auto" if include else "none")
    return Reasoning(effort=level.lower() if level else None, budget_tokens=budget, summary=summary)


def _decode_format(config: Fields) -> ResponseFormat | None:
    if config.peek("responseMimeType") != "application/json":
        return None
    config.pop("responseMimeType")
    schema = config.typed("responseJsonSchema", dict)
    return (
        ResponseFormat("json_schema", schema)
        if schema is not None
        else ResponseFormat("json_object")
    )


def _model_and_stream(path: str | None) -> tuple[str | None, bool]:
    match = _MODEL_PATH.search(path or "")
    if match is None:
        return None, True
    model = match.group(1)
    return model.split("/", 1)[1] if model.startswith("models/") else model, match.group(2) != (
        "generateContent"
    )


def decode_request(
    body: Mapping[str, Any], *, path: str | None = None, provider: str | None = None
) -> Request:
    """A ``generateContent`` request body as a canonical request; the model
    and whether it streams come from ``path``."""
    model, stream = _model_and_stream(path)
    fields = Fields(_camel(body), "")
    messages = _decode_contents(fields.pop("contents"), model, provider)
    system = _decode_system(fields)
    tools = _decode_tools(fields.typed("tools", list) or [])
    choice = _decode_choice(fields)
    config = fields.obj("generationConfig")
    if config is not None:
        config = Fields(_camel(config.rest()), "generationConfig") if config.rest() else config
    options: dict[str, Any] = {}
    if config is not None:
        stop = config.typed("stopSequences", list) or []
        options = {
            "max_tokens": config.typed("maxOutputTokens", int),
            "temperature": config.typed("temperature", float),
            "top_p": config.typed("topP", float),
            "top_k": config.typed("topK", int),
            "stop": tuple(str(s) for s in stop),
            "reasoning": _decode_thinking(config),
            "response_format": _decode_format(config),
        }
        fields.put_back("generationConfig", config)
    request = Request(
        model=model,
        messages=tuple(messages),
        system=system,
        tools=tuple(tools),
        tool_choice=choice,
        stream=stream,
        **options,
    )
    rest = fields.rest()
    return replace(request, extra={API: rest}) if rest else request


def _decode_system(fields: Fields) -> str | tuple[TextBlock, ...] | None:
    raw = _camel(fields.peek("systemInstruction"))
    if raw is None:
        return None
    parts = raw.get("parts") if isinstance(raw, dict) else None
    if (
        not isinstance(parts, list)
        or not set(raw) <= {"parts", "role"}
        or raw.get("role", "user") != "user"
        or not all(isinstance(p, dict) and set(p) == {"text"} for p in parts)
    ):
        return None  # kept verbatim in extra
    fields.pop("systemInstruction")
    texts = [str(p["text"]) for p in parts]
    return texts[0] if len(texts) == 1 else tuple(TextBlock(t) for t in texts)


# ---------------------------------------------------------------------------
# Structural validation (requests.md §9.4)


def validate_body(body: Mapping[str, Any]) -> list[str]:
    """Problems Gemini would reject in an encoded body: roles other than
    ``user``/``model``; a function-call turn that does not follow a user or
    function-response turn; a function-call turn not answered, in the next
    content, by as many ``functionResponse`` parts as it has calls; a
    ``functionResponse.response`` that is not an object; ``cachedContent``
    together with a system instruction, tools or tool config."""
    problems: list[str] = []
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return ["contents: empty or missing"]
    if "cachedContent" in body and {"systemInstruction", "tools", "toolConfig"} & set(body):
        problems.append("cachedContent: sent with a system instruction, tools or tool config")
    for i, content in enumerate(contents):
        role, parts = content.get("role"), content.get("parts") or []
        if role not in ("user", "model"):
            problems.append(f"contents[{i}].role: {role!r}")
        calls = sum(1 for p in parts if "functionCall" in p)
        for p in parts:
            fr = p.get("functionResponse")
            if fr is not None and not isinstance(fr.get("response"), dict):
                problems.append(f"contents[{i}]: functionResponse.response is not an object")
        if role != "model" or not calls:
            continue
        if i == 0 or contents[i - 1].get("role") != "user":
            problems.append(f"contents[{i}]: a function-call turn not after a user turn")
        following = contents[i + 1].get("parts") or [] if i + 1 < len(contents) else []
        answers = sum(1 for p in following if "functionResponse" in p)
        if answers != calls:
            problems.append(f"contents[{i}]: {calls} function calls, {answers} responses")
    return problems
