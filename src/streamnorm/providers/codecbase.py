"""What every request codec shares: reading a body field by field, the
``extra`` remainder, turn attribution from envelopes, and argument text.

A request is not a stream: a bad body raises ``ValueError`` naming the field
(``messages[2].content[0].source``), and there is nothing to keep. Reading is
destructive on a copy (:class:`Fields` pops what it maps), so whatever is
left is exactly what the canonical model does not cover: it becomes
``Request.extra``. Cost: linear in the size of the body.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from .._json import dumps_compact, loads
from ..builder import MessageBuilder
from ..envelope import Envelope, Issuer, unwrap
from ..events import Event
from ..messages import (
    AssistantMessage,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    Message,
    ProviderBlock,
    StopReason,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
    Usage,
    UserContent,
    UserMessage,
)
from ..models.reasoning import ReasoningPlan
from ..partial_json import parse_final_arguments
from ..request import Extra, ProviderTool, Tool
from ..sanitize.report import SanitizeWarning
from .base import Decoder

__all__ = [
    "Fields",
    "MediaTypes",
    "Turn",
    "arguments_text",
    "call_names",
    "check_parts",
    "data_url",
    "deep_merge",
    "document_base64",
    "drive",
    "embedded_json",
    "extra_for",
    "fail",
    "inline_document",
    "leading_system",
    "named_results",
    "parse_data_url",
    "provider_tools",
    "standard_base64",
    "system_content",
    "system_note",
    "tool_call",
]

T = TypeVar("T")

_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "a boolean",
    list: "an array",
    dict: "an object",
}


def fail(where: str, expected: str, value: Any) -> ValueError:
    """The error for a field holding the wrong thing."""
    got = "null" if value is None else type(value).__name__
    return ValueError(f"{where}: expected {expected}, got {got}")


class Fields:
    """A JSON object being decoded. ``where`` names it in errors. Each read
    removes the field; :meth:`rest` is what no read took."""

    __slots__ = ("_data", "_empty", "where")

    def __init__(self, value: Any, where: str) -> None:
        if not isinstance(value, Mapping):
            raise fail(where, "an object", value)
        self._data: dict[str, Any] = dict(value)
        self._empty = not value
        self.where = where

    def at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def has(self, key: str) -> bool:
        return key in self._data

    def peek(self, key: str) -> Any:
        return self._data.get(key)

    def pop(self, key: str) -> Any:
        return self._data.pop(key, None)

    def typed(self, key: str, kind: type[T], *, required: bool = False) -> T | None:
        """The field if it has type ``kind`` (None when absent or null);
        ``ValueError`` naming it otherwise."""
        value = self._data.pop(key, None)
        if value is None:
            if required:
                raise fail(self.at(key), _TYPE_NAMES.get(kind, kind.__name__), None)
            return None
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if kind is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok:
            raise fail(self.at(key), _TYPE_NAMES.get(kind, kind.__name__), value)
        if kind is list and not value:
            self._data[key] = value  # an explicit empty array is sent back as it was
        typed: T = value
        return typed

    def obj(self, key: str) -> Fields | None:
        value = self._data.pop(key, None)
        return None if value is None else Fields(value, self.at(key))

    def put_back(self, key: str, nested: Fields | None) -> None:
        """Keep what a nested object's reads left; an object that was empty
        to begin with is kept as it was."""
        if nested is not None and (nested._data or nested._empty):
            self._data[key] = nested._data

    def rest(self) -> dict[str, Any]:
        return self._data


def deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` merged into ``base`` in place: objects recursively, any other
    value replaces. Returns ``base``."""
    for key, value in extra.items():
        current = base.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            deep_merge(current, value)
        elif isinstance(value, Mapping):
            base[key] = deep_merge({}, value)
        else:
            base[key] = value
    return base


def extra_for(extra: Extra | None, api: str) -> dict[str, Any]:
    """The extra fields of one api (a copy)."""
    if not extra:
        return {}
    mine = extra.get(api)
    return deep_merge({}, mine) if mine else {}


def arguments_text(call: ToolCallBlock) -> str:
    """The argument text to send where an api takes text: the raw text when
    it parsed, else the (partial) parse serialised — never invalid JSON."""
    if call.error is None and call.raw_arguments.strip():
        return call.raw_arguments
    return dumps_compact(dict(call.arguments))


