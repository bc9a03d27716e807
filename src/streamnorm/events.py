"""Canonical events: what every stream becomes, whatever its wire API.

Each event is a small frozen, slotted dataclass, usable with ``match``;
``to_dict()`` gives the JSON-ready dict (``"type"`` is the event name) that
the CLI prints one per line. Exactly one terminal event, :class:`Done` or
:class:`Error`, ends every stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._frozen import new, twin
from .messages import AssistantMessage, ContentBlock, StopReason, Usage

if TYPE_CHECKING:
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
]


@dataclass(frozen=True, slots=True)
class Start:
    """The stream identified itself. Always the first event."""

    api: str
    model: str | None
    response_id: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "start",
            "api": self.api,
            "model": self.model,
            "response_id": self.response_id,
        }


@dataclass(frozen=True, slots=True)
class TextDelta:
    index: int
    delta: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text_delta", "index": self.index, "delta": self.delta}


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """Reasoning text. ``signature`` is the block's whole signature so far when
    this event changed it (replace semantics), else ``None``."""

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

    index: int
    id: str | None
    name: str
    raw_json_delta: str
    buffer: ArgumentBuffer | None = field(default=None, repr=False, compare=False)
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

    index: int
    block: ContentBlock

    def to_dict(self) -> dict[str, Any]:
        return {"type": "block_end", "index": self.index, "block": self.block.to_dict()}


@dataclass(frozen=True, slots=True)
class UsageUpdate:
    """The cumulative usage changed."""

    usage: Usage

    def to_dict(self) -> dict[str, Any]:
        return {"type": "usage", "usage": self.usage.to_dict()}


@dataclass(frozen=True, slots=True)
class PromptProgress:
    """Prompt prefill progress (llama.cpp ``return_progress``)."""

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
    so far (stop reason ``error`` or ``aborted``)."""

    kind: str
    reason: str
    code: str | None
    message: AssistantMessage

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "error",
            "kind": self.kind,
            "reason": self.reason,
            "code": self.code,
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


# --------------------------------------------------------------------------
# Fast constructors for the builder's hot path (see ``_frozen``);
# ``TextDelta(i, d) == text_delta(i, d)`` always holds.

_TextDelta = twin(TextDelta)
_ThinkingDelta = twin(ThinkingDelta)
_ToolCallDelta = twin(ToolCallDelta)
_UsageUpdate = twin(UsageUpdate)


def text_delta(index: int, delta: str) -> TextDelta:
    event = new(_TextDelta)
    event.index = index
    event.delta = delta
    event.__class__ = TextDelta
    return event  # type: ignore[no-any-return]


def thinking_delta(index: int, delta: str, signature: str | None) -> ThinkingDelta:
    event = new(_ThinkingDelta)
    event.index = index
    event.delta = delta
    event.signature = signature
    event.__class__ = ThinkingDelta
    return event  # type: ignore[no-any-return]


def tool_call_delta(
    index: int, id: str | None, name: str, raw: str, buffer: ArgumentBuffer, end: int
) -> ToolCallDelta:
    event = new(_ToolCallDelta)
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
    event = new(_UsageUpdate)
    event.usage = usage
    event.__class__ = UsageUpdate
    return event  # type: ignore[no-any-return]
