"""Tool-call arguments: previews while they stream, a strict parse at the end.

Two jobs, two parsers (reference: ``partial-json.md``; the project's notes are
``docs/partial-json.md``):

* :func:`parse_partial_json` — the best-effort preview behind
  ``ToolCallDelta.partial_args``. Never raises, never reports a value that
  could still change (a number or literal still at the end of the input),
  and previews of growing prefixes are monotone. :class:`IncrementalJSONParser`
  computes the same previews by resuming its scanner where the last fragment
  ended, and can say what each fragment changed as :class:`ArgsOp`
  operations; :class:`ArgumentBuffer` is the append-only text of one
  streaming call that hands both out per event.
* :func:`parse_final_arguments` — ``ToolCallBlock.arguments``: one strict
  parse, one narrow repair pass (raw control characters, invalid escapes),
  a second strict parse. Partial parsing never decides whether a call is
  valid.

Every path is linear in the text, whatever it holds: each character is
scanned a bounded number of times, escapes included.

Previews share completed values (closed strings, arrays and objects) between
successive results: treat every returned dict as read-only.

Where partial-json.md is silent, the preview does what the strict parse
(``_json.loads``) would do with the same text, so that a complete text gives
the same value either way:

* nesting deeper than ``MAX_DEPTH`` (512) is an invalid token — parsing stops
  there — as is an integer with more digits than the interpreter converts
  (4300 by default); ``1e400`` is ``inf``, as for ``json.loads``;
* a number is reported once ``,`` ``}`` ``]`` or whitespace follows it; the
  container then judges that character (``[1}`` reports ``[1]``, then stops);
* ``\\u`` followed by a non-hex digit is an invalid escape (backslash kept);
  a high surrogate followed by an escape that cannot be its partner
  (``\\ud83d\\u00``) is U+FFFD at once; raw surrogate code points in the input
  are U+FFFD, one for one;
* whitespace means JSON whitespace (space, tab, CR, LF) everywhere.
"""

from __future__ import annotations

import json.decoder
import re
import sys
from collections.abc import Callable, Iterable
from typing import Any, Literal, NamedTuple, cast

from ._json import MAX_DEPTH, JSONDecodeError, loads

__all__ = [
    "MAX_DEPTH",
    "ArgsOp",
    "ArgumentBuffer",
    "IncrementalJSONParser",
    "apply_ops",
    "parse_final_arguments",
    "parse_partial_json",
    "repair_json",
]

# --- Scanner vocabulary ----------------------------------------------------

# The scanner's states, named for what it expects next. The first seven are
# between tokens (one character decides the move, see _MOVES); the others
# are inside a token that a fragment may cut.
_BEFORE = 0  # before the top-level "{": whitespace, then "{" or give up
_KEY = 1  # in an object, after "{" or ",": a key or "}"
_COLON = 2  # after a key
_VALUE = 3  # after ":": a value
_NEXT = 4  # after an object member: "," or "}"
_ELEMENT = 5  # in an array, after "[" or ",": a value or "]"
_ELEMENT_NEXT = 6  # after an array element: "," or "]"
_KEY_STRING = 7  # inside a key
_STRING = 8  # inside a string value
_NUMBER = 9  # inside a number
_LITERAL = 10  # inside true, false or null
_DONE = 11  # the top-level object closed, or an invalid token: input is ignored

# What a character does between tokens, besides moving to a plain state.
_OPEN_OBJECT = -1
_OPEN_ARRAY = -2
_CLOSE = -3
_OPEN_STRING = -4
_START_NUMBER = -5
_START_LITERAL = -6
_OPEN_KEY = -7
_NEXT_KEY = -8
_INVALID = -9


def _moves() -> list[dict[str, int]]:
    """The move table: ``_MOVES[state][char]`` for the states between tokens."""
    value = {'"': _OPEN_STRING, "{": _OPEN_OBJECT, "[": _OPEN_ARRAY}
    value.update(dict.fromkeys("-0123456789", _START_NUMBER))
    value.update(dict.fromkeys("tfn", _START_LITERAL))
    return [
        {"{": _OPEN_OBJECT},  # _BEFORE
        {'"': _OPEN_KEY, "}": _CLOSE},  # _KEY
        {":": _VALUE},  # _COLON
        value,  # _VALUE
        {",": _NEXT_KEY, "}": _CLOSE},  # _NEXT
        {**value, "]": _CLOSE},  # _ELEMENT
        {",": _ELEMENT, "]": _CLOSE},  # _ELEMENT_NEXT
    ]


_MOVES = _moves()
_WHITESPACE = " \t\n\r"


