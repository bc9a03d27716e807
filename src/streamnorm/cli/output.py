"""What a command writes: JSON lines, glyphs the output can show, ANSI style."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

from .common import EXIT_OUTPUT, CLIError


class OutputError(CLIError):
    """stdout cannot take the output (closed, disk full, an I/O error): exit 74.

    A reader that went away (``BrokenPipeError``) is not one: that is 141.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"cannot write the output: {reason}", EXIT_OUTPUT)


@contextmanager
def output_errors() -> Iterator[None]:
    """Turn a failed write to stdout into an :class:`OutputError`."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        raise OutputError((exc.strerror or str(exc)).lower()) from None


def write_text(stream: IO[str], text: str) -> None:
    """Write ``text`` to ``stream`` and flush it; a failure is an :class:`OutputError`."""
    with output_errors():
        stream.write(text)
        stream.flush()


def stdout() -> IO[str]:
    """``sys.stdout``, or an :class:`OutputError` when the process has none."""
    if sys.stdout is None:
        raise OutputError("stdout is closed")
    return sys.stdout


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
        self._text = stdout()
        self._buffer: IO[bytes] | None = getattr(self._text, "buffer", None)

    def write(self, obj: Any, *, pretty: bool = False) -> None:
        """Write ``obj`` as one JSON document and a newline, then flush."""
        data = dumps(obj, pretty=pretty) + b"\n"
        if self._buffer is None:
            write_text(self._text, data.decode("utf-8"))
            return
        with output_errors():
            self._buffer.write(data)
            self._buffer.flush()


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
