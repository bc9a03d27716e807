"""XML-style calls: functions and parameters with raw values, turned into JSON.

Qwen3-Coder writes ``<function=NAME><parameter=KEY>value</parameter></function>``,
GLM ``NAME<arg_key>KEY</arg_key><arg_value>value</arg_value>``, MiniMax M2
``<invoke name="NAME"><parameter name="KEY">value</parameter></invoke>``,
DeepSeek V3.2 the same with ``<｜DSML｜`` prefixes and a ``string`` attribute.
One reader, parameterised by an :class:`XmlGrammar`, handles all of them.

JSON is synthesised in source order (reference §2.4): ``{`` at the function
header, ``"key": `` when a parameter opens, the value, ``}`` at the function
close. String values stream as they arrive (JSON-escaped); typed values are
converted when their parameter closes (:func:`schema.convert_value`). A
value's type is the one its parameter tag declares (DSML ``string="false"``)
if any, else the one the tool schema gives.

Values are raw text, so a value may contain a closing tag literally. A closer
is structural only when what follows confirms it (reference §6.3):
``</parameter>`` must be followed, after whitespace, by the next parameter,
a confirmed ``</function>`` or the end of input; ``</function>`` by the block
close, the next function or the end of input. The lookahead is bounded; at
the bound the closer counts as structural.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from .calls import Calls
from .jsonargs import BAD, DONE
from .scanner import BOUND, END, MORE, Cursor, MarkerSet, expect_after_ws
from .schema import convert_value

__all__ = ["GLM", "MINIMAX", "QWEN", "ParamHeader", "XmlGrammar", "XmlReader", "plain_key"]

# Longest function name or parameter key accepted before the markup counts as broken.
MAX_NAME = 256

ParamHeader = Callable[[str], "tuple[str, tuple[str, ...] | None] | None"]
"""Reads the text between a parameter opener and its key terminator into
``(key, declared types)``; declared types ``None`` leave typing to the
schema. ``None`` when the text names no parameter."""


def plain_key(text: str) -> tuple[str, tuple[str, ...] | None] | None:
    """A parameter header that is just the key: no declared type."""
    key = text.strip()
    return (key, None) if key else None


@dataclass(frozen=True, slots=True)
class XmlGrammar:
    """The markers of one XML call dialect.

    Tag markers are tuples of accepted spellings (DSML has several); the
    first spelling is the canonical one, used in messages. ``func_open``
    empty means the function name is the first line of the block (GLM); its
    name then ends at a newline, a parameter or the block close.
    ``func_close`` empty means the block close ends the function.
    ``param_header`` reads the parameter key and the type its tag declares.
    """

    func_open: tuple[str, ...]
    name_end: str
    param_open: tuple[str, ...]
    key_end: str
    value_open: str
    param_close: tuple[str, ...]
    func_close: tuple[str, ...]
    block_close: tuple[str, ...]
    param_header: ParamHeader = plain_key

    def function_starts(self, buf: str, i: int, final: bool) -> bool | None:
        """Whether a function opener starts at ``buf[i]`` (``None``: undecided)."""
        if not self.func_open:
            return True
        rest = buf[i : i + max(map(len, self.func_open))]
        if any(rest.startswith(m) for m in self.func_open):
            return True
        if not final and any(m.startswith(rest) for m in self.func_open):
            return None
        return False


QWEN = XmlGrammar(
    func_open=("<function=",),
    name_end=">",
    param_open=("<parameter=",),
    key_end=">",
    value_open="",
    param_close=("</parameter>",),
    func_close=("</function>",),
    block_close=("</tool_call>",),
)
GLM = XmlGrammar(
    func_open=(),
    name_end="\n",
    param_open=("<arg_key>",),
    key_end="</arg_key>",
    value_open="<arg_value>",
    param_close=("</arg_value>",),
    func_close=(),
    block_close=("</tool_call>",),
)
MINIMAX = XmlGrammar(
    func_open=('<invoke name="',),
    name_end='">',
    param_open=('<parameter name="',),
    key_end='">',
    value_open="",
    param_close=("</parameter>",),
    func_close=("</invoke>",),
    block_close=("</minimax:tool_call>",),
)

_FUNC, _FNAME, _PARAMS, _KEY, _VOPEN, _VALUE = range(6)
_UNDECIDED, _STREAM, _BUFFER = range(3)
# First characters of values that may be JSON numbers, literals, objects or arrays.
_JSON_START = frozenset("-0123456789tfn{[")


def _escape(s: str) -> str:
    """JSON string body for ``s``: escapes ``"``, ``\\`` and control characters only."""
    return json.dumps(s, ensure_ascii=False)[1:-1]


