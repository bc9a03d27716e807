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

from ..builder import MessageBuilder, synthetic_call_id
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
from ..messages import AssistantMessage, StopReason, TextBlock, ThinkingBlock
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

__all__ = ["NormalizingStream"]

# Parser channels: pieces from push_text and from push_reasoning.
_TEXT_CH, _REASON_CH = "text", "reasoning"
_TEXT, _THINKING = "text", "thinking"
# Stop reasons under which a call still open at the end was cut off (DESIGN §4).
_CUT = (StopReason.LENGTH, StopReason.ERROR, StopReason.ABORTED)

#: An output block as the stream tracks it: the builder key and its kind.
_Out = tuple[int, str]


class NormalizingStream:
    """Wraps a (sync or async) iterable of canonical events.

    ``parser`` serves this stream only. The output is accumulated by a
    :class:`MessageBuilder`, as every stream is: this class only decides
    which output block each piece of the input belongs to. After the
    terminal event only ``usage``, ``prompt_progress`` and
    ``normalization_error`` pass (an ``Error`` becomes
    ``NormalizationError("error_after_done")``); content is dropped, the
    first drop reported as ``content_after_done``.
    """

    def __init__(
        self, inner: Iterable[Event] | AsyncIterable[Event], parser: ToolCallParser
    ) -> None:
        self._inner = inner
        self._parser = parser
        self._builder = MessageBuilder(
            "unknown",
            stop_table={},
            call_id=getattr(parser, "synthesize_call_id", None) or synthetic_call_id,
        )
        self._keys = 0  # builder keys of output blocks: 0, 1, 2 … in opening order
        self._index_map: dict[int, int] = {}  # upstream native block -> output key
        self._max_seen = -1
        self._reserved: dict[int, int] = {}  # upstream index -> reserved output key
        self._prose_upstream: set[int] = set()  # upstream blocks whose deltas were parsed
        self._cur: dict[str, _Out | None] = {_TEXT_CH: None, _REASON_CH: None}
        self._fed_by: dict[int, _Out] = {}  # upstream index -> last output prose block
        self._pending_sig: dict[int, str] = {}
        self._calls: dict[int, int] = {}  # parser call number -> output key
        self._after: list[Event] = []  # passed through after the terminal event
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
            self._builder.set_usage(ev.usage)
        elif isinstance(ev, PromptProgress):
            self._builder.progress(ev.processed, ev.total, ev.cached, ev.time_ms)
        elif isinstance(ev, NormalizationError):
            self._builder.diagnostic(ev.kind, ev.detail, ev.raw)
        elif isinstance(ev, Start):
            if not self._builder.started:
                self._builder.api = ev.api
                self._builder.start(ev.model, ev.response_id)
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
            start = self._builder.message
            message = AssistantMessage(
                content=(),
                api=self._builder.api,
                model=start.model,
                stop_reason=StopReason.ERROR,
                raw_stop_reason=None,
                usage=self._builder.usage,
                response_id=start.response_id,
                error=reason,
            )
            self._terminal(message, Error("truncated", reason, None, message))
        return self._drain()

    def _drain(self) -> list[Event]:
        events = self._builder.events
        self._builder.events = []
        if self._after:
            events += self._after
            self._after = []
        return events

    # -- indices ----------------------------------------------------------------

    def _new_key(self) -> int:
        key = self._keys
        self._keys += 1
        return key

    def _see(self, u: int) -> None:
        """First sight of upstream index ``u``: reserve output positions for
        every smaller upstream index not seen yet, so upstream order is kept."""
        if u > self._max_seen:
            for k in range(self._max_seen + 1, u):
                key = self._reserved[k] = self._new_key()
                self._builder.reserve(key)
            self._max_seen = u

    def _alloc(self, u: int | None) -> int:
        """The output key for a new block derived from upstream block ``u``."""
        if u is not None and u in self._reserved:
            return self._reserved.pop(u)
        return self._new_key()

    # -- upstream content -----------------------------------------------------------

    def _thinking(self, ev: ThinkingDelta) -> None:
        u = ev.index
        self._see(u)
        self._prose_upstream.add(u)
        if ev.delta:
            self._apply(self._parser.push_reasoning(ev.delta), _REASON_CH, u)
        if ev.signature is not None:
            fed = self._fed_by.get(u)
            if fed is not None and fed[1] == _THINKING and self._builder.is_open(fed[0]):
                self._builder.set_signature(fed[0], ev.signature, onto_last_delta=True)
            else:
                self._pending_sig[u] = ev.signature

    def _native(self, ev: ToolCallDelta) -> None:
        """A tool call the server structured itself: relayed, re-indexed."""
        u = ev.index
        self._see(u)
        builder = self._builder
        key = self._index_map.get(u)
        if key is None:
            key = self._index_map[u] = self._alloc(u)
            builder.open_tool_call(key, id=ev.id, name=ev.name)
        else:
            builder.set_tool_identity(key, ev.id, ev.name)
        builder.append_arguments(key, ev.raw_json_delta)

    def _block_end(self, ev: BlockEnd) -> None:
        u, block = ev.index, ev.block
        self._see(u)
        if u in self._index_map:
            self._builder.place(self._index_map[u], block)
            return
        if u in self._prose_upstream and isinstance(block, (TextBlock, ThinkingBlock)):
            # The output block fed by this upstream block ends; parser state
            # (at most a held-back marker prefix) carries over.
            self._carry_details(u, block)
            ch = _TEXT_CH if isinstance(block, TextBlock) else _REASON_CH
            self._end_prose(ch)
            return
        # A block with no event before its end (provider block, redacted
        # thinking, empty block): passed through whole.
        key = self._index_map[u] = self._alloc(u)
        self._builder.place(key, block)

    def _carry_details(self, u: int, block: TextBlock | ThinkingBlock) -> None:
        """A finished upstream prose block's signature (and a text block's
        citations and refusal mark) go to the last output block it fed."""
        fed = self._fed_by.get(u)
        if fed is None or not self._builder.is_open(fed[0]):
            return
        key, kind = fed
        if isinstance(block, TextBlock) and kind == _TEXT:
            self._builder.set_text_details(
                key, signature=block.signature, citations=block.citations, refusal=block.refusal
            )
        elif isinstance(block, ThinkingBlock) and kind == _THINKING and block.signature:
            self._builder.set_signature(key, block.signature, onto_last_delta=True)

    # -- parser pieces ------------------------------------------------------------

    def _apply(self, output: ParserOutput, channel: str | None, u: int | None) -> None:
        builder = self._builder
        for p in output.pieces:
            # Dispatch on the exact type: pieces are final classes, and this
            # loop runs once per model token.
            tp = type(p)
            if tp is CallArgs:
                assert isinstance(p, CallArgs)
                key = self._calls.get(p.call)
                if key is not None:
                    builder.append_arguments(key, p.delta)
            elif tp is TextPiece:
                assert isinstance(p, TextPiece)
                if p.text:
                    builder.append_text(self._prose_block(channel, _TEXT, u), p.text)
            elif tp is ReasoningPiece:
                assert isinstance(p, ReasoningPiece)
                if p.text:
                    builder.append_thinking(self._prose_block(channel, _THINKING, u), p.text)
            elif isinstance(p, CallOpen):
                self._end_prose(channel or _TEXT_CH)
                key = self._calls[p.call] = self._alloc(u)
                builder.open_tool_call(key, id=p.id, name=p.name, synthesize_id=True)
            elif isinstance(p, CallClose):
                self._close_call(p)
            elif isinstance(p, ParseError):
                builder.diagnostic(p.kind, p.detail, p.raw)

    def _close_call(self, piece: CallClose) -> None:
        key = self._calls.pop(piece.call, None)
        if key is not None:
            error = piece.error
            if error is None and self._closing_cut:
                error = "incomplete"  # cut off with the stream (DESIGN §4)
            self._builder.end_block(key, error=error)

    def _end_prose(self, channel: str) -> None:
        cur = self._cur[channel]
        if cur is not None:
            self._builder.end_block(cur[0])
        self._cur[channel] = None

    def _prose_block(self, channel: str | None, kind: str, u: int | None) -> int:
        """The key of the output block that receives prose of ``kind`` from
        ``channel``; a change of kind within a channel starts a new block
        (source order)."""
        builder = self._builder
        if channel is None:  # pieces from finish(): continue a matching block
            channel = next(
                (
                    ch
                    for ch in (_TEXT_CH, _REASON_CH)
                    if (b := self._cur[ch]) is not None and b[1] == kind and builder.is_open(b[0])
                ),
                _TEXT_CH,
            )
        cur = self._cur[channel]
        if cur is None or cur[1] != kind or not builder.is_open(cur[0]):
            self._end_prose(channel)
            key = self._alloc(u)
            if kind == _TEXT:
                builder.open_text(key)
            else:
                builder.open_thinking(key)
            cur = self._cur[channel] = (key, kind)
        if u is not None and self._fed_by.get(u) != cur:
            self._fed_by[u] = cur
            signature = self._pending_sig.pop(u, None)
            if signature is not None and kind == _THINKING:
                builder.set_signature(cur[0], signature)
        return cur[0]

    # -- terminal ---------------------------------------------------------------------

    def _terminal(self, message: AssistantMessage, error: Error | None) -> None:
        """Upstream ``Done``/``Error`` or the end of input (reference §1.6)."""
        self._closing_cut = error is not None or message.stop_reason in _CUT
        self._apply(self._parser.finish(), None, None)
        for key in list(self._calls.values()):
            self._builder.end_block(key, error="incomplete")
        self._calls.clear()
        self._builder.conclude(message, error)
        self._done = True

    def _after_done(self, ev: Event) -> None:
        if isinstance(ev, (UsageUpdate, PromptProgress, NormalizationError)):
            self._after.append(ev)
        elif isinstance(ev, Error):
            self._after.append(NormalizationError("error_after_done", ev.reason, None))
        elif not self._reported_drop:
            self._reported_drop = True
            self._after.append(
                NormalizationError(
                    "content_after_done",
                    f"{type(ev).__name__} after the terminal event dropped",
                    None,
                )
            )
