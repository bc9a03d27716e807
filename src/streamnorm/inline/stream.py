"""``NormalizingStream``: canonical events in, canonical events out, with the
tool calls and reasoning that a model wrote inline lifted into blocks.

Text and reasoning deltas go through the parser; its pieces become output
blocks in source order. Every other content event passes through, re-indexed.
Reference: inline-tool-calls.md §1.

The core is sans-IO: :meth:`NormalizingStream.feed` takes one upstream event
and returns the output events it produces (the queue), :meth:`close` ends the
input. Iterating with ``for`` (sync inner) or ``async for`` runs that loop
lazily: an upstream event is pulled only when the queue is empty.

Cost: O(1) per event plus the parser's cost per character, which is linear.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import replace

from ..events import (
    BlockEnd,
    Done,
    Error,
    Event,
    NormalizationError,
    PromptProgress,
    Start,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageUpdate,
)
from ..messages import AssistantMessage, StopReason, TextBlock, ThinkingBlock, Usage
from .base import (
    CallArgs,
    CallClose,
    CallOpen,
    ParseError,
    ParserOutput,
    ReasoningPiece,
    TextPiece,
    ToolCallParser,
)
from .output import TEXT, THINKING, OutBlock, OutputBuilder, default_call_id

__all__ = ["NormalizingStream"]

# Parser channels: pieces from push_text and from push_reasoning.
_TEXT_CH, _REASON_CH = "text", "reasoning"
# Stop reasons under which a call still open at the end was cut off (DESIGN §4).
_CUT = (StopReason.LENGTH, StopReason.ERROR, StopReason.ABORTED)


class NormalizingStream:
    """Wraps a (sync or async) iterable of canonical events.

    ``parser`` serves this stream only. After the terminal event only
    ``usage``, ``prompt_progress`` and ``normalization_error`` pass (an
    ``Error`` becomes ``NormalizationError("error_after_done")``); content is
    dropped, the first drop reported as ``content_after_done``.
    """

    def __init__(
        self, inner: Iterable[Event] | AsyncIterable[Event], parser: ToolCallParser
    ) -> None:
        self._inner = inner
        self._parser = parser
        id_factory = getattr(parser, "synthesize_call_id", None) or default_call_id
        self._out = OutputBuilder(id_factory)
        self._index_map: dict[int, int] = {}  # upstream native block -> output index
        self._natives: dict[int, OutBlock] = {}  # upstream index -> native call block
        self._max_seen = -1
        self._reserved: dict[int, int] = {}  # upstream index -> reserved output index
        self._prose_upstream: set[int] = set()  # upstream blocks whose deltas were parsed
        self._cur: dict[str, OutBlock | None] = {_TEXT_CH: None, _REASON_CH: None}
        self._fed_by: dict[int, OutBlock] = {}  # upstream index -> last output prose block
        self._pending_sig: dict[int, str] = {}
        self._calls: dict[int, OutBlock] = {}  # parser call number -> output block
        self._start: Start | None = None
        self._usage = Usage()
        self._done = False
        self._reported_drop = False
        self._closing_cut = False

    # -- iteration -----------------------------------------------------------

    def __iter__(self) -> Iterator[Event]:
        inner = self._inner
        if not isinstance(inner, Iterable):
            raise TypeError("the inner stream is asynchronous: iterate with 'async for'")
        for ev in inner:
            yield from self.feed(ev)
        yield from self.close()

    async def __aiter__(self) -> AsyncIterator[Event]:
        inner = self._inner
        if isinstance(inner, AsyncIterable):
            async for ev in inner:
                for out in self.feed(ev):
                    yield out
        else:
            for ev in inner:
                for out in self.feed(ev):
                    yield out
        for out in self.close():
            yield out

    # -- sans-IO core -----------------------------------------------------------

    def feed(self, ev: Event) -> list[Event]:
        """The output events for one upstream event, in order."""
        if self._done:
            self._after_done(ev)
        elif type(ev) is TextDelta:  # the hot path: one call per model token
            u = ev.index
            if u > self._max_seen:
                self._see(u)
            self._prose_upstream.add(u)
            self._apply(self._parser.push_text(ev.delta), _TEXT_CH, u)
        elif isinstance(ev, ThinkingDelta):
            self._thinking(ev)
        elif isinstance(ev, ToolCallDelta):
            self._native(ev)
        elif isinstance(ev, BlockEnd):
            self._block_end(ev)
        elif isinstance(ev, UsageUpdate):
            self._usage = ev.usage
            self._out.events.append(ev)
        elif isinstance(ev, (PromptProgress, NormalizationError)):
            self._out.events.append(ev)
        elif isinstance(ev, Start):
            if self._start is None:
                self._start = ev
                self._out.response_id = ev.response_id
                self._out.events.append(ev)
        elif isinstance(ev, Done):
            self._terminal(ev.message, None)
        elif isinstance(ev, Error):
            self._terminal(ev.message, ev)
        return self._drain()

    def close(self) -> list[Event]:
        """The inner stream ended. Without a terminal event so far, this ends
        the output with ``Error(kind="truncated")`` — a ``Done`` is never made up."""
        if not self._done:
            reason = "the upstream stream ended without a terminal event"
            start = self._start
            message = AssistantMessage(
                content=(),
                api=start.api if start is not None else "unknown",
                model=start.model if start is not None else None,
                stop_reason=StopReason.ERROR,
                raw_stop_reason=None,
                usage=self._usage,
                response_id=start.response_id if start is not None else None,
                error=reason,
            )
            self._terminal(message, Error("truncated", reason, None, message))
        return self._drain()

    def _drain(self) -> list[Event]:
        events = self._out.events
        self._out.events = []
        return events

    # -- indices ----------------------------------------------------------------

    def _see(self, u: int) -> None:
        """First sight of upstream index ``u``: reserve output indices for every
        smaller upstream index not seen yet, so upstream order is kept."""
        if u > self._max_seen:
            for k in range(self._max_seen + 1, u):
                self._reserved[k] = self._out.new_index()
            self._max_seen = u

    def _alloc(self, u: int | None) -> int:
        """The output index for a new block derived from upstream block ``u``."""
        if u is not None and u in self._reserved:
            return self._reserved.pop(u)
        return self._out.new_index()

    # -- upstream content -----------------------------------------------------------

    def _thinking(self, ev: ThinkingDelta) -> None:
        u = ev.index
        self._see(u)
        self._prose_upstream.add(u)
        if ev.delta:
            self._apply(self._parser.push_reasoning(ev.delta), _REASON_CH, u)
        if ev.signature is not None:
            b = self._fed_by.get(u)
            if b is not None and b.kind == THINKING and not b.ended:
                self._out.set_signature(b, ev.signature)
            else:
                self._pending_sig[u] = ev.signature

    def _native(self, ev: ToolCallDelta) -> None:
        u = ev.index
        self._see(u)
        index = self._index_map.get(u)
        if index is None:
            index = self._index_map[u] = self._alloc(u)
            self._natives[u] = self._out.open_native(index)
        self._out.native_delta(self._natives[u], ev)
        self._out.events.append(replace(ev, index=index))

    def _block_end(self, ev: BlockEnd) -> None:
        u, block = ev.index, ev.block
        self._see(u)
        if u in self._index_map:
            self._natives.pop(u, None)
            self._out.place(self._index_map[u], block)
            return
        if u in self._prose_upstream and isinstance(block, (TextBlock, ThinkingBlock)):
            # The output block fed by this upstream block ends; parser state
            # (at most a held-back marker prefix) carries over.
            ch = _TEXT_CH if isinstance(block, TextBlock) else _REASON_CH
            b = self._fed_by.get(u)
            if b is not None and not b.ended:
                if isinstance(block, TextBlock) and b.kind == TEXT:
                    b.signature, b.citations, b.refusal = (
                        block.signature,
                        block.citations,
                        block.refusal,
                    )
                elif isinstance(block, ThinkingBlock) and b.kind == THINKING and block.signature:
                    self._out.set_signature(b, block.signature)
            cur = self._cur[ch]
            if cur is not None and not cur.ended:
                self._out.end(cur)
            self._cur[ch] = None
            return
        # A block with no event before its end (provider block, redacted
        # thinking, empty block): passed through whole.
        index = self._index_map[u] = self._alloc(u)
        self._out.place(index, block)

    # -- parser pieces ------------------------------------------------------------

    def _apply(self, output: ParserOutput, channel: str | None, u: int | None) -> None:
        out = self._out
        for p in output.pieces:
            # Dispatch on the exact type: pieces are final classes, and this
            # loop runs once per model token.
            tp = type(p)
            if tp is CallArgs:
                assert isinstance(p, CallArgs)
                b = self._calls.get(p.call)
                if b is not None:
                    out.append_args(b, p.delta)
            elif tp is TextPiece:
                assert isinstance(p, TextPiece)
                out.append(self._prose_block(channel, TEXT, u), p.text)
            elif tp is ReasoningPiece:
                assert isinstance(p, ReasoningPiece)
                out.append(self._prose_block(channel, THINKING, u), p.text)
            elif isinstance(p, CallOpen):
                ch = channel or _TEXT_CH
                cur = self._cur[ch]
                if cur is not None and not cur.ended:
                    out.end(cur)
                self._cur[ch] = None
                self._calls[p.call] = out.open_call(self._alloc(u), p.id, p.name)
            elif isinstance(p, CallClose):
                b = self._calls.pop(p.call, None)
                if b is not None:
                    error = p.error
                    if error is None and self._closing_cut:
                        error = "incomplete"  # cut off with the stream (DESIGN §4)
                    out.end(b, error)
            elif isinstance(p, ParseError):
                out.events.append(NormalizationError(p.kind, p.detail, p.raw))

    def _prose_block(self, channel: str | None, kind: str, u: int | None) -> OutBlock:
        """The output block that receives prose of ``kind`` from ``channel``;
        a change of kind within a channel starts a new block (source order)."""
        if channel is None:  # pieces from finish(): continue a matching block
            channel = next(
                (
                    ch
                    for ch in (_TEXT_CH, _REASON_CH)
                    if (b := self._cur[ch]) is not None and not b.ended and b.kind == kind
                ),
                _TEXT_CH,
            )
        cur = self._cur[channel]
        if cur is None or cur.ended or cur.kind != kind:
            if cur is not None and not cur.ended:
                self._out.end(cur)
            cur = self._cur[channel] = self._out.open_prose(self._alloc(u), kind)
        if u is not None and self._fed_by.get(u) is not cur:
            self._fed_by[u] = cur
            sig = self._pending_sig.pop(u, None)
            if sig is not None and kind == THINKING:
                cur.signature = sig
        return cur

    # -- terminal ---------------------------------------------------------------------

    def _terminal(self, message: AssistantMessage, error: Error | None) -> None:
        """Upstream ``Done``/``Error`` or the end of input (reference §1.6)."""
        self._closing_cut = error is not None or message.stop_reason in _CUT
        self._apply(self._parser.finish(), None, None)
        for b in list(self._calls.values()):
            self._out.end(b, "incomplete")
        self._calls.clear()
        self._out.end_all()
        content = self._out.content()
        stop = message.stop_reason
        if stop is StopReason.STOP and self._out.has_tool_call():
            stop = StopReason.TOOL_USE
        rebuilt = replace(message, content=content, stop_reason=stop)
        self._done = True
        if error is None:
            self._out.events.append(Done(rebuilt))
        else:
            self._out.events.append(Error(error.kind, error.reason, error.code, rebuilt))

    def _after_done(self, ev: Event) -> None:
        if isinstance(ev, (UsageUpdate, PromptProgress, NormalizationError)):
            self._out.events.append(ev)
        elif isinstance(ev, Error):
            self._out.events.append(NormalizationError("error_after_done", ev.reason, None))
        elif not self._reported_drop:
            self._reported_drop = True
            self._out.events.append(
                NormalizationError(
                    "content_after_done",
                    f"{type(ev).__name__} after the terminal event dropped",
                    None,
                )
            )
