"""``openai-responses`` request bodies ↔ canonical requests (requests.md §1–§9.2).

An assistant turn is a run of output items between input messages and tool
results. Its blocks carry item state in their signatures, as the stream
decoder writes them (providers.md §2.2): a reasoning block the whole item as
compact JSON, a text block ``{"id", "phase"}``, a call ``{"id",
"namespace"}``. Items the canonical model has no block for are kept as
``ProviderBlock``s and replayed verbatim. A reasoning item whose
``encrypted_content`` is an envelope (encoding.md §9) restores the original
block and its issuer; one of kind ``turn`` signs the blocks that follow it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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
from ..base import as_list
from ..codecbase import (
    Fields,
    MediaTypes,
    Turn,
    arguments_text,
    data_url,
    deep_merge,
    document_base64,
    embedded_json,
    extra_for,
    fail,
    inline_document,
    leading_system,
    named_results,
    parse_data_url,
    plan_warnings,
    provider_tools,
    system_content,
    tool_call,
)
from .wire import MESSAGE_PARTS, item_signature

__all__ = [
    "MEDIA",
    "decode_request",
    "encode_request",
    "server_tool",
    "server_tool_spec",
    "validate_body",
    "with_reasoning_continuity",
]

API = "openai-responses"
#: What ``include`` asks for to get reasoning back for the next turn.
ENCRYPTED = "reasoning.encrypted_content"

#: Images, and the files ``input_file`` takes (documents, text, code and
#: spreadsheets; no audio or video).
MEDIA = MediaTypes(("image/",), ("application/", "text/"), image_detail=True)

#: Item id prefixes the API checks (requests.md §9.2 rule 2).
ID_PREFIXES = {"message": "msg_", "reasoning": "rs_", "function_call": "fc_"}


# ---------------------------------------------------------------------------
# Encoding


def _input_part(block: UserContent) -> dict[str, Any] | None:
    if isinstance(block, TextBlock):
        return {"type": "input_text", "text": block.text}
    if isinstance(block, ImageBlock):
        url = data_url(block.mime_type, block.data) if block.data is not None else block.url
        # The SDK requires a detail; "auto" is the API's default.
        return {"type": "input_image", "image_url": url, "detail": block.detail or "auto"}
    if isinstance(block, DocumentBlock):
        part: dict[str, Any] = {"type": "input_file"}
        if block.file_id is not None:
            part["file_id"] = block.file_id
        elif block.url is not None:
            part["file_url"] = block.url
        else:
            part["file_data"] = data_url(block.mime_type, document_base64(block))
        if block.name is not None:
            part["filename"] = block.name
        return part
    return dict(block.data) if block.api == API else None


def _input_content(content: str | tuple[UserContent, ...]) -> str | list[dict[str, Any]]:
    if isinstance(content, str):
        return content
    return [p for p in map(_input_part, content) if p is not None]


def _json_object(text: str | None) -> dict[str, Any] | None:
    value = embedded_json(text)
    return value if isinstance(value, dict) else None


def _text_items(blocks: list[TextBlock]) -> dict[str, Any]:
    """Consecutive text blocks of one message item (same signature): the
    item with its id, or without one the easy form, which has no place for
    annotations (then a message item without id, as Codex sends its own)."""
    state = _json_object(blocks[0].signature) or {}
    item_id = state.get("id")
    cited = any(b.citations for b in blocks)
    if not isinstance(item_id, str) and not cited:
        easy: dict[str, Any] = {"role": "assistant", "content": "".join(b.text for b in blocks)}
        if isinstance(state.get("phase"), str):
            easy["phase"] = state["phase"]
        return easy
    parts = [
        {"type": "refusal", "refusal": b.text}
        if b.refusal
        else {"type": "output_text", "text": b.text, "annotations": list(b.citations)}
        for b in blocks
    ]
    item: dict[str, Any] = {"type": "message", "role": "assistant", "content": parts}
    if isinstance(item_id, str):
        item.update(id=item_id, status="completed")
    if isinstance(state.get("phase"), str):
        item["phase"] = state["phase"]
    return item


def _call_item(block: ToolCallBlock) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "call_id": block.id,
        "name": block.name,
        "arguments": arguments_text(block),
    }
    state = _json_object(block.signature) or {}
    for key in ("id", "namespace"):
        if isinstance(state.get(key), str):
            item[key] = state[key]
    return item


def _assistant_items(message: AssistantMessage) -> Iterator[dict[str, Any]]:
    blocks = list(message.content)
    i = 0
    while i < len(blocks):
        block = blocks[i]
        i += 1
        if isinstance(block, TextBlock):
            run = [block]
            while i < len(blocks):
                following = blocks[i]
                if not isinstance(following, TextBlock) or following.signature != block.signature:
                    break
                run.append(following)
                i += 1
            if block.signature is not None or any(b.text for b in run):
                yield _text_items(run)
        elif isinstance(block, ThinkingBlock):
            item = _json_object(block.signature)
            if item is not None and item.get("type") == "reasoning":
                yield item  # replayed verbatim; anything else cannot be
        elif isinstance(block, ToolCallBlock):
            yield _call_item(block)
        elif block.api == API and block.kind not in MESSAGE_PARTS:
            yield dict(block.data)


def _result_item(m: ToolResultMessage) -> dict[str, Any]:
    output = _input_content(m.content)
    if m.is_error and isinstance(output, str):
        output = f"Error: {output}"
    return {"type": "function_call_output", "call_id": m.tool_call_id, "output": output}


def _system_item(role: str, system: str | tuple[TextBlock, ...]) -> dict[str, Any]:
    content: Any = (
        system
        if isinstance(system, str)
        else [{"type": "input_text", "text": b.text} for b in system]
    )
    return {"role": role, "content": content}


def _input(request: Request, messages: list[Message]) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if request.system is not None and request.system_role is not None:
        items.append(_system_item(request.system_role, request.system))
    for m in messages:
        if isinstance(m, UserMessage):
            items.append({"role": "user", "content": _input_content(m.content)})
        elif isinstance(m, SystemMessage):
            items.append(_system_item(m.role, m.content))
        elif isinstance(m, ToolResultMessage):
            items.append(_result_item(m))
        else:
            items.extend(_assistant_items(m))
    return items


def _tool(tool: Tool | ProviderTool) -> dict[str, Any]:
    if isinstance(tool, ProviderTool):
        return dict(tool.data)
    out: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = dict(tool.parameters)
    # Responses functions are strict unless told otherwise; a schema from
    # another api is not known to be strict-compatible.
    out["strict"] = tool.strict if tool.strict is not None else False
    return deep_merge(out, extra_for(tool.extra, API))


#: The Responses API's web search tool types (dated and preview forms).
_WEB_SEARCH = ("web_search", "web_search_preview")


def server_tool_spec(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a server tool of this API does, in the neutral form of
    ``providers.server_tools`` (None: no other API has its like)."""
    kind = str(data.get("type", ""))
    if kind not in _WEB_SEARCH and not kind.startswith(tuple(k + "_2" for k in _WEB_SEARCH)):
        return None
    spec: dict[str, Any] = {"kind": "web_search"}
    filters = data.get("filters")
    if isinstance(filters, Mapping) and filters.get("allowed_domains"):
        spec["allowed_domains"] = filters["allowed_domains"]
    if isinstance(data.get("user_location"), Mapping):
        spec["user_location"] = dict(data["user_location"])
    known = ("type", "filters", "user_location")
    spec["lost"] = [k for k in data if k not in known and data[k] not in (None, [], {})]
    return spec


