"""The marker-driven parser every tag-style dialect is built on.

:class:`InlineParser` scans each channel's text for the markers that matter
in its current state — reasoning open/close markers and the dialect's call
openers — and hands confirmed call markup to the dialect's section parser.
A dialect is just its :class:`Opener` list; reasoning extraction and its
composition with calls (reference §5) live here once.

Per channel the state is: the cursor (pending input), the region (text or
reasoning), whether answer text has started, whether an answer wrapper is
open, and the open section if any.

Answer wrappers (Granite's ``<response>``…``</response>``) are markers that
frame the answer without changing its region: they are consumed, never
reach the text, and count only where they are structural — the opener
before answer text has started (after reasoning, say), the closer while a
wrapper is open. Elsewhere they are literal text, like a misplaced ``<think>``.

Whitespace policy: whitespace-only runs *between or after* structural
elements (calls, reasoning regions) are framing and are dropped — a model's
``</tool_call>\\n<tool_call>`` must not become a text block of its own.
Before the first structural element whitespace is text like any other, and
a run followed by other text always stays with that text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from .base import ParserOptions, ParserOutput, Piece, ReasoningPiece, TextPiece
from .calls import Calls, Section, SectionContext
from .scanner import Cursor, MarkerSet

__all__ = ["Confirm", "InlineParser", "Opener", "reasoning_markers"]

Confirm = Callable[[str, int, bool], "bool | None"]
"""``confirm(buf, i, final)``: does the body that starts at ``buf[i]``
confirm the opener? ``None`` when more input is needed (never when
``final``). Must look at a bounded amount of input."""

SectionFactory = Callable[[SectionContext, str], Section]


@dataclass(frozen=True, slots=True)
class Opener:
    """A marker that may start call markup.

    ``confirm`` is ``None`` for openers that confirm themselves (special
    tokens). ``at_start`` openers (bare JSON, a Python list) are only active
    while answer text has not started, when ``require_call_at_start`` is on.
    With ``keep`` the marker is the body's first character and is left for
    the section to read.
    """

    marker: str
    section: SectionFactory
    confirm: Confirm | None = None
    at_start: bool = False
    keep: bool = False


_REASONING = {
    "think": ("<think>", "</think>"),
    "bracket": ("[THINK]", "[/THINK]"),
    "seed": ("<seed:think>", "</seed:think>"),
}


def reasoning_markers(option: str | tuple[str, str] | None) -> tuple[str, str] | None:
    """The ``(open, close)`` pair for a ``reasoning=`` option value."""
    if option is None:
        return None
    if isinstance(option, str):
        if option not in _REASONING:
            raise ValueError(f"unknown reasoning markers {option!r}; valid: {sorted(_REASONING)}")
        return _REASONING[option]
    if (
        isinstance(option, tuple)
        and len(option) == 2
        and all(isinstance(m, str) and m for m in option)
    ):
        return option
    raise ValueError("reasoning must be None, a marker name or an (open, close) pair")


# Region of a channel, and marker roles besides openers.
_TEXT, _REASON = 0, 1
_OPEN_R, _CLOSE_R, _STRAY = "open", "close", "stray"
_OPEN_A, _CLOSE_A = "answer_open", "answer_close"

Role = Opener | str


class _Channel:
    """Scanner state of one input channel (text or server-separated reasoning)."""

    __slots__ = (
        "cur",
        "first",
        "is_text",
        "pending_ws",
        "region",
        "section",
        "seg_open",
        "started",
        "structural",
        "wrapped",
    )

    def __init__(self, is_text: bool, region: int) -> None:
        self.cur = Cursor()
        self.is_text = is_text
        self.region = region
        self.wrapped = False  # an answer wrapper is open
        self.section: Section | None = None
        self.started = False  # answer text (non-whitespace) has been emitted
        self.structural = False  # a structural element has been consumed
        self.seg_open = False  # the current prose segment has non-whitespace text
        self.pending_ws: list[str] = []
        # First characters of the markers active in the current state (fast path).
        self.first: frozenset[str] = frozenset()


class InlineParser:
    """A :class:`ToolCallParser` for dialects described by call openers.

    ``answer`` is the dialect's ``(open, close)`` answer wrapper, if it has one.

    Cost: each input character is examined O(1) times amortised; what is held
    between pushes is bounded by the longest marker plus a lookahead bound.
    """

    def __init__(
        self,
        options: ParserOptions,
        openers: Sequence[Opener] = (),
        answer: tuple[str, str] | None = None,
    ) -> None:
        self.options = options
        self._out: list[Piece] = []
        self._calls = Calls(options, self._out)
        self._openers = tuple(openers)
        self._answer = answer
        self._rmarkers = reasoning_markers(options.reasoning)
        start = _REASON if (self._rmarkers and options.start_in_reasoning) else _TEXT
        self._text = _Channel(True, start)
        self._reasoning = _Channel(False, _REASON)
        self._extract = options.calls_in_reasoning == "extract"
        self._sets: dict[tuple[bool, int, bool, bool, bool], tuple[MarkerSet, dict[str, Role]]] = {}
        self._finished = False
        for ch in (self._text, self._reasoning):
            ch.first = self._active(ch)[0].first

    # -- protocol --------------------------------------------------------

    def push_text(self, text: str) -> ParserOutput:
        return self._push(self._text, text)

    def push_reasoning(self, text: str) -> ParserOutput:
        return self._push(self._reasoning, text)

    def finish(self) -> ParserOutput:
        if self._finished:
            raise RuntimeError("finish() was already called")
        self._finished = True
        for ch in (self._text, self._reasoning):
            ch.cur.final = True
            self._run(ch)
            if ch.section is not None:
                ch.cur.take(len(ch.cur.buf))  # whatever is left belongs to the open markup
                ch.section.finish()
                ch.section = None
            # Whitespace held after the last structural element is framing.
            ch.pending_ws.clear()
        return self._drain()

    def parse_all(self, text: str) -> ParserOutput:
        return self.push_text(text) + self.finish()

    # -- scanning ----------------------------------------------------------

    def _push(self, ch: _Channel, text: str) -> ParserOutput:
        if self._finished:
            raise RuntimeError("the parser is finished")
        if not text:
            return ParserOutput()
        if ch.seg_open and ch.section is None and ch.cur.pos >= len(ch.cur.buf):
            first = ch.first
            if text not in first if len(text) == 1 else not any(c in text for c in first):
                # Fast path: nothing held, and no marker can begin in this text.
                kind = TextPiece if ch.is_text and ch.region == _TEXT else ReasoningPiece
                return ParserOutput((kind(text),))
        ch.cur.feed(text)
        self._run(ch)
        ch.first = self._active(ch)[0].first
        return self._drain()

    def _drain(self) -> ParserOutput:
        out = self._out
        if len(out) <= 1:
            single = ParserOutput((out.pop(),)) if out else ParserOutput()
            return single
        # Merge adjacent prose pieces of the same kind: fewer, larger deltas.
        merged: list[Piece] = []
        for p in out:
            if merged and type(p) in (TextPiece, ReasoningPiece) and type(merged[-1]) is type(p):
                prev = merged[-1]
                assert isinstance(prev, (TextPiece, ReasoningPiece))
                assert isinstance(p, (TextPiece, ReasoningPiece))
                merged[-1] = type(p)(prev.text + p.text)
            else:
                merged.append(p)
        out.clear()
        return ParserOutput(tuple(merged))

    def _active(self, ch: _Channel) -> tuple[MarkerSet, dict[str, Role]]:
        """The markers that mean something in the channel's current state."""
        at_start = not ch.started
        pristine = at_start and not ch.structural
        key = (ch.is_text, ch.region, at_start, pristine, ch.wrapped)
        found = self._sets.get(key)
        if found is not None:
            return found
        roles: dict[str, Role] = {}
        rm = self._rmarkers
        if rm is not None and ch.is_text:
            if ch.region == _REASON:
                roles[rm[1]] = _CLOSE_R
            else:
                if pristine or self.options.interleaved_reasoning:
                    roles[rm[0]] = _OPEN_R
                if at_start:
                    roles[rm[1]] = _STRAY
        am = self._answer
        if am is not None and ch.is_text and ch.region == _TEXT:
            if ch.wrapped:
                roles[am[1]] = _CLOSE_A
            elif at_start:
                roles[am[0]] = _OPEN_A
        if ch.region == _TEXT or self._extract:
            for op in self._openers:
                if op.at_start and self.options.require_call_at_start and not at_start:
                    continue
                roles.setdefault(op.marker, op)
        found = (MarkerSet(roles), roles)
        self._sets[key] = found
        return found

    def _run(self, ch: _Channel) -> None:
        cur = ch.cur
        while True:
            if ch.section is not None:
                if not ch.section.feed():
                    return
                ch.section = None
                cur.log = None
                self._boundary(ch)
                continue
            started = ch.started
            markers, roles = self._active(ch)
            i, marker = markers.find(cur.buf, cur.pos, cur.final)
            if i > cur.pos:
                self._prose(ch, cur.take(i))
                if ch.started != started:
                    continue  # answer text began: the active markers changed
            if marker is None:
                if cur.final and cur.rest:
                    self._prose(ch, cur.take(len(cur.buf)))
                return
            end = i + len(marker)
            role = roles[marker]
            if isinstance(role, str):
                cur.take(end)
                self._boundary(ch)
                if role == _OPEN_R:
                    ch.region = _REASON
                elif role == _CLOSE_R:
                    ch.region = _TEXT
                elif role in (_OPEN_A, _CLOSE_A):
                    ch.wrapped = role == _OPEN_A
                else:
                    self._calls.error(
                        "stray_reasoning_close",
                        "reasoning close marker with no open region",
                        marker,
                    )
                continue
            if role.confirm is not None:
                ok = role.confirm(cur.buf, i if role.keep else end, cur.final)
                if ok is None:
                    return  # hold from the marker until the body decides
                if not ok:
                    self._prose(ch, cur.take(end))
                    continue
            if ch.is_text and ch.region == _REASON:
                ch.region = _TEXT  # a call opener ends the reasoning region
            self._boundary(ch)
            cur.start_log()
            if not role.keep:
                cur.take(end)
            ctx = SectionContext(
                self._calls,
                cur,
                partial(self._prose, ch),
                partial(self._prose, ch, kind=ReasoningPiece),
            )
            ch.section = role.section(ctx, marker)

    def _boundary(self, ch: _Channel) -> None:
        """A structural element: the prose segment ends; held whitespace is framing."""
        ch.pending_ws.clear()
        ch.seg_open = False
        ch.structural = True

    def _prose(
        self,
        ch: _Channel,
        s: str,
        kind: type[TextPiece] | type[ReasoningPiece] | None = None,
    ) -> None:
        if not s:
            return
        if kind is None:
            kind = TextPiece if ch.is_text and ch.region == _TEXT else ReasoningPiece
        if ch.seg_open:
            self._out.append(kind(s))
            return
        blank = s.isspace()
        if ch.structural:
            ch.pending_ws.append(s)
            if blank:
                return
            s = "".join(ch.pending_ws)
            ch.pending_ws.clear()
        self._out.append(kind(s))
        if not blank:
            ch.seg_open = True
            if kind is TextPiece:
                ch.started = True
