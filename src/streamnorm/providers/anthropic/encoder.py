"""``anthropic-messages``: canonical events → Messages SSE, and the
non-streaming ``Message`` JSON (encoding.md §2).

The wire has one open block at a time, numbered 0, 1, 2 … in start order;
canonical blocks may interleave (Chat sources end every block only at the
terminal). So: when another block receives content, a text or thinking block
is stopped (later text opens a new block), and a tool block is stopped only
when the source never ends blocks before its terminal; otherwise the other
block's events wait until the tool block ends, then follow in order.

Tool arguments stream as ``input_json_delta`` while the text stays a strict
JSON prefix (the SDK parses every delta); after the first fragment that is
not, streaming stops and the block ends with the characters that close what
was sent. Signatures go out once, as a ``signature_delta`` just before
``content_block_stop``; a thinking block opens with ``"signature":""`` even
when it is sent whole, as Anthropic does (clients read signatures only from
the delta). Foreign text and tool-call signatures, which Messages has no
field for, ride on an empty thinking block (an envelope of kind ``turn``,
positions counted in blocks without carriers). Clients take the answer from
the last block they see stopped, so a carrier never ends a turn: in a stream
it is started and stopped inside the block it signs, just before that
block's ``content_block_stop``; in a whole ``Message`` it comes just
before the first block it signs.
"""

from __future__ import annotations

import base64
import re
from typing import Any

