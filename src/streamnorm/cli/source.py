"""The input of a command: a file, stdin or a packaged sample, read in chunks."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO

from .. import samples
from .common import READ_SIZE, CLIError


class Source:
    """Bytes from a file, stdin or a packaged sample, read in chunks."""

    def __init__(
        self, label: str, handle: IO[bytes] | None = None, data: bytes | None = None
    ) -> None:
        self.label = label
        self._handle = handle
        self._data = data
        self._owned = handle is not None and handle is not stdin_buffer()

    def chunks(self, size: int = READ_SIZE) -> Iterator[bytes]:
        """The input in pieces of at most ``size`` bytes, as they become available."""
        if self._data is not None:
            data = self._data
            for start in range(0, len(data), size):
                yield data[start : start + size]
            return
        assert self._handle is not None
        read = getattr(self._handle, "read1", None) or self._handle.read
        while True:
            try:
                chunk = read(size)
            except OSError as exc:
                raise CLIError(f"cannot read {self.label}: {exc.strerror or exc}") from None
            if not chunk:
                return
            yield bytes(chunk)

    def read_all(self, limit: int) -> bytes:
        """The input up to its end or its first ``limit`` bytes, whichever comes first.

        A read failure is a usage error naming the input.
        """
        pieces = []
        held = 0
        for chunk in self.chunks(min(READ_SIZE, limit)):
            pieces.append(chunk)
            held += len(chunk)
            if held >= limit:
                break
        return b"".join(pieces)[:limit]

    def close(self) -> None:
        """Close the file this source opened (never stdin)."""
        if self._owned and self._handle is not None:
            self._handle.close()


def stdin_buffer() -> IO[bytes] | None:
    """stdin's binary buffer, or None when there is no stdin."""
    stdin = sys.stdin
    return getattr(stdin, "buffer", None) if stdin is not None else None


def open_source(spec: str | None) -> Source:
    """Open ``spec``: a path, ``-``/None for stdin, or ``sample:NAME``."""
    if spec is None or spec == "-":
        buffer = stdin_buffer()
        if buffer is None:
            raise CLIError("no input: stdin is not available; give a FILE")
        if spec is None and sys.stdin.isatty():
            raise CLIError("no input: give a FILE, '-', or 'sample:NAME', or pipe a stream in")
        return Source("<stdin>", buffer)
    if spec.startswith("sample:"):
        try:
            name = samples.resolve(spec[len("sample:") :])
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        return Source(spec, data=samples.read(name))
    try:
        handle = open(spec, "rb")  # noqa: SIM115 - closed by Source.close
    except IsADirectoryError:
        raise CLIError(f"cannot read {spec!r}: it is a directory") from None
    except FileNotFoundError:
        raise CLIError(f"cannot open {spec!r}: no such file") from None
    except OSError as exc:
        raise CLIError(f"cannot open {spec!r}: {exc.strerror or exc}") from None
    return Source(spec, handle)