def server_tool(spec: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]] | None:
    """This API's server tool for a neutral spec, and the options it cannot
    carry (None: it has none of that kind)."""
    if spec["kind"] != "web_search":
        return None
    tool: dict[str, Any] = {"type": "web_search"}
    if "allowed_domains" in spec:
        tool["filters"] = {"allowed_domains": list(spec["allowed_domains"])}
    if "user_location" in spec:
        tool["user_location"] = {"type": "approximate", **spec["user_location"]}
    carried = ("kind", "lost", "allowed_domains", "user_location")
    return tool, [k for k in spec if k not in carried]


def _reasoning(reasoning: Reasoning, plan: ReasoningPlan) -> dict[str, Any]:
    out: dict[str, Any] = {}
    effort = plan.effort_level()
    if effort is not None:
        out["effort"] = effort
    if reasoning.summary is not None and reasoning.summary != "none":
        out["summary"] = reasoning.summary
    return out


def with_reasoning_continuity(request: Request) -> Request:
    """``request`` asking a Responses upstream for its reasoning back.

    A Responses upstream returns reasoning only in stored responses, or as
    ``encrypted_content`` when ``include`` asks for it; a client of another
    api (through the gateway) cannot ask, and without it the next turn has
    nothing to send back. When the request reasons (or its history holds
    reasoning), this adds ``include: ["reasoning.encrypted_content"]`` and
    ``store: false`` to its Responses ``extra`` — ``store`` only when the
    request does not set it (a stored response keeps its reasoning on the
    server; docs/models.md). A Responses client's own body is not changed by
    ``encode_request``: it chose what to include.
    """
    reasons = request.reasoning is not None and request.reasoning.enabled
    history = any(
        isinstance(b, ThinkingBlock)
        for m in request.messages
        if isinstance(m, AssistantMessage)
        for b in m.content
    )
    if not (reasons or history):
        return request
    mine = extra_for(request.extra, API)
    include = mine.get("include")
    include = list(include) if isinstance(include, list) else []
    if ENCRYPTED not in include:
        include.append(ENCRYPTED)
    mine["include"] = include
    mine.setdefault("store", False)
    return replace(request, extra={**(request.extra or {}), API: mine})


