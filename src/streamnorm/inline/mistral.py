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
from .scanner import MAX_WS, MORE, MarkerSet, body_starts, skip_ws

__all__ = ["MistralSection", "mistral_call_id"]

OPEN = "[TOOL_CALLS]"
_HEADER_END = MarkerSet(("[ARGS]", "[CALL_ID]", "{", "\n"))
_STOP = MarkerSet((OPEN,))
_MAX_HEADER = 256

_START, _LIST, _OBJ, _HEADER, _ID, _ARGS = range(6)


def mistral_call_id(response_id: str | None, position: int) -> str:
    """Nine alphanumerics, deterministic in the response id and position."""
    return hashlib.sha256(f"{response_id or ''}:{position}".encode()).hexdigest()[:9]


class MistralSection:
    """What follows one ``[TOOL_CALLS]``: a call list, a call object, or
    ``name[ARGS]{…}``. Ends after the arguments value.

    ``stop`` holds the dialect's call openers: one appearing outside strings
    before a value is complete cuts that value, so an unbalanced value cannot
    swallow the calls after it.
    """

    __slots__ = (
        "_ctx",
        "_id_parts",
        "_listed",
        "_name",
        "_obj",
        "_state",
        "_stop",
        "_value",
        "call",
        "made",
    )

    def __init__(self, ctx: SectionContext, stop: MarkerSet = _STOP) -> None:
        self._ctx = ctx
        self._stop = stop
        self._state = _START
        self._listed = False
        self._obj: CallObject | None = None
        self._value: RawValue | None = None
        self._name = ""
        self._id_parts: list[str] = []
        self.call: int | None = None
        self.made = 0

    def feed(self) -> bool:
        ctx = self._ctx
        cur, calls = ctx.cur, ctx.calls
        while True:
            st = self._state
            if st == _OBJ:
                assert self._obj is not None
                r = self._obj.feed(cur)
                if r == MORE:
                    return False
                obj = self._obj
                self._obj = None
                if r == DONE and obj.call is not None:
                    self.made += 1
                    cur.start_log()
                    if self._listed:
                        self._state = _LIST
                        continue
                    return True
                if obj.call is None:
                    detail = "unreadable call object"
                    calls.malformed("malformed_tool_call", detail, cur.raw(), ctx.prose)
                else:
                    calls.close(obj.call, None if obj.args_done else "incomplete")
                    if not obj.args_done:
                        detail = "the call object broke off before its arguments ended"
                        calls.error("malformed_tool_call", detail, cur.raw())
                return True
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
                self.made += 1
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
                    self._obj = CallObject(calls, self._stop)
                    self._state = _OBJ
                else:
                    self._state = _HEADER
            else:  # _LIST: between call objects
                if c == "{":
                    self._obj = CallObject(calls, self._stop)
                    self._state = _OBJ
                elif c == ",":
                    cur.take(i + 1)
                elif c == "]":
                    cur.take(i + 1)
                    if self.made == 0:
                        calls.malformed(
                            "malformed_tool_call", "empty call list", cur.raw(), ctx.prose
                        )
                    return True
                else:
                    calls.error("missing_close_marker", "call list not closed with ']'", "")
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
        raw = ctx.cur.raw()
        if self._obj is not None and self._obj.call is not None:
            ctx.calls.cut(self._obj.call, self._obj.args_done, raw, ctx.prose)
        elif self.call is not None:
            ctx.calls.cut(self.call, False, raw, ctx.prose)
        elif self._listed and self.made:
            ctx.calls.error("missing_close_marker", "call list not closed with ']'", "")
        elif self.made == 0:
            ctx.calls.cut(None, False, raw, ctx.prose)


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