def _always(pattern: re.Pattern[str]) -> Callable[[str, int], re.Match[str]]:
    """``pattern.match``, for a pattern that matches everywhere (a ``*`` run)."""
    return cast("Callable[[str, int], re.Match[str]]", pattern.match)


_skip_whitespace = _always(re.compile(r"[ \t\n\r]*"))
_colon = re.compile(r"[ \t\n\r]*:[ \t\n\r]*").match
# A key without escapes or surrogates, with its colon: most keys.
_plain_key = re.compile('"([^"\\\\\ud800-\udfff]*)"[ \t\n\r]*:[ \t\n\r]*').match
# Inside a string, the characters that need more than copying: the closing
# quote, an escape, and raw surrogates (replaced, never reported).
_string_stop = re.compile('["\\\\\ud800-\udfff]').search
_HEX = "[0-9a-fA-F]"
# What may still become the low-surrogate escape completing a pair.
_LOW_PREFIX = rf"(?:\\(?:u(?:[dD](?:[c-fC-F]{_HEX}?)?)?)?)?"
# A string's content up to its closing quote, in which every escape is
# decided: the match stops at the closing quote, or before the undecided
# escape that ends the text (``\``, ``\u`` plus up to three hex digits, a
# high surrogate escape plus what may still become its partner). At most 11
# characters are undecided. One C-speed pass; the alternatives exclude each
# other at their first character, so nothing is tried twice.
_string_content = _always(
    re.compile(
        rf"""(?:
            [^"\\]+                                     # plain text
          | \\[^u]                                      # a two-character escape, valid or not
          | \\u(?![dD][89abAB]){_HEX}{{4}}              # \\uXXXX, no high surrogate
          | \\u[dD][89abAB]{_HEX}{{2}}(?!{_LOW_PREFIX}\Z)  # a high surrogate, partner decided
          | \\u(?={_HEX}{{0,3}}[^0-9a-fA-F])            # \\u without four hex digits: invalid
        )*""",
        re.VERBOSE | re.DOTALL,
    )
)
# The standard library's C decoder for one complete string (strict=False:
# raw control characters allowed). Raises ValueError for an invalid escape;
# keeps lone surrogates (replaced afterwards).
_scan_string = cast(
    "Callable[[str, int, bool], tuple[str, int]]",
    json.decoder.scanstring,  # type: ignore[attr-defined]
)
_surrogates = re.compile("[\ud800-\udfff]")
_number_run = _always(re.compile(r"[0-9eE.+\-]*"))
_valid_number = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?").fullmatch
# A number is reported only once one of these follows it: until then it may grow.
_NUMBER_END = frozenset(",}] \t\n\r")
# A valid number with its terminator in sight: reported at once.
_complete_number = re.compile(
    r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?(?=[,}\] \t\n\r])"
).match
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_LITERAL_VALUES: dict[str, Any] = {"true": True, "false": False, "null": None}
_NOT_A_NUMBER = object()


def _decode(quoted: str) -> str:
    """The text of string content followed by its closing quote, in which
    every escape is decided.

    partial-json.md §1.2: an invalid escape keeps its backslash (the repair
    pass's rule, so it is the same doubling); a surrogate pair is one code
    point; every surrogate left unpaired, escaped or raw, is U+FFFD. A few
    C-speed passes over ``quoted`` alone (never over a longer text: the
    decoder's error locates itself by counting lines from the start of what
    it was given), so O(len(quoted)) whatever the escapes.
    """
    try:
        text = _scan_string(quoted, 0, False)[0]
    except ValueError:  # an invalid escape
        text = _scan_string(_double_invalid_escapes(quoted), 0, False)[0]
    if _surrogates.search(text) is not None:
        text = _surrogates.sub("\ufffd", text)
    return text


def _closing_quote(s: str, j: int) -> int:
    """The closing quote of a string whose escapes start at ``s[j]``, found by
    hand while the escaped quotes and backslash runs before it are sparse (at
    most one per 32 characters, after the first 8); else -1, and a regex pass
    decides. Python work: O(1 + what it crosses / 32)."""
    q = s.find('"', j)
    tries = 0
    while q >= 0:
        p = q - 1
        while p >= j and s[p] == "\\":
            p -= 1
            if q - p > 64:
                return -1
        if (q - p) % 2:  # an even run of backslashes: the quote is not escaped
            return q
        tries += q - p
        if tries > 8 + (q - j) // 32:
            break
        q = s.find('"', q + 1)
    return -1