def tool_call(
    call_id: str, name: str, arguments: Any, where: str, signature: str | None = None
) -> ToolCallBlock:
    """A ``ToolCallBlock`` from argument text (Chat, Responses) or an object
    (Anthropic ``input``, Gemini ``args``)."""
    if isinstance(arguments, str):
        parsed, error, _ = parse_final_arguments(arguments)
        return ToolCallBlock(call_id, name, parsed, arguments, signature, error)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise fail(where, "an object", arguments)
    return ToolCallBlock(call_id, name, arguments, dumps_compact(arguments), signature)


def call_names(messages: Sequence[Message]) -> dict[str, str]:
    """Tool name by call id, for results whose api does not repeat it."""
    return {
        block.id: block.name
        for m in messages
        if isinstance(m, AssistantMessage)
        for block in m.content
        if isinstance(block, ToolCallBlock)
    }


def named_results(messages: list[Message]) -> list[Message]:
    """``messages`` with every unnamed tool result named after its call."""
    names = call_names(messages)
    return [
        replace(m, tool_name=names.get(m.tool_call_id, ""))
        if isinstance(m, ToolResultMessage) and not m.tool_name
        else m
        for m in messages
    ]


# ---------------------------------------------------------------------------
# System prompts and system messages (requests.md "System prompt")

#: A system message's content: text, or text blocks.
SystemContent = str | tuple[TextBlock, ...]


def system_content(content: str | tuple[UserContent, ...], where: str, value: Any) -> SystemContent:
    """Decoded message content as system content: text only, else a
    ``ValueError`` naming the field."""
    if isinstance(content, str):
        return content
    texts = tuple(b for b in content if isinstance(b, TextBlock))
    if len(texts) != len(content):
        raise fail(where, "a string or text parts", value)
    return texts


def leading_system(
    found: Sequence[tuple[str | None, SystemContent]],
) -> tuple[SystemContent | None, str | None]:
    """The system prompt of the system/developer messages before the first
    turn, in order (``(role, content)``; role None for an api's own system
    field), and the role of the first: one message is itself, several are
    the text blocks of all of them."""
    if not found:
        return None, None
    role = found[0][0]
    if len(found) == 1:
        return found[0][1], role
    blocks = tuple(
        block
        for _, content in found
        for block in ((TextBlock(content),) if isinstance(content, str) else content)
    )
    return blocks, role


def system_note(message: SystemMessage) -> str:
    """A system message as text a user turn can carry (for apis whose only
    system prompt is the one before the conversation), marked so that the
    model reads an instruction, not the user's words."""
    content = message.content
    text = content if isinstance(content, str) else "\n\n".join(b.text for b in content)
    tag = f"{message.role}-message"
    return f"<{tag}>\n{text}\n</{tag}>"


# ---------------------------------------------------------------------------
# Assistant turns and who issued them


_SIGNED = (TextBlock, ThinkingBlock, ToolCallBlock)


@dataclass
class Turn:
    """One assistant turn being decoded from a request.

    Blocks are added in wire order; an envelope found in an opaque field
    names the issuer (the first one wins: one per turn is enough, encoding.md
    §9). A ``turn`` envelope is a carrier: an empty thinking block / reasoning
    item whose entries ``[position, kind, signature]`` sign the blocks at
    those positions of the restored turn (positions count the turn's blocks
    without carriers); it adds no block itself.
    """

    api: str
    model: str | None
    provider: str | None
    content: list[ContentBlock] = field(default_factory=list)
    issuer: Issuer | None = None
    _pending: list[Any] = field(default_factory=list)

    def add(self, block: ContentBlock) -> None:
        self.content.append(block)

    def opened(self, value: Any) -> Envelope | None:
        """The envelope in an opaque field, noting its issuer; None when the
        value is an ordinary signature."""
        envelope = unwrap(value)
        if envelope is not None and self.issuer is None:
            self.issuer = envelope.issuer
        return envelope

    def carrier(self, envelope: Envelope) -> bool:
        """Keep a ``turn`` envelope's entries; True when it was one."""
        if envelope.kind != "turn":
            return False
        if isinstance(envelope.signature, list):
            self._pending.extend(envelope.signature)
        return True

    def message(self) -> AssistantMessage | None:
        if not self.content:
            return None
        content = self.content
        for entry in self._pending:
            _sign(content, entry)
        issuer = self.issuer or Issuer(self.api, self.provider, self.model)
        calls = any(isinstance(b, ToolCallBlock) for b in content)
        return AssistantMessage(
            tuple(content),
            issuer.api,
            issuer.model,
            StopReason.TOOL_USE if calls else StopReason.STOP,
            None,
            Usage(),
            None,
            issuer.provider,
        )


