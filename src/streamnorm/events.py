"""Canonical events: what every stream becomes, whatever its wire API.

Each event is a small frozen, slotted dataclass, usable with ``match``;
its class attribute ``type`` is the event's name (``"text_delta"`` …), as in
the official SDKs' events. ``to_dict()`` gives the JSON-ready dict (its
``"type"`` is that name) that the CLI prints one per line, and
:func:`event_from_dict` rebuilds the event from it. Exactly one terminal
event, :class:`Done` or :class:`Error`, ends every stream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from ._frozen import twin
from .errors import classify, is_retryable
from .messages import (
    AssistantMessage,
    ContentBlock,
    DocumentBlock,
    ImageBlock,
    StopReason,
    Usage,
    block_from_dict,
    message_from_dict,
)
from .partial_json import ArgsOp, ArgumentBuffer

__all__ = [
    "BlockEnd",
    "Done",
    "Error",
    "Event",
    "NormalizationError",
    "PromptProgress",
    "Start",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "UsageUpdate",
    "event_from_dict",
]


class _Unvalidated:
    """Annotation metadata telling pydantic to take a field as it is (an
    internal object, never part of an event's value); serialized as ``None``.

    pydantic calls this only when someone builds a schema: streamnorm itself
    does not import pydantic.
    """

    @staticmethod
    def __get_pydantic_core_schema__(source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.any_schema(
            serialization=core_schema.plain_serializer_function_ser_schema(lambda _: None)
        )


@dataclass(frozen=True, slots=True)
class Start:
    """The stream identified itself. Always the first event. ``provider`` is
    the host that issued it when known (named by the caller or an adapter, or
    proven by the stream itself), as on the final message."""

    type: ClassVar[Literal["start"]] = "start"

    api: str
    model: str | None
    response_id: str | None
    provider: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "start",
            "api": self.api,
            "model": self.model,
            "response_id": self.response_id,
        }
        if self.provider is not None:
            out["provider"] = self.provider
        return out


@dataclass(frozen=True, slots=True)
class TextDelta:
    """Answer text appended to the text block at ``index``."""

    type: ClassVar[Literal["text_delta"]] = "text_delta"

    index: int
    delta: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text_delta", "index": self.index, "delta": self.delta}


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """Reasoning text. ``signature`` is the block's whole signature so far when
    this event changed it (replace semantics), else ``None``."""

    type: ClassVar[Literal["thinking_delta"]] = "thinking_delta"

    index: int
    delta: str
    signature: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "thinking_delta",
            "index": self.index,
            "delta": self.delta,
            "signature": self.signature,
        }


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A fragment of a tool call's argument text.

    ``partial_args`` is the best-effort parse of all argument text up to and
    including this fragment; ``ops`` is what this fragment changed in it, as
    :class:`~streamnorm.partial_json.ArgsOp` operations (``("set", path,
    value)``, ``("append", path, text)``), so that a view of the arguments
    can be updated in O(len(delta)). Both are computed on access from the
    call's shared append-only :class:`ArgumentBuffer` and the buffer length
    at this event, so building the event costs O(len(delta)), never
    O(arguments so far). Reading either for every event in order scans each
    fragment once. The event caches its ``ops`` (O(len(delta))) but never
    its preview: treat the returned dict as read-only (completed values are
    shared between successive previews, see partial_json).
    """

    type: ClassVar[Literal["toolcall_delta"]] = "toolcall_delta"

    index: int
    id: str | None
    name: str
    raw_json_delta: str
    buffer: Annotated[ArgumentBuffer | None, _Unvalidated] = field(
        default=None, repr=False, compare=False
    )
    end: int = field(default=-1, repr=False, compare=False)
    _ops: tuple[ArgsOp, ...] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def partial_args(self) -> dict[str, Any]:
        buffer = self.buffer
        if buffer is None:
            from .partial_json import parse_partial_json

            return parse_partial_json(self.raw_json_delta)
        end = self.end if self.end >= 0 else len(buffer)
        return buffer.partial(end, end - len(self.raw_json_delta))

    @property
    def ops(self) -> tuple[ArgsOp, ...]:
        cached = self._ops
        if cached is None:
            buffer = self.buffer
            if buffer is None:
                from .partial_json import IncrementalJSONParser

                parser = IncrementalJSONParser(record_ops=True)
                parser.feed(self.raw_json_delta)
                cached = parser.take_ops()
            else:
                end = self.end if self.end >= 0 else len(buffer)
                cached = buffer.ops(end - len(self.raw_json_delta), end)
            object.__setattr__(self, "_ops", cached)
        return cached

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready dict. It carries ``ops``, not the whole preview, so
        that its size stays O(len(delta)): applying the ``ops`` of a call's
        dicts in order rebuilds every ``partial_args``."""
        return {
            "type": "toolcall_delta",
            "index": self.index,
            "id": self.id,
            "name": self.name,
            "raw_json_delta": self.raw_json_delta,
            "ops": [op.to_dict() for op in self.ops],
        }


@dataclass(frozen=True, slots=True)
class BlockEnd:
    """The block at ``index`` is finished; ``block`` is its final state."""

    type: ClassVar[Literal["block_end"]] = "block_end"

    index: int
    block: ContentBlock

    def to_dict(self) -> dict[str, Any]:
        return {"type": "block_end", "index": self.index, "block": self.block.to_dict()}


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """The cumulative usage changed."""

    type: ClassVar[Literal["usage"]] = "usage"

    usage: Usage

    def to_dict(self) -> dict[str, Any]:
        return {"type": "usage", "usage": self.usage.to_dict()}


@dataclass(frozen=True, slots=True)
class PromptProgress:
    """Prompt prefill progress (llama.cpp ``return_progress``)."""

    type: ClassVar[Literal["prompt_progress"]] = "prompt_progress"

    processed: int
    total: int
    cached: int
    time_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "prompt_progress",
            "processed": self.processed,
            "total": self.total,
            "cached": self.cached,
            "time_ms": self.time_ms,
        }


@dataclass(frozen=True, slots=True)
class NormalizationError:
    """Non-fatal: something could not be interpreted; the stream goes on.

    ``raw`` holds the offending input (or ``None``)."""

    type: ClassVar[Literal["normalization_error"]] = "normalization_error"

    kind: str
    detail: str
    raw: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "normalization_error",
            "kind": self.kind,
            "detail": self.detail,
            "raw": self.raw,
        }


@dataclass(frozen=True, slots=True)
class Done:
    """Terminal: the stream completed; ``message`` is the final message."""

    type: ClassVar[Literal["done"]] = "done"

    message: AssistantMessage

    @property
    def stop_reason(self) -> StopReason:
        return self.message.stop_reason

    @property
    def content(self) -> tuple[ContentBlock, ...]:
        return self.message.content

    @property
    def usage(self) -> Usage:
        return self.message.usage

    def to_dict(self) -> dict[str, Any]:
        return {"type": "done", "message": self.message.to_dict()}


@dataclass(frozen=True, slots=True)
class Error:
    """Terminal: the stream failed. ``kind`` is ``upstream``, ``truncated``,
    ``protocol``, ``limit`` or ``aborted``; ``message`` is everything received
    so far (stop reason ``error`` or ``aborted``).

    ``code`` is the provider's own code, its most specific word
    (``overloaded_error``, ``invalid_api_key``, ``RESOURCE_EXHAUSTED``);
    ``error_type`` the provider's broader type beside it where it sends one
    (OpenAI's ``invalid_request_error`` next to ``invalid_api_key``,
    Anthropic's error ``type``, Bedrock's exception name); ``status`` the
    HTTP status where the adapter that read the response knew it;
    ``retry_after`` the seconds to wait that the response named
    (``Retry-After``). ``category`` and ``retryable`` classify the error the
    same way for every provider (`streamnorm.errors`)."""

    type: ClassVar[Literal["error"]] = "error"

    kind: str
    reason: str
    code: str | None
    message: AssistantMessage
    status: int | None = None
    retry_after: float | None = None
    error_type: str | None = None

    @property
    def category(self) -> str:
        """One of `streamnorm.errors.CATEGORIES`: ``context_overflow``,
        ``rate_limit``, ``overloaded``, ``auth``, ``quota``,
        ``invalid_request``, ``server``, ``timeout`` …"""
        return classify(self.kind, self.code, self.reason, self.status, self.error_type)

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed when tried again later."""
        return is_retryable(self.category)

    def to_dict(self) -> dict[str, Any]:
        category = self.category
        return {
            "type": "error",
            "kind": self.kind,
            "reason": self.reason,
            "code": self.code,
            "error_type": self.error_type,
            "status": self.status,
            "category": category,
            "retryable": is_retryable(category),
            "retry_after": self.retry_after,
            "message": self.message.to_dict(),
        }


Event = (
    Start
    | TextDelta
    | ThinkingDelta
    | ToolCallDelta
    | BlockEnd
    | UsageUpdate
    | PromptProgress
    | NormalizationError
    | Done
    | Error
)


#: Each event class by its ``type``.
EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        Start,
        TextDelta,
        ThinkingDelta,
        ToolCallDelta,
        BlockEnd,
        UsageUpdate,
        PromptProgress,
        NormalizationError,
        Done,
        Error,
    )
}