def _number(number: re.Match[str] | None) -> Any:
    """The value of a number token matched whole, or ``_NOT_A_NUMBER``."""
    if number is None:
        return _NOT_A_NUMBER
    if number.lastindex is not None:  # a fraction or an exponent
        return float(number.group())
    try:
        return int(number.group())
    except ValueError:  # more digits than the interpreter converts
        return _NOT_A_NUMBER


# --- Sharing previews ------------------------------------------------------

_getrefcount: Callable[[object], int] | None = getattr(sys, "getrefcount", None)


def _references(holder: list[Any], k: int) -> int:
    """How many references ``holder[k]`` has (a huge number where unknown)."""
    return _getrefcount(holder[k]) if _getrefcount is not None else 1 << 30


# What _references counts for an object that only ``holder`` refers to, less
# that one reference: measured once, with the very call the scanner makes.
_UNCOUNTED = _references([{}], 0) - 1


class ArgsOp(NamedTuple):
    """One change from a tool call's previous preview to its next.

    ``op == "set"``: ``value`` is now at ``path`` (a new member, a new array
    element at index ``len(array)``, or a duplicate key's new value); a
    container set this way is always empty, its members follow as further
    operations. ``op == "append"``: ``value`` is text added to the end of the
    string at ``path``. ``path`` is the keys and indices from the argument
    object's root.
    """

    op: Literal["set", "append"]
    path: tuple[str | int, ...]
    value: Any

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "path": list(self.path), "value": self.value}


def apply_ops(preview: dict[str, Any], ops: Iterable[ArgsOp]) -> dict[str, Any]:
    """Apply ``ops`` to ``preview`` in place and return it.

    ``preview`` is the caller's own mutable copy of the previous preview (the
    previews this module returns are shared and read-only). Cost: O(the ops
    and their paths), plus the string concatenations, which in CPython extend
    a string that nothing else refers to in place.
    """
    for op, path, value in ops:
        node: Any = preview
        for segment in path[:-1]:
            node = node[segment]
        last = path[-1]
        if op == "append":
            node[last] += value
        else:
            if isinstance(value, (dict, list)):
                value = value.copy()  # empty: the op stays as it was
            if isinstance(node, list) and last == len(node):
                node.append(value)
            else:
                node[last] = value
    return preview


# --- The incremental scanner -----------------------------------------------


