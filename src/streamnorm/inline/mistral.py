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

from .base import ParserOptions, ToolCallParser, register
from .calls import SectionContext
from .engine import InlineParser, Opener
from .jsonargs import DONE, STOPPED, CallObject, RawValue
from .scanner import MAX_WS, MORE, NONE, MarkerSet, body_starts, skip_ws

__all__ = ["MistralSection", "mistral_call_id"]

OPEN = "[TOOL_CALLS]"
_HEADER_END = MarkerSet(("[ARGS]", "[CALL_ID]", "{", "\n"))
_STOP = MarkerSet((OPEN,))
_MAX_HEADER = 256

_START, _LIST, _NEXT, _OBJ, _SKIP, _HEADER, _ID, _ARGS = range(8)

_NOT_A_CALL = "list entry is not a call object with a name"


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

    A list is read entry by entry, so a bad entry costs only itself
    (reference §2.6). An entry that yields no call — no name, unreadable
    JSON, a number, a string — is ``malformed_tool_call`` with the entry as
    ``raw`` (text with ``on_malformed="text"``), and the entries after it are
    still read; the list's brackets, separators and whitespace are structure
    and never reach the text. A list (or lone object) that yields no call at
    all is one malformed block, opener included, like any block without a
    name. That is only known once a call opens or the list ends, so unnamed
    entries before the first call are held as spans of the cursor's log and
    reported just before that call opens, in source order. An entry that
    breaks off after its call opened closes the call (``incomplete`` unless
    its arguments were complete) and is reported as an error only: its name
    and arguments already went into the call.

    After an entry, anything but ``,`` or ``]`` ends the list unclosed
    (``missing_close_marker``) and is text again, as is a stop marker where
    an entry would start.
    """

    __slots__ = (
        "_called",
        "_ctx",
        "_entry",
        "_id_parts",
        "_listed",
        "_name",
        "_obj",
        "_pending",
        "_skip",
        "_skip_named",
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
        self._called = False  # a call opened in this section
        self._obj: CallObject | None = None
        self._skip: RawValue | None = None  # reads past the rest of a bad entry
        self._skip_named = False  # ... whose call had opened
        self._entry = 0  # index in the cursor's log where the current entry starts
        self._pending: list[tuple[int, int]] = []  # unnamed entries before any call
        self._value: RawValue | None = None
        self._name = ""
        self._id_parts: list[str] = []
        self.call: int | None = None

    def feed(self) -> bool:
        ctx = self._ctx
        cur, calls = ctx.cur, ctx.calls
        while True:
            st = self._state
            if st == _OBJ:
                obj = self._obj
                assert obj is not None
                r = obj.feed(cur)
                if r == MORE:
                    return False
                self._obj = None
                if r == DONE:
                    if obj.call is None:
                        self._bad_entry(False)
                    if not self._listed:
                        return self._end(True)
                    self._state = _NEXT
                    continue
                if obj.call is not None:
                    calls.close(obj.call, None if obj.args_done else "incomplete")
                if r == STOPPED:
                    self._bad_entry(obj.call is not None)
                    return self._end(False)
                # Unreadable: skip to the brace that closes the entry.
                self._skip = RawValue(self._stop, obj.depth)
                self._skip_named = obj.call is not None
                self._state = _SKIP
                continue
            if st == _SKIP:
                assert self._skip is not None
                j, status = self._skip.scan(cur.buf, cur.pos, cur.final)
                cur.take(j)
                if status == MORE:
                    return False
                self._skip = None
                self._bad_entry(self._skip_named)
                if status == STOPPED or not self._listed:
                    return self._end(status != STOPPED)
                self._state = _NEXT
                continue
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
            cur.take_ws()
            buf, i = cur.buf, cur.pos
            if i >= len(buf):
                return False
            c = buf[i]
            if st == _START:
                if c == "[":
                    cur.take(i + 1)
                    self._listed = True
                    self._state = _LIST
                elif c == "{":
                    self._begin_entry(c)
                else:
                    self._state = _HEADER
            elif st == _NEXT:  # after an entry
                if c == ",":
                    cur.take(i + 1)
                    self._state = _LIST
                elif c == "]":
                    cur.take(i + 1)
                    return self._end(True)
                else:
                    return self._end(False)
            else:  # _LIST: where an entry may start
                if c == "]":
                    cur.take(i + 1)
                    return self._end(True)
                if c == ",":
                    cur.take(i + 1)  # an empty slot is framing too
                    continue
                if c in self._stop.first:
                    hit = self._stop.at(buf, i, cur.final)
                    if hit == MORE:
                        return False
                    if hit != NONE:
                        return self._end(False)
                self._begin_entry(c)

    def _begin_entry(self, c: str) -> None:
        """An entry starts at the cursor with ``c``: note where, pick its reader."""
        cur = self._ctx.cur
        if self._called:
            cur.start_log()  # from here on the log (``raw``) is this entry
        self._entry = len(cur.log) if cur.log is not None else 0
        if c == "{":
            self._obj = CallObject(self._ctx.calls, self._stop, self._opening)
            self._state = _OBJ
        elif c == "}":
            cur.take(cur.pos + 1)  # a stray brace is an entry of its own
            self._bad_entry(False)
            self._state = _NEXT
        else:
            self._skip = RawValue(self._stop)
            self._skip_named = False
            self._state = _SKIP

    def _entry_raw(self) -> str:
        """The current entry's text so far (its span of the cursor's log)."""
        return "".join(self._ctx.cur.log[self._entry :]) if self._ctx.cur.log else ""

    def _bad_entry(self, named: bool) -> None:
        """The current entry ended (or broke off) without yielding a whole call."""
        ctx = self._ctx
        if named:
            detail = "the call object broke off before it ended"
            ctx.calls.error("malformed_tool_call", detail, ctx.cur.raw())
        elif not self._called:
            log = ctx.cur.log
            self._pending.append((self._entry, len(log) if log is not None else 0))
        else:
            ctx.calls.malformed("malformed_tool_call", _NOT_A_CALL, self._entry_raw(), ctx.prose)

    def _opening(self) -> None:
        """A call is about to open, so the section yields one: the unnamed
        entries held until now are reported one by one, ahead of it."""
        self._called = True
        ctx = self._ctx
        log = ctx.cur.log or []
        for a, b in self._pending:
            ctx.calls.malformed("malformed_tool_call", _NOT_A_CALL, "".join(log[a:b]), ctx.prose)
        self._pending.clear()

    def _end(self, closed: bool) -> bool:
        """The list (or lone object) is over; ``closed``: by its own ``]``."""
        ctx = self._ctx
        if not self._called:
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
        self._called = True
        self.call = ctx.calls.open(self._name, call_id)
        self._state = _ARGS
        return None

    def finish(self) -> None:
        ctx = self._ctx
        calls, raw = ctx.calls, ctx.cur.raw()
        obj = self._obj
        if obj is not None and obj.call is not None:
            calls.cut(obj.call, obj.args_done, raw, ctx.prose)
        elif self.call is not None:
            calls.cut(self.call, False, raw, ctx.prose)
        elif self._skip is not None and self._skip_named:
            self._bad_entry(True)
        elif not self._called:
            calls.cut(None, False, raw, ctx.prose)  # the whole block: no call in it
        elif obj is not None or self._skip is not None:
            calls.cut(None, False, self._entry_raw(), ctx.prose)  # an unnamed entry cut off
        else:  # between the entries of a list that yielded calls
            calls.error("missing_close_marker", "call list not closed with ']'", "")


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


def _make(options: ParserOptions) -> ToolCallParser:
    opener = Opener(OPEN, lambda ctx, _m: MistralSection(ctx), _confirm)
    return _MistralParser(options, (opener,))


register("mistral", _make, aliases=("magistral", "devstral"), reasoning="bracket")


def _phi4(options: ParserOptions) -> ToolCallParser:
    """Phi-4-mini and FireFunction v2: ``functools[…]``, the legacy Mistral body
    after another marker. The list ends at the bracket that closes it."""
    opener = Opener("functools", lambda ctx, _m: MistralSection(ctx), body_starts("["))
    return InlineParser(options, (opener,))


register("phi4_mini", _phi4, aliases=("phi4_mini_json", "firefunction_v2"))
