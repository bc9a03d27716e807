"""Llama: JSON calls (``llama3_json``) and Python-list calls (``pythonic``).

``llama3_json`` (Llama 3.1–3.3)::

    <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}

``<|python_tag|>`` is optional; ``arguments`` is accepted for ``parameters``;
several calls are separated by ``;``; ``<|eom_id|>``/``<|eot_id|>`` end the
turn and are consumed. Built-in tools are Python calls:
``<|python_tag|>brave_search.call(query="…")`` → ``brave_search``.

``pythonic`` (Llama 3.2 1B/3B, Llama 4, ToolACE, OLMo 3)::

    [get_weather(city="San Francisco"), get_time()]

optionally inside ``<|python_start|>…<|python_end|>``; dotted names allowed.

Both dialects parse a bare call (JSON object, Python list) only where answer
text has not started, when ``require_call_at_start`` is on (the default), so
JSON and lists in prose stay text.
"""

from __future__ import annotations

import re

from .base import ParserOptions, ToolCallParser
from .calls import SectionContext
from .engine import InlineParser, Opener
from .jsonargs import BAD, DONE, CallObject
from .pyargs import PyCalls, python_call_start
from .scanner import MAX_WS, MORE, MarkerSet, expect_after_ws, skip_ws

__all__ = ["LlamaJsonSection", "PythonListSection"]

PYTHON_TAG = "<|python_tag|>"
_TURN_END = ("<|eom_id|>", "<|eot_id|>")
_STOP = MarkerSet(_TURN_END)
_CALL_KEY = re.compile(rf'\{{\s{{0,{MAX_WS}}}"(?:name|type|function|parameters|arguments)"')


def _bare_json_confirm(buf: str, i: int, final: bool) -> bool | None:
    """``{`` followed by a call key: a call object, not JSON in prose.
    Bounded lookahead: whitespace run plus the longest key."""
    if _CALL_KEY.match(buf, i):
        return True
    if final:
        return False
    m = _WS.match(buf, i + 1)
    j = m.end() if m else i + 1
    if j - i - 1 > MAX_WS:
        return False
    if j == len(buf):
        return None
    key = buf[j : j + 16]
    return None if any(f'"{k}"'.startswith(key) for k in _KEYS) else False


_KEYS = ("name", "type", "function", "parameters", "arguments")
_WS = re.compile(rf"\s{{0,{MAX_WS + 1}}}")


def _tag_confirm(buf: str, i: int, final: bool) -> bool | None:
    k, j = expect_after_ws(buf, i, final, ("{",))
    if k == MORE:
        return None
    if k == 0:
        return True
    return python_call_start(buf, i, final) if j < len(buf) else False


def _builtin_name(name: str) -> str:
    return name[: -len(".call")] if name.endswith(".call") else name


_CALL, _BODY, _AFTER = range(3)


