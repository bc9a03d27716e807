"""What a command writes: JSON lines, glyphs the output can show, ANSI style."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import IO, Any


def dumps(obj: Any, *, pretty: bool = False) -> bytes:
    """Compact (or 2-space indented) UTF-8 JSON, non-ASCII kept as is."""
    options: dict[str, Any] = {"indent": 2} if pretty else {"separators": (",", ":")}
    text = json.dumps(obj, ensure_ascii=False, default=str, **options)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in provider data
        return json.dumps(obj, ensure_ascii=True, default=str, **options).encode("ascii")


class JSONLines:
    """Writes one JSON document per line to stdout, flushed at once so that a
    pipe downstream sees each event as soon as it exists."""

    def __init__(self) -> None:
        self._text = sys.stdout
        self._buffer: IO[bytes] | None = getattr(sys.stdout, "buffer", None)

    def write(self, obj: Any, *, pretty: bool = False) -> None:
        """Write ``obj`` as one JSON document and a newline, then flush."""
        data = dumps(obj, pretty=pretty) + b"\n"
        if self._buffer is not None:
            self._buffer.write(data)
            self._buffer.flush()
        else:
            self._text.write(data.decode("utf-8"))
            self._text.flush()


def unicode_ok(stream: IO[str] | None) -> bool:
    """Whether ``stream`` encodes UTF-8 (so any character can be shown)."""
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    return encoding in ("utf8", "utf8sig")


@dataclass(frozen=True)
class Glyphs:
    """The separators and marks a command draws, in Unicode or in ASCII."""

    dot: str
    arrow: str
    same: str
    differs: str
    ellipsis: str

    @staticmethod
    def for_stream(stream: IO[str] | None) -> Glyphs:
        """Unicode glyphs for a UTF-8 stream, ASCII ones otherwise."""
        if unicode_ok(stream):
            return Glyphs(" · ", "→", "✓", "≠", "…")
        return Glyphs(" | ", "->", "=", "!=", "...")


class Style:
    """ANSI styling, or none at all."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _sgr(self, code: str, text: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{code}m{text}\x1b[0m"

    def dim(self, text: str) -> str:
        """Faint text."""
        return self._sgr("2", text)

    def thinking(self, text: str) -> str:
        """Faint italic text."""
        return self._sgr("2;3", text)

    def bold(self, text: str) -> str:
        """Bold text."""
        return self._sgr("1", text)

    def red(self, text: str) -> str:
        """Red text."""
        return self._sgr("31", text)

    def yellow(self, text: str) -> str:
        """Yellow text."""
        return self._sgr("33", text)

    def green(self, text: str) -> str:
        """Green text."""
        return self._sgr("32", text)

    def cyan(self, text: str) -> str:
        """Cyan text."""
        return self._sgr("36", text)


def color_enabled(choice: str, stream: IO[str] | None) -> bool:
    """``--color``: ``always``, ``never``, or ``auto`` — on for a terminal,
    unless ``NO_COLOR`` is set (https://no-color.org) or ``TERM=dumb``."""
    if choice == "always":
        return True
    if choice == "never" or stream is None:
        return False
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
