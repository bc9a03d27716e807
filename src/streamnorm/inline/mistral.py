"""Mistral ``[TOOL_CALLS]``, both generations — ``mistral``.

Before tokenizer v11: ``[TOOL_CALLS] [{"name": …, "arguments": {…}}, …]``.
v11 and later, repeated per call: ``[TOOL_CALLS]name[ARGS]{…}`` (v13 may add
``[CALL_ID]id`` before ``[ARGS]``). After ``[TOOL_CALLS]``, ``[`` selects
the old form; otherwise the name runs to ``[ARGS]`` or, when the decoder hid
``[ARGS]``, to the first ``{``. The call ends with its JSON value; there is no
close marker. ``[TOOL_CALLS]`` is a control token and confirms itself.
Reasoning: ``[THINK]…[/THINK]``. Synthesised ids are 9 alphanumerics, the
form Mistral's API requires.

``phi4_mini`` (Phi-4-mini, FireFunction v2) writes the legacy body after
``functools``: ``functools[{"name": …, "arguments": …}]``; Granite 3.x
(:mod:`.granite`) after its own openers.
"""

from __future__ import annotations

import hashlib
import re

from .base import ParserOptions, ToolCallParser
from .calllist import CallList
from .calls import SectionContext
from .engine import InlineParser, Opener
from .jsonargs import DONE, STOPPED, RawValue
from .scanner import MAX_WS, MORE, MarkerSet, body_starts, skip_ws

__all__ = ["MistralSection", "mistral_call_id"]

OPEN = "[TOOL_CALLS]"
_HEADER_END = MarkerSet(("[ARGS]", "[CALL_ID]", "{", "\n"))
_STOP = MarkerSet((OPEN,))
_MAX_HEADER = 256

_START, _ENTRIES, _HEADER, _ID, _ARGS = range(5)


def mistral_call_id(response_id: str | None, position: int) -> str:
    """Nine alphanumerics, deterministic in the response id and position."""
    return hashlib.sha256(f"{response_id or ''}:{position}".encode()).hexdigest()[:9]