def _format(fmt: ResponseFormat) -> dict[str, Any]:
    if fmt.type != "json_schema":
        return {"type": fmt.type}
    out: dict[str, Any] = {
        "type": "json_schema",
        "name": fmt.name or "output",
        "schema": dict(fmt.schema or {}),
    }
    if fmt.strict is not None:
        out["strict"] = fmt.strict
    if fmt.description is not None:
        out["description"] = fmt.description
    return out


def _system_text(system: str | tuple[TextBlock, ...]) -> str:
    return system if isinstance(system, str) else "\n\n".join(b.text for b in system)


def encode_request(
    request: Request, messages: list[Message], provider: str | None = None
) -> WireRequest:
    """The Responses API request for ``request`` (``messages`` already sanitized)."""
    plan = None
    if request.reasoning is not None:
        plan = plan_reasoning(
            request.reasoning, request.max_tokens, model_info(request.model, provider)
        )
    body: dict[str, Any] = {}
    if request.model is not None:
        body["model"] = request.model
    if request.system is not None and request.system_role is None:
        body["instructions"] = _system_text(request.system)
    body["input"] = _input(request, messages)
    tools = provider_tools(request.tools, API)
    if tools:
        body["tools"] = [_tool(t) for t in tools]
    choice = request.tool_choice
    if choice is not None:
        body["tool_choice"] = (
            choice if choice in TOOL_CHOICE_MODES else {"type": "function", "name": choice}
        )
    if request.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = request.parallel_tool_calls
    max_tokens = plan.max_tokens if plan is not None else request.max_tokens
    if max_tokens is not None:
        body["max_output_tokens"] = max_tokens
    if request.temperature is not None:
        body["temperature"] = request.temperature
    if request.top_p is not None:
        body["top_p"] = request.top_p
    if request.reasoning is not None and plan is not None and plan.kind != "omit":
        body["reasoning"] = _reasoning(request.reasoning, plan)
    if request.response_format is not None:
        body["text"] = {"format": _format(request.response_format)}
    if request.metadata is not None:
        body["metadata"] = dict(request.metadata)
    if request.stream:
        body["stream"] = True
    deep_merge(body, extra_for(request.extra, API))
    warnings = plan_warnings(plan)
    headers = {"content-type": "application/json"}
    return WireRequest("POST", "/v1/responses", headers, body, warnings)


