"""Special-token call sections: DeepSeek V3/R1, DeepSeek V3.1, Kimi K2.

These dialects frame calls with single-token markers::

    SECTION_OPEN  CALL_OPEN header HEADER_END args CALL_CLOSE  …  SECTION_CLOSE

where *header* names the call (and for Kimi carries its id) and *args* is a
JSON value forwarded byte for byte. One :class:`TokenSection`, configured by
a :class:`TokenGrammar`, reads all of them. A call marker without a section
opener is accepted too (distilled models drop the section markers). Special
tokens confirm themselves; a markdown fence around the arguments (DeepSeek
V3) is consumed as framing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from .calls import SectionContext
from .engine import Opener
from .jsonargs import STOPPED, RawValue
from .scanner import MORE, MarkerSet, body_starts, expect_after_ws

__all__ = ["TokenGrammar", "TokenSection", "token_openers"]

HeaderReader = Callable[[str], "tuple[str | None, str] | None"]
_FENCE = re.compile(r"```[A-Za-z]*")
_MAX_HEADER = 512


@dataclass(frozen=True, slots=True)
class TokenGrammar:
    """The markers of one special-token dialect.

    ``header_ends`` end the header; those in ``header_keep`` (a fence, ``{``)
    also begin the arguments and are left for them. ``header`` turns the
    header text into ``(id, name)``, or ``None`` when it names no call.
    """

    section_opens: tuple[str, ...]
    section_close: str
    call_open: str
    header_ends: tuple[str, ...]
    call_close: str
    header: HeaderReader
    header_keep: tuple[str, ...] = ()


_BETWEEN, _HEADER, _PRE, _ARGS, _POST, _JUNK = range(6)


class TokenSection:
    """Reads calls until the section closes (or, without a section opener,
    until something other than another call follows)."""

    __slots__ = (
        "_call",
        "_ctx",
        "_detail",
        "_ends",
        "_g",
        "_hdr",
        "_sectioned",
        "_state",
        "_stop",
        "_value",
        "made",
    )

    def __init__(self, ctx: SectionContext, grammar: TokenGrammar, marker: str) -> None:
        self._ctx = ctx
        self._g = grammar
        self._sectioned = marker != grammar.call_open
        self._state = _BETWEEN if self._sectioned else _HEADER
        self._stop = MarkerSet((grammar.call_close, grammar.section_close, grammar.call_open))
        self._ends = MarkerSet(
            (*grammar.header_ends, grammar.call_close, grammar.section_close, grammar.call_open)
        )
        self._hdr: list[str] = []
        self._detail = "unexpected text in the call section"
        self._value: RawValue | None = None
        self._call: int | None = None
        self.made = 0

    def feed(self) -> bool:
        """Read as far as the buffered text allows; True when the section is
        over. One step per state: each returns None to go on, else the
        answer (False: more text needed)."""
        while True:
            done = self._STEPS[self._state](self)
            if done is not None:
                return done

    def _between(self) -> bool | None:
        g, cur = self._g, self._ctx.cur
        k, j = expect_after_ws(cur.buf, cur.pos, cur.final, (g.call_open, g.section_close))
        if k == MORE:
            return False
        if k == 0:
            cur.take(j + len(g.call_open))
            self._state = _HEADER
        elif k == 1:
            cur.take(j + len(g.section_close))
            return True
        elif not self._sectioned:
            return True  # no section: the calls are over, prose follows
        else:
            self._state = _JUNK
        return None

    def _header(self) -> bool | None:
        g, cur = self._g, self._ctx.cur
        j, marker = self._ends.find(cur.buf, cur.pos, cur.final)
        if marker is None and j - cur.pos + sum(map(len, self._hdr)) <= _MAX_HEADER:
            self._hdr.append(cur.take(j))
            return False
        self._hdr.append(cur.take(j))
        header = "".join(self._hdr)
        self._hdr.clear()
        named = g.header(header) if marker in g.header_ends else None
        if named is None:
            self._detail = "unreadable call header"
            self._state = _JUNK
            return None
        assert marker is not None
        if marker not in g.header_keep:
            cur.take(j + len(marker))
        self._call = self._ctx.calls.open(named[1], named[0])
        self._state = _PRE
        return None

    def _pre(self) -> bool | None:
        """Before the arguments: whitespace and an optional code fence."""
        cur = self._ctx.cur
        cur.take_ws()
        buf, i = cur.buf, cur.pos
        if i >= len(buf):
            return False
        fence = _FENCE.match(buf, i)
        if fence is not None:
            if fence.end() == len(buf) and not cur.final:
                return False
            cur.take(fence.end())
            return None
        if len(buf) - i < 3 and "```".startswith(buf[i:]) and not cur.final:
            return False
        self._value = RawValue(self._stop)
        self._state = _ARGS
        return None

    def _args(self) -> bool | None:
        ctx, cur = self._ctx, self._ctx.cur
        assert self._value is not None and self._call is not None
        j, status = self._value.scan(cur.buf, cur.pos, cur.final)
        ctx.calls.args(self._call, cur.take(j))
        if status == MORE:
            return False
        self._value = None
        if status == STOPPED:
            ctx.calls.close(self._call, "incomplete")
            ctx.calls.error(
                "malformed_tool_call", "the arguments ended before their value", cur.raw()
            )
            self._call = None
            self.made += 1
        self._state = _POST
        return None

    def _post(self) -> bool | None:
        """After the arguments: a closing fence, then the call's close."""
        g, cur = self._g, self._ctx.cur
        k, j = expect_after_ws(cur.buf, cur.pos, cur.final, ("```", g.call_close))
        if k == MORE:
            return False
        if k == 0:
            cur.take(j + 3)
            return None
        if k == 1:
            cur.take(j + len(g.call_close))
            self._end_call()
            return None
        self._end_call()
        self._detail = "unexpected text after the call's arguments"
        self._state = _JUNK
        return None

    def _junk(self) -> bool | None:
        """Skip to the next call marker or the section close, reporting what
        was skipped."""
        ctx, g, cur = self._ctx, self._g, self._ctx.cur
        j, marker = self._stop.find(cur.buf, cur.pos, cur.final)
        cur.take(j)
        if marker is None:
            return False
        if marker == g.call_close:
            cur.take(j + len(marker))
        raw = cur.raw()  # since the last complete call
        if raw.strip():
            if self.made:
                ctx.calls.error("malformed_tool_call", self._detail, raw)
            else:
                ctx.calls.malformed("malformed_tool_call", self._detail, raw, ctx.prose)
        self._detail = "unexpected text in the call section"
        self._state = _BETWEEN
        cur.start_log()
        return None

    #: The step of each state, indexed by the state's number.
    _STEPS: ClassVar[tuple[Callable[[TokenSection], bool | None], ...]] = (
        _between,
        _header,
        _pre,
        _args,
        _post,
        _junk,
    )

    def _end_call(self) -> None:
        if self._call is not None:
            self._ctx.calls.close(self._call)
            self._call = None
            self.made += 1
        self._ctx.cur.start_log()
        self._state = _BETWEEN

    def finish(self) -> None:
        ctx = self._ctx
        raw = ctx.cur.raw()
        st = self._state
        if self._call is not None:
            ctx.calls.cut(self._call, st == _POST, raw, ctx.prose)
        elif st == _HEADER or (st == _JUNK and raw.strip()):
            if self.made == 0:
                ctx.calls.cut(None, False, raw, ctx.prose)
            else:
                ctx.calls.error("unclosed_tool_call", "the input ended inside a call", raw)
        elif self._sectioned:
            close = self._g.section_close
            ctx.calls.error("missing_close_marker", f"the input ended before {close}", "")


def token_openers(grammar: TokenGrammar) -> tuple[Opener, ...]:
    """Openers for every section opener spelling, and for a bare call marker.

    Special tokens are unambiguous when the server renders them, but the
    same characters can reach the text through prose that quotes them; so a
    section opener counts only when a call marker (or the section close)
    follows, and a call marker only when its header ends within a bound.
    """

    def section(ctx: SectionContext, marker: str) -> TokenSection:
        return TokenSection(ctx, grammar, marker)

    stops = MarkerSet(
        (
            *grammar.header_ends,
            grammar.call_close,
            grammar.section_close,
            grammar.call_open,
            *grammar.section_opens,
        )
    )

    def call_confirm(buf: str, i: int, final: bool) -> bool | None:
        """The header ends (at a header end, before any other marker) and
        names a call, within the header bound."""
        window = buf[i : i + _MAX_HEADER]
        cut = final or len(window) == _MAX_HEADER
        j, marker = stops.find(window, 0, cut)
        if marker is None:
            return None if not cut else False
        return marker in grammar.header_ends and grammar.header(window[:j]) is not None

    section_confirm = body_starts(grammar.call_open, grammar.section_close)
    openers = [Opener(m, section, section_confirm) for m in grammar.section_opens]
    openers.append(Opener(grammar.call_open, section, call_confirm))
    return tuple(openers)