from ..._json import dumps_bytes
from ...events import BlockEnd, Error, Event, TextDelta, ThinkingDelta, ToolCallDelta
from ...messages import (
    AssistantMessage,
    ContentBlock,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from ..json_prefix import StrictPrefix
from ..wire_writer import (
    Carrier,
    WireEncoder,
    derive_id,
    error_class,
    frame,
    issuer_of,
    raw_stop,
    turn_signatures,
)

__all__ = ["AnthropicEncoder", "encode_response"]

API = "anthropic-messages"

STOP_VALUES: dict[StopReason, str] = {
    StopReason.STOP: "end_turn",
    StopReason.TOOL_USE: "tool_use",
    StopReason.LENGTH: "max_tokens",
    StopReason.CONTENT_FILTER: "refusal",
    StopReason.PAUSE: "pause_turn",
}

ERROR_TYPES = {
    "rate_limit": "rate_limit_error",
    "overloaded": "overloaded_error",
    "server": "api_error",
}

_valid_id = re.compile(r"[A-Za-z0-9_-]+\Z").match


def client_id(call_id: str) -> str:
    """The canonical id when Messages accepts it, else ``toolu_`` +
    base64url of it (reversible; encoding.md §8)."""
    if _valid_id(call_id):
        return call_id
    return "toolu_" + base64.urlsafe_b64encode(call_id.encode()).rstrip(b"=").decode()


def wire_usage(usage: Usage) -> dict[str, Any]:
    """Canonical usage as Messages counts it (encoding.md §7)."""
    out: dict[str, Any] = {
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens,
    }
    if usage.reasoning_tokens:
        out["output_tokens_details"] = {"thinking_tokens": usage.reasoning_tokens}
    return out


def stop_value(message: AssistantMessage) -> str:
    """``tool_use`` only when the message holds tool calls the client runs here."""
    value = raw_stop(message, API, STOP_VALUES)
    if message.api != API and value == "tool_use" and not message.tool_calls:
        return "end_turn"
    return value


def start_shape(block: ContentBlock, carrier: Carrier) -> dict[str, Any] | None:
    """A whole block as ``content`` holds it (also the start of a block sent
    in one piece); None for a block Messages cannot carry."""
    if isinstance(block, TextBlock):
        out: dict[str, Any] = {"type": "text", "text": block.text}
        if block.citations and not carrier.foreign:
            out["citations"] = list(block.citations)
        return out
    if isinstance(block, ThinkingBlock):
        if block.redacted:
            return {"type": "redacted_thinking", "data": carrier.carry("redacted", block.signature)}
        signature = carrier.carry("thinking", block.signature)
        return {"type": "thinking", "thinking": block.thinking, "signature": signature or ""}
    if isinstance(block, ToolCallBlock):
        return {
            "type": "tool_use",
            "id": client_id(block.id),
            "name": block.name,
            "input": dict(block.arguments),
        }
    if block.api == API:
        return dict(block.data)
    return None


def encode_response(message: AssistantMessage, *, model: str | None = None) -> dict[str, Any]:
    """The non-streaming ``Message`` (encoding.md §2.3)."""
    carrier = Carrier(API, issuer_of(message))
    content: list[dict[str, Any]] = []
    placed: list[tuple[int, ContentBlock]] = []
    for block in message.content:
        shape = start_shape(block, carrier)
        if shape is not None:
            placed.append((len(content), block))
            content.append(shape)
    turn = turn_signatures(placed, carrier)
    if turn is not None:  # before the first block it signs, never last
        signature = carrier.carry("turn", turn)
        content.insert(turn[0][0], {"type": "thinking", "thinking": "", "signature": signature})
    source_id = message.response_id
    return {
        "id": source_id
        if source_id and (message.api == API or source_id.startswith("msg_"))
        else derive_id("msg_", API, source_id or ""),
        "type": "message",
        "role": "assistant",
        "model": model or message.model or "",
        "content": content,
        "stop_reason": stop_value(message),
        "stop_sequence": None,
        "usage": wire_usage(message.usage),
    }


#: ``_delta(index, {"type": "text_delta", "text": text})`` is these around
#: the JSON string of ``text`` (a test holds the two equal).
_TEXT_DELTA_HEAD = (
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":%d,'
    b'"delta":{"type":"text_delta","text":'
)
_TEXT_DELTA_TAIL = b"}}\n\n"


class _Wire:
    """One canonical block on the wire."""

    __slots__ = ("closed", "id", "index", "kind", "name", "pending", "prefix", "sent", "streaming")

    # ``sent`` keeps the fragments streamed so far (references, not copies):
    # the scanner that judged them is past the fragment that broke the
    # prefix, so the closing characters are found by scanning them again,
    # once, and only for a call that broke.

    def __init__(self, index: int, kind: str) -> None:
        self.index = index  # the wire index, once started (-1 before)
        self.kind = kind
        self.closed = False  # stopped on the wire (ended, or stopped early)
        # Tool calls: identity, fragments held until id and name are known,
        # the strict-prefix scanner and the fragments it accepted.
        self.id: str | None = None
        self.name = ""
        self.pending: list[str] = []
        self.prefix = StrictPrefix()
        self.sent: list[str] = []
        self.streaming = True


class AnthropicEncoder(WireEncoder):
    api = API
    id_prefix = "msg_"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._announced = False  # message_start sent
        self._next = 0  # next wire index
        self._current: int | None = None  # canonical index of the open wire block
        self._blocks: dict[int, _Wire] = {}
        self._queue: dict[int, list[Event]] = {}  # events waiting for the open tool block
        self._carriers: list[int] = []  # wire indices of turn carriers

    # -- the message ----------------------------------------------------------

    def _announce(self) -> bytes:
        if self._announced:
            return b""
        self._announced = True
        usage = wire_usage(self.usage)
        usage["output_tokens"] = 0
        message: dict[str, Any] = {
            "id": self.response_id,
            "type": "message",
            "role": "assistant",
            "model": self.model or "",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": usage,
        }
        return frame({"type": "message_start", "message": message}, "message_start")

    def opening(self) -> bytes:
        return self._announce() if self.started and not self.terminated else b""

    def on_done(self, message: AssistantMessage) -> bytes:
        out = self._announce() + self._stop_current() + self._flush_all()
        delta = {"stop_reason": stop_value(message), "stop_sequence": None}
        payload = {"type": "message_delta", "delta": delta, "usage": wire_usage(message.usage)}
        out += frame(payload, "message_delta")
        return out + frame({"type": "message_stop"}, "message_stop")

    def on_error(self, event: Error) -> bytes:
        out = self._announce() + self._stop_current() + self._flush_all()
        own = event.error_type or event.code  # Messages' one word for both
        if self.same_issuer(event.message) and own and own.endswith("_error"):
            kind = own
        else:
            kind = ERROR_TYPES[error_class(event.code, event.reason)]
        if event.message.usage != Usage():  # what was spent so far, before the error
            delta = {"stop_reason": None, "stop_sequence": None}
            usage = wire_usage(event.message.usage)
            out += frame({"type": "message_delta", "delta": delta, "usage": usage}, "message_delta")
        payload = {"type": "error", "error": {"type": kind, "message": event.reason}}
        return out + frame(payload, "error")

    def _position(self, index: int) -> int:
        """A wire block's position in the turn as a client reads it back:
        carriers are not counted (encoding.md §9)."""
        return index - sum(1 for c in self._carriers if c < index)

    def _carrier_for(self, wire_index: int, block: ContentBlock) -> bytes:
        """The ``turn`` carrier of one foreign signed text or tool-call block,
        sent whole while that block is still open (its stop comes after, so
        the block, not the carrier, is the last one a client sees stopped)."""
        entries = turn_signatures([(self._position(wire_index), block)], self.carrier)
        if entries is None:
            return b""
        index = self._take_index()
        self._carriers.append(index)
        return self._thinking_whole(index, "", self.carrier.carry("turn", entries))

    def _thinking_whole(self, index: int, thinking: str, signature: str | None) -> bytes:
        """A thinking block sent in one piece the way Anthropic sends every
        one: opened with empty fields, then its deltas, then stopped."""
        out = self._block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
        if thinking:
            out += self._delta(index, {"type": "thinking_delta", "thinking": thinking})
        if signature:
            out += self._delta(index, {"type": "signature_delta", "signature": signature})
        return out + self._block_stop(index)

    # -- routing: one wire block at a time -------------------------------------

    def _route(self, index: int, event: Event) -> bytes | None:
        """Bytes that make ``index`` the block to write to (stopping another),
        or None when the event must wait behind an open tool block."""
        out = self._announce()
        current = self._current
        if current is None or current == index:
            return out
        if index in self._queue or (
            self._blocks[current].kind == "toolcall" and self.source_api != "openai-completions"
        ):
            self._queue.setdefault(index, []).append(event)
            return None
        return out + self._stop_current()

    def _take_index(self) -> int:
        self._next += 1
        return self._next - 1

    def _open(self, index: int, kind: str, shape: dict[str, Any]) -> bytes:
        wire = self._blocks.get(index)
        if wire is None or wire.closed:
            wire = self._blocks[index] = _Wire(self._take_index(), kind)
            self._current = index
            return self._block_start(wire.index, shape)
        return b""

    def _stop_current(self) -> bytes:
        if self._current is None:
            return b""
        wire = self._blocks[self._current]
        self._current = None
        wire.closed = True
        return self._block_stop(wire.index)

    def _flush_all(self) -> bytes:
        out = b""
        while self._queue and self._current is None:
            for event in self._queue.pop(min(self._queue)):
                out += self.dispatch(event)
        return out

    # -- blocks ----------------------------------------------------------------

    def on_text(self, event: TextDelta) -> bytes:
        index = event.index
        if index == self._current:  # the open block's next piece: most events of a stream
            head = _TEXT_DELTA_HEAD % self._blocks[index].index
            return head + dumps_bytes(event.delta) + _TEXT_DELTA_TAIL
        out = self._route(index, event)
        if out is None:
            return b""
        out += self._open(index, "text", {"type": "text", "text": ""})
        wire = self._blocks[index]
        return out + self._delta(wire.index, {"type": "text_delta", "text": event.delta})

    def on_thinking(self, event: ThinkingDelta) -> bytes:
        if not event.delta:
            return b""  # signatures go out at the block's end
        out = self._route(event.index, event)
        if out is None:
            return b""
        shape = {"type": "thinking", "thinking": "", "signature": ""}
        out += self._open(event.index, "thinking", shape)
        wire = self._blocks[event.index]
        return out + self._delta(wire.index, {"type": "thinking_delta", "thinking": event.delta})

    def on_tool(self, event: ToolCallDelta) -> bytes:
        out = self._route(event.index, event)
        if out is None:
            return b""
        wire = self._blocks.get(event.index)
        if wire is None:
            wire = self._blocks[event.index] = _Wire(-1, "toolcall")
            self._current = event.index
        elif wire.closed:
            return out  # stopped early for another block: the rest cannot follow
        wire.id = wire.id or event.id
        wire.name = wire.name or event.name
        if event.raw_json_delta:
            wire.pending.append(event.raw_json_delta)
        if wire.index < 0 and wire.id and wire.name:
            out += self._start_tool(wire)
        if wire.index >= 0:
            out += self._send_arguments(wire)
        return out

    def _start_tool(self, wire: _Wire) -> bytes:
        wire.index = self._take_index()
        assert wire.id is not None
        shape = {"type": "tool_use", "id": client_id(wire.id), "name": wire.name, "input": {}}
        return self._block_start(wire.index, shape)

    def _send_arguments(self, wire: _Wire) -> bytes:
        out = b""
        for fragment in wire.pending:
            if not wire.streaming:
                break
            if wire.prefix.feed(fragment):
                wire.sent.append(fragment)
                out += self._delta(
                    wire.index, {"type": "input_json_delta", "partial_json": fragment}
                )
            else:
                wire.streaming = False
        wire.pending = []
        return out

    def on_block_end(self, event: BlockEnd) -> bytes:
        index, block = event.index, event.block
        out = self._route(index, event)
        if out is None:
            return b""
        wire = self._blocks.get(index)
        if wire is None or (wire.closed and wire.kind != "toolcall"):
            out += self._whole(index, block)
        elif isinstance(block, ToolCallBlock):
            out += self._end_tool(index, wire, block)
        elif self._current == index:
            out += self._end_streamed(wire, block)
        return out + self._flush_all()

    def _whole(self, index: int, block: ContentBlock) -> bytes:
        """A block that nothing streamed (redacted thinking, provider blocks,
        empty text, a thinking signature after an early stop): sent whole."""
        if isinstance(block, TextBlock) and block.text and index in self._blocks:
            return b""  # its text went out before an early stop
        if isinstance(block, ThinkingBlock) and not block.redacted and index in self._blocks:
            if block.signature is None and not self.carrier.foreign:
                return b""
            block = ThinkingBlock("", block.signature)
        shape = start_shape(block, self.carrier)
        if shape is None:
            return b""
        self._blocks[index] = wire = _Wire(self._take_index(), "whole")
        wire.closed = True
        if shape["type"] == "thinking":
            return self._thinking_whole(wire.index, shape["thinking"], shape["signature"])
        carrier = self._carrier_for(wire.index, block)
        return self._block_start(wire.index, shape) + carrier + self._block_stop(wire.index)

    def _end_streamed(self, wire: _Wire, block: ContentBlock) -> bytes:
        out = b""
        if isinstance(block, ThinkingBlock):
            signature = self.carrier.carry("thinking", block.signature)
            if signature:
                out += self._delta(wire.index, {"type": "signature_delta", "signature": signature})
        elif isinstance(block, TextBlock) and not self.carrier.foreign:
            for citation in block.citations:
                out += self._delta(wire.index, {"type": "citations_delta", "citation": citation})
        return out + self._carrier_for(wire.index, block) + self._stop_current()

    def _end_tool(self, index: int, wire: _Wire, block: ToolCallBlock) -> bytes:
        out = b""
        if wire.index < 0:  # id or name came only now
            wire.id, wire.name = block.id, block.name
            out += self._start_tool(wire) + self._send_arguments(wire)
        if wire.closed:
            return out
        if not wire.streaming:
            scanner = StrictPrefix()
            scanner.feed("".join(wire.sent))
            closing = scanner.closing()
            if closing:
                out += self._delta(
                    wire.index, {"type": "input_json_delta", "partial_json": closing}
                )
        self._current = None
        wire.closed = True
        out += self._carrier_for(wire.index, block)
        if block.error == "incomplete":
            return out  # cut off by the end of the turn: no content_block_stop, as Anthropic does
        return out + self._block_stop(wire.index)

    # -- framing ----------------------------------------------------------------

    @staticmethod
    def _block_start(index: int, shape: dict[str, Any]) -> bytes:
        payload = {"type": "content_block_start", "index": index, "content_block": shape}
        return frame(payload, "content_block_start")

    @staticmethod
    def _delta(index: int, delta: dict[str, Any]) -> bytes:
        payload = {"type": "content_block_delta", "index": index, "delta": delta}
        return frame(payload, "content_block_delta")

    @staticmethod
    def _block_stop(index: int) -> bytes:
        return frame({"type": "content_block_stop", "index": index}, "content_block_stop")