# --------------------------------------------------------------------------
# event_from_dict: the inverse of to_dict


def _field(d: Mapping[str, Any], key: str) -> Any:
    try:
        return d[key]
    except KeyError:
        raise ValueError(f"{d.get('type')} event: missing field {key!r}") from None


def _message(d: Mapping[str, Any]) -> AssistantMessage:
    raw = _field(d, "message")
    try:
        message = message_from_dict(raw)
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{d.get('type')} event: bad message ({exc!r})") from None
    if not isinstance(message, AssistantMessage):
        raise ValueError(f"{d.get('type')} event: the message must be an assistant message")
    return message


def _block(d: Mapping[str, Any]) -> ContentBlock:
    try:
        block = block_from_dict(_field(d, "block"))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"block_end event: bad block ({exc!r})") from None
    if isinstance(block, (ImageBlock, DocumentBlock)):
        raise ValueError(
            "block_end event: an image or document block is never part of an assistant turn"
        )
    return block


def _tool_call_delta(d: Mapping[str, Any]) -> ToolCallDelta:
    event = ToolCallDelta(
        _field(d, "index"), d.get("id"), _field(d, "name"), _field(d, "raw_json_delta")
    )
    ops = d.get("ops")
    if isinstance(ops, list):  # what the delta changed, as the sender read it
        object.__setattr__(event, "_ops", tuple(_args_op(op) for op in ops))
    return event