# ---------------------------------------------------------------------------
# Decoding


def _canonical_part(part: dict[str, Any], where: str) -> UserContent | None:
    kind = part.get("type")
    if kind == "input_text":
        text = part.get("text")
        if not isinstance(text, str):
            raise fail(f"{where}.text", "a string", text)
        return TextBlock(text)
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        url, detail = part["image_url"], part.get("detail")
        if not isinstance(detail, str | None):
            raise fail(f"{where}.detail", "a string", detail)
        inline = parse_data_url(url)
        mime, data = inline if inline else ("", None)
        return ImageBlock(mime, data, None if inline else url, detail=detail)
    if kind == "input_file":
        inline = (
            parse_data_url(part["file_data"]) if isinstance(part.get("file_data"), str) else None
        )
        name = part.get("filename")
        name = name if isinstance(name, str) else None
        if inline:
            return inline_document(*inline, part.get("file_url"), part.get("file_id"), name)
        return DocumentBlock("", None, part.get("file_url"), part.get("file_id"), name)
    return None


def _input_block(part: Any, where: str) -> UserContent:
    if not isinstance(part, dict):
        raise fail(where, "an object", part)
    canonical = _canonical_part(part, where)
    if canonical is not None and _input_part(canonical) == _with_default_detail(part):
        return canonical
    kind = part.get("type")
    return ProviderBlock(API, kind if isinstance(kind, str) else "unknown", part)


def _with_default_detail(part: dict[str, Any]) -> dict[str, Any]:
    """An image part without ``detail`` is one with the API's default."""
    if part.get("type") == "input_image" and "detail" not in part:
        return {**part, "detail": "auto"}
    return part


def _content(value: Any, where: str) -> str | tuple[UserContent, ...]:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise fail(where, "a string or an array", value)
    return tuple(_input_block(p, f"{where}[{i}]") for i, p in enumerate(value))


_MESSAGE_KEYS = frozenset(("type", "role", "id", "status", "content", "phase"))


def _assistant_message(turn: Turn, item: dict[str, Any], where: str) -> None:
    content = item.get("content")
    signature = item_signature({"id": item.get("id"), "phase": item.get("phase")})
    if isinstance(content, str):
        turn.add(TextBlock(content, signature))
        return
    parts = content if isinstance(content, list) else None
    if parts is None or not set(item) <= _MESSAGE_KEYS or not all(map(_text_part, parts)):
        turn.add(ProviderBlock(API, "message", item))
        return
    for part in parts:
        if part["type"] == "refusal":
            turn.add(TextBlock(part["refusal"], signature, refusal=True))
        else:
            citations = part.get("annotations") or []
            if not isinstance(citations, list):
                raise fail(f"{where}.content.annotations", "an array", citations)
            turn.add(TextBlock(part["text"], signature, tuple(citations)))


def _text_part(part: Any) -> bool:
    if not isinstance(part, dict):
        return False
    if part.get("type") == "refusal":
        return isinstance(part.get("refusal"), str) and set(part) <= {"type", "refusal"}
    return (
        part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
        and set(part) <= {"type", "text", "annotations", "logprobs"}
    )


