"""Content blocks, messages, ``Usage`` and ``StopReason``: the canonical data model.

Everything here is an immutable (frozen, slotted) dataclass. ``to_dict()``
returns a JSON-ready dict whose ``"type"`` names the class; ``from_dict()``
reads it back, so a conversation history can be stored as JSON and replayed
unchanged (``message_from_dict(m.to_dict()) == m``).

Sequences are tuples so that a finished message cannot be mutated behind the
back of whoever holds it; ``to_dict()`` turns them into lists.

``cache`` on a block or tool result is a prompt-cache breakpoint after it:
None for none, ``"ephemeral"`` for one with the API's default lifetime, else
the lifetime (``"5m"``, ``"1h"`` …). ``to_dict()`` writes it only when set.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Any

from ._frozen import twin

if TYPE_CHECKING:
    from .models.cost import CostBreakdown

__all__ = [
    "AssistantMessage",
    "ContentBlock",
    "DocumentBlock",
    "ImageBlock",
    "Message",
    "ProviderBlock",
    "StopReason",
    "SystemMessage",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "ToolResultMessage",
    "Usage",
    "UserContent",
    "UserMessage",
    "block_from_dict",
    "message_from_dict",
]


class StopReason(str, Enum):
    """Why the assistant stopped. The provider's own value is kept beside it."""

    STOP = "stop"
    LENGTH = "length"
    TOOL_USE = "tool_use"
    CONTENT_FILTER = "content_filter"
    PAUSE = "pause"
    ERROR = "error"
    ABORTED = "aborted"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts as the provider bills them.

    ``input_tokens`` excludes cache reads and writes; ``output_tokens``
    includes reasoning; ``reasoning_tokens`` is the informational share of
    output spent on reasoning; ``total_tokens`` is always
    input + output + cache_read + cache_write (use :meth:`of` to build one).
    ``raw`` is the provider's last usage object, verbatim; it does not take
    part in equality, so two snapshots with the same counts compare equal.
    ``reported`` is False when the provider sent no usage at all (a Chat
    stream without ``stream_options.include_usage``): the zeros then mean
    "not reported", not "nothing used". Usages add up (``a + b``,
    ``sum(usages)``); a total is reported only if every part was.
    :meth:`cost` prices one from the model catalog.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0
    raw: Mapping[str, Any] | None = field(default=None, compare=False)
    reported: bool = field(default=True, compare=False)

    def __eq__(self, other: object) -> bool:
        # The generated one compares tuples of all fields; a stream may
        # compare a snapshot per chunk, and the first count that differs
        # settles it. ``raw`` takes no part, as declared.
        if other.__class__ is not self.__class__:
            return NotImplemented
        usage: Usage = other
        return (
            self.output_tokens == usage.output_tokens
            and self.input_tokens == usage.input_tokens
            and self.cache_read_tokens == usage.cache_read_tokens
            and self.cache_write_tokens == usage.cache_write_tokens
            and self.reasoning_tokens == usage.reasoning_tokens
            and self.total_tokens == usage.total_tokens
        )

    @classmethod
    def of(
        cls,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        reasoning_tokens: int = 0,
        raw: Mapping[str, Any] | None = None,
    ) -> Usage:
        """Build a ``Usage`` whose ``total_tokens`` is computed, never copied.

        Streams send a usage snapshot per chunk (Gemini) or per event, so this
        builds the object the fast way (see ``_frozen``).
        """
        total = input_tokens + output_tokens + cache_read_tokens + cache_write_tokens
        if cls is not Usage:  # a subclass may not share the layout
            return cls(
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cache_write_tokens,
                reasoning_tokens,
                total,
                raw,
            )
        usage = _UsageFields()
        usage.input_tokens = input_tokens
        usage.output_tokens = output_tokens
        usage.cache_read_tokens = cache_read_tokens
        usage.cache_write_tokens = cache_write_tokens
        usage.reasoning_tokens = reasoning_tokens
        usage.total_tokens = total
        usage.raw = raw
        usage.reported = True
        usage.__class__ = Usage
        return usage  # type: ignore[no-any-return]

    def __add__(self, other: Usage) -> Usage:
        """The counts of two calls together (``raw`` is not carried: it
        belongs to one response)."""
        if not isinstance(other, Usage):
            return NotImplemented
        total = Usage.of(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )
        if self.reported and other.reported:
            return total
        return replace(total, reported=False)

    def __radd__(self, other: object) -> Usage:
        """``0 + usage`` is ``usage``, so that ``sum(usages)`` works."""
        if isinstance(other, int) and other == 0:
            return self
        return NotImplemented

    def cost(self, model: str | None, provider: str | None = None) -> CostBreakdown | None:
        """What these tokens cost on ``model`` at ``provider``, by kind of
        token, from the model catalog; ``None`` when the usage was not
        reported or a price is unknown (see ``streamnorm.models.usage_cost``)."""
        from .models.cost import usage_cost

        return usage_cost(self, model, provider)

    def to_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "total_tokens": self.total_tokens,
            "raw": dict(self.raw) if self.raw is not None else None,
            "reported": self.reported,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Usage:
        return cls(
            int(d.get("input_tokens", 0)),
            int(d.get("output_tokens", 0)),
            int(d.get("cache_read_tokens", 0)),
            int(d.get("cache_write_tokens", 0)),
            int(d.get("reasoning_tokens", 0)),
            int(d.get("total_tokens", 0)),
            d.get("raw"),
            bool(d.get("reported", True)),
        )