class IncrementalJSONParser:
    """:func:`parse_partial_json` of a text that arrives in fragments.

    ``feed`` resumes the scanner where the previous fragment ended, so feeding
    a text costs O(its length) however it is split. ``value()`` returns the
    preview of everything fed so far, equal to ``parse_partial_json`` of it.
    With ``record_ops=True``, :meth:`take_ops` returns what the fragments fed
    since the last call changed in the preview, as :class:`ArgsOp` operations.

    State, O(depth) plus the current token: the preview tree itself — the
    open containers from the root to the innermost (``_stack``), each holding
    its members so far, the open string under its key — the key or index of
    the open child of each, the open string's decoded pieces not yet joined,
    at most one undecided escape (11 characters or fewer), and the characters
    of a cut number or literal.

    Previews are shared, copy on write: the scanner extends its tree in place
    and ``value()`` returns its root. Before the first change after a
    ``value()``, every open container that an earlier result still refers to
    is copied (and its parent pointed at the copy); closed values are never
    changed, so they are shared by every later result. When nobody holds on
    to the previous result (CPython reference counts say so), nothing is
    copied and the open string is extended in place, so reading the preview
    after every fragment costs O(fragment + depth) per read. Otherwise a read
    costs what building the new preview's open containers and open string
    once costs. A read with nothing new since the last one returns the same
    object. Treat every result as read-only. Not thread-safe.
    """

    __slots__ = (
        "_appended",
        "_carry",
        "_chunks",
        "_exposed",
        "_final",
        "_fresh",
        "_keys",
        "_literal",
        "_ops",
        "_paths",
        "_position",
        "_stack",
        "_state",
        "_string_op",
        "_text",
        "_token",
    )

    def __init__(self, *, record_ops: bool = False) -> None:
        self._state = _BEFORE
        self._stack: list[dict[str, Any] | list[Any]] = []  # open containers, root first
        # _keys[k]: the key (or index) of the open value inside _stack[k].
        self._keys: list[Any] = []
        self._chunks: list[str] = []  # decoded pieces of the open string, not yet joined
        # The open value string: whether it is still out of the tree (it joins
        # it whole when it closes, or on a read), and its text as joined so far
        # (what its slot holds) once in it.
        self._fresh = False
        self._text = ""
        self._carry = ""  # an undecided escape cut by the end of the last fragment
        self._token: list[str] = []  # characters of a cut number
        self._literal = ""  # the literal being matched (its matched part is in _token)
        self._final: dict[str, Any] = {}  # the result before "{" and once _state is _DONE
        self._position = 0
        self._exposed = False  # whether value() handed out the tree since it last changed
        # Operations (record_ops only): those since take_ops(), the path of
        # each open container, the open string's text since take_ops(), and
        # the index of its "set" operation when that is in _ops.
        self._ops: list[ArgsOp] | None = [] if record_ops else None
        self._paths: list[tuple[str | int, ...]] = []
        self._appended: list[str] = []
        self._string_op = -1

    @property
    def position(self) -> int:
        """Number of characters fed so far."""
        return self._position

    @property
    def done(self) -> bool:
        """Whether further input is ignored (object closed, or invalid token)."""
        return self._state == _DONE

    def feed(self, fragment: str) -> None:
        """Scan the next fragment of text. Never raises. Cost: O(len(fragment))."""
        if not fragment:
            return
        self._position += len(fragment)
        if self._state == _DONE:
            return
        if self._carry:
            fragment = self._carry + fragment
            self._carry = ""
        # One pass over the fragment s. Invariant at the top of the loop:
        # s[:i] is consumed and the state describes exactly what is open
        # after it. Inside a token, one step crosses as much of it as s
        # holds (regex jumps, never a character at a time); between tokens,
        # one character is one move of _MOVES.
        s = fragment
        i, n = 0, len(s)
        state = self._state
        while i < n:
            if state >= _KEY_STRING:
                if state == _NUMBER:
                    i, state = self._number_step(s, i)
                elif state == _LITERAL:
                    i, state = self._literal_step(s, i)
                else:
                    i, state = self._string_step(s, i, state)
                continue
            c = s[i]
            if c in _WHITESPACE:
                i = _skip_whitespace(s, i + 1).end()
                continue
            move = _MOVES[state].get(c, _INVALID)
            if move >= 0:
                state = move
                i += 1
            elif move == _START_NUMBER:
                i, state = self._number_start(s, i)
            elif move == _START_LITERAL:
                i, state = self._literal_start(s, i, c)
            else:
                i, state = self._structure(move, s, i)
        self._state = state

    def value(self) -> dict[str, Any]:
        """The preview of all text fed so far (read-only; see the class doc)."""
        if self._state == _DONE or not self._stack:
            return self._final
        if self._state == _STRING:
            if self._fresh:
                self._place_string()
            if self._chunks:
                self._join_string()
        self._exposed = True
        return self._stack[0]  # type: ignore[return-value]

    def take_ops(self) -> tuple[ArgsOp, ...]:
        """The operations that turn the preview as of the previous call (or of
        the start) into the current one. Cost: O(the operations)."""
        ops = self._ops
        if ops is None:
            raise ValueError("IncrementalJSONParser(record_ops=True) records operations")
        if self._state == _STRING and self._fresh:
            self._place_string()
        if self._appended:
            self._note_appended()
        self._string_op = -1
        taken = tuple(ops)
        ops.clear()
        return taken

    # -- steps between tokens ---------------------------------------------------

    def _structure(self, move: int, s: str, i: int) -> tuple[int, int]:
        """Open a key, string, object or array, or close a container, at ``s[i]``."""
        if move == _NEXT_KEY:
            return self._member(s, i + 1)
        if move == _OPEN_STRING:
            piece, end = self._segment(s, i + 1)
            if end > 0:  # opened and closed in s: it joins the tree whole
                return end, self._put(piece)
            self._fresh = True
            if piece:
                self._chunks.append(piece)
            return len(s), _STRING
        if move == _OPEN_KEY:
            return self._member(s, i)
        if move == _CLOSE:
            state = self._close()
            return (len(s) if state == _DONE else i + 1), state
        if move == _INVALID:
            return len(s), self._stop()
        stack = self._stack
        if len(stack) >= MAX_DEPTH:
            return len(s), self._stop()
        container: dict[str, Any] | list[Any] = {} if move == _OPEN_OBJECT else []
        if stack:
            self._put(container)
            if self._ops is not None:
                self._paths.append(self._ops[-1].path)
        elif self._ops is not None:
            self._paths.append(())
        stack.append(container)
        self._keys.append("")
        return self._member(s, i + 1) if move == _OPEN_OBJECT else (i + 1, _ELEMENT)

    def _member(self, s: str, i: int) -> tuple[int, int]:
        """After ``{`` or ``,`` in an object: its next key, if it starts in ``s``
        (in one match when plain and followed by its colon)."""
        i = _skip_whitespace(s, i).end()
        m = _plain_key(s, i)
        if m is not None:
            self._keys[-1] = m.group(1)
            return m.end(), _VALUE
        if s.startswith('"', i):
            return self._string_step(s, i + 1, _KEY_STRING)
        return i, _KEY

    def _close(self) -> int:
        """Close the innermost container (its parent already holds it)."""
        closed = self._stack.pop()
        self._keys.pop()
        if self._ops is not None:
            self._paths.pop()
        if not self._stack:
            self._final = closed  # type: ignore[assignment]
            return _DONE
        return _NEXT if type(self._stack[-1]) is dict else _ELEMENT_NEXT

    def _stop(self) -> int:
        """An invalid token: freeze the preview as reported so far.

        Never called inside a string (a string accepts every character), so
        every string in the tree is whole and the tree is the preview.
        """
        if self._stack:
            self._final = self._stack[0]  # type: ignore[assignment]
        self._stack = []
        self._keys = []
        self._token = []
        return _DONE

    def _put(self, value: Any) -> int:
        """``value`` joins the innermost open container; the state after it."""
        if self._exposed:
            self._own()
        top = self._stack[-1]
        if type(top) is dict:
            key: str | int = self._keys[-1]
            top[key] = value  # type: ignore[index]
            after = _NEXT
        else:
            key = self._keys[-1] = len(top)
            top.append(value)  # type: ignore[union-attr]
            after = _ELEMENT_NEXT
        if self._ops is not None:
            kind = type(value)
            fresh = {} if kind is dict else [] if kind is list else value
            self._ops.append(ArgsOp("set", (*self._paths[-1], key), fresh))
        return after

    def _own(self) -> None:
        """Copy every open container that an earlier result still refers to.

        Walks the spine root first, so that a copied parent's old version,
        which still holds the child, makes the child count as held too.
        O(depth) reference counts, plus the copies.
        """
        self._exposed = False
        stack, keys = self._stack, self._keys
        for k in range(len(stack)):
            owners = 1 if k == 0 else 2  # the stack, and the parent's slot
            if _references(stack, k) - _UNCOUNTED > owners:
                copy = stack[k].copy()
                stack[k] = copy
                if k:
                    stack[k - 1][keys[k - 1]] = copy

    # -- steps inside tokens ----------------------------------------------------

    def _string_step(self, s: str, i: int, state: int) -> tuple[int, int]:
        """Cross the open string from ``s[i]``: to its closing quote, or to the
        end of ``s``; a closed key waits for its colon, a closed value joins
        the tree."""
        piece, end = self._segment(s, i)
        chunks = self._chunks
        if end < 0:
            if piece:
                chunks.append(piece)
                if self._ops is not None and state == _STRING and not self._fresh:
                    self._appended.append(piece)
            return len(s), state
        if state == _KEY_STRING or self._fresh:
            if chunks:
                chunks.append(piece)
                piece = "".join(chunks)
                chunks.clear()
            if state == _STRING:  # opened and closed unread: it joins the tree whole
                self._fresh = False
                return end, self._put(piece)
            self._keys[-1] = piece
            colon = _colon(s, end)
            return (end, _COLON) if colon is None else (colon.end(), _VALUE)
        if piece:  # the rest of a string already in the tree
            chunks.append(piece)
            if self._ops is not None:
                self._appended.append(piece)
        if chunks:
            self._join_string()
        self._text = ""
        if self._appended:
            self._note_appended()
        self._string_op = -1
        return end, _NEXT if type(self._stack[-1]) is dict else _ELEMENT_NEXT

    def _segment(self, s: str, i: int) -> tuple[str, int]:
        """The decoded text of the open string from ``s[i]`` on, and the index
        after its closing quote (-1 when it goes on past ``s``; an undecided
        escape at the end of ``s`` is carried to the next fragment). O(what it
        crosses), at C speed whatever the escapes."""
        n = len(s)
        m = _string_stop(s, i)
        if m is None:  # plain text to the end of s
            return s[i:] if i else s, -1
        j = m.start()
        if s[j] == '"':  # plain text to the quote
            return s[i:j], j + 1
        q = _closing_quote(s, j)
        if q > 0:
            return _decode(s[i : q + 1]), q + 1
        k = _string_content(s, i).end()
        if k < n and s[k] == '"':
            return _decode(s[i : k + 1]), k + 1
        self._carry = s[k:]
        return _decode(s[i:k] + '"'), -1

    def _place_string(self) -> None:
        """Put the open string into the tree (a read or take_ops() sees it)."""
        self._fresh = False
        self._put("")
        self._text = ""
        if self._ops is not None:
            self._string_op = len(self._ops) - 1
            self._appended.extend(self._chunks)

    def _join_string(self) -> None:
        """Add the open string's pending pieces to its slot in the tree.

        The string is extended with ``+=`` after the scanner's own references
        are dropped, so that CPython extends it in place when no earlier
        result refers to it: O(new text) then, else one copy of the string.
        """
        if self._exposed:
            self._own()
        chunks = self._chunks
        top, key = self._stack[-1], self._keys[-1]
        text = self._text
        self._text = ""
        top[key] = None
        text += chunks[0] if len(chunks) == 1 else "".join(chunks)
        chunks.clear()
        self._text = text
        top[key] = text

    def _note_appended(self) -> None:
        """Record the open (or just closed) string's text since take_ops()."""
        ops, appended = self._ops, self._appended
        assert ops is not None
        text = appended[0] if len(appended) == 1 else "".join(appended)
        appended.clear()
        k = self._string_op
        if k >= 0:  # the string joined the tree since take_ops(): its "set" says it all
            ops[k] = ops[k]._replace(value=text)
        else:
            ops.append(ArgsOp("append", (*self._paths[-1], self._keys[-1]), text))

    def _number_start(self, s: str, i: int) -> tuple[int, int]:
        m = _complete_number(s, i)
        if m is None:  # cut by the end of s, or invalid
            return i, _NUMBER
        value = _number(m)
        if value is _NOT_A_NUMBER:
            return len(s), self._stop()
        return m.end(), self._put(value)

    def _number_step(self, s: str, i: int) -> tuple[int, int]:
        j = _number_run(s, i).end()
        self._token.append(s[i:j])
        if j == len(s):
            return j, _NUMBER
        text = "".join(self._token)
        self._token = []
        value = _number(_valid_number(text)) if s[j] in _NUMBER_END else _NOT_A_NUMBER
        if value is _NOT_A_NUMBER:
            return len(s), self._stop()
        return j, self._put(value)  # the terminator is the container's business

    def _literal_start(self, s: str, i: int, c: str) -> tuple[int, int]:
        word = _LITERALS[c]
        if s.startswith(word, i):
            return i + len(word), self._put(_LITERAL_VALUES[word])
        self._literal = word
        return i, _LITERAL

    def _literal_step(self, s: str, i: int) -> tuple[int, int]:
        word = self._literal
        matched = sum(map(len, self._token))
        piece = s[i : i + len(word) - matched]
        if not word.startswith(piece, matched):
            return len(s), self._stop()
        if matched + len(piece) < len(word):
            self._token.append(piece)
            return i + len(piece), _LITERAL
        self._token = []
        return i + len(piece), self._put(_LITERAL_VALUES[word])