def _reasoning_block(turn: Turn, item: dict[str, Any]) -> None:
    # The item itself is replayed verbatim; its text is read defensively.
    texts = [
        part.get("text")
        for field in ("summary", "content")
        for part in as_list(item.get(field))
        if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    text = "\n\n".join(str(t) for t in texts)
    envelope = turn.opened(item.get("encrypted_content"))
    if envelope is None:
        turn.add(ThinkingBlock(text, dumps_compact(item)))
    elif not turn.carrier(envelope):
        signature = envelope.signature if isinstance(envelope.signature, str) else None
        redacted = envelope.kind == "redacted"
        turn.add(ThinkingBlock("" if redacted else text, signature, redacted))


def _call(item: dict[str, Any], where: str) -> ToolCallBlock:
    call_id, name = item.get("call_id"), item.get("name")
    if not isinstance(call_id, str):
        raise fail(f"{where}.call_id", "a string", call_id)
    if not isinstance(name, str):
        raise fail(f"{where}.name", "a string", name)
    signature = item_signature({"id": item.get("id"), "namespace": item.get("namespace")})
    return tool_call(call_id, name, item.get("arguments"), f"{where}.arguments", signature)


def _result(item: dict[str, Any], where: str) -> ToolResultMessage:
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        raise fail(f"{where}.call_id", "a string", call_id)
    return ToolResultMessage(call_id, "", _content(item.get("output"), f"{where}.output"))


class _Input:
    """Input items → canonical messages, one assistant turn at a time."""

    def __init__(self, model: str | None, provider: str | None) -> None:
        self.model, self.provider = model, provider
        self.messages: list[Message] = []
        self.turn: Turn | None = None
        #: (role, content) of the system/developer messages before the first turn
        self.leading: list[tuple[str | None, str | tuple[TextBlock, ...]]] = []

    def close(self) -> None:
        if self.turn is not None:
            message = self.turn.message()
            if message is not None:
                self.messages.append(message)
            self.turn = None

    def current(self) -> Turn:
        if self.turn is None:
            self.turn = Turn(API, self.model, self.provider)
        return self.turn

    def item(self, item: Any, where: str) -> None:
        if not isinstance(item, dict):
            raise fail(where, "an object", item)
        kind, role = item.get("type"), item.get("role")
        if kind in (None, "message") and role in ("user", "system", "developer"):
            self.close()
            self.role_message(role, item.get("content"), where)
        elif kind in (None, "message") and role == "assistant":
            _assistant_message(self.current(), item, where)
        elif kind is None:
            raise fail(f"{where}.type", "an item type or a message role", item.get("role"))
        elif kind == "function_call_output":
            self.close()
            self.messages.append(_result(item, where))
        elif kind == "reasoning":
            _reasoning_block(self.current(), item)
        elif kind == "function_call":
            self.current().add(_call(item, where))
        else:
            self.current().add(ProviderBlock(API, str(kind), item))

    def role_message(self, role: str, content: Any, where: str) -> None:
        decoded = _content(content, f"{where}.content")
        if role == "user":
            self.messages.append(UserMessage(decoded))
            return
        system = system_content(decoded, f"{where}.content", content)
        if self.messages:
            self.messages.append(SystemMessage(system, role))
        else:  # before the first turn: part of the system prompt
            self.leading.append((role, system))


def _system(
    leading: list[tuple[str | None, str | tuple[TextBlock, ...]]], instructions: str | None
) -> tuple[str | tuple[TextBlock, ...] | None, str | None]:
    """``(system, system_role)``: ``instructions`` first, then the leading
    messages; the role is None (``instructions``) when it is there."""
    found = [(None, instructions)] if instructions is not None else []
    return leading_system([*found, *leading])


def _decode_tool(raw: Any, where: str) -> Tool | ProviderTool:
    tool = Fields(raw, where)
    if tool.peek("type") != "function":
        return ProviderTool(API, raw)
    tool.pop("type")
    name = tool.typed("name", str, required=True)
    description = tool.typed("description", str) or ""
    parameters = tool.typed("parameters", dict) or {"type": "object", "properties": {}}
    strict = tool.typed("strict", bool)
    rest = tool.rest()
    assert name is not None
    return Tool(
        name,
        description,
        parameters,
        True if strict is None else strict,  # the Responses default
        extra={API: rest} if rest else None,
    )


def _decode_choice(body: Fields) -> str | None:
    raw = body.peek("tool_choice")
    if raw in TOOL_CHOICE_MODES:
        body.pop("tool_choice")
        return str(raw)
    if isinstance(raw, dict) and set(raw) == {"type", "name"} and raw["type"] == "function":
        body.pop("tool_choice")
        return str(raw["name"])
    return None  # anything else stays in extra


def _decode_reasoning(body: Fields) -> Reasoning | None:
    reasoning = body.obj("reasoning")
    if reasoning is None:
        return None
    effort = reasoning.typed("effort", str)
    summary = reasoning.typed("summary", str)
    body.put_back("reasoning", reasoning)
    return Reasoning(effort=effort, summary=summary)


def _decode_format(body: Fields) -> ResponseFormat | None:
    text = body.obj("text")
    if text is None:
        return None
    fmt = text.obj("format")
    out = None
    if fmt is not None:
        kind = fmt.typed("type", str, required=True)
        if kind == "json_schema":
            out = ResponseFormat(
                "json_schema",
                fmt.typed("schema", dict),
                fmt.typed("name", str),
                fmt.typed("description", str),
                fmt.typed("strict", bool),
            )
        else:
            out = ResponseFormat(str(kind))
        text.put_back("format", fmt)
    body.put_back("text", text)
    return out


def decode_request(
    body: Mapping[str, Any], *, path: str | None = None, provider: str | None = None
) -> Request:
    """A Responses API request body as a canonical request."""
    del path
    fields = Fields(body, "")
    model = fields.typed("model", str)
    raw_input = fields.pop("input")
    reader = _Input(model, provider)
    if isinstance(raw_input, str):
        reader.messages.append(UserMessage(raw_input))
    elif isinstance(raw_input, list):
        for i, item in enumerate(raw_input):
            reader.item(item, f"input[{i}]")
        reader.close()
    else:
        raise fail("input", "a string or an array", raw_input)
    system, role = _system(reader.leading, fields.typed("instructions", str))
    tools = tuple(
        _decode_tool(t, f"tools[{i}]") for i, t in enumerate(fields.typed("tools", list) or [])
    )
    request = Request(
        model=model,
        messages=tuple(named_results(reader.messages)),
        system=system,
        system_role=role,
        tools=tools,
        tool_choice=_decode_choice(fields),
        parallel_tool_calls=fields.typed("parallel_tool_calls", bool),
        max_tokens=fields.typed("max_output_tokens", int),
        temperature=fields.typed("temperature", float),
        top_p=fields.typed("top_p", float),
        reasoning=_decode_reasoning(fields),
        response_format=_decode_format(fields),
        metadata=fields.typed("metadata", dict),
        stream=fields.typed("stream", bool) or False,
    )
    rest = fields.rest()
    return replace(request, extra={API: rest}) if rest else request


# ---------------------------------------------------------------------------
# Structural validation (requests.md §9.2)


def validate_body(body: Mapping[str, Any]) -> list[str]:
    """Problems the Responses API would reject in an encoded body: item ids
    with the wrong prefix, a reasoning item not followed by the item it
    produced, a ``function_call_output`` without an earlier
    ``function_call``, call ids ending with ``_``, fields Responses lacks."""
    problems = [
        f"{key}: not a Responses field"
        for key in ("stop", "seed", "n", "top_k", "stop_sequences")
        if key in body
    ]
    items = body.get("input")
    if not isinstance(items, list):
        return problems if isinstance(items, str) else [*problems, "input: missing"]
    calls: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type")
        prefix = ID_PREFIXES.get(kind)
        if prefix and "id" in item and not str(item["id"]).startswith(prefix):
            problems.append(f"input[{i}].id: does not start with {prefix!r}")
        if kind == "reasoning" and not _produced(items[i + 1] if i + 1 < len(items) else None):
            problems.append(f"input[{i}]: reasoning not followed by its output item")
        if kind == "function_call":
            calls.add(item.get("call_id"))
            if str(item.get("call_id", "")).endswith("_"):
                problems.append(f"input[{i}].call_id: ends with '_'")
        if kind == "function_call_output" and item.get("call_id") not in calls:
            problems.append(f"input[{i}]: output for an unknown call {item.get('call_id')!r}")
    return problems


def _produced(item: Any) -> bool:
    """Whether an input item can be what a reasoning item produced: an
    output item or an assistant message, not more reasoning or input."""
    if item is None or item.get("type") == "reasoning":
        return False
    role = item.get("role")
    return role is None or role == "assistant"