_KIND_BLOCKS: dict[str, type] = {
    "text": TextBlock,
    "thinking": ThinkingBlock,
    "redacted": ThinkingBlock,
    "toolcall": ToolCallBlock,
}


def _sign(content: list[ContentBlock], entry: Any) -> None:
    """Apply one ``[position, kind, signature]`` entry of a carrier; entries
    that do not fit the block at their position are ignored."""
    if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], int)):
        return
    position, kind, signature = entry
    if not (0 <= position < len(content)) or not isinstance(signature, str | None):
        return
    block = content[position]
    expected = _KIND_BLOCKS.get(kind) if isinstance(kind, str) else None
    if expected is not None and isinstance(block, expected) and isinstance(block, _SIGNED):
        content[position] = replace(block, signature=signature)


def provider_tools(tools: Sequence[Tool | ProviderTool], api: str) -> list[Tool | ProviderTool]:
    """The tools an api can take: every function tool, its own provider tools."""
    return [t for t in tools if isinstance(t, Tool) or t.api == api]


# ---------------------------------------------------------------------------
# Non-streaming responses


def drive(
    decoder_class: type[Decoder],
    payloads: Sequence[tuple[str, dict[str, Any]]],
    *,
    model: str | None = None,
    provider: str | None = None,
    done: bool = False,
    events: list[Event] | None = None,
) -> AssistantMessage:
    """The message a stream decoder builds from ``payloads`` (the events the
    streaming form of a non-streaming answer would carry), then ``[DONE]``
    (with ``done``) or the end of input: the one accumulator and the one
    mapping for both forms, so the two give the same message. The canonical
    events of that reading are appended to ``events`` when it is given."""
    builder = MessageBuilder(
        decoder_class.api,
        model=model,
        provider=provider,
        stop_table=decoder_class.stop_table,
        blocks_end_implicitly=decoder_class.blocks_end_implicitly,
    )
    decoder = decoder_class(builder)
    for event, payload in payloads:
        if builder.closed:
            break
        decoder.handle(event, payload)
    if done and not builder.closed:
        decoder.done_marker()
    if not builder.closed:
        decoder.end_of_input()
    if events is not None:
        events.extend(builder.events)
    return builder.message


# ---------------------------------------------------------------------------
# Media an api takes


@dataclass(frozen=True)
class MediaTypes:
    """The media types an api takes in images and in documents (files,
    audio). An entry ending with ``/`` is a prefix (``"image/"``).
    ``image_detail``: the api takes OpenAI's ``detail`` rendering hint."""

    images: tuple[str, ...]
    documents: tuple[str, ...]
    image_detail: bool = False

    def accepts(self, block: ImageBlock | DocumentBlock) -> bool:
        """Whether ``block`` can go; a block of unknown type (a URL or a
        stored file without one) is not refused."""
        mime = block.mime_type.lower()
        types = self.images if isinstance(block, ImageBlock) else self.documents
        return not mime or any(mime.startswith(t) if t[-1] == "/" else mime == t for t in types)

    def describe(self) -> str:
        def names(types: tuple[str, ...]) -> str:
            return ", ".join(t + "*" if t[-1] == "/" else t for t in types)

        return f"images {names(self.images)}; documents {names(self.documents)}"