# --------------------------------------------------------------------------
# Content blocks


_UsageFields = twin(Usage)


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Answer text. ``refusal`` marks text the provider sent as a refusal.
    ``cache`` marks a prompt-cache breakpoint after the block (see the module
    docstring)."""

    text: str
    signature: str | None = None
    citations: tuple[Any, ...] = ()
    refusal: bool = False
    cache: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _with_cache(
            {
                "type": "text",
                "text": self.text,
                "signature": self.signature,
                "citations": list(self.citations),
                "refusal": self.refusal,
            },
            self.cache,
        )


@dataclass(frozen=True, slots=True)
class ThinkingBlock:
    """Reasoning. For redacted thinking ``thinking`` is empty and ``signature``
    holds the provider's opaque data."""

    thinking: str
    signature: str | None = None
    redacted: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "thinking",
            "thinking": self.thinking,
            "signature": self.signature,
            "redacted": self.redacted,
        }


@dataclass(frozen=True, slots=True)
class ToolCallBlock:
    """A call the client must execute.

    ``raw_arguments`` is the argument text exactly as streamed; ``arguments``
    its strict parse. When ``error`` is set (``"incomplete"``,
    ``"invalid_json: …"``, ``"not_an_object"``) ``arguments`` is a best-effort
    preview for display only: the call must not be executed as if whole.
    """

    id: str
    name: str
    arguments: Mapping[str, Any]
    raw_arguments: str
    signature: str | None = None
    error: str | None = None
    cache: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _with_cache(
            {
                "type": "toolcall",
                "id": self.id,
                "name": self.name,
                "arguments": dict(self.arguments),
                "raw_arguments": self.raw_arguments,
                "signature": self.signature,
                "error": self.error,
            },
            self.cache,
        )


@dataclass(frozen=True, slots=True)
class ProviderBlock:
    """A provider-specific block kept verbatim for same-provider replay
    (server tool use and results, compaction items, code execution parts …).

    ``kind`` is the provider's own type string, ``data`` its object as finally
    known."""

    api: str
    kind: str
    data: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"type": "provider", "api": self.api, "kind": self.kind, "data": dict(self.data)}


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image in a user message or tool result: inline base64 ``data`` or a
    ``url``. ``detail`` is the OpenAI apis' rendering hint (``"auto"``,
    ``"low"``, ``"high"`` …; None when not given), sent where an api has one."""

    mime_type: str
    data: str | None = None
    url: str | None = None
    cache: str | None = None
    detail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"type": "image", "mime_type": self.mime_type, "data": self.data, "url": self.url}
        if self.detail is not None:
            d["detail"] = self.detail
        return _with_cache(d, self.cache)


@dataclass(frozen=True, slots=True)
class DocumentBlock:
    """A file in a user message or tool result (a PDF, plain text, audio …):
    inline base64 ``data`` (plain text as is for ``text/plain``), a ``url``,
    or a ``file_id`` of the provider's file store; ``name`` is its file name
    or title."""

    mime_type: str
    data: str | None = None
    url: str | None = None
    file_id: str | None = None
    name: str | None = None
    cache: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _with_cache(
            {
                "type": "document",
                "mime_type": self.mime_type,
                "data": self.data,
                "url": self.url,
                "file_id": self.file_id,
                "name": self.name,
            },
            self.cache,
        )


def _with_cache(d: dict[str, Any], cache: str | None) -> dict[str, Any]:
    if cache is not None:
        d["cache"] = cache
    return d


ContentBlock = TextBlock | ThinkingBlock | ToolCallBlock | ProviderBlock

#: What a user message or a tool result may hold (a ``ProviderBlock`` is a
#: part of one API kept verbatim for that API, such as an uploaded container file).
UserContent = TextBlock | ImageBlock | DocumentBlock | ProviderBlock


def block_from_dict(d: Mapping[str, Any]) -> ContentBlock | ImageBlock | DocumentBlock:
    """Inverse of the blocks' ``to_dict()``. Raises ``ValueError`` on an unknown type."""
    t = d.get("type")
    if t == "text":
        return TextBlock(
            d["text"],
            d.get("signature"),
            tuple(d.get("citations") or ()),
            bool(d.get("refusal")),
            d.get("cache"),
        )
    if t == "thinking":
        return ThinkingBlock(d["thinking"], d.get("signature"), bool(d.get("redacted")))
    if t == "toolcall":
        return ToolCallBlock(
            d["id"],
            d["name"],
            dict(d.get("arguments") or {}),
            d.get("raw_arguments", ""),
            d.get("signature"),
            d.get("error"),
            d.get("cache"),
        )
    if t == "provider":
        return ProviderBlock(d["api"], d["kind"], dict(d.get("data") or {}))
    if t == "image":
        return ImageBlock(
            d["mime_type"], d.get("data"), d.get("url"), d.get("cache"), d.get("detail")
        )
    if t == "document":
        return DocumentBlock(
            d.get("mime_type", ""),
            d.get("data"),
            d.get("url"),
            d.get("file_id"),
            d.get("name"),
            d.get("cache"),
        )
    raise ValueError(f"unknown content block type: {t!r}")