class MistralSection:
    """What follows one call opener: a call list, a call object, or
    ``name[ARGS]{…}``. Ends after the list's ``]``, the object, or the
    arguments value.

    ``stop`` holds the dialect's call openers: one appearing outside strings
    before a value is complete cuts that value, so an unbalanced value cannot
    swallow the calls after it.

    A list (or lone object) is read entry by entry by :class:`.CallList`, so
    a bad entry costs only itself and the list's brackets and separators
    never reach the text. A list (or lone object) that yields no call at all
    is one malformed block, opener included. After an entry, anything but
    ``,`` or ``]`` ends the list unclosed (``missing_close_marker``) and is
    text again, as is a stop marker where an entry would start.
    """

    __slots__ = (
        "_ctx",
        "_entries",
        "_id_parts",
        "_listed",
        "_name",
        "_state",
        "_stop",
        "_value",
        "call",
    )

    def __init__(self, ctx: SectionContext, stop: MarkerSet = _STOP) -> None:
        self._ctx = ctx
        self._stop = stop
        self._state = _START
        self._listed = False
        self._entries = CallList(ctx, stop)
        self._value: RawValue | None = None
        self._name = ""
        self._id_parts: list[str] = []
        self.call: int | None = None

    def feed(self) -> bool:
        ctx = self._ctx
        cur, calls = ctx.cur, ctx.calls
        while True:
            st = self._state
            if st == _ENTRIES:
                r = self._entries.feed()
                if r == MORE:
                    return False
                return self._end(r == DONE)
            if st == _ARGS:
                assert self.call is not None
                if self._value is None:
                    cur.take_ws()  # whitespace before the value is framing
                    if cur.rest == 0:
                        return False
                    self._value = RawValue(self._stop)
                j, status = self._value.scan(cur.buf, cur.pos, cur.final)
                calls.args(self.call, cur.take(j))
                if status == MORE:
                    return False
                calls.close(self.call, None if status == DONE else "incomplete")
                if status == STOPPED:
                    calls.error(
                        "malformed_tool_call",
                        "arguments not complete before the next [TOOL_CALLS]",
                        cur.raw(),
                    )
                self.call = None
                return True
            if st in (_HEADER, _ID):
                over = self._header()
                if over is not None:
                    return over
                continue
            # _START
            cur.take_ws()
            buf, i = cur.buf, cur.pos
            if i >= len(buf):
                return False
            c = buf[i]
            if c == "[":
                cur.take(i + 1)
                self._listed = True
                self._entries.open_list()
                self._state = _ENTRIES
            elif c == "{":
                self._entries.open_object()
                self._state = _ENTRIES
            else:
                self._state = _HEADER

    def _end(self, closed: bool) -> bool:
        """The list (or lone object) is over; ``closed``: by its own ``]``."""
        ctx = self._ctx
        if not self._entries.called:
            detail = "the call list holds no call" if self._listed else "unreadable call object"
            ctx.calls.malformed("malformed_tool_call", detail, ctx.cur.raw(), ctx.prose)
        elif self._listed and not closed:
            ctx.calls.error("missing_close_marker", "call list not closed with ']'", "")
        return True

    def _header(self) -> bool | None:
        """Read ``name`` (and ``[CALL_ID]id``) up to ``[ARGS]`` or ``{``."""
        ctx = self._ctx
        cur = ctx.cur
        buf, i = cur.buf, cur.pos
        j, marker = _HEADER_END.find(buf, i, cur.final)
        text = buf[i:j]
        if marker is None or marker == "\n" or j - i > _MAX_HEADER:
            if marker is None and (cur.final or j - i <= _MAX_HEADER):
                return False  # the name goes on (or finish() reports the cut)
            cur.take(j)
            ctx.calls.malformed(
                "malformed_tool_call", "no [ARGS] after the tool name", cur.raw(), ctx.prose
            )
            return True
        if self._state == _HEADER:
            self._name = text.strip()
        else:
            self._id_parts.append(text)
        cur.take(j if marker == "{" else j + len(marker))
        if marker == "[CALL_ID]" and self._state == _HEADER:
            self._state = _ID
            return None
        if not self._name:
            ctx.calls.malformed("malformed_tool_call", "empty tool name", cur.raw(), ctx.prose)
            return True
        call_id = "".join(self._id_parts).strip() or None
        self.call = ctx.calls.open(self._name, call_id)
        self._state = _ARGS
        return None

    def finish(self) -> None:
        ctx = self._ctx
        if self.call is not None:
            ctx.calls.cut(self.call, False, ctx.cur.raw(), ctx.prose)
        elif self._entries.finish():
            pass
        elif not self._entries.called:
            ctx.calls.cut(None, False, ctx.cur.raw(), ctx.prose)  # the whole block: no call in it
        else:  # between the entries of a list that yielded calls
            ctx.calls.error("missing_close_marker", "call list not closed with ']'", "")


class _MistralParser(InlineParser):
    synthesize_call_id = staticmethod(mistral_call_id)


_BODY = re.compile(
    rf"\s{{0,{MAX_WS}}}(?:\[\s{{0,{MAX_WS}}}\{{|\{{|[\w.\-]{{1,128}}\s*(?:\[ARGS\]|\[CALL_ID\]|\{{))"
)
_PARTIAL = re.compile(
    rf"\s{{0,{MAX_WS}}}(?:\[\s{{0,{MAX_WS}}}"
    rf"|[\w.\-]{{0,128}}\s{{0,{MAX_WS}}}(?:\[(?:A(?:R(?:G(?:S)?)?)?|C[A-Z_]{{0,6}})?)?)"
)


def _confirm(buf: str, i: int, final: bool) -> bool | None:
    """``[TOOL_CALLS]`` counts when a list, an object, or ``name[ARGS]``
    follows; prose that mentions the token stays text. Bounded lookahead."""
    if _BODY.match(buf, i):
        return True
    m = _PARTIAL.match(buf, i)
    if m is None or m.end() != len(buf):
        return False
    # At the end of input a name cut off after the token is a cut call.
    return (m.end() > skip_ws(buf, i)) if final else None


def mistral(options: ParserOptions) -> ToolCallParser:
    opener = Opener(OPEN, lambda ctx, _m: MistralSection(ctx), _confirm)
    return _MistralParser(options, (opener,))


_PHI4_OPEN = "functools"
_PHI4_STOP = MarkerSet((_PHI4_OPEN,))


def phi4_mini(options: ParserOptions) -> ToolCallParser:
    """Phi-4-mini and FireFunction v2: ``functools[…]``, the legacy Mistral body
    after another marker. The list ends at the bracket that closes it, or
    where the next ``functools`` starts outside a string."""
    opener = Opener(_PHI4_OPEN, lambda ctx, _m: MistralSection(ctx, _PHI4_STOP), body_starts("["))
    return InlineParser(options, (opener,))