def check_parts(
    messages: Sequence[Message], api: str, media: MediaTypes
) -> tuple[SanitizeWarning, ...]:
    """``ValueError`` naming the first part of a user message or a tool
    result that ``api`` cannot take: an image or document of a type it
    refuses, or another api's own part. It would otherwise be dropped
    unseen (a message holding only it would vanish), or be a 400 from the
    provider that names nothing of the caller's. An image's ``detail`` hint
    (other than ``"auto"``) that ``api`` has no setting for is dropped, the
    image sent: one ``detail_dropped`` warning each. Linear in the number of
    blocks."""
    warnings: list[SanitizeWarning] = []
    for i, m in enumerate(messages):
        if not isinstance(m, (UserMessage, ToolResultMessage)) or isinstance(m.content, str):
            continue
        for j, block in enumerate(m.content):
            if isinstance(block, (ImageBlock, DocumentBlock)) and not media.accepts(block):
                raise ValueError(
                    f"messages[{i}].content[{j}]: {block.mime_type} cannot be sent to {api}"
                    f" (it takes {media.describe()})"
                )
            if isinstance(block, ProviderBlock) and block.api != api:
                raise ValueError(
                    f"messages[{i}].content[{j}]: the {block.api} part {block.kind!r}"
                    f" cannot be sent to {api} (only its own api knows it)"
                )
            hint = block.detail if isinstance(block, ImageBlock) else None
            if hint not in (None, "auto") and not media.image_detail:
                reason = f"image detail {hint!r} not carried to {api}; the image is sent"
                warnings.append(SanitizeWarning(i, j, "detail_dropped", reason))
    return tuple(warnings)


# ---------------------------------------------------------------------------
# Data URLs (OpenAI images and files)


def data_url(mime_type: str, data: str) -> str:
    """A ``data:`` URL of base64 ``data``, in the standard alphabet."""
    return f"data:{mime_type};base64,{standard_base64(data)}"


_URL_SAFE = str.maketrans("-_", "+/")


def standard_base64(data: str) -> str:
    """``data`` in the standard base64 alphabet, padded, as Anthropic and
    OpenAI take it: google-genai (and Gemini clients after it) write bytes
    URL-safe (``-``/``_``), often unpadded. Standard base64 is returned as it
    is. Linear in the length."""
    if "-" not in data and "_" not in data:
        return data
    data = data.translate(_URL_SAFE)
    return data + "=" * (-len(data) % 4)


#: The one document type whose canonical ``data`` is its text, not base64.
PLAIN_TEXT = "text/plain"


def inline_document(
    mime_type: str,
    data: str,
    url: str | None = None,
    file_id: str | None = None,
    name: str | None = None,
) -> DocumentBlock:
    """A document from inline base64 (either alphabet): a plain-text one
    holds its text, as every api's plain-text document is read (Anthropic's
    text source), when the bytes are UTF-8."""
    if mime_type.lower() == PLAIN_TEXT:
        try:
            standard = standard_base64(data)
            standard += "=" * (-len(standard) % 4)
            data = base64.b64decode(standard, validate=True).decode()
        except ValueError:  # not base64 of UTF-8 text: the bytes as they came
            pass
    return DocumentBlock(mime_type, data, url, file_id, name)


def document_base64(block: DocumentBlock) -> str:
    """A document's inline data as base64: a plain-text document's text
    encoded (standard alphabet), any other data as it is."""
    data = block.data or ""
    if block.mime_type.lower() == PLAIN_TEXT:
        return base64.b64encode(data.encode()).decode()
    return data


def parse_data_url(url: str) -> tuple[str, str] | None:
    """``(mime_type, base64 data)`` of a ``data:<mime>;base64,<data>`` URL."""
    if not url.startswith("data:"):
        return None
    head, sep, data = url[5:].partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    return head[: -len(";base64")], data


def embedded_json(text: str | None) -> Any:
    """The JSON object or array a string holds (a Responses item or id
    signature, OpenRouter ``reasoning_details``, a tool result), or None:
    signatures of other issuers are opaque strings, results plain text."""
    if not text or text[0] not in "[{":
        return None
    try:
        return loads(text)
    except ValueError:
        return None


def plan_warnings(plan: ReasoningPlan | None) -> tuple[SanitizeWarning, ...]:
    """What fitting the request's reasoning to the target model changed, as
    the request's warnings (``reasoning_adjusted``: a setting, not a block)."""
    if plan is None:
        return ()
    return tuple(SanitizeWarning(None, None, "reasoning_adjusted", w) for w in plan.warnings)