# --------------------------------------------------------------------------
# Messages


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the user said: plain text or a sequence of text, image and
    document blocks (and parts of one API kept verbatim).

    Checked at construction: a list becomes a tuple, a string in it a
    ``TextBlock``, a single block a one-block tuple; anything else (None, a
    number, a dict in an api's own spelling) raises ``TypeError`` naming the
    field."""

    content: str | tuple[UserContent, ...]

    def __post_init__(self) -> None:
        content = self.content
        if type(content) is not str:
            object.__setattr__(self, "content", _checked_blocks(content, "UserMessage.content"))

    def to_dict(self) -> dict[str, Any]:
        content: Any = (
            self.content if isinstance(self.content, str) else [b.to_dict() for b in self.content]
        )
        return {"type": "user", "content": content}


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """One assistant turn, as normalized from a stream.

    ``model`` is the model the caller asked for when given, else the one the
    stream reported; ``response_model`` is what the stream reported.
    ``provider`` names the host when known; with ``api`` and ``model`` it
    identifies who issued a signature. ``error`` holds the reason of a turn
    that ended in an ``Error`` event, ``error_code`` the provider's code for
    it and ``error_type`` its broader type beside the code (OpenAI's
    ``invalid_request_error`` next to ``invalid_api_key``, Anthropic's error
    ``type``) when it gave them; ``to_dict()`` writes each only when set.
    """

    content: tuple[ContentBlock, ...]
    api: str
    model: str | None
    stop_reason: StopReason
    raw_stop_reason: str | None
    usage: Usage
    response_id: str | None
    provider: str | None = None
    response_model: str | None = None
    error: str | None = None
    error_code: str | None = None
    error_type: str | None = None

    @property
    def text(self) -> str:
        """The concatenated non-refusal text of the message."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock) and not b.refusal)

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCallBlock))

    def to_dict(self) -> dict[str, Any]:
        d = {
            "type": "assistant",
            "content": [b.to_dict() for b in self.content],
            "api": self.api,
            "model": self.model,
            "stop_reason": self.stop_reason.value,
            "raw_stop_reason": self.raw_stop_reason,
            "usage": self.usage.to_dict(),
            "response_id": self.response_id,
            "provider": self.provider,
            "response_model": self.response_model,
            "error": self.error,
        }
        if self.error_code is not None:
            d["error_code"] = self.error_code
        if self.error_type is not None:
            d["error_type"] = self.error_type
        return d


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """The result of executing a tool call, answering ``tool_call_id``.
    ``cache`` is a prompt-cache breakpoint after the result.

    ``content`` is text or blocks (as a user message's); a tool's JSON result
    given as it is (a dict, a list of JSON values, a number) becomes its JSON
    text. The ids, ``None`` content and anything else are checked at
    construction, raising ``TypeError`` naming the field."""

    tool_call_id: str
    tool_name: str
    content: str | tuple[UserContent, ...]
    is_error: bool = False
    cache: str | None = None

    def __post_init__(self) -> None:
        if type(self.tool_call_id) is not str or type(self.tool_name) is not str:
            name = "tool_call_id" if type(self.tool_call_id) is not str else "tool_name"
            value = getattr(self, name)
            raise TypeError(f"ToolResultMessage.{name} must be a str, not {_kind(value)}")
        content = self.content
        if type(content) is not str:
            object.__setattr__(self, "content", _tool_result_content(content))

    def to_dict(self) -> dict[str, Any]:
        content: Any = (
            self.content if isinstance(self.content, str) else [b.to_dict() for b in self.content]
        )
        return _with_cache(
            {
                "type": "tool_result",
                "tool_call_id": self.tool_call_id,
                "tool_name": self.tool_name,
                "content": content,
                "is_error": self.is_error,
            },
            self.cache,
        )


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """A system or developer instruction given in the middle of the
    conversation, kept at its place. ``role`` is how the client spelled it
    (``"system"`` or ``"developer"``). System messages before the first turn
    are not this: they are the request's system prompt (``Request.system``)."""

    content: str | tuple[TextBlock, ...]
    role: str = "system"

    def to_dict(self) -> dict[str, Any]:
        content: Any = (
            self.content if isinstance(self.content, str) else [b.to_dict() for b in self.content]
        )
        return {"type": "system", "content": content, "role": self.role}