class XmlReader:
    """Reads XML functions until the block closes; one call per function.

    ``feed`` returns :data:`MORE`, :data:`DONE` (block close consumed) or
    :data:`BAD`; after ``BAD`` the caller closes :attr:`call` if it is open.
    """

    __slots__ = (
        "_calls",
        "_fname",
        "_g",
        "_known",
        "_lead",
        "_mode",
        "_name_set",
        "_nl",
        "_nparams",
        "_parts",
        "_state",
        "_types",
        "_vmarkers",
        "call",
        "completed",
    )

    def __init__(self, calls: Calls, grammar: XmlGrammar) -> None:
        g = grammar
        self._calls = calls
        self._g = g
        self._state = _FUNC if g.func_open else _FNAME
        if g.func_open:
            self._name_set = MarkerSet((g.name_end,))
        else:
            self._name_set = MarkerSet((g.name_end, *g.param_open, *g.block_close))
        self._fname = ""
        self._known: frozenset[str] = frozenset()
        self._nparams = 0
        self._types: tuple[str, ...] | None = None
        self._mode = _UNDECIDED
        self._parts: list[str] = []
        self._lead = False
        self._nl = False
        self._vmarkers = MarkerSet(())
        self.call: int | None = None
        self.completed = 0  # functions closed so far

    @property
    def between_params(self) -> bool:
        """Inside a function, with no parameter open (arguments complete so far)."""
        return self.call is not None and self._state == _PARAMS

    def close_open_function(self) -> None:
        """At the end of input between parameters: close the object and the call."""
        assert self.call is not None
        self._calls.args(self.call, "}")

    def feed(self, cur: Cursor) -> int:
        g = self._g
        while True:
            st = self._state
            if st == _VALUE:
                r = self._value(cur)
                if r != DONE:
                    return r
                continue
            if st in (_FNAME, _KEY):
                r = self._read_name(cur)
                if r != DONE:
                    return r
                continue
            cur.take_ws()
            buf, i, final = cur.buf, cur.pos, cur.final
            if i >= len(buf):
                return MORE
            if st == _FUNC:
                opts = g.func_open + g.block_close
            elif st == _PARAMS:
                opts = g.param_open + g.func_close + g.block_close
            else:  # _VOPEN
                opts = (g.value_open,)
            k, j = expect_after_ws(buf, i, final, opts)
            if k == MORE:
                return MORE
            if k < 0:
                return BAD
            marker = opts[k]
            cur.take(j + len(marker))
            if st == _FUNC:
                if marker in g.block_close:
                    return DONE
                self._state = _FNAME
            elif st == _PARAMS:
                if marker in g.param_open:
                    self._state = _KEY
                else:
                    self._close_function(cur)
                    if marker in g.block_close:
                        return DONE
                    self._state = _FUNC
            else:
                self._start_value()

    def _read_name(self, cur: Cursor) -> int:
        """Read a function name or parameter key up to its terminator."""
        g = self._g
        buf, i = cur.buf, cur.pos
        if self._state == _FNAME:
            j, marker = self._name_set.find(buf, i, cur.final)
        else:
            j = buf.find(g.key_end, i)
            marker = g.key_end if j >= 0 else None
        if marker is None:
            if len(buf) - i > MAX_NAME or cur.final:
                return BAD
            return MORE
        name = buf[i:j].strip()
        if not name or j - i > MAX_NAME or any(c in name for c in "<>\n"):
            return BAD
        if self._state == _FNAME:
            # A GLM name ends at a newline (consumed) or at the first parameter
            # or the block close (left for the next state).
            cur.take(j + len(marker) if marker == g.name_end else j)
            self._fname = name
            self.call = self._calls.open(name)
            self._calls.args(self.call, "{")
            self._nparams = 0
            tools = self._calls.tools
            self._known = tools.param_names(name) if tools is not None else frozenset()
            self._state = _PARAMS
            return DONE
        header = g.param_header(name)
        if header is None:
            return BAD
        key, declared = header
        cur.take(j + len(marker))
        # A type the tag declares wins over the schema's.
        tools = self._calls.tools
        if declared is None and tools is not None:
            declared = tools.param_types(self._fname, key)
        self._types = declared
        sep = ", " if self._nparams else ""
        self._nparams += 1
        assert self.call is not None
        self._calls.args(self.call, f"{sep}{json.dumps(key, ensure_ascii=False)}: ")
        if g.value_open:
            self._state = _VOPEN
        else:
            self._start_value()
        return DONE

    def _close_function(self, cur: Cursor) -> None:
        assert self.call is not None
        self._calls.args(self.call, "}")
        self._calls.close(self.call)
        self.call = None
        self.completed += 1
        cur.start_log()  # the raw of a later call starts after this one

    # -- values ------------------------------------------------------------

    def _start_value(self) -> None:
        g = self._g
        types = self._types
        if types == ("string",):
            self._mode = _STREAM
            assert self.call is not None
            self._calls.args(self.call, '"')
        else:
            self._mode = _UNDECIDED if types is None else _BUFFER
        self._parts.clear()
        self._lead = True
        self._nl = False
        ends = g.param_close + g.func_close
        if self._known:
            ends += g.param_open
        self._vmarkers = MarkerSet(ends)
        self._state = _VALUE

    def _value(self, cur: Cursor) -> int:
        g = self._g
        while True:
            buf, final = cur.buf, cur.final
            if self._lead:
                if cur.pos >= len(buf):
                    return MORE
                if buf[cur.pos] == "\n":
                    cur.take(cur.pos + 1)  # framing newline
                self._lead = False
            i, marker = self._vmarkers.find(buf, cur.pos, final)
            if i > cur.pos:
                self._value_text(cur.take(i))
            if marker is None:
                return MORE
            verdict = self._ends_value(buf, i, marker, final)
            if verdict is None:
                return MORE
            if not verdict:
                self._value_text(cur.take(i + len(marker)))
                continue
            self._end_value()
            if marker in g.param_close:
                cur.take(i + len(marker))
            self._state = _PARAMS
            return DONE

    def _ends_value(self, buf: str, i: int, marker: str, final: bool) -> bool | None:
        """Whether the closer candidate at ``i`` is structural (``None``: undecided)."""
        g = self._g
        end = i + len(marker)
        if marker in g.param_close:
            opts = g.param_open + (g.func_close or g.block_close)
            k, j = expect_after_ws(buf, end, final, opts)
            if k >= 0 and opts[k] in g.func_close:
                return self._func_close_confirmed(buf, j + len(opts[k]), final)
            return _verdict(k)
        if marker in g.func_close:
            return self._func_close_confirmed(buf, end, final)
        # An opening parameter tag: closes the value only for a known key.
        j = buf.find(g.key_end, end, end + MAX_NAME + len(g.key_end))
        if j < 0:
            return None if (not final and len(buf) - end <= MAX_NAME) else False
        header = g.param_header(buf[end:j])
        return header is not None and header[0] in self._known

    def _func_close_confirmed(self, buf: str, end: int, final: bool) -> bool | None:
        """Whether a function closer ending at ``end`` is followed by the block
        close or the next function."""
        g = self._g
        k, _ = expect_after_ws(buf, end, final, g.block_close + g.func_open)
        return _verdict(k)

    def _value_text(self, s: str) -> None:
        # One trailing newline is framing: hold it until more value text comes.
        if self._nl:
            s = "\n" + s
            self._nl = False
        if s.endswith("\n"):
            s = s[:-1]
            self._nl = True
        if not s:
            return
        assert self.call is not None
        if self._mode == _STREAM:
            self._calls.args(self.call, _escape(s))
            return
        self._parts.append(s)
        if self._mode == _UNDECIDED:
            head = s.lstrip()
            if head:
                if head[0] in _JSON_START:
                    self._mode = _BUFFER
                else:
                    # Cannot be a JSON scalar or container: a string, streamed.
                    self._mode = _STREAM
                    self._calls.args(self.call, '"' + _escape("".join(self._parts)))
                    self._parts.clear()

    def _end_value(self) -> None:
        assert self.call is not None
        self._nl = False
        if self._mode == _STREAM:
            self._calls.args(self.call, '"')
            return
        text = "".join(self._parts)
        self._parts.clear()
        out, ok = convert_value(text, self._types)
        if not ok:
            self._calls.error(
                "invalid_parameter_value",
                f"value does not fit the type {'/'.join(self._types or ())}; kept as a string",
                text,
            )
        self._calls.args(self.call, out)


def _verdict(k: int) -> bool | None:
    """A closer lookahead result: structural on a sibling, at the end or at the bound."""
    if k == MORE:
        return None
    return k >= 0 or k in (END, BOUND)
