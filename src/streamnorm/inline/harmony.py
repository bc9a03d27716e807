"""gpt-oss Harmony messages — ``harmony``.

::

    <|channel|>analysis<|message|>Need the weather.<|end|>
    <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json
    <|message|>{"city":"Paris"}<|call|>
    <|channel|>final<|message|>It is sunny.<|return|>

(the second message is one line).

Output begins after the prompt's ``<|start|>assistant``. Each message is a
header up to ``<|message|>`` — channel, optional recipient ``to=NAME``
(after the channel or before ``<|channel|>``), optional content type — then
content up to ``<|end|>``, ``<|call|>`` or ``<|return|>``. A message with a
recipient is a call on any channel (name without ``functions.``; built-in
recipients such as ``browser.search`` keep their name), its content the
arguments; ``analysis`` is reasoning; ``final`` and a ``commentary`` preamble
are text. Control tokens never enter names or text. Each message is one
section of :class:`engine.InlineParser`; text outside messages is text.
"""

from __future__ import annotations

import re

from .base import ParserOptions, ToolCallParser
from .calls import SectionContext
from .engine import InlineParser, Opener
from .scanner import MarkerSet

__all__ = ["HarmonyMessage", "parse_header"]

START, CHANNEL, MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
_ENDS = ("<|end|>", "<|call|>", "<|return|>")
_HEADER_STOP = MarkerSet((MESSAGE, *_ENDS, START))
# Content ends at an end token, or implicitly where the next header begins.
_CONTENT_STOP = MarkerSet((*_ENDS, START, CHANNEL))
_MAX_HEADER = 512

_CHANNEL_RE = re.compile(r"<\|channel\|>\s*([A-Za-z_][\w-]*)")
_RECIPIENT_RE = re.compile(r"(?:^|\s|>)to=([^\s<]+)")
_CONSTRAIN_RE = re.compile(r"<\|constrain\|>\s*\S*")
_CONTROL_RE = re.compile(r"<\|[a-z_]+\|>")

_HEADER, _TEXT, _REASONING, _CALL = range(4)


def parse_header(header: str) -> tuple[str | None, str | None] | None:
    """``(channel, recipient)`` of a header (starting at its role or at
    ``<|channel|>``); ``None`` when it cannot be read."""
    m = _CHANNEL_RE.search(header)
    channel = m.group(1) if m else None
    r = _RECIPIENT_RE.search(header)
    recipient = r.group(1) if r else None
    rest = _CONSTRAIN_RE.sub(" ", header)
    rest = _CHANNEL_RE.sub(" ", rest)
    rest = _RECIPIENT_RE.sub(" ", rest)
    if _CONTROL_RE.search(rest):
        return None  # a stray control token: unreadable
    words = rest.split()
    # What may remain: the role, and a content type such as `json`.
    if len(words) > 2 or (channel is None and recipient is None and len(words) > 1):
        return None
    return channel, recipient


class HarmonyMessage:
    """One message: its header, then its content as text, reasoning or a call."""

    __slots__ = ("_call", "_ctx", "_hdr", "_mode")

    def __init__(self, ctx: SectionContext, marker: str) -> None:
        self._ctx = ctx
        self._mode = _HEADER
        self._hdr: list[str] = [CHANNEL] if marker == CHANNEL else []
        self._call: int | None = None

    def feed(self) -> bool:
        ctx = self._ctx
        cur, calls = ctx.cur, ctx.calls
        if self._mode == _HEADER:
            j, marker = _HEADER_STOP.find(cur.buf, cur.pos, cur.final)
            self._hdr.append(cur.take(j))
            header = "".join(self._hdr)
            if marker is None:
                if len(header) <= _MAX_HEADER and not cur.final:
                    return False
                calls.error("malformed_header", "no <|message|> after the header", header)
                return True
            if marker != MESSAGE:
                calls.error("malformed_header", f"{marker} inside the header", header)
                if marker in _ENDS:
                    cur.take(j + len(marker))
                return True
            cur.take(j + len(marker))
            parsed = parse_header(header)
            if parsed is None:
                calls.error("malformed_header", "unreadable header; content kept as text", header)
                self._mode = _TEXT
            else:
                channel, recipient = parsed
                if recipient is not None:
                    name = recipient.removeprefix("functions.")
                    self._call = calls.open(name)
                    self._mode = _CALL
                else:
                    self._mode = _REASONING if channel == "analysis" else _TEXT
        while True:
            j, marker = _CONTENT_STOP.find(cur.buf, cur.pos, cur.final)
            self._content(cur.take(j))
            if marker is None:
                return False
            if marker in _ENDS:
                cur.take(j + len(marker))
                break
            # The next header ends this message implicitly, if it is one.
            ok = _header_follows(cur.buf, j + len(marker), cur.final)
            if ok is None:
                return False
            if ok:
                break
            self._content(cur.take(j + len(marker)))
        if self._call is not None:
            calls.close(self._call)
            self._call = None
        return True

    def _content(self, s: str) -> None:
        if self._mode == _CALL:
            assert self._call is not None
            self._ctx.calls.args(self._call, s)
        elif self._mode == _REASONING:
            self._ctx.reasoning(s)
        else:
            self._ctx.prose(s)

    def finish(self) -> None:
        ctx = self._ctx
        if self._call is not None:
            ctx.calls.cut(self._call, False, ctx.cur.raw(), ctx.prose)
        elif self._mode == _HEADER:
            ctx.calls.error(
                "malformed_header", "the input ended inside a header", "".join(self._hdr)
            )


def _header_follows(buf: str, i: int, final: bool) -> bool | None:
    """A header: ``<|message|>`` within the header bound, before any other
    end or start token. Prose that quotes ``<|channel|>`` stays text."""
    window = buf[i : i + _MAX_HEADER + len(MESSAGE)]
    cut = len(window) < len(buf) - i
    j, marker = _HEADER_STOP.find(window, 0, final or cut)
    if marker is not None:
        return marker == MESSAGE and j <= _MAX_HEADER
    return None if not (final or cut) else False


def harmony(options: ParserOptions) -> ToolCallParser:
    openers = (
        Opener(CHANNEL, HarmonyMessage, _header_follows),
        Opener(START, HarmonyMessage, _header_follows),
    )
    return InlineParser(options, openers)