Message = UserMessage | AssistantMessage | ToolResultMessage | SystemMessage

_USER_CONTENT = (TextBlock, ImageBlock, DocumentBlock, ProviderBlock)


def _kind(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _checked_blocks(content: object, where: str) -> tuple[UserContent, ...]:
    """``content`` (not a str) as a tuple of user content blocks; a str item
    becomes a ``TextBlock``. Raises ``TypeError`` naming ``where`` and the
    item."""
    if isinstance(content, _USER_CONTENT):
        return (content,)
    if not isinstance(content, (tuple, list)):
        raise TypeError(
            f"{where} must be a str or a sequence of TextBlock, ImageBlock, DocumentBlock "
            f"or ProviderBlock, not {_kind(content)}"
        )
    if type(content) is tuple and all(type(b) in _USER_CONTENT for b in content):
        return content  # the common case, built by a decoder: kept as it is
    blocks: list[UserContent] = []
    for i, item in enumerate(content):
        if isinstance(item, str):
            blocks.append(TextBlock(item))
        elif isinstance(item, _USER_CONTENT):
            blocks.append(item)
        else:
            hint = " (build blocks, or read dicts with block_from_dict)" * isinstance(item, dict)
            raise TypeError(
                f"{where}[{i}] must be a str, TextBlock, ImageBlock, DocumentBlock or "
                f"ProviderBlock, not {_kind(item)}{hint}"
            )
    return tuple(blocks)


def _tool_result_content(content: object) -> str | tuple[UserContent, ...]:
    """A tool result's content that is not a str: blocks as a user message's,
    a JSON value (dict, list without blocks, number, bool) as its JSON text."""
    where = "ToolResultMessage.content"
    if content is None:
        raise TypeError(f"{where} must be a str, blocks or a JSON value, not None")
    is_blocks = isinstance(content, _USER_CONTENT) or (
        isinstance(content, (tuple, list))
        and any(isinstance(item, _USER_CONTENT) for item in content)
    )
    if is_blocks:
        return _checked_blocks(content, where)
    if not isinstance(content, (dict, list, tuple, int, float)):
        raise TypeError(f"{where} must be a str, blocks or a JSON value, not {_kind(content)}")
    try:
        return json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where} is not JSON: {exc}") from None


def _user_content(c: Any) -> str | tuple[UserContent, ...]:
    if isinstance(c, str):
        return c
    parts = tuple(block_from_dict(p) for p in c)
    for p in parts:
        if not isinstance(p, (TextBlock, ImageBlock, DocumentBlock, ProviderBlock)):
            raise ValueError(f"user content cannot hold a {type(p).__name__}")
    return parts  # type: ignore[return-value]


def _system_content(c: Any) -> str | tuple[TextBlock, ...]:
    if isinstance(c, str):
        return c
    parts = tuple(block_from_dict(p) for p in c)
    texts = tuple(p for p in parts if isinstance(p, TextBlock))
    if len(texts) != len(parts):
        raise ValueError("system content holds text blocks only")
    return texts


def message_from_dict(d: Mapping[str, Any]) -> Message:
    """Inverse of the messages' ``to_dict()``. Raises ``ValueError`` on an unknown type."""
    t = d.get("type")
    if t == "user":
        return UserMessage(_user_content(d["content"]))
    if t == "tool_result":
        return ToolResultMessage(
            d["tool_call_id"],
            d.get("tool_name", ""),
            _user_content(d["content"]),
            bool(d.get("is_error")),
            d.get("cache"),
        )
    if t == "system":
        return SystemMessage(_system_content(d["content"]), d.get("role") or "system")
    if t == "assistant":
        content = tuple(block_from_dict(b) for b in d.get("content", ()))
        for b in content:
            if isinstance(b, (ImageBlock, DocumentBlock)):
                raise ValueError(f"assistant content cannot hold a {type(b).__name__}")
        return AssistantMessage(
            content,  # type: ignore[arg-type]
            d["api"],
            d.get("model"),
            StopReason(d.get("stop_reason", "stop")),
            d.get("raw_stop_reason"),
            Usage.from_dict(d.get("usage") or {}),
            d.get("response_id"),
            d.get("provider"),
            d.get("response_model"),
            d.get("error"),
            d.get("error_code"),
            d.get("error_type"),
        )
    raise ValueError(f"unknown message type: {t!r}")
