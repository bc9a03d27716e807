"""JSON call entries read one by one: a list of call objects, or one entry.

Shared by the sections whose body holds ``{"name": …, "arguments": …}``
objects — the legacy Mistral list (and ``phi4_mini``, Granite 3.x) and the
tag blocks (``hermes``, ``jamba``, ``minimax`` …) — so that a bad entry is
handled the same everywhere: it costs only itself (reference §2.6).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from .calls import SectionContext
from .jsonargs import DONE, STOPPED, CallObject, RawValue
from .scanner import MORE, NONE, MarkerSet

__all__ = ["CallList"]

_IDLE, _LIST, _NEXT, _OBJ, _SKIP, _JUNK = range(6)

_NOT_A_CALL = "list entry is not a call object with a name"
_TEXT = "text inside the call block is not a call object"


class CallList:
    """Reads call entries for one section, reporting each bad one alone.

    The section starts a reading with :meth:`open_list` (after consuming a
    list's ``[``), :meth:`open_object` (a lone object at the cursor) or
    :meth:`open_text` (text that is no call at all, up to a marker), then
    calls :meth:`feed` until it is over. One reader serves a whole section
    and may be started again after a reading ends; :attr:`called` tells
    whether any call opened in the section.

    An entry that yields no call — no name, unreadable JSON, a number, a
    string, stray text — is ``malformed_tool_call`` with the entry as
    ``raw`` (text with ``on_malformed="text"``), and the entries after it
    are still read; a list's brackets, separators and the whitespace between
    entries are structure and never reach the text. A section that yields
    no call at all is one malformed block, opener included, like any block
    without a name; the section reports that. It is only known once a call
    opens or the section ends, so the bad entries before the first call are
    held and reported just before that call opens, in source order. An entry
    that breaks off after its call opened closes the call (``incomplete``
    unless its arguments were complete) and is reported as an error only:
    its name and arguments already went into the call.

    ``stop`` holds markers that end a reading wherever they appear outside
    strings (the dialect's close marker, or its call openers when it has no
    close): one inside an entry cuts that entry, one where an entry would
    start ends the list. In a list, anything but ``,`` or ``]`` after an
    entry ends it too, and the cursor is left there for the section.

    Cost: every character is read once by the object, value or marker
    scanner it drives; each bad entry's text is joined once.
    """

    __slots__ = (
        "_ctx",
        "_entry",
        "_junk",
        "_listed",
        "_obj",
        "_pending",
        "_skip",
        "_skip_named",
        "_state",
        "_stop",
        "called",
    )

    def __init__(self, ctx: SectionContext, stop: MarkerSet) -> None:
        self._ctx = ctx
        self._stop = stop
        self._state = _IDLE
        self._listed = False
        self._obj: CallObject | None = None
        self._skip: RawValue | None = None  # reads past the rest of a bad entry
        self._skip_named = False  # ... whose call had opened
        self._junk: MarkerSet | None = None  # where the text being read as an entry ends
        self._entry = 0  # index in the cursor's log where the current entry starts
        self._pending: list[tuple[str, str]] = []  # (detail, raw) of bad entries before any call
        self.called = False  # a call opened in this section

    # -- starting a reading ----------------------------------------------

    def open_list(self) -> None:
        """The list's ``[`` was consumed: read entries up to its ``]``."""
        self._listed = True
        self._state = _LIST

    def open_object(self) -> None:
        """A call object starts at the cursor (its ``{``): read it alone."""
        self._listed = False
        self._begin("{")

    def open_text(self, ends: MarkerSet) -> None:
        """Text that starts no JSON entry begins at the cursor: one bad entry
        up to the first of ``ends`` (or the end of input). Its trailing
        whitespace is framing."""
        self._listed = False
        self._mark()
        self._junk = ends
        self._state = _JUNK

    # -- reading ---------------------------------------------------------

    def feed(self) -> int:
        """Read on. :data:`MORE` when the input ran out; :data:`DONE` when a
        lone entry is over or the list closed with its ``]``; :data:`STOPPED`
        when a stop marker (or, in a list, anything but ``,``/``]`` after an
        entry) ended the reading. The cursor is just past what was read."""
        while True:
            result = self._STEPS[self._state](self)
            if result is not None:
                return result

    # One step per state: None to go on, else the reading's result.

    def _idle(self) -> int | None:
        return DONE

    def _in_object(self) -> int | None:
        ctx, cur = self._ctx, self._ctx.cur
        obj = self._obj
        assert obj is not None
        r = obj.feed(cur)
        if r == MORE:
            return MORE
        self._obj = None
        if r == DONE:
            if obj.call is None:
                self._bad(False)
            if not self._listed:
                return self._over(DONE)
            self._state = _NEXT
            return None
        if obj.call is not None:
            ctx.calls.close(obj.call, None if obj.args_done else "incomplete")
        if r == STOPPED:
            self._bad(obj.call is not None)
            return self._over(STOPPED)
        # Unreadable: skip to the brace that closes the entry.
        self._skip = RawValue(self._stop, obj.depth)
        self._skip_named = obj.call is not None
        self._state = _SKIP
        return None

    def _skipping(self) -> int | None:
        cur = self._ctx.cur
        assert self._skip is not None
        j, status = self._skip.scan(cur.buf, cur.pos, cur.final)
        cur.take(j)
        if status == MORE:
            return MORE
        self._skip = None
        self._bad(self._skip_named)
        if status == STOPPED or not self._listed:
            return self._over(status)
        self._state = _NEXT
        return None

    def _in_junk(self) -> int | None:
        cur = self._ctx.cur
        assert self._junk is not None
        i, marker = self._junk.find(cur.buf, cur.pos, cur.final)
        cur.take(i)
        if marker is None and not cur.final:
            return MORE
        self._junk = None
        self._bad(False, text=True)
        return self._over(DONE)

    def _next_char(self) -> str | None:
        """The next character after whitespace, or None when the input ran out."""
        cur = self._ctx.cur
        cur.take_ws()
        return cur.buf[cur.pos] if cur.pos < len(cur.buf) else None

    def _after_entry(self) -> int | None:
        cur = self._ctx.cur
        c = self._next_char()
        if c is None:
            return MORE
        if c == ",":
            cur.take(cur.pos + 1)
            self._state = _LIST
            return None
        if c == "]":
            cur.take(cur.pos + 1)
            return self._over(DONE)
        return self._over(STOPPED)

    def _entry_start(self) -> int | None:
        """Where an entry may start: the list's end, an empty slot, a stop
        marker, or the entry itself."""
        cur = self._ctx.cur
        c = self._next_char()
        if c is None:
            return MORE
        if c == "]":
            cur.take(cur.pos + 1)
            return self._over(DONE)
        if c == ",":
            cur.take(cur.pos + 1)  # an empty slot is framing too
            return None
        if c in self._stop.first:
            hit = self._stop.at(cur.buf, cur.pos, cur.final)
            if hit == MORE:
                return MORE
            if hit != NONE:
                return self._over(STOPPED)
        self._begin(c)
        return None

    #: The step of each state, indexed by the state's number.
    _STEPS: ClassVar[tuple[Callable[[CallList], int | None], ...]] = (
        _idle,
        _entry_start,
        _after_entry,
        _in_object,
        _skipping,
        _in_junk,
    )

    def _over(self, result: int) -> int:
        self._state = _IDLE
        return result

    def _mark(self) -> None:
        """An entry starts at the cursor: note where its text begins."""
        cur = self._ctx.cur
        if self.called:
            cur.start_log()  # from here on the log (``raw``) is this entry
        self._entry = len(cur.log) if cur.log is not None else 0

    def _begin(self, c: str) -> None:
        """An entry starts at the cursor with ``c``: pick its reader."""
        self._mark()
        if c == "{":
            self._obj = CallObject(self._ctx.calls, self._stop, self._opening)
            self._state = _OBJ
        elif c == "}":
            cur = self._ctx.cur
            cur.take(cur.pos + 1)  # a stray brace is an entry of its own
            self._bad(False)
            self._state = _NEXT
        else:
            self._skip = RawValue(self._stop)
            self._skip_named = False
            self._state = _SKIP

    def _entry_raw(self) -> str:
        """The current entry's text so far (its span of the cursor's log)."""
        log = self._ctx.cur.log
        return "".join(log[self._entry :]) if log else ""

    def _bad(self, named: bool, text: bool = False) -> None:
        """The current entry ended (or broke off) without yielding a whole
        call; ``text``: it was stray text, whose trailing whitespace is framing."""
        ctx = self._ctx
        if named:
            detail = "the call object broke off before it ended"
            ctx.calls.error("malformed_tool_call", detail, ctx.cur.raw())
            return
        raw = self._entry_raw()
        detail = _NOT_A_CALL
        if text:
            raw, detail = raw.rstrip(), _TEXT
        if not self.called:
            self._pending.append((detail, raw))
        else:
            ctx.calls.malformed("malformed_tool_call", detail, raw, ctx.prose)

    def _opening(self) -> None:
        """A call is about to open, so the section yields one: the bad
        entries held until now are reported one by one, ahead of it."""
        self.called = True
        ctx = self._ctx
        for detail, raw in self._pending:
            ctx.calls.malformed("malformed_tool_call", detail, raw, ctx.prose)
        self._pending.clear()

    # -- the end of input ------------------------------------------------

    def finish(self) -> bool:
        """The input ended inside the section: close or report the entry
        being read. ``False`` when that is left to the section: no entry was
        being read, or no call opened (the whole section is one cut block)."""
        ctx = self._ctx
        obj = self._obj
        if obj is not None and obj.call is not None:
            ctx.calls.cut(obj.call, obj.args_done, ctx.cur.raw(), ctx.prose)
        elif self._skip is not None and self._skip_named:
            self._bad(True)
        elif not self.called or self._state not in (_OBJ, _SKIP, _JUNK):
            return False
        else:
            ctx.calls.cut(None, False, self._entry_raw(), ctx.prose)  # an unnamed entry cut off
        self._state = _IDLE
        return True
