"""Tool-call arguments: previews while they stream, a strict parse at the end.

Two jobs, two parsers (reference: ``partial-json.md``):

* :func:`parse_partial_json` — the best-effort preview behind
  ``ToolCallDelta.partial_args``. Never raises, never reports a value that
  could still change (a number or literal still at the end of the input),
  and previews of growing prefixes are monotone. :class:`IncrementalJSONParser`
  computes the same previews by resuming its scanner where the last fragment
  ended, and :class:`ArgumentBuffer` is the append-only text of one streaming
  call that hands them out per event.
* :func:`parse_final_arguments` — ``ToolCallBlock.arguments``: one strict
  parse, one narrow repair pass (raw control characters, invalid escapes),
  a second strict parse. Partial parsing never decides whether a call is
  valid.

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
from collections.abc import Callable
from typing import Any, cast

from ._json import MAX_DEPTH, JSONDecodeError, loads

__all__ = [
    "MAX_DEPTH",
    "ArgumentBuffer",
    "IncrementalJSONParser",
    "parse_final_arguments",
    "parse_partial_json",
    "repair_json",
]

# --- Scanner vocabulary ----------------------------------------------------

# What the scanner expects next. Container states belong to the innermost open
# container; the token states (_STRING, _NUMBER, _LITERAL) are inside a token.
_BEFORE = 0  # before the top-level "{": whitespace, then "{" or give up
_KEY = 1  # in an object, after "{" or ",": a key or "}"
_COLON = 2  # after a key
_OBJ_VALUE = 3  # after ":": a value
_OBJ_NEXT = 4  # after an object member: "," or "}"
_ARR_VALUE = 5  # in an array, after "[" or ",": a value or "]"
_ARR_NEXT = 6  # after an array element: "," or "]"
_STRING = 7  # inside a key or a string value
_NUMBER = 8  # inside a number
_LITERAL = 9  # inside true, false or null
_DONE = 10  # the top-level object closed, or an invalid token: input is ignored

_WHITESPACE = " \t\n\r"


def _always(pattern: re.Pattern[str]) -> Callable[[str, int], re.Match[str]]:
    """``pattern.match``, for a pattern that matches everywhere (a ``*`` run)."""
    return cast("Callable[[str, int], re.Match[str]]", pattern.match)


_skip_whitespace = _always(re.compile(r"[ \t\n\r]*"))
# Inside a string, the characters that need more than copying: the closing
# quote, an escape, and raw surrogates (replaced, never reported).
_string_stop = re.compile('["\\\\\ud800-\udfff]').search
_number_run = _always(re.compile(r"[0-9eE.+\-]*"))
_valid_number = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?").fullmatch
# A number is reported only once one of these follows it: until then it may grow.
_NUMBER_END = frozenset(",}] \t\n\r")
_NUMBER_START = frozenset("-0123456789")
# A valid number with its terminator in sight: reported at once.
_complete_number = re.compile(
    r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?(?=[,}\] \t\n\r])"
).match
# The standard library's C decoder for one complete string (strict=False:
# raw control characters allowed). Raises ValueError for an unterminated
# string or an invalid escape, and keeps lone surrogates: those strings take
# the scanner's own path.
_scan_string = cast(
    "Callable[[str, int, bool], tuple[str, int]]",
    json.decoder.scanstring,  # type: ignore[attr-defined]
)
# A string's content from an escape on: up to its closing quote, the end of
# the text, or a backslash that ends the text.
_string_body = _always(re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL))
_LONG = 1024  # text length past which the C decoder is tried before the regex
_has_surrogate = re.compile("[\ud800-\udfff]").search
_colon = re.compile(r"[ \t\n\r]*:[ \t\n\r]*").match
_key_start = re.compile(r'[ \t\n\r]*"').match
_LITERALS = {"t": "true", "f": "false", "n": "null"}
_LITERAL_VALUES: dict[str, Any] = {"true": True, "false": False, "null": None}
_SIMPLE_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}
_SIMPLE_ESCAPES_TABLE = str.maketrans(_SIMPLE_ESCAPES)
_simple_escape_run = re.compile(r'(?:\\["\\/bfnrt])+').match
# \uXXXX escapes outside the surrogate range, which the codec decodes exactly.
_unicode_escape_run = re.compile(r"(?:\\u(?![dD][89a-fA-F])[0-9a-fA-F]{4})+").match
# Invalid escapes whose second character is an ordinary one: both are kept.
_invalid_escape_run = re.compile('(?:\\\\[^"\\\\/bfnrtu\ud800-\udfff])+').match
_surrogate_run = _always(re.compile("[\ud800-\udfff]*"))
_hex_run = _always(re.compile(r"[0-9a-fA-F]{0,4}"))
# Text that may still become the low-surrogate escape completing a pair.
_low_surrogate_prefix = re.compile(
    r"(?:\\(?:u(?:[dD](?:[c-fC-F](?:[0-9a-fA-F][0-9a-fA-F]?)?)?)?)?)?"
).fullmatch

_INCOMPLETE = -1


def _decode_escape(s: str, j: int) -> tuple[str, int]:
    """Decode the escape starting at ``s[j] == "\\"``.

    Returns the decoded text and the index after what was consumed, or
    ``("", _INCOMPLETE)`` when ``s`` ends before the escape can be decided.
    Follows partial-json.md §1.2: an invalid escape keeps its backslash and
    resumes scanning at the next character (as the repair pass doubles it); a
    surrogate pair decodes to one code point; an unpaired surrogate is U+FFFD;
    a high surrogate stays undecided while its partner may still arrive.
    Looks at most 12 characters ahead.
    """
    n = len(s)
    if j + 1 == n:
        return "", _INCOMPLETE
    simple = _SIMPLE_ESCAPES.get(s[j + 1])
    if simple is not None:
        return simple, j + 2
    if s[j + 1] != "u":
        return "\\", j + 1
    digits = _hex_run(s, j + 2).end() - (j + 2)
    if digits < 4:
        if j + 2 + digits == n:
            return "", _INCOMPLETE
        return "\\", j + 1
    unit = int(s[j + 2 : j + 6], 16)
    if unit < 0xD800 or unit > 0xDFFF:
        return chr(unit), j + 6
    if unit >= 0xDC00:
        return "\ufffd", j + 6
    tail = s[j + 6 : j + 12]
    if _low_surrogate_prefix(tail) is None:
        return "\ufffd", j + 6
    if len(tail) < 6:
        return "", _INCOMPLETE
    low = int(tail[2:], 16)
    return chr(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)), j + 12


def _decode_escapes(s: str, j: int) -> tuple[str, int]:
    """Decode the escape at ``s[j] == "\\"``, and the run of like escapes after it.

    Runs of simple escapes, of ``\\uXXXX`` outside the surrogate range and of
    invalid escapes are decoded with C-speed string operations, so text dense
    with escapes costs no Python work per escape; surrogates and cut escapes
    go through :func:`_decode_escape`. Same contract as that function.
    """
    second = s[j + 1 : j + 2]
    if second in _SIMPLE_ESCAPES:
        run = _simple_escape_run(s, j)
        if run is not None:
            return run.group()[1::2].translate(_SIMPLE_ESCAPES_TABLE), run.end()
    elif second == "u":
        run = _unicode_escape_run(s, j)
        if run is not None:
            return run.group().encode("ascii").decode("unicode_escape"), run.end()
    elif second:
        run = _invalid_escape_run(s, j)
        if run is not None:  # kept as written, backslashes included
            return run.group(), run.end()
    return _decode_escape(s, j)


def _decode_rest(s: str, i: int, j: int) -> tuple[str, int]:
    """Decode a string's content from ``s[i]`` on, ``s[j]`` being its first backslash.

    Uses the C decoder for the whole rest in one call. Returns ``(text,
    end)``: ``end`` is the index after the closing quote, ``len(s) + 1`` when
    the string goes on past ``s`` (``text`` is then all of it in ``s``), or 0
    when the scanner's general path must decide (an invalid or cut escape, a
    lone surrogate). Cost: O(the rest of the string in ``s``).
    """
    n = len(s)
    # Where does the string end? At the first quote when no backslash
    # precedes it. Otherwise a regex finds out in short text; in long text,
    # simply trying costs no more.
    k = s.find('"', j)
    if k > 0 and s[k - 1] == "\\" and n - j <= _LONG:
        k = _string_body(s, j).end()
        if k < n and s[k] != '"':  # s ends with a lone backslash
            return "", 0
    try:
        if k == -1 or k == n:  # no closing quote in s
            text, _ = _scan_string(s[i:] + '"', 0, False)
            end = n + 1
        else:
            text, end = _scan_string(s, i, False)
    except ValueError as error:
        if k == -1 or k == n or not error.args[0].startswith("Unterminated"):
            return "", 0
        try:  # the quote found was escaped after all
            text, _ = _scan_string(s[i:] + '"', 0, False)
            end = n + 1
        except ValueError:
            return "", 0
    if _has_surrogate(text) is not None:
        return "", 0
    return text, end


class IncrementalJSONParser:
    """:func:`parse_partial_json` of a text that arrives in fragments.

    ``feed`` resumes the scanner where the previous fragment ended, so feeding
    a text costs O(its length) however it is split. ``value()`` returns the
    preview of everything fed so far, equal to ``parse_partial_json`` of it.

    State, O(depth) plus the current token: a stack of the open containers,
    each holding its completed members and the key of the member being read;
    for an open string its decoded pieces and at most one undecided escape
    (12 characters or fewer); for a number its characters; for a literal how
    much of it matched.

    ``value()`` shares completed values with earlier results and copies only
    the spine — the still-open containers from the root to the innermost open
    value — plus the open string, joined once and kept joined. Cost per read:
    O(open depth x members of the open containers + length of the open
    string); a read with nothing new since the last one returns the same
    object. Treat every result as read-only. Not thread-safe.
    """

    __slots__ = (
        "_carry",
        "_chunks",
        "_containers",
        "_final",
        "_is_key",
        "_keys",
        "_literal",
        "_matched",
        "_number",
        "_position",
        "_snapshot",
        "_snapshot_version",
        "_state",
        "_version",
    )

    def __init__(self) -> None:
        self._state = _BEFORE
        # Open containers, outermost first; _keys[k] is the key under which
        # the open value inside _containers[k] belongs (unused for arrays).
        self._containers: list[dict[str, Any] | list[Any]] = []
        self._keys: list[str] = []
        self._chunks: list[str] = []  # decoded pieces of the open string
        self._is_key = False  # whether the open string is a key
        self._carry = ""  # an escape cut by the end of the last fragment
        self._number: list[str] = []  # characters of the open number
        self._literal = ""  # the literal being matched ...
        self._matched = 0  # ... and how many of its characters matched
        self._final: dict[str, Any] = {}  # the result once _state is _DONE
        self._position = 0
        # The preview is rebuilt only when something reportable changed.
        self._version = 0
        self._snapshot: dict[str, Any] = {}
        self._snapshot_version = 0

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
        self._scan(fragment)

    def value(self) -> dict[str, Any]:
        """The preview of all text fed so far (read-only; see the class doc)."""
        if self._state == _DONE:
            return self._final
        if self._snapshot_version != self._version:
            self._snapshot = self._build()
            self._snapshot_version = self._version
        return self._snapshot

    # -- internals ----------------------------------------------------------

    def _build(self) -> dict[str, Any]:
        """Copy the spine, innermost first, wrapping the open string if any."""
        containers = self._containers
        if not containers:
            return {}
        tail: Any = None
        has_tail = self._state == _STRING and not self._is_key
        if has_tail:
            chunks = self._chunks
            if len(chunks) == 1:
                tail = chunks[0]
            else:
                tail = "".join(chunks)
                self._chunks = [tail] if tail else []
        keys = self._keys
        for k in range(len(containers) - 1, -1, -1):
            container = containers[k]
            if isinstance(container, dict):
                members = container.copy()
                if has_tail:
                    members[keys[k]] = tail
                tail = members
            else:
                elements = container.copy()
                if has_tail:
                    elements.append(tail)
                tail = elements
            has_tail = True
        result: dict[str, Any] = tail
        return result

    def _stop(self) -> None:
        """An invalid token: freeze the preview as reported so far.

        Never called inside a string (a string accepts every character), so
        the open token, if any, is a number or literal that was not reported.
        """
        self._state = _DONE
        self._final = self._build()
        self._containers = []
        self._keys = []
        self._number = []

    def _scan(self, s: str) -> None:
        # One pass over s. Strings are crossed with regex jumps to the next
        # quote, backslash or surrogate; a complete number, literal or
        # separator is one regex call; anything cut by the end of s goes
        # through the general, character-level paths that keep their state.
        # Invariant at the top of the loop: s[:i] is consumed and the state
        # describes exactly what is open after it.
        containers = self._containers
        keys = self._keys
        chunks = self._chunks  # empty outside strings
        state = self._state
        is_key = self._is_key
        value: Any = None
        n = len(s)
        i = 0
        changed = False
        while i < n:
            if state == _STRING:
                m = _string_stop(s, i)
                if m is None:
                    chunks.append(s[i:] if i else s)
                    changed = changed or not is_key
                    break
                j = m.start()
                c = s[j]
                if c == '"':
                    text = s[i:j]
                    i = j + 1
                else:
                    text, end = _decode_rest(s, i, j) if c == "\\" else ("", 0)
                    if end > n:  # the string goes on in the next fragment
                        chunks.append(text)
                        changed = changed or not is_key
                        break
                    if not end:  # the general path: one piece at a time
                        if j > i:
                            chunks.append(s[i:j])
                            changed = changed or not is_key
                        if c == "\\":
                            decoded, i = _decode_escapes(s, j)
                            if i == _INCOMPLETE:
                                self._carry = s[j:]
                                break
                            if decoded:
                                chunks.append(decoded)
                                changed = changed or not is_key
                        else:  # raw surrogates
                            k = _surrogate_run(s, j).end()
                            chunks.append("\ufffd" * (k - j))
                            changed = changed or not is_key
                            i = k
                        continue
                    i = end
                # The string is complete: text is its last piece.
                if chunks:
                    chunks.append(text)
                    text = "".join(chunks)
                    chunks = self._chunks = []
                if is_key:
                    keys[-1] = text
                    m = _colon(s, i)
                    if m is None:
                        state = _COLON
                    else:
                        state = _OBJ_VALUE
                        i = m.end()
                    continue
                value = text

            elif state == _NUMBER:
                j = _number_run(s, i).end()
                if j == n:
                    self._number.append(s[i:])
                    break
                text = "".join(self._number) + s[i:j] if self._number else s[i:j]
                self._number = []
                number = _valid_number(text) if s[j] in _NUMBER_END else None
                if number is None:
                    self._stop()
                    return
                if number.lastindex is None:
                    try:
                        value = int(text)
                    except ValueError:  # more digits than the interpreter converts
                        self._stop()
                        return
                else:
                    value = float(text)
                i = j  # the terminator is the container's business

            elif state == _LITERAL:
                word = self._literal
                k = self._matched
                piece = s[i : i + len(word) - k]
                if not word.startswith(piece, k):
                    self._stop()
                    return
                i += len(piece)
                if k + len(piece) < len(word):
                    self._matched = k + len(piece)
                    break
                value = _LITERAL_VALUES[word]

            else:
                c = s[i]
                if c in _WHITESPACE:
                    i = _skip_whitespace(s, i + 1).end()
                    continue
                if state in (_OBJ_VALUE, _ARR_VALUE):
                    if c == '"':
                        is_key = False
                        state = _STRING
                        changed = True  # reported as "" from the opening quote on
                        i += 1
                        continue
                    if c in _NUMBER_START:
                        m = _complete_number(s, i)
                        if m is None:  # cut by the end of s, or invalid
                            state = _NUMBER
                            continue
                        text = m.group()
                        if m.lastindex is None:
                            try:
                                value = int(text)
                            except ValueError:
                                self._stop()
                                return
                        else:
                            value = float(text)
                        i = m.end()
                    elif c in _LITERALS:
                        word = _LITERALS[c]
                        if s.startswith(word, i):
                            value = _LITERAL_VALUES[word]
                            i += len(word)
                        else:
                            self._literal = word
                            self._matched = 0
                            state = _LITERAL
                            continue
                    elif c in "{[":
                        if len(containers) >= MAX_DEPTH:
                            self._stop()
                            return
                        if c == "{":
                            containers.append({})
                            state = _KEY
                        else:
                            containers.append([])
                            state = _ARR_VALUE
                        keys.append("")
                        changed = True
                        i += 1
                        continue
                    elif c == "]" and state == _ARR_VALUE:
                        state = self._close()
                        if state == _DONE:
                            break
                        i += 1
                        continue
                    else:
                        self._stop()
                        return
                elif state == _OBJ_NEXT:
                    if c == ",":
                        m = _key_start(s, i + 1)
                        if m is None:
                            state = _KEY
                            i += 1
                        else:
                            is_key = True
                            state = _STRING
                            i = m.end()
                    elif c == "}":
                        state = self._close()
                        if state == _DONE:
                            break
                        i += 1
                    else:
                        self._stop()
                        return
                    continue
                elif state == _ARR_NEXT:
                    if c == ",":
                        state = _ARR_VALUE
                        i += 1
                    elif c == "]":
                        state = self._close()
                        if state == _DONE:
                            break
                        i += 1
                    else:
                        self._stop()
                        return
                    continue
                elif state == _KEY:
                    if c == '"':
                        is_key = True
                        state = _STRING
                        i += 1
                    elif c == "}":
                        state = self._close()
                        if state == _DONE:
                            break
                        i += 1
                    else:
                        self._stop()
                        return
                    continue
                elif state == _COLON:
                    if c != ":":
                        self._stop()
                        return
                    state = _OBJ_VALUE
                    i += 1
                    continue
                else:  # _BEFORE
                    if c != "{":
                        self._state = _DONE  # not an object: the preview stays {}
                        return
                    containers.append({})
                    keys.append("")
                    state = _KEY
                    i += 1
                    continue

            # A complete value (string, number or literal) joins its container.
            top = containers[-1]
            if isinstance(top, dict):
                top[keys[-1]] = value
                state = _OBJ_NEXT
            else:
                top.append(value)
                state = _ARR_NEXT
            changed = True
        self._state = state
        self._is_key = is_key
        if changed:
            self._version += 1

    def _close(self) -> int:
        """Close the innermost container; return the state that follows."""
        closed = self._containers.pop()
        self._keys.pop()
        if not self._containers:
            assert isinstance(closed, dict)
            self._final = closed
            self._state = _DONE
            return _DONE
        parent = self._containers[-1]
        if isinstance(parent, dict):
            parent[self._keys[-1]] = closed
            return _OBJ_NEXT
        parent.append(closed)
        return _ARR_NEXT


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
    for. ``partial(end)`` keeps one :class:`IncrementalJSONParser` advanced to
    the largest ``end`` asked so far, so reading every event's preview in
    order costs O(new text + building the preview) per read. Not thread-safe.
    """

    __slots__ = ("_length", "_parsed_to", "_parser", "_part_index", "_part_start", "_parts")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._parser: IncrementalJSONParser | None = None
        # How far the parser has read, as an absolute offset and as the part
        # holding that offset (_part_start is that part's absolute offset).
        self._parsed_to = 0
        self._part_index = 0
        self._part_start = 0

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

    def partial(self, end: int) -> dict[str, Any]:
        """``parse_partial_json(self.text()[:end])``, computed incrementally.

        When ``end`` is behind the parser (an older event read after a newer
        one) this parses the prefix from scratch: correct, O(end), rare.
        """
        end = max(0, min(end, self._length))
        parser = self._parser
        if parser is None:
            parser = self._parser = IncrementalJSONParser()
        if end < self._parsed_to:
            return parse_partial_json(self.text()[:end])
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
        return parser.value()


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


def _repair_strings(text: str) -> str:
    """Apply partial-json.md §3.2 to text made only of string tokens.

    Doubles backslashes that start no valid escape, then escapes raw control
    characters (in that order: the escapes it writes must not be doubled).
    A few C-speed passes; no Python work per string or per escape.
    """
    if "\\" in text:
        if "\x00" not in text:
            # Escapes pair from the left: set the escaped backslashes aside,
            # and every backslash left starts an escape of its own.
            text = text.replace("\\\\", "\x00")
            text = _lone_invalid_escape.sub(r"\\\\", text)
            text = text.replace("\x00", "\\\\")
        else:
            text = _invalid_escape.sub(_double_last_backslash, text)
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
