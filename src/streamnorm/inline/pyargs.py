"""Python call syntax: ``[get_weather(city="Paris"), get_time()]`` and ``f(x=1)``.

Used by ``pythonic`` (Llama 3.2/4, ToolACE, OLMo) and by Llama 3 built-in
tools (``brave_search.call(query="…")``). The reader tracks brackets and
Python strings incrementally, so each character is looked at O(1) times;
each keyword argument is parsed with :mod:`ast` when its delimiter arrives
and converted by :mod:`literals` — never evaluated. Arguments therefore
stream one keyword at a time as a JSON object in source order.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable

from .calls import Calls
from .jsonargs import BAD, DONE
from .literals import NotALiteral, literal_from_node
from .scanner import MORE, Cursor, skip_ws

__all__ = ["PyCalls", "python_call_start"]

_IDENT = re.compile(r"[A-Za-z_][\w.]{0,255}")
_STRUCT = re.compile(r"[()\[\]{},\"']")
_MAX_NAME = 256

_LIST, _NAME, _PAREN, _ARGS, _AFTER = range(5)


def python_call_start(buf: str, i: int, final: bool) -> bool | None:
    """Whether ``buf[i:]`` starts (after whitespace) a dotted name and ``(``.
    Bounded lookahead: whitespace, a name of at most 256 characters."""
    j = skip_ws(buf, i)
    if j == len(buf):
        return None if not final else False
    m = _IDENT.match(buf, j)
    if m is None:
        return False
    if m.end() == len(buf):
        return None if not final else False
    k = skip_ws(buf, m.end())
    if k == len(buf):
        return None if not final and k - m.end() < 64 else False
    return buf[k] == "("


class PyCalls:
    """Reads one Python call, or a list of them (``listed``).

    ``rename`` maps the written name to the call name (Llama built-ins drop
    ``.call``). ``feed`` returns :data:`MORE`, :data:`DONE` or :data:`BAD`.
    """

    __slots__ = (
        "_arg",
        "_calls",
        "_depth",
        "_listed",
        "_nargs",
        "_quote",
        "_rename",
        "_state",
        "call",
        "completed",
    )

    def __init__(self, calls: Calls, listed: bool, rename: Callable[[str], str] = str) -> None:
        self._calls = calls
        self._listed = listed
        self._rename = rename
        self._state = _LIST if listed else _NAME
        self._depth = 0
        self._quote = ""  # the open string's quote ('"', "'", '\"\"\"' or "'''")
        self._arg: list[str] = []
        self._nargs = 0
        self.call: int | None = None
        self.completed = 0

    @property
    def after_call(self) -> bool:
        """A listed reader waiting for ``,`` or ``]`` after a complete call."""
        return self._state == _AFTER

    def feed(self, cur: Cursor) -> int:
        while True:
            st = self._state
            if st == _ARGS:
                r = self._args(cur)
                if r != DONE:
                    return r
                if not self._listed:
                    return DONE
                self._state = _AFTER
                continue
            cur.take_ws()
            buf, i = cur.buf, cur.pos
            if i >= len(buf):
                return MORE
            c = buf[i]
            if st == _LIST:
                if c != "[":
                    return BAD
                cur.take(i + 1)
                self._state = _NAME
            elif st == _NAME:
                m = _IDENT.match(buf, i)
                if m is None:
                    return BAD
                if m.end() == len(buf) and not cur.final:
                    return MORE if m.end() - i < _MAX_NAME else BAD
                j = skip_ws(buf, m.end())
                if j == len(buf):
                    return MORE if not cur.final else BAD
                if buf[j] != "(":
                    return BAD
                cur.take(j + 1)
                self.call = self._calls.open(self._rename(m.group()))
                self._calls.args(self.call, "{")
                self._nargs = 0
                self._state = _ARGS
            else:  # _AFTER
                if c == ",":
                    cur.take(i + 1)
                    self._state = _NAME
                elif c == "]":
                    cur.take(i + 1)
                    return DONE
                else:
                    return BAD

    def _args(self, cur: Cursor) -> int:
        """Scan argument text; emit each keyword argument as it completes."""
        buf, final = cur.buf, cur.final
        n = len(buf)
        i = cur.pos
        while True:
            q = self._quote
            if q:
                k = _string_end(buf, i, q, final)
                if k < 0:  # the string goes on past the input, or a cut escape is held
                    hold = -k - 1
                    self._arg.append(cur.take(hold))
                    return MORE
                i = k
                self._quote = ""
                continue
            m = _STRUCT.search(buf, i)
            if m is None:
                self._arg.append(cur.take(n))
                return MORE
            k = m.start()
            c = buf[k]
            if c in "\"'":
                if buf.startswith(c * 3, k):
                    self._quote, i = c * 3, k + 3
                elif n - k < 3 and not final and (c * 3).startswith(buf[k:]):
                    self._arg.append(cur.take(k))
                    return MORE  # one or two quotes: maybe a triple quote
                else:
                    self._quote, i = c, k + 1
            elif c in "([{":
                self._depth += 1
                i = k + 1
            elif c in ")]}" and self._depth > 0:
                self._depth -= 1
                i = k + 1
            elif c == "," and self._depth > 0:
                i = k + 1
            elif c == "," or c == ")":
                self._arg.append(cur.take(k))
                cur.take(k + 1)
                self._argument("".join(self._arg))
                self._arg.clear()
                if c == ")":
                    assert self.call is not None
                    self._calls.args(self.call, "}")
                    self._calls.close(self.call)
                    self.call = None
                    self.completed += 1
                    cur.start_log()
                    return DONE
                i = cur.pos
            else:  # a stray closer at depth 0: not a call
                # What precedes it was read, as it is when it arrived in
                # earlier pieces: the outcome cannot depend on the chunking.
                self._arg.append(cur.take(k))
                return BAD

    def _argument(self, src: str) -> None:
        """One ``key=value`` argument: appended to the call's JSON object."""
        src = src.strip()
        if not src:
            return
        assert self.call is not None
        calls = self._calls
        try:
            node = ast.parse(f"f({src})", mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
            calls.error("invalid_parameter_value", f"unreadable argument: {e}", src)
            return
        assert isinstance(node, ast.Call)
        if node.args or len(node.keywords) != 1 or node.keywords[0].arg is None:
            calls.error("invalid_parameter_value", "only keyword arguments are supported", src)
            return
        kw = node.keywords[0]
        try:
            value = json.dumps(literal_from_node(kw.value), ensure_ascii=False)
        except (NotALiteral, ValueError, TypeError) as e:
            value_src = ast.get_source_segment(f"f({src})", kw.value) or src
            calls.error("invalid_parameter_value", f"not a literal ({e}); kept as a string", src)
            value = json.dumps(value_src, ensure_ascii=False)
        sep = ", " if self._nargs else ""
        self._nargs += 1
        calls.args(self.call, f"{sep}{json.dumps(kw.arg, ensure_ascii=False)}: {value}")


def _string_end(buf: str, i: int, quote: str, final: bool) -> int:
    """Index just past the string's closing quote, or ``-(hold + 1)`` where
    ``hold`` is how far the input can be consumed while the string goes on."""
    n = len(buf)
    q = quote[0]
    while True:
        k1 = buf.find(q, i)
        k2 = buf.find("\\", i, k1 if k1 >= 0 else n)
        if k2 >= 0:
            if k2 + 1 >= n:
                return -((n if final else k2) + 1)
            i = k2 + 2
            continue
        if k1 < 0:
            return -(n + 1)
        if len(quote) == 1:
            return k1 + 1
        if buf.startswith(quote, k1):
            return k1 + 3
        if n - k1 < 3 and not final:
            return -(k1 + 1)  # one or two quotes at the end: maybe the closer
        i = k1 + 1