def parse_partial_json(text: str) -> dict[str, Any]:
    """Best-effort preview of a JSON object that may be cut anywhere.

    Exactly partial-json.md §1: never raises; ``{}`` for empty or non-object
    input; unterminated strings, arrays and objects are closed; an incomplete
    key, literal, number or escape at the very end is dropped; never half a
    surrogate pair. Iterative: nesting deeper than ``MAX_DEPTH`` is an invalid
    token (parsing stops there), never a ``RecursionError``. Cost: O(len(text)).
    """
    parser = IncrementalJSONParser()
    parser.feed(text)
    return parser.value()


class ArgumentBuffer:
    """The append-only argument text of one streaming tool call.

    Shared by the call's ``ToolCallDelta`` events, each of which remembers the
    length after its own fragment, so building an event costs O(len(delta)).
    Fragments are kept in a list and joined only when the whole text is asked
    for. One :class:`IncrementalJSONParser` is advanced to the largest offset
    asked so far: reading every event's preview (:meth:`partial`) or
    operations (:meth:`ops`) in order scans each fragment once. The buffer
    keeps no preview of its own and only the operations of the last range
    scanned, so events hold no copies. An offset behind the parser (an older
    event read after a newer one) restarts the parser from the beginning:
    O(offset) for that read, and reading on in order from there scans each
    fragment once again. Not thread-safe.
    """

    __slots__ = (
        "_length",
        "_ops",
        "_ops_range",
        "_parsed_to",
        "_parser",
        "_part_index",
        "_part_start",
        "_parts",
    )

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._parser: IncrementalJSONParser | None = None
        # How far the parser has read, as an absolute offset and as the part
        # holding that offset (_part_start is that part's absolute offset).
        self._parsed_to = 0
        self._part_index = 0
        self._part_start = 0
        # The operations of the last range the parser scanned.
        self._ops: tuple[ArgsOp, ...] = ()
        self._ops_range = (0, 0)

    def append(self, fragment: str) -> int:
        """Add a fragment; return the total length in characters. O(1)."""
        if fragment:
            self._parts.append(fragment)
            self._length += len(fragment)
        return self._length

    def text(self) -> str:
        """The whole text so far. Joins pending fragments once and keeps the result."""
        parts = self._parts
        if len(parts) > 1:
            joined = "".join(parts)
            self._parts = [joined]
            self._part_index = 0
            self._part_start = 0
            return joined
        return parts[0] if parts else ""

    def __len__(self) -> int:
        return self._length

    def partial(self, end: int, start: int | None = None) -> dict[str, Any]:
        """``parse_partial_json(self.text()[:end])``, computed incrementally.

        ``start`` is where the event's fragment began: the operations of
        ``[start, end)`` are then recorded on the way, for :meth:`ops`.
        """
        end = self._clamp(end)
        if end < self._parsed_to:
            self._restart()
        start = self._parsed_to if start is None else min(self._clamp(start), end)
        return self._advance(start, end).value()

    def ops(self, start: int, end: int) -> tuple[ArgsOp, ...]:
        """The operations that turn ``partial(start)`` into ``partial(end)``."""
        end = self._clamp(end)
        start = min(self._clamp(start), end)
        if (start, end) == self._ops_range:
            return self._ops
        if start == end:
            return ()
        if start < self._parsed_to:
            self._restart()
        self._advance(start, end)
        return self._ops

    def _restart(self) -> None:
        """Forget the parser: the next read scans from the beginning."""
        self._parser = None
        self._parsed_to = self._part_index = self._part_start = 0
        self._ops, self._ops_range = (), (0, 0)

    def _clamp(self, offset: int) -> int:
        return max(0, min(offset, self._length))

    def _advance(self, start: int, end: int) -> IncrementalJSONParser:
        """Bring the parser to ``end``, keeping the operations of ``[start, end)``
        when the parser is not past ``start``."""
        parser = self._parser
        if parser is None:
            parser = self._parser = IncrementalJSONParser(record_ops=True)
        if self._parsed_to < start:
            self._feed(parser, start)
        if self._parsed_to < end:
            if self._parsed_to == start:
                parser.take_ops()
                self._feed(parser, end)
                self._ops, self._ops_range = parser.take_ops(), (start, end)
            else:
                self._feed(parser, end)
        return parser

    def _feed(self, parser: IncrementalJSONParser, end: int) -> None:
        parts = self._parts
        while self._parsed_to < end:
            part = parts[self._part_index]
            lo = self._parsed_to - self._part_start
            hi = min(len(part), end - self._part_start)
            parser.feed(part if lo == 0 and hi == len(part) else part[lo:hi])
            self._parsed_to = self._part_start + hi
            if hi == len(part):
                self._part_index += 1
                self._part_start += len(part)


