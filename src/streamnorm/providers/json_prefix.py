"""Whether streamed argument text is still a prefix of strict JSON.

The Anthropic SDK parses a tool block's accumulated ``partial_json`` after
every delta in partial mode and fails the whole stream on text that no valid
JSON object can start with (raw control characters in strings, bad escapes,
unquoted keys; encoding.md §2.2). The encoder therefore streams a fragment
only while :class:`StrictPrefix` says the text so far is such a prefix.

:meth:`StrictPrefix.feed` resumes where the previous fragment ended: strings
are crossed by one regex jump to the next quote, backslash or control
character, so a text costs O(its length) however it is split. State: the
stack of open containers plus the current token (a number's characters, a
literal's matched part, at most one escape cut by a fragment end).
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["StrictPrefix"]


def _always(pattern: re.Pattern[str]) -> Callable[[str, int], re.Match[str]]:
    """``pattern.match`` for a pattern that matches the empty string, so never None."""

    def match(text: str, pos: int) -> re.Match[str]:
        found = pattern.match(text, pos)
        assert found is not None
        return found

    return match


# What comes next: the opening "{"; a value; a key or "}" (after "{"); a value
# or "]" (after "["); a key (after ","); ":"; "," or a closer; inside a
# string, number or literal; nothing (the object closed); nothing (invalid).
(_BEFORE, _VALUE, _FIRST_KEY, _FIRST_ITEM, _KEY, _COLON, _AFTER) = range(7)
(_STRING, _NUMBER, _LITERAL, _DONE, _BAD) = range(7, 12)

_string_run = _always(re.compile(r'[^"\\\x00-\x1f]*'))
_space = _always(re.compile(r"[ \t\n\r]*"))
_number_run = _always(re.compile(r"[-+.eE0-9]*"))
_number_prefix = re.compile(r"-?(?:(?:0|[1-9]\d*)(?:\.\d*)?(?:(?<=\d)[eE][+-]?\d*)?)?\Z").match
_number_whole = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?\Z").match
_escape = re.compile(r'\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})').match
_escape_prefix = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?\Z").match
_LITERALS = {"t": "true", "f": "false", "n": "null"}


class StrictPrefix:
    """Incremental check that a text is a prefix of one strict JSON object."""

    __slots__ = ("_carry", "_key", "_literal", "_number", "_stack", "_state")

    def __init__(self) -> None:
        self._state = _BEFORE
        self._stack: list[str] = []  # open containers: "{" or "["
        self._key = False  # the open string is an object key
        self._carry = ""  # an escape cut by the end of the last fragment
        self._number = ""
        self._literal = ""  # the literal being matched, as matched so far

    @property
    def valid(self) -> bool:
        return self._state != _BAD

    @property
    def complete(self) -> bool:
        """The top-level object is closed."""
        return self._state == _DONE

    def feed(self, fragment: str) -> bool:
        """Scan ``fragment``; whether the text so far is still a valid prefix."""
        if self._state in (_BAD, _DONE):
            return self._state == _DONE  # text after the object is ignored by the SDK
        text = self._carry + fragment
        self._carry = ""
        i, n = 0, len(text)
        while i < n and self._state not in (_BAD, _DONE):
            i = self._step(text, i)
        return self._state != _BAD

    def closing(self) -> str:
        """What completes the text into a valid object, or "" when the text
        ends where no closing characters can (after a key, a ``:`` or ``,``,
        inside an escape, a number or a literal that is not whole)."""
        if self._state in (_BAD, _DONE, _BEFORE, _COLON, _KEY) or self._carry:
            return ""
        out = ""
        state = self._state
        if state == _STRING:
            if self._key:
                return ""
            out = '"'
        elif state == _NUMBER:
            if not _number_whole(self._number):
                return ""
        elif state == _LITERAL:
            if self._literal not in _LITERALS.values():
                return ""
        elif state == _VALUE:
            return ""
        return out + "".join("}" if c == "{" else "]" for c in reversed(self._stack))

    # -- the scanner ----------------------------------------------------------

    def _step(self, s: str, i: int) -> int:
        state = self._state
        if state == _STRING:
            return self._string(s, i)
        if state == _NUMBER:
            return self._number_token(s, i)
        if state == _LITERAL:
            return self._literal_token(s, i)
        i = _space(s, i).end()
        if i >= len(s):
            return i
        c = s[i]
        if state == _BEFORE:
            self._open(c, "{")
        elif state == _VALUE or (state == _FIRST_ITEM and c != "]"):
            self._value(c)
        elif state == _KEY or (state == _FIRST_KEY and c != "}"):
            self._begin_key(c)
        elif state == _COLON:
            self._state = _VALUE if c == ":" else _BAD
        elif c == "," and state == _AFTER:
            self._state = _KEY if self._stack[-1] == "{" else _VALUE
        elif state in (_AFTER, _FIRST_KEY, _FIRST_ITEM) and c == (
            "}" if self._stack[-1] == "{" else "]"
        ):
            self._stack.pop()
            self._state = _AFTER if self._stack else _DONE
        else:
            self._state = _BAD
        return i + 1

    def _open(self, c: str, allowed: str) -> None:
        if c not in allowed:
            self._state = _BAD
            return
        self._stack.append(c)
        self._state = _FIRST_KEY if c == "{" else _FIRST_ITEM

    def _begin_key(self, c: str) -> None:
        if c == '"':
            self._state, self._key = _STRING, True
        else:
            self._state = _BAD

    def _value(self, c: str) -> None:
        if c == '"':
            self._state, self._key = _STRING, False
        elif c in "{[":
            self._open(c, "{[")
        elif c == "-" or c.isdigit():
            self._state, self._number = _NUMBER, c
            if not _number_prefix(c):
                self._state = _BAD
        elif c in _LITERALS:
            self._state, self._literal = _LITERAL, c
        else:
            self._state = _BAD

    def _end_value(self) -> None:
        self._state = _COLON if self._key else _AFTER
        self._key = False

    def _string(self, s: str, i: int) -> int:
        i = _string_run(s, i).end()
        if i >= len(s):
            return i
        c = s[i]
        if c == '"':
            self._end_value()
            return i + 1
        if c != "\\":
            self._state = _BAD  # a raw control character
            return i
        match = _escape(s, i)
        if match is not None:
            return match.end()
        if _escape_prefix(s, i):
            self._carry = s[i:]  # cut by the end of the fragment
            return len(s)
        self._state = _BAD
        return i

    def _number_token(self, s: str, i: int) -> int:
        end = _number_run(s, i).end()
        self._number += s[i:end]
        if not _number_prefix(self._number):
            self._state = _BAD
            return end
        if end < len(s):  # a delimiter follows: the number must be whole
            if not _number_whole(self._number):
                self._state = _BAD
                return end
            self._state = _AFTER
        return end

    def _literal_token(self, s: str, i: int) -> int:
        word = _LITERALS[self._literal[0]]
        want = word[len(self._literal) :]
        take = s[i : i + len(want)]
        if not want.startswith(take):
            self._state = _BAD
            return i
        self._literal += take
        if self._literal == word:
            self._state = _AFTER
        return i + len(take)
