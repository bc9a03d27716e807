"""What every subcommand shares: exit statuses, the error line, option value
types, the stream a command reads and the few texts several commands print."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from ..apis import APIS, resolve_api
from ..codec import detect_response_api, response_events
from ..events import Done, Error, Event
from ..messages import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    Usage,
)
from ..normalizer import DEFAULT_MAX_EVENT_BYTES, normalize

if TYPE_CHECKING:
    from ..inline import ToolCallParser
    from .source import Source

EXIT_OK = 0
EXIT_STREAM_ERROR = 1
EXIT_USAGE = 2
EXIT_CHUNKING = 3
EXIT_INTERNAL = 70
EXIT_OUTPUT = 74
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

#: How much is read from a file or stdin at a time: big files stream through
#: in pieces of this size, and a pipe is handed on as soon as data arrives.
READ_SIZE = 64 * 1024

#: The largest ``--chunk-size``: one read of this size is held at a time.
MAX_CHUNK_SIZE = 64 * 1024 * 1024

PROG = "streamnorm"


class CLIError(Exception):
    """A failure reported as one ``streamnorm: error:`` line and an exit status."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


def one_line(text: str, limit: int = 400) -> str:
    """``text`` on one line, whitespace runs collapsed, at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def error_line(message: str) -> None:
    """Report ``message`` as the one ``streamnorm: error:`` line on stderr."""
    write_stderr(f"{PROG}: error: {one_line(message)}\n")


def write_stderr(text: str) -> None:
    """Write to stderr if there is one; a character it cannot show is escaped."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(text)
        stream.flush()
    except UnicodeEncodeError:
        stream.write(text.encode("ascii", "backslashreplace").decode("ascii"))
        stream.flush()


# --------------------------------------------------------------------------
# Option value types (argparse ``type=``): a bad value is a usage error


def api_arg(value: str) -> str:
    """``--api``: a canonical api name, an alias, or ``auto``."""
    try:
        return resolve_api(value, allow_auto=True)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An option type: a whole number from ``minimum`` to ``maximum``.

    Every option that sizes a buffer, a loop or a wait has a ``maximum``, so an
    absurd value is a usage error at parse time rather than a MemoryError or a
    hang later.
    """

    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"expected a number >= {minimum}, got {value}")
        if maximum is not None and number > maximum:
            raise argparse.ArgumentTypeError(f"at most {maximum}, got {value}")
        return number

    return parse


#: A whole number >= 0, unbounded (an index, a seed offset).
nonnegative = whole_number(0)


def byte_limit(value: str) -> int | None:
    """A limit in bytes, or ``none`` for no limit."""
    if value.strip().lower() == "none":
        return None
    return nonnegative(value)


# --------------------------------------------------------------------------
# The stream a command reads


def make_tool_parser(name: str) -> ToolCallParser:
    """``get_parser(name)``; an unknown name is a usage error listing the names."""
    from ..inline import get_parser

    try:
        return get_parser(name)
    except (ValueError, LookupError) as exc:
        detail = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
        raise CLIError(f"--tool-parser: {detail}") from None


def event_stream(
    source: Source, args: argparse.Namespace, tool_parser: ToolCallParser | None
) -> Iterator[Event]:
    """The canonical events of ``source`` under the stream options in ``args``:
    of a stream, or of a non-streaming JSON response (detected, unless
    ``--api`` names a read-only api)."""
    chunks = source.chunks(getattr(args, "chunk_size", READ_SIZE))
    body, chunks = _whole_json_body(chunks)
    api = detect_response_api(body) if body is not None else None
    if args.api != "auto" and api is not None:
        forced = resolve_api(args.api)
        api = forced if forced in APIS else None
    events: Iterator[Event]
    if body is not None and api in APIS:
        assert api is not None
        events = iter(response_events(body, api, model=args.model, provider=args.provider))
    else:
        events = normalize(
            chunks,
            args.api,
            model=args.model,
            provider=args.provider,
            choice=args.choice,
            max_stream_bytes=args.max_stream_bytes,
        )
    if tool_parser is not None:
        from ..inline import NormalizingStream

        events = iter(NormalizingStream(events, tool_parser))
    return events


#: A non-streaming body is read whole only up to this size; a larger one is
#: read as a stream (and refused there by the event limit).
MAX_BODY_BYTES = DEFAULT_MAX_EVENT_BYTES


def _whole_json_body(chunks: Iterator[bytes]) -> tuple[bytes | None, Iterator[bytes]]:
    """The whole input when it is one JSON object (it starts with ``{``, ends
    with ``}`` and is at most ``MAX_BODY_BYTES``), else None; and the chunks
    to read the input as a stream from (nothing read is lost)."""
    held: list[bytes] = []
    size = 0
    first = b""  # the input's first byte that is not whitespace
    for chunk in chunks:
        held.append(chunk)
        size += len(chunk)
        first = first or chunk.lstrip()[:1]
        if (first and first != b"{") or size > MAX_BODY_BYTES:
            return None, itertools.chain(held, chunks)
    body = b"".join(held)
    return (body if body.rstrip().endswith(b"}") else None), iter(held)


def terminal_status(terminal: Done | Error | None, label: str) -> int:
    """0 for ``Done``; for ``Error`` (or no terminal event) a stderr line and 1."""
    if isinstance(terminal, Done):
        return EXIT_OK
    if terminal is None:
        error_line(f"{label}: the stream produced no terminal event")
        return EXIT_STREAM_ERROR
    code = f", {terminal.code}" if terminal.code else ""
    error_line(f"{label}: the stream ended in an error ({terminal.kind}{code}): {terminal.reason}")
    return EXIT_STREAM_ERROR


# --------------------------------------------------------------------------
# Texts several commands print


def usage_text(usage: Usage, dot: str, *, full: bool = False) -> str:
    """Token counts joined by ``dot``; zero counts only when ``full``."""
    parts = [f"input {usage.input_tokens}"]
    output = f"output {usage.output_tokens}"
    if usage.reasoning_tokens or full:
        output += f" (reasoning {usage.reasoning_tokens})"
    parts.append(output)
    if usage.cache_read_tokens or full:
        parts.append(f"cache read {usage.cache_read_tokens}")
    if usage.cache_write_tokens or full:
        parts.append(f"cache write {usage.cache_write_tokens}")
    parts.append(f"total {usage.total_tokens}")
    return dot.join(parts)


def stop_text(message: AssistantMessage) -> str:
    """The canonical stop reason, with the wire's own in parentheses."""
    raw = message.raw_stop_reason
    return f"{message.stop_reason.value} ({raw})" if raw else message.stop_reason.value


def block_kind(block: ContentBlock) -> str:
    """A short name for a block's kind: ``text``, ``thinking``, ``provider:KIND`` …"""
    if isinstance(block, ProviderBlock):
        return f"provider:{block.kind}"
    if isinstance(block, ThinkingBlock):
        return "redacted_thinking" if block.redacted else "thinking"
    if isinstance(block, TextBlock):
        return "refusal" if block.refusal else "text"
    return "toolcall"


def split_bytes(data: bytes) -> Iterator[bytes]:
    """``data`` one byte at a time."""
    for start in range(len(data)):
        yield data[start : start + 1]