# --- Final arguments -------------------------------------------------------

_only_whitespace = re.compile(r"[ \t\n\r]*\Z").match
# Splits a text into text outside strings and strings (captured), for the
# repair pass; an unterminated string runs to the end of the text.
_STRING_TOKEN = r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\)?'
_split_strings = re.compile(f"({_STRING_TOKEN})", re.DOTALL).split
_find_strings = re.compile(_STRING_TOKEN, re.DOTALL).findall
# A backslash that starts no valid escape: the last of an odd run of
# backslashes (escapes pair from the left) not followed by a valid escape.
_invalid_escape = re.compile(r'\\(?<!\\\\)(?:\\\\)*(?!["\\/bfnrt]|u[0-9a-fA-F]{4})')
# The same once escaped backslashes are out of the way.
_lone_invalid_escape = re.compile(r'\\(?!["/bfnrt]|u[0-9a-fA-F]{4})')
_CONTROL_ESCAPES = {code: f"\\u{code:04x}" for code in range(0x20)}
_CONTROL_ESCAPES.update({0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"})
# Control characters other than the newline, carriage return and tab.
_rare_control = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]").search
# Characters that may join the strings of a text for one bulk repair: the
# repair never writes them, so splitting at them again is exact.
_SEPARATORS = tuple(chr(code) for code in range(0xE000, 0xE010))

NOT_AN_OBJECT = "not_an_object"
INVALID_JSON = "invalid_json"


def _double_last_backslash(match: re.Match[str]) -> str:
    return match.group() + "\\"


def _double_invalid_escapes(text: str) -> str:
    """Double every backslash of ``text`` (string content) that starts no valid
    escape, so that it stands for itself. Linear, a few C-speed passes; no
    Python work per escape unless ``text`` holds a NUL."""
    if "\\" not in text:
        return text
    if "\x00" not in text:
        # Escapes pair from the left: set the escaped backslashes aside, and
        # every backslash left starts an escape of its own.
        text = text.replace("\\\\", "\x00")
        text = _lone_invalid_escape.sub(r"\\\\", text)
        return text.replace("\x00", "\\\\")
    return _invalid_escape.sub(_double_last_backslash, text)


def _repair_strings(text: str) -> str:
    """Apply partial-json.md §3.2 to text made only of string tokens.

    Doubles backslashes that start no valid escape, then escapes raw control
    characters (in that order: the escapes it writes must not be doubled).
    A few C-speed passes; no Python work per string or per escape.
    """
    text = _double_invalid_escapes(text)
    if _rare_control(text) is not None:
        return text.translate(_CONTROL_ESCAPES)
    return text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


class _Repaired:
    """The result of the repair pass, able to map positions back to the original."""

    __slots__ = ("original", "pieces", "text")

    def __init__(self, text: str, original: list[str], pieces: list[str]) -> None:
        self.text = text
        self.original = original  # raw, split at string boundaries
        self.pieces = pieces  # the same pieces, repaired

    def original_position(self, pos: int) -> int:
        """Map an offset in the repaired text to the raw text.

        Exact outside repaired strings; inside one, clamped to its raw end.
        Cost: O(number of strings); used only to word an error.
        """
        original = repaired = 0
        for before, after in zip(self.original, self.pieces, strict=True):
            if pos < repaired + len(after):
                return original + min(pos - repaired, len(before))
            original += len(before)
            repaired += len(after)
        return original + pos - repaired


def _repair(raw: str) -> _Repaired | None:
    """The repair pass of partial-json.md §3.2; ``None`` when nothing changed.

    All strings are repaired together: joined with a separator absent from
    them, fixed, and split at the separator again. Cost: linear, at C speed.
    """
    pieces = _split_strings(raw)
    strings = pieces[1::2]
    joined = "".join(strings)
    separator = next((c for c in _SEPARATORS if c not in joined), None)
    if separator is None:  # every candidate occurs: tokenize again instead
        fixed = _repair_strings(joined)
        fixed_strings = _find_strings(fixed)
    else:
        joined = separator.join(strings)
        fixed = _repair_strings(joined)
        fixed_strings = fixed.split(separator)
    if len(fixed) == len(joined):  # a repair only ever adds characters
        return None
    if len(fixed_strings) != len(strings):  # cannot happen; stay safe
        return None
    original = pieces.copy()
    pieces[1::2] = fixed_strings
    return _Repaired("".join(pieces), original, pieces)


def repair_json(raw: str) -> str:
    """The repair pass alone (partial-json.md §3.2).

    Inside strings, escapes raw control characters and doubles backslashes
    that start no valid escape; changes nothing else (no quotes, brackets or
    commas added or removed). Linear. Returns ``raw`` itself when nothing
    needed repair.
    """
    repaired = _repair(raw)
    return raw if repaired is None else repaired.text


def parse_final_arguments(raw: str) -> tuple[dict[str, Any], str | None, bool]:
    """The final arguments of a tool call: ``(arguments, error, repaired)``.

    partial-json.md §3: empty or whitespace text is ``{}``; otherwise a strict
    parse, and on failure one repair pass and a second strict parse
    (``repaired`` is True when the result comes from the repaired text). A
    non-object gives ``error="not_an_object"``; a failure
    ``"invalid_json: <message>"`` (the message of the last parse, positions in
    ``raw``). With an error, ``arguments`` is ``parse_partial_json(raw)``, a
    preview that must not be executed. Never raises; linear time.
    """
    if _only_whitespace(raw) is not None:
        return {}, None, False
    try:
        value = loads(raw)
    except JSONDecodeError as first:
        error: JSONDecodeError = first
        repaired = _repair(raw)
        if repaired is not None:
            try:
                value = loads(repaired.text)
            except JSONDecodeError as second:
                pos = repaired.original_position(second.pos)
                error = type(second)(second.msg, raw, pos)
            else:
                if isinstance(value, dict):
                    return value, None, True
                return {}, NOT_AN_OBJECT, False
        return parse_partial_json(raw), f"{INVALID_JSON}: {error}", False
    if isinstance(value, dict):
        return value, None, False
    return {}, NOT_AN_OBJECT, False
