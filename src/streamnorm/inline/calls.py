"""Call bookkeeping shared by every dialect, and the ``Section`` protocol.

A *section* is the body parser a dialect starts at a confirmed call opener
(``<tool_call>``, ``[TOOL_CALLS]``, a DeepSeek call section …). It consumes
input from the channel's cursor until the markup ends, and reports what it
finds through :class:`Calls`, which numbers calls, emits the pieces and
applies the rules every dialect shares: one ``CallOpen`` per call, ``{}``
for a call without arguments, ``unknown_tool``, and how a call cut off by
the end of input is closed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from .base import (
    CallArgs,
    CallClose,
    CallOpen,
    ParseError,
    ParserOptions,
    Piece,
)
from .scanner import Cursor
from .schema import ToolSchemas

__all__ = ["Calls", "Section", "SectionContext"]


class Calls:
    """Numbers calls and appends their pieces to the parser's output.

    Numbering is shared by both channels of a parser. ``out`` is the list the
    parser drains after each push.
    """

    __slots__ = ("_next", "on_malformed", "out", "tools")

    def __init__(self, options: ParserOptions, out: list[Piece]) -> None:
        self._next = 0
        self.out = out
        self.tools = ToolSchemas.of(options.tools)
        self.on_malformed = options.on_malformed

    def open(self, name: str, call_id: str | None = None) -> int:
        n = self._next
        self._next += 1
        self.out.append(CallOpen(n, call_id, name))
        if self.tools is not None and not self.tools.knows(name):
            self.error("unknown_tool", f"tool {name!r} is not among the given tools", name)
        return n

    def args(self, call: int, delta: str) -> None:
        if delta:
            self.out.append(CallArgs(call, delta))

    def close(self, call: int, error: str | None = None) -> None:
        self.out.append(CallClose(call, error))

    def error(self, kind: str, detail: str, raw: str) -> None:
        self.out.append(ParseError(kind, detail, raw))

    def cut(
        self, call: int | None, args_complete: bool, raw: str, prose: Callable[[str], None]
    ) -> None:
        """The input ended inside a call (reference §2.5).

        A named call with complete arguments lacks only its close marker; any
        other named call is closed ``incomplete`` with the raw text reported;
        an unnamed one yields no call at all.
        """
        if call is not None and args_complete:
            self.error("missing_close_marker", "the input ended before the call's close marker", "")
            self.close(call)
        elif call is not None:
            self.close(call, "incomplete")
            self.error("unclosed_tool_call", "the input ended inside the call", raw)
        elif raw:
            detail = "the input ended before the call had a name"
            self.malformed("unclosed_tool_call", detail, raw, prose)

    def malformed(self, kind: str, detail: str, raw: str, prose: Callable[[str], None]) -> None:
        """Report markup that yields no call, or forward it as text (``on_malformed="text"``)."""
        if self.on_malformed == "text":
            prose(raw)
        else:
            self.error(kind, detail, raw)


class SectionContext:
    """What a section works with: the call bookkeeping, the channel's cursor,
    a way to emit prose in the channel's current region (for
    ``on_malformed="text"``), and one to emit reasoning (Harmony's analysis
    channel)."""

    __slots__ = ("calls", "cur", "prose", "reasoning")

    def __init__(
        self,
        calls: Calls,
        cur: Cursor,
        prose: Callable[[str], None],
        reasoning: Callable[[str], None],
    ) -> None:
        self.calls = calls
        self.cur = cur
        self.prose = prose
        self.reasoning = reasoning


class Section(Protocol):
    """The body parser of one piece of call markup.

    ``feed`` consumes what it can from the cursor and returns ``True`` once
    the markup is over (the cursor then points just past it). With
    ``cur.final`` set it must consume everything it can; ``finish`` is called
    if it is still not over, to close what is open.
    """

    def feed(self) -> bool: ...

    def finish(self) -> None: ...