class LlamaJsonSection:
    """One or more ``;``-separated calls (JSON objects or built-in Python
    calls), up to an optional end-of-turn token."""

    __slots__ = ("_ctx", "_obj", "_py", "_state", "made")

    def __init__(self, ctx: SectionContext) -> None:
        self._ctx = ctx
        self._state = _CALL
        self._obj: CallObject | None = None
        self._py: PyCalls | None = None
        self.made = 0

    def feed(self) -> bool:
        ctx = self._ctx
        cur, calls = ctx.cur, ctx.calls
        while True:
            if self._state == _BODY:
                if self._obj is not None:
                    r = self._obj.feed(cur)
                else:
                    assert self._py is not None
                    r = self._py.feed(cur)
                if r == MORE:
                    return False
                obj, py = self._obj, self._py
                self._obj = self._py = None
                if r == DONE and (obj.call is not None if obj is not None else True):
                    self.made += 1
                    cur.start_log()
                    self._state = _AFTER
                    continue
                call = obj.call if obj is not None else py.call if py is not None else None
                if call is None:
                    calls.malformed("malformed_tool_call", "unreadable call", cur.raw(), ctx.prose)
                else:
                    complete = obj is not None and obj.args_done
                    calls.close(call, None if complete else "incomplete")
                    if not complete:
                        detail = "the call broke off before its arguments ended"
                        calls.error("malformed_tool_call", detail, cur.raw())
                return True
            buf, i = cur.buf, cur.pos
            if self._state == _CALL:
                j = skip_ws(buf, i)
                if j >= len(buf):
                    cur.take(j)
                    return False
                cur.take(j)
                if buf[j] == "{":
                    self._obj = CallObject(calls, _STOP)
                else:
                    self._py = PyCalls(calls, listed=False, rename=_builtin_name)
                self._state = _BODY
                continue
            # _AFTER: `;` and another call, an end-of-turn token, or the end.
            k, j = expect_after_ws(buf, i, cur.final, (";", *_TURN_END, PYTHON_TAG))
            if k == MORE:
                return False
            if k == 0 or k == 3:
                cur.take(j + (1 if k == 0 else len(PYTHON_TAG)))
                self._state = _CALL
                continue
            if k in (1, 2):
                cur.take(j + len(_TURN_END[k - 1]))
            return True

    def finish(self) -> None:
        ctx = self._ctx
        raw = ctx.cur.raw()
        if self._obj is not None and self._obj.call is not None:
            ctx.calls.cut(self._obj.call, self._obj.args_done, raw, ctx.prose)
        elif self._py is not None and self._py.call is not None:
            ctx.calls.cut(self._py.call, False, raw, ctx.prose)
        elif raw.strip() and (self._state != _CALL or self.made == 0):
            ctx.calls.cut(None, False, raw, ctx.prose)


class PythonListSection:
    """A Python list of calls, optionally wrapped in ``<|python_start|>``…``<|python_end|>``."""

    __slots__ = ("_ctx", "_py", "_wrapped")

    def __init__(self, ctx: SectionContext, wrapped: bool) -> None:
        self._ctx = ctx
        self._wrapped = wrapped
        self._py: PyCalls | None = PyCalls(ctx.calls, listed=True)

    def feed(self) -> bool:
        ctx = self._ctx
        cur = ctx.cur
        if self._py is not None:
            r = self._py.feed(cur)
            if r == MORE:
                return False
            py, self._py = self._py, None
            if r == BAD:
                if py.call is not None:
                    ctx.calls.close(py.call, "incomplete")
                    ctx.calls.error("malformed_tool_call", "unreadable call", cur.raw())
                elif py.after_call:
                    ctx.calls.error("missing_close_marker", "call list not closed with ']'", "")
                else:
                    ctx.calls.malformed(
                        "malformed_tool_call", "unreadable call list", cur.raw(), ctx.prose
                    )
                if not self._wrapped:
                    return True
        if not self._wrapped:
            return True
        k, j = expect_after_ws(cur.buf, cur.pos, cur.final, ("<|python_end|>",))
        if k == MORE:
            return False
        if k == 0:
            cur.take(j + len("<|python_end|>"))
        return True

    def finish(self) -> None:
        ctx = self._ctx
        py = self._py
        raw = ctx.cur.raw()
        if py is None:
            return
        if py.call is not None:
            ctx.calls.cut(py.call, False, raw, ctx.prose)
        elif py.after_call:
            ctx.calls.error("missing_close_marker", "call list not closed with ']'", "")
        elif py.completed == 0:
            ctx.calls.cut(None, False, raw, ctx.prose)


def _list_confirm(buf: str, i: int, final: bool) -> bool | None:
    """``[`` then a dotted name and ``(``: a call list, not a list in prose."""
    return python_call_start(buf, i + 1, final)


def llama3_json(options: ParserOptions) -> ToolCallParser:
    openers = (
        Opener(PYTHON_TAG, lambda ctx, _m: LlamaJsonSection(ctx), _tag_confirm),
        Opener("{", lambda ctx, _m: LlamaJsonSection(ctx), _bare_json_confirm, True, True),
    )
    return InlineParser(options, openers)


def pythonic(options: ParserOptions) -> ToolCallParser:
    openers = (
        Opener("<|python_start|>", lambda ctx, _m: PythonListSection(ctx, True)),
        Opener("[", lambda ctx, _m: PythonListSection(ctx, False), _list_confirm, True, True),
    )
    return InlineParser(options, openers)
