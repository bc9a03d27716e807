"""JSON-argument streaming, shared by every JSON dialect.

Three resumable readers, each O(1) amortised per input character (strings are
crossed with ``re`` jumps to the next quote or backslash, containers with
jumps to the next bracket or quote):

* :class:`RawValue` finds where one JSON value ends, so its bytes can be
  forwarded exactly as written (reference §2.3 (5)). It tracks strings,
  escapes and depth only; whether the value is valid JSON is decided later
  by the strict parse.
* :class:`StringDecoder` streams the decoded content of a JSON string
  (names, and arguments that a model double-encoded as a string).
* :class:`CallObject` reads a ``{"name": …, "arguments": …}`` object and
  streams the arguments value while it arrives.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .calls import Calls
from .scanner import MORE, NONE, Cursor, MarkerSet, skip_ws

__all__ = ["DONE", "STOPPED", "CallObject", "RawValue", "StringDecoder"]

DONE = 1  # the value (object) ended
STOPPED = 2  # a stop marker appeared outside strings before the value ended
BAD = 3  # the input is not a call object

_STRING_STOP = re.compile(r'["\\]')
_SCALAR_END = re.compile(r"[,}\]\s]")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_LOW_PREFIX = re.compile(r"\\(?:u(?:[dD](?:[c-fC-F][0-9a-fA-F]{0,2})?)?)?")

_NEW, _CONTAINER, _STRING, _SCALAR = range(4)


class RawValue:
    """Finds the end of one JSON value in a stream of text.

    ``stop`` markers (a dialect's close markers) end the scan when they appear
    outside strings before the value is complete: an unbalanced value then
    cannot swallow the rest of the output. A scalar is complete where a stop
    marker begins.

    ``depth`` > 0 resumes inside that many open containers: it finds the end
    of a container whose start another reader already consumed (the rest of
    a call object that turned out unreadable).
    """

    __slots__ = ("_depth", "_in_str", "_mode", "_scalar_end", "_stop", "_struct")

    def __init__(self, stop: MarkerSet | None = None, depth: int = 0) -> None:
        self._mode = _CONTAINER if depth > 0 else _NEW
        self._depth = depth
        self._in_str = False
        self._stop = stop
        extra = "".join(re.escape(c) for c in sorted({m[0] for m in stop.markers})) if stop else ""
        self._struct = re.compile(r'["{}\[\]' + extra + "]")
        self._scalar_end = re.compile(r"[,}\]\s" + extra + "]") if extra else _SCALAR_END

    def scan(self, buf: str, i: int, final: bool) -> tuple[int, int]:
        """``(j, status)``: ``buf[i:j]`` belongs to the value; status is
        :data:`DONE` (the value ends at ``j``), :data:`STOPPED` (a stop marker
        starts at ``j``) or :data:`MORE`."""
        if self._mode == _NEW:
            if i >= len(buf):
                return i, MORE
            c = buf[i]
            if c in "{[":
                self._mode, self._depth = _CONTAINER, 1
                i += 1
            elif c == '"':
                self._mode, self._in_str = _STRING, True
                i += 1
            else:
                self._mode = _SCALAR
        if self._mode == _SCALAR:
            return self._scalar(buf, i, final)
        return self._nested(buf, i, final)

    def _scalar(self, buf: str, i: int, final: bool) -> tuple[int, int]:
        """A number or literal: it ends at the first character that cannot be
        part of it, or at a stop marker."""
        stop = self._stop
        while True:
            m = self._scalar_end.search(buf, i)
            if m is None:
                return len(buf), (DONE if final else MORE)
            k = m.start()
            if stop is None or buf[k] not in stop.first:
                return k, DONE
            hit = stop.at(buf, k, final)
            if hit == MORE:
                return k, MORE
            if hit != NONE:
                return k, DONE
            i = k + 1

    def _nested(self, buf: str, i: int, final: bool) -> tuple[int, int]:
        """A string or container: strings are skipped whole (escapes
        included), brackets counted; a stop marker outside strings ends it."""
        n, stop = len(buf), self._stop
        while True:
            if self._in_str:
                m = _STRING_STOP.search(buf, i)
                if m is None:
                    return n, MORE
                k = m.start()
                if buf[k] == "\\":
                    if k + 1 < n:
                        i = k + 2
                        continue
                    return (n if final else k), MORE
                self._in_str = False
                i = k + 1
                if self._depth == 0:
                    return i, DONE
                continue
            m = self._struct.search(buf, i)
            if m is None:
                return n, MORE
            k = m.start()
            if stop is not None:
                hit = stop.at(buf, k, final)
                if hit == MORE:
                    return k, MORE
                if hit != NONE:
                    return k, STOPPED
            i = k + 1
            c = buf[k]
            if c == '"':
                self._in_str = True
            elif c in "{[":
                self._depth += 1
            elif c in "}]":
                self._depth -= 1
                if self._depth == 0:
                    return i, DONE


class StringDecoder:
    """Streams the decoded content of one JSON string, after its opening quote.

    Complete escapes are decoded; an escape cut by the end of the input is
    held (at most 12 characters, a surrogate pair) until the rest arrives.
    Invalid escapes are kept literally; an unpaired surrogate becomes U+FFFD.
    """

    __slots__ = ()

    def scan(self, buf: str, i: int, final: bool) -> tuple[int, str, bool]:
        """``(j, decoded, done)``: ``buf[i:j]`` decoded; ``done`` when the
        closing quote was consumed."""
        n = len(buf)
        parts: list[str] = []
        while True:
            m = _STRING_STOP.search(buf, i)
            if m is None:
                parts.append(buf[i:])
                return n, "".join(parts), False
            k = m.start()
            parts.append(buf[i:k])
            if buf[k] == '"':
                return k + 1, "".join(parts), True
            if k + 1 >= n:
                if final:
                    parts.append("\\")
                    return n, "".join(parts), False
                return k, "".join(parts), False
            e = buf[k + 1]
            if e != "u":
                parts.append(_ESCAPES.get(e, "\\" + e))
                i = k + 2
                continue
            if k + 6 > n and not final:
                return k, "".join(parts), False
            if not _HEX4.fullmatch(buf, k + 2, k + 6):
                parts.append("\\u")
                i = k + 2
                continue
            cp = int(buf[k + 2 : k + 6], 16)
            if 0xD800 <= cp < 0xDC00:
                tail = buf[k + 6 : k + 12]
                if (
                    len(tail) < 6
                    and not final
                    and (not tail or _LOW_PREFIX.fullmatch(tail) is not None)
                ):
                    return k, "".join(parts), False
                if tail.startswith("\\u") and _HEX4.fullmatch(tail, 2, 6):
                    low = int(tail[2:], 16)
                    if 0xDC00 <= low < 0xE000:
                        parts.append(chr(0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)))
                        i = k + 12
                        continue
                parts.append("\ufffd")
            elif 0xDC00 <= cp < 0xE000:
                parts.append("\ufffd")
            else:
                parts.append(chr(cp))
            i = k + 6


# CallObject states
_OPEN, _KEY_OR_END, _KEY, _COLON, _VALUE, _NAME, _ARGS_RAW, _ARGS_STR, _SKIP, _AFTER = range(10)
#: The structural characters each state between values accepts.
_EXPECTED = {_OPEN: "{", _KEY_OR_END: '"}', _COLON: ":", _AFTER: ",}"}

NAME_KEYS = frozenset({"name"})
ARGS_KEYS = frozenset({"arguments", "parameters"})


class CallObject:
    """Reads one call object and streams its arguments.

    Accepted shapes: ``{"name": N, "arguments": A}`` with ``parameters`` for
    ``arguments``, any key order, other keys ignored, and the OpenAI-style
    nesting ``{"type": "function", "function": {…}}``. ``A`` is forwarded
    byte for byte as it arrives; when it is a JSON string (double-encoded
    arguments) its decoded content is forwarded instead. Arguments that come
    before the name are held until the name is known, because no argument
    byte may precede ``CallOpen``. A missing arguments key means ``{}``.

    ``feed`` returns :data:`MORE`, :data:`DONE` (object over, call closed),
    :data:`STOPPED` (a stop marker cut the arguments) or :data:`BAD`.
    After ``BAD``/``STOPPED`` the caller decides how to close :attr:`call`;
    after ``BAD`` the cursor is outside any value, :attr:`depth` objects deep.

    ``before_open`` runs once the name is known, just before the call opens,
    so a caller can emit what precedes the call in source order first.
    """

    __slots__ = (
        "_before_open",
        "_calls",
        "_frames",
        "_held",
        "_key",
        "_key_parts",
        "_name_parts",
        "_seen_args",
        "_state",
        "_stop",
        "_str",
        "_value",
        "args_done",
        "call",
        "name",
    )

    def __init__(
        self,
        calls: Calls,
        stop: MarkerSet | None = None,
        before_open: Callable[[], None] | None = None,
    ) -> None:
        self._calls = calls
        self._before_open = before_open
        self._stop = stop
        self._state = _OPEN
        self._frames = 0
        self._key = ""
        self._key_parts: list[str] = []
        self._name_parts: list[str] = []
        self._held: list[str] = []  # argument text seen before the name
        self._seen_args = False
        self._str = StringDecoder()
        self._value: RawValue | None = None
        self.name: str | None = None
        self.call: int | None = None
        self.args_done = False

    @property
    def depth(self) -> int:
        """Objects open at the cursor (2 inside ``{"function": {…}}``)."""
        return self._frames

    def _emit_args(self, s: str) -> None:
        if not s:
            return
        if self.call is not None:
            self._calls.args(self.call, s)
        else:
            self._held.append(s)

    def feed(self, cur: Cursor) -> int:
        """Read on: :data:`DONE` when the object closed, :data:`MORE` when the
        input ran out, :data:`STOPPED` at a stop marker, ``BAD`` when the text
        is no call object. Strings and raw values are read in runs; one
        structural character at a time otherwise."""
        while True:
            st = self._state
            if st in (_NAME, _KEY, _ARGS_STR):
                result = self._string(cur, st)
            elif st in (_ARGS_RAW, _SKIP):
                result = self._raw(cur, st)
            else:
                i = skip_ws(cur.buf, cur.pos)
                cur.take(i)
                if i >= len(cur.buf):
                    return MORE
                result = self._structural(cur, st, cur.buf[i])
            if result is not None:
                return result

    def _string(self, cur: Cursor, st: int) -> int | None:
        """The name, a key or string-encoded arguments."""
        j, text, done = self._str.scan(cur.buf, cur.pos, cur.final)
        cur.take(j)
        parts = self._key_parts if st == _KEY else self._name_parts if st == _NAME else None
        if parts is not None:
            parts.append(text)
        else:
            self._emit_args(text)
        if not done:
            return MORE
        if st == _KEY:
            self._key = "".join(self._key_parts)
            self._key_parts.clear()
            self._state = _COLON
        elif st == _NAME:
            self._named("".join(self._name_parts))
            self._state = _AFTER
        else:
            self.args_done = True
            self._state = _AFTER
        return None

    def _raw(self, cur: Cursor, st: int) -> int | None:
        """Arguments as a JSON value, or a value of another key skipped."""
        assert self._value is not None
        j, status = self._value.scan(cur.buf, cur.pos, cur.final)
        text = cur.take(j)
        if st == _ARGS_RAW:
            self._emit_args(text)
        if status in (MORE, STOPPED):
            return status
        if st == _ARGS_RAW:
            self.args_done = True
        self._value = None
        self._state = _AFTER
        return None

    def _structural(self, cur: Cursor, st: int, c: str) -> int | None:
        """One structural character ``c`` at the cursor in state ``st``."""
        if st == _VALUE:
            r = self._start_value(cur, c)
            return None if r == MORE else r
        expected = _EXPECTED[st]
        if c not in expected:
            return BAD
        cur.take(cur.pos + 1)
        if c == "{":
            self._frames = 1
            self._state = _KEY_OR_END
        elif c == '"':
            self._state = _KEY
        elif c == ":":
            self._state = _VALUE
        elif c == ",":
            self._state = _KEY_OR_END
        elif self._close_frame():  # "}"
            return DONE
        return None

    def _start_value(self, cur: Cursor, c: str) -> int:
        """Dispatch on the key whose value starts at the cursor (``c``)."""
        key = self._key
        if key in NAME_KEYS and self.name is None:
            if c != '"':
                return BAD
            cur.take(cur.pos + 1)
            self._state = _NAME
        elif key in ARGS_KEYS and not self._seen_args:
            self._seen_args = True
            if c == '"':
                cur.take(cur.pos + 1)
                self._state = _ARGS_STR
            else:
                self._value = RawValue(self._stop)
                self._state = _ARGS_RAW
        elif key == "function" and c == "{" and self._frames == 1:
            cur.take(cur.pos + 1)
            self._frames = 2
            self._state = _KEY_OR_END
        else:
            if key in ARGS_KEYS:
                self._calls.error(
                    "malformed_tool_call",
                    "both 'arguments' and 'parameters' given; the second is ignored",
                    "",
                )
            self._value = RawValue(self._stop)
            self._state = _SKIP
        return MORE

    def _named(self, name: str) -> None:
        name = name.strip()
        if not name:
            return
        self.name = name
        if self._before_open is not None:
            self._before_open()
        self.call = self._calls.open(name)
        if self._held:
            self._calls.args(self.call, "".join(self._held))
            self._held.clear()

    def _close_frame(self) -> bool:
        """A ``}`` closed a frame; ``True`` when the whole object is over."""
        self._frames -= 1
        if self._frames > 0:
            self._state = _AFTER
            return False
        if self.call is not None:
            if not self._seen_args:
                self._calls.args(self.call, "{}")
            self.args_done = True
            self._calls.close(self.call)
        return True
