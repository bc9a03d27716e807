"""The output side of ``NormalizingStream``: blocks, indices and events.

:class:`OutputBuilder` owns the rewritten stream's content blocks. Every
output block gets its index from :meth:`OutputBuilder.new_index` (the
stream's ``next_index``), whether it is synthesised from parser pieces or
passed through from upstream, so output indices are dense and synthesised
calls can never collide with native ones. Each block receives exactly one
``BlockEnd``. Tool-call arguments accumulate in an :class:`ArgumentBuffer`
shared with their ``ToolCallDelta`` events and are parsed once, at the end
(reference partial-json.md §3), so a call costs O(len(arguments)).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..builder import synthetic_call_id as default_call_id
from ..events import BlockEnd, Event, NormalizationError, TextDelta, ThinkingDelta, ToolCallDelta
from ..messages import ContentBlock, TextBlock, ThinkingBlock, ToolCallBlock
from ..partial_json import ArgumentBuffer, parse_final_arguments, parse_partial_json

__all__ = ["OutBlock", "OutputBuilder", "default_call_id"]

IdFactory = Callable[[str | None, int], str]


TEXT, THINKING, CALL, NATIVE = "text", "thinking", "toolcall", "native"


class OutBlock:
    """Mutable state of one output block until its ``BlockEnd``."""

    __slots__ = (
        "args",
        "citations",
        "ended",
        "final",
        "id",
        "index",
        "kind",
        "name",
        "parts",
        "position",
        "refusal",
        "signature",
    )

    def __init__(self, index: int, kind: str) -> None:
        self.index = index
        self.kind = kind
        self.parts: list[str] = []
        self.signature: str | None = None
        self.citations: tuple[Any, ...] = ()
        self.refusal = False
        self.id: str | None = None
        self.name = ""
        self.args: ArgumentBuffer | None = None
        self.position = -1  # among the message's tool calls
        self.ended = False
        self.final: ContentBlock | None = None


class OutputBuilder:
    """Accumulates the output blocks and appends their events to :attr:`events`."""

    __slots__ = ("_blocks", "_calls", "_id_factory", "_next", "_used_ids", "events", "response_id")

    def __init__(self, id_factory: IdFactory = default_call_id) -> None:
        self.events: list[Event] = []
        self.response_id: str | None = None
        self._blocks: dict[int, OutBlock] = {}
        self._next = 0
        self._calls = 0  # tool calls opened so far (native and synthesised)
        self._used_ids: set[str] = set()
        self._id_factory = id_factory

    def new_index(self) -> int:
        """The next output index (``next_index``), consumed."""
        n = self._next
        self._next += 1
        return n

    # -- prose -------------------------------------------------------------

    def open_prose(self, index: int, kind: str) -> OutBlock:
        b = OutBlock(index, kind)
        self._blocks[index] = b
        return b

    def append(self, b: OutBlock, text: str) -> None:
        if not text:
            return
        b.parts.append(text)
        if b.kind == TEXT:
            self.events.append(TextDelta(b.index, text))
        else:
            self.events.append(ThinkingDelta(b.index, text))

    def set_signature(self, b: OutBlock, signature: str) -> None:
        """Replace a thinking block's signature, announced on a ``ThinkingDelta``
        (merged into the block's last delta when that is the last event)."""
        if b.ended or b.kind != THINKING or signature == b.signature:
            return
        b.signature = signature
        last = self.events[-1] if self.events else None
        if isinstance(last, ThinkingDelta) and last.index == b.index and last.signature is None:
            self.events[-1] = ThinkingDelta(b.index, last.delta, signature)
        else:
            self.events.append(ThinkingDelta(b.index, "", signature))

    # -- tool calls ----------------------------------------------------------

    def open_call(self, index: int, call_id: str | None, name: str) -> OutBlock:
        """A synthesised call: the id is made now so every delta carries it."""
        b = OutBlock(index, CALL)
        b.args = ArgumentBuffer()
        position = self._calls
        self._calls += 1
        if call_id is None:
            call_id = self._id_factory(self.response_id, position)
            while call_id in self._used_ids:  # never repeat a native call's id
                position += 1
                call_id = self._id_factory(self.response_id, position)
        self._used_ids.add(call_id)
        b.id, b.name = call_id, name
        self._blocks[index] = b
        self.events.append(ToolCallDelta(index, call_id, name, "", b.args, 0))
        return b

    def append_args(self, b: OutBlock, delta: str) -> None:
        if not delta or b.args is None:
            return
        end = b.args.append(delta)
        self.events.append(ToolCallDelta(b.index, b.id, b.name, delta, b.args, end))

    def open_native(self, index: int) -> OutBlock:
        """A tool call passed through from upstream; its events are forwarded
        by the caller, its raw arguments kept only for a cut-off ending."""
        b = OutBlock(index, NATIVE)
        b.position = self._calls
        self._calls += 1
        self._blocks[index] = b
        return b

    def native_delta(self, b: OutBlock, ev: ToolCallDelta) -> None:
        if ev.id and not b.id:
            b.id = ev.id
            self._used_ids.add(ev.id)
        if ev.name and not b.name:
            b.name = ev.name
        if ev.raw_json_delta:
            b.parts.append(ev.raw_json_delta)

    # -- ending --------------------------------------------------------------

    def place(self, index: int, block: ContentBlock) -> None:
        """A finished upstream block, forwarded unchanged at ``index``."""
        b = self._blocks.get(index) or OutBlock(index, NATIVE)
        self._blocks[index] = b
        b.ended, b.final = True, block
        if isinstance(block, ToolCallBlock):
            self._used_ids.add(block.id)
        self.events.append(BlockEnd(index, block))

    def end(self, b: OutBlock, error: str | None = None) -> None:
        """``BlockEnd`` for ``b`` (once). ``error="incomplete"`` marks a call
        that was cut off: its arguments are then only a preview."""
        if b.ended:
            return
        b.ended = True
        final: ContentBlock
        if b.kind == TEXT:
            final = TextBlock("".join(b.parts), b.signature, b.citations, b.refusal)
        elif b.kind == THINKING:
            final = ThinkingBlock("".join(b.parts), b.signature)
        else:
            if b.kind == NATIVE:
                raw = "".join(b.parts)
                error = "incomplete"  # a native call that never got its BlockEnd
                b.id = b.id or self._id_factory(self.response_id, b.position)
            else:
                assert b.args is not None
                raw = b.args.text()
            if error is not None:
                arguments: dict[str, Any] = parse_partial_json(raw)
            else:
                arguments, error, repaired = parse_final_arguments(raw)
                if repaired:
                    self.events.append(
                        NormalizationError(
                            "repaired_arguments", f"block {b.index}: arguments repaired", raw
                        )
                    )
            final = ToolCallBlock(b.id or "", b.name, arguments, raw, None, error)
        b.final = final
        self.events.append(BlockEnd(b.index, final))

    def end_all(self) -> None:
        """End every open block, in index order."""
        for index in sorted(self._blocks):
            b = self._blocks[index]
            if not b.ended:
                self.end(b)

    def content(self) -> tuple[ContentBlock, ...]:
        """The final content, by index (call after :meth:`end_all`)."""
        return tuple(b.final for _, b in sorted(self._blocks.items()) if b.final is not None)

    def has_tool_call(self) -> bool:
        return any(isinstance(b.final, ToolCallBlock) for b in self._blocks.values())
