"""The shared marker scanner: a cursor over pending input and marker search.

Every dialect finds its markers with :class:`MarkerSet` over a
:class:`Cursor`. The rule that makes parsers chunk-safe lives here once: text
may be released up to the point where a marker *could* begin, and no
further. What is held back is at most the longest marker minus one character,
so holding costs O(1) per push and nothing is rescanned more than a bounded
number of times.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "BOUND",
    "END",
    "MAX_WS",
    "MORE",
    "NONE",
    "Cursor",
    "MarkerSet",
    "body_starts",
    "expect_after_ws",
    "skip_ws",
]

# Longest whitespace run a lookahead looks through. A bound keeps every
# lookahead O(1); what happens when it is reached is the caller's rule.
MAX_WS = 64

_WS = re.compile(r"\s*")
_WS_BOUNDED = re.compile(rf"\s{{0,{MAX_WS + 1}}}")


def skip_ws(buf: str, i: int) -> int:
    """The first index at or after ``i`` that is not whitespace."""
    m = _WS.match(buf, i)
    return m.end() if m else i


class Cursor:
    """Pending input of one channel, and the position reached in it.

    ``feed`` drops the consumed part and appends new text, so the buffer only
    ever holds what is still undecided (a possible marker prefix, a bounded
    lookahead) plus the new text. ``log`` records consumed text while a call
    or block is open, for the ``raw`` of error reports.
    """

    __slots__ = ("buf", "final", "log", "pos")

    def __init__(self) -> None:
        self.buf = ""
        self.pos = 0
        self.final = False
        self.log: list[str] | None = None

    def feed(self, text: str) -> None:
        # Cost: O(held + len(text)); held is bounded by the lookahead rules.
        self.buf = self.buf[self.pos :] + text if self.pos < len(self.buf) else text
        self.pos = 0

    @property
    def rest(self) -> int:
        return len(self.buf) - self.pos

    def take(self, end: int) -> str:
        """Consume ``buf[pos:end]`` and return it."""
        s = self.buf[self.pos : end]
        self.pos = end
        if self.log is not None and s:
            self.log.append(s)
        return s

    def take_ws(self) -> None:
        """Consume whitespace at the cursor."""
        self.take(skip_ws(self.buf, self.pos))

    def start_log(self) -> None:
        self.log = []

    def raw(self) -> str:
        return "".join(self.log) if self.log else ""


# Results of lookahead helpers besides an option index.
NONE = -1  # nothing acceptable follows
MORE = -2  # the input ran out before a decision
END = -3  # the input is over (final) right there
BOUND = -4  # the whitespace run exceeded the lookahead bound


class MarkerSet:
    """A fixed set of literal markers, searched together.

    ``find`` returns the earliest complete marker, or how far text is safe to
    release. When a complete marker is also a proper prefix of a longer one
    (``<tool_call>`` / ``<tool_calls>``) and the input ends right there, it
    waits for more input. Assumes no marker occurs inside another one except
    as a prefix, which holds for every dialect's marker set.
    """

    __slots__ = ("_first", "_longest", "_prefixes", "_re", "first", "markers")

    def __init__(self, markers: Iterable[str]) -> None:
        ms = sorted({m for m in markers if m}, key=lambda m: (-len(m), m))
        self.markers: tuple[str, ...] = tuple(ms)
        self._re = re.compile("|".join(re.escape(m) for m in ms)) if ms else None
        self._prefixes = frozenset(m[:k] for m in ms for k in range(1, len(m)))
        self._first = frozenset(m[0] for m in ms)
        self.first = self._first  # characters that can begin a marker
        self._longest = max((len(m) for m in ms), default=0)

    def __bool__(self) -> bool:
        return bool(self.markers)

    def could_start(self, text: str) -> bool:
        """Whether ``text`` holds a character that can begin a marker (fast path)."""
        first = self._first
        if len(text) == 1:
            return text in first
        return any(c in text for c in first)

    def find(self, buf: str, pos: int, final: bool) -> tuple[int, str | None]:
        """``(i, marker)`` for the earliest marker at or after ``pos``, or
        ``(safe, None)``: ``buf[pos:safe]`` holds no marker and cannot begin one.

        Cost: one regex search over ``buf[pos:]`` plus O(longest) for the
        held-back suffix.
        """
        if self._re is not None:
            m = self._re.search(buf, pos)
            if m is not None:
                i = m.start()
                if not final and len(buf) - i < self._longest and buf[i:] in self._prefixes:
                    return i, None
                return i, m.group()
        if final:
            return len(buf), None
        return self.hold_from(buf, pos), None

    def hold_from(self, buf: str, pos: int) -> int:
        """Start of the longest suffix of ``buf[pos:]`` that is a proper marker prefix."""
        n = len(buf)
        first, prefixes = self._first, self._prefixes
        for i in range(max(pos, n - self._longest + 1), n):
            if buf[i] in first and buf[i:] in prefixes:
                return i
        return n

    def at(self, buf: str, i: int, final: bool) -> int | str:
        """The marker starting exactly at ``i``; :data:`MORE` when the input
        ends inside a possible marker; :data:`NONE` when none starts there."""
        rest = len(buf) - i
        for m in self.markers:
            if buf.startswith(m, i):
                if not final and rest < self._longest and buf[i:] in self._prefixes:
                    return MORE
                return m
        if not final and rest < self._longest and buf[i:] in self._prefixes:
            return MORE
        return NONE


def expect_after_ws(buf: str, i: int, final: bool, options: Sequence[str]) -> tuple[int, int]:
    """Which of ``options`` follows ``buf[i:]`` after optional whitespace.

    Returns ``(k, j)``: ``options[k]`` starts at ``j``; or ``k`` is
    :data:`MORE` (input ran out), :data:`END` (input over), :data:`NONE`
    (something else follows) or :data:`BOUND` (more than ``MAX_WS``
    whitespace). Cost: O(whitespace run + longest option).
    """
    m = _WS_BOUNDED.match(buf, i)
    j = m.end() if m else i
    if j - i > MAX_WS:
        return BOUND, j
    if j == len(buf):
        return (END if final else MORE), j
    rest = buf[j : j + max((len(o) for o in options), default=0)]
    waiting = False
    for k, o in enumerate(options):
        if rest.startswith(o):
            return k, j
        if not final and o.startswith(rest):
            waiting = True
    return (MORE if waiting else NONE), j


def body_starts(
    *prefixes: str, cut_at_end: bool = False
) -> Callable[[str, int, bool], bool | None]:
    """A confirm rule: after optional whitespace the body begins with one of
    ``prefixes``. Bounded by :data:`MAX_WS` plus the longest prefix.

    With ``cut_at_end``, input that ends inside a body start (``<｜DSML｜inv``)
    confirms too: the opener began a call that the end of input cut off, and
    its markup must not fall back into the text."""
    longest = max(map(len, prefixes), default=0)

    def confirm(buf: str, i: int, final: bool) -> bool | None:
        k, j = expect_after_ws(buf, i, final, prefixes)
        if k == NONE and final and cut_at_end and len(buf) - j < longest:
            rest = buf[j:]  # shorter than the longest prefix: O(1)
            return any(p.startswith(rest) for p in prefixes)
        return None if k == MORE else k >= 0

    return confirm