def _args_op(d: Any) -> ArgsOp:
    try:
        op, path, value = d["op"], d["path"], d["value"]
    except (KeyError, TypeError):
        raise ValueError(f"toolcall_delta event: bad op {d!r}") from None
    if op not in ("set", "append") or not isinstance(path, list):
        raise ValueError(f"toolcall_delta event: bad op {d!r}")
    return ArgsOp(op, tuple(path), value)


_FROM_DICT: dict[str, Callable[[Mapping[str, Any]], Event]] = {
    "start": lambda d: Start(
        _field(d, "api"), d.get("model"), d.get("response_id"), d.get("provider")
    ),
    "text_delta": lambda d: TextDelta(_field(d, "index"), _field(d, "delta")),
    "thinking_delta": lambda d: ThinkingDelta(
        _field(d, "index"), _field(d, "delta"), d.get("signature")
    ),
    "toolcall_delta": _tool_call_delta,
    "block_end": lambda d: BlockEnd(_field(d, "index"), _block(d)),
    "usage": lambda d: UsageUpdate(Usage.from_dict(_field(d, "usage"))),
    "prompt_progress": lambda d: PromptProgress(
        _field(d, "processed"), _field(d, "total"), _field(d, "cached"), _field(d, "time_ms")
    ),
    "normalization_error": lambda d: NormalizationError(
        _field(d, "kind"), _field(d, "detail"), d.get("raw")
    ),
    "done": lambda d: Done(_message(d)),
    "error": lambda d: Error(
        _field(d, "kind"),
        _field(d, "reason"),
        d.get("code"),
        _message(d),
        d.get("status"),
        d.get("retry_after"),
        d.get("error_type"),
    ),
}


def event_from_dict(d: Mapping[str, Any]) -> Event:
    """The event whose ``to_dict()`` is ``d``: ``event_from_dict(e.to_dict()) == e``,
    also after a trip through JSON. A ``toolcall_delta`` keeps the
    ``partial_args`` it carries. Raises ``ValueError`` naming the unknown type
    or the missing field."""
    if not isinstance(d, Mapping):
        raise ValueError(f"an event dict must be a mapping, not {type(d).__name__}")
    kind = d.get("type")
    if kind is None:
        raise ValueError("an event dict needs a 'type' field")
    build = _FROM_DICT.get(kind) if isinstance(kind, str) else None
    if build is None:
        raise ValueError(f"unknown event type {kind!r}; known: {', '.join(EVENT_TYPES)}")
    return build(d)


# --------------------------------------------------------------------------
# Fast constructors for the builder's hot path (see ``_frozen``);
# ``TextDelta(i, d) == text_delta(i, d)`` always holds.

_TextDelta = twin(TextDelta)
_ThinkingDelta = twin(ThinkingDelta)
_ToolCallDelta = twin(ToolCallDelta)
_UsageUpdate = twin(UsageUpdate)


def text_delta(index: int, delta: str) -> TextDelta:
    event = _TextDelta()
    event.index = index
    event.delta = delta
    event.__class__ = TextDelta
    return event  # type: ignore[no-any-return]


def thinking_delta(index: int, delta: str, signature: str | None) -> ThinkingDelta:
    event = _ThinkingDelta()
    event.index = index
    event.delta = delta
    event.signature = signature
    event.__class__ = ThinkingDelta
    return event  # type: ignore[no-any-return]


def tool_call_delta(
    index: int, id: str | None, name: str, raw: str, buffer: ArgumentBuffer, end: int
) -> ToolCallDelta:
    event = _ToolCallDelta()
    event.index = index
    event.id = id
    event.name = name
    event.raw_json_delta = raw
    event.buffer = buffer
    event.end = end
    event._ops = None
    event.__class__ = ToolCallDelta
    return event  # type: ignore[no-any-return]


def usage_update(usage: Usage) -> UsageUpdate:
    event = _UsageUpdate()
    event.usage = usage
    event.__class__ = UsageUpdate
    return event  # type: ignore[no-any-return]
