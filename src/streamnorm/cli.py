"""The ``streamnorm`` command: normalize, inspect, render and demo.

Every command reads raw SSE bytes (a file, ``-`` for stdin, or
``sample:NAME`` for a stream shipped in :mod:`streamnorm.samples`) in
realistic chunks and runs them through :func:`streamnorm.normalizer.normalize`.

Exit status (documented in ``docs/cli.md``):

* ``0`` — success: the stream ended in ``Done`` (``normalize``, ``render``);
  every file was read and every chunking agreed (``inspect``); the four
  samples line up (``demo``);
* ``1`` — the stream ended in an ``Error`` event (``normalize``, ``render``),
  or the samples do not line up (``demo``);
* ``2`` — usage error: bad arguments, unknown api or tool parser, an input
  that cannot be opened or read;
* ``3`` — ``inspect`` found a stream whose events depend on the chunking;
* ``70`` — internal error (a bug: please report it);
* ``130`` — interrupted; ``141`` — the reader of stdout went away.

Errors are one line on stderr, ``streamnorm: error: …``, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, NoReturn

from . import samples
from .apis import ALIASES, APIS, resolve_api
from .events import (
    BlockEnd,
    Done,
    Error,
    Event,
    NormalizationError,
    PromptProgress,
    Start,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageUpdate,
)
from .messages import (
    AssistantMessage,
    ContentBlock,
    ProviderBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
)
from .normalizer import normalize

if TYPE_CHECKING:
    from .inline import ToolCallParser

__all__ = [
    "EXIT_CHUNKING",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_STREAM_ERROR",
    "EXIT_USAGE",
    "main",
]

EXIT_OK = 0
EXIT_STREAM_ERROR = 1
EXIT_USAGE = 2
EXIT_CHUNKING = 3
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141

#: How much is read from a file or stdin at a time: big files stream through
#: in pieces of this size, and a pipe is handed on as soon as data arrives.
READ_SIZE = 64 * 1024

PROG = "streamnorm"


class CLIError(Exception):
    """A failure reported as one ``streamnorm: error:`` line and an exit status."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.status = status


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _error_line(message: str) -> None:
    _write_stderr(f"{PROG}: error: {_one_line(message)}\n")


def _write_stderr(text: str) -> None:
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
# Input


class _Source:
    """Bytes from a file, stdin or a packaged sample, read in chunks."""

    def __init__(
        self, label: str, handle: IO[bytes] | None = None, data: bytes | None = None
    ) -> None:
        self.label = label
        self._handle = handle
        self._data = data
        self._owned = handle is not None and handle is not _stdin_buffer()

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
            chunk = read(size)
            if not chunk:
                return
            yield bytes(chunk)

    def read_all(self) -> bytes:
        try:
            return b"".join(self.chunks())
        except OSError as exc:
            raise CLIError(f"cannot read {self.label}: {exc.strerror or exc}") from None

    def close(self) -> None:
        if self._owned and self._handle is not None:
            self._handle.close()


def _stdin_buffer() -> IO[bytes] | None:
    stdin = sys.stdin
    return getattr(stdin, "buffer", None) if stdin is not None else None


def _open_source(spec: str | None) -> _Source:
    """Open ``spec``: a path, ``-``/None for stdin, or ``sample:NAME``."""
    if spec is None or spec == "-":
        buffer = _stdin_buffer()
        if buffer is None:
            raise CLIError("no input: stdin is not available; give a FILE")
        if spec is None and sys.stdin.isatty():
            raise CLIError("no input: give a FILE, '-', or 'sample:NAME', or pipe a stream in")
        return _Source("<stdin>", buffer)
    if spec.startswith("sample:"):
        try:
            name = samples.resolve(spec[len("sample:") :])
        except ValueError as exc:
            raise CLIError(str(exc)) from None
        return _Source(spec, data=samples.read(name))
    try:
        handle = open(spec, "rb")  # noqa: SIM115 - closed by _Source.close
    except IsADirectoryError:
        raise CLIError(f"cannot read {spec!r}: it is a directory") from None
    except FileNotFoundError:
        raise CLIError(f"cannot open {spec!r}: no such file") from None
    except OSError as exc:
        raise CLIError(f"cannot open {spec!r}: {exc.strerror or exc}") from None
    return _Source(spec, handle)


# --------------------------------------------------------------------------
# Output


def _dumps(obj: Any, *, pretty: bool = False) -> bytes:
    """Compact (or 2-space indented) UTF-8 JSON, non-ASCII kept as is."""
    options: dict[str, Any] = {"indent": 2} if pretty else {"separators": (",", ":")}
    text = json.dumps(obj, ensure_ascii=False, default=str, **options)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in provider data
        return json.dumps(obj, ensure_ascii=True, default=str, **options).encode("ascii")


class _JSONLines:
    """Writes one JSON document per line to stdout, flushed at once so that a
    pipe downstream sees each event as soon as it exists."""

    def __init__(self) -> None:
        self._text = sys.stdout
        self._buffer: IO[bytes] | None = getattr(sys.stdout, "buffer", None)

    def write(self, obj: Any, *, pretty: bool = False) -> None:
        data = _dumps(obj, pretty=pretty) + b"\n"
        if self._buffer is not None:
            self._buffer.write(data)
            self._buffer.flush()
        else:
            self._text.write(data.decode("utf-8"))
            self._text.flush()


def _unicode_ok(stream: IO[str] | None) -> bool:
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    return encoding in ("utf8", "utf8sig")


@dataclass(frozen=True)
class _Glyphs:
    dot: str
    arrow: str
    same: str
    differs: str
    ellipsis: str

    @staticmethod
    def for_stream(stream: IO[str] | None) -> _Glyphs:
        if _unicode_ok(stream):
            return _Glyphs(" · ", "→", "✓", "≠", "…")
        return _Glyphs(" | ", "->", "=", "!=", "...")


class _Style:
    """ANSI styling, or none at all."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _sgr(self, code: str, text: str) -> str:
        if not self.enabled or not text:
            return text
        return f"\x1b[{code}m{text}\x1b[0m"

    def dim(self, text: str) -> str:
        return self._sgr("2", text)

    def thinking(self, text: str) -> str:
        return self._sgr("2;3", text)

    def bold(self, text: str) -> str:
        return self._sgr("1", text)

    def red(self, text: str) -> str:
        return self._sgr("31", text)

    def yellow(self, text: str) -> str:
        return self._sgr("33", text)

    def green(self, text: str) -> str:
        return self._sgr("32", text)

    def cyan(self, text: str) -> str:
        return self._sgr("36", text)


def _color_enabled(choice: str, stream: IO[str] | None) -> bool:
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


# --------------------------------------------------------------------------
# Shared pieces


def _api_arg(value: str) -> str:
    try:
        return resolve_api(value, allow_auto=True)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _nonnegative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {value}")
    return number


def _positive(value: str) -> int:
    number = _nonnegative(value)
    if number == 0:
        raise argparse.ArgumentTypeError("expected a number > 0, got 0")
    return number


def _make_tool_parser(name: str) -> ToolCallParser:
    """``get_parser(name)``; an unknown name is a usage error listing the names."""
    from .inline import get_parser

    try:
        return get_parser(name)
    except (ValueError, LookupError) as exc:
        detail = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
        raise CLIError(f"--tool-parser: {detail}") from None


def _event_stream(
    source: _Source, args: argparse.Namespace, tool_parser: ToolCallParser | None
) -> Iterator[Event]:
    events: Iterator[Event] = normalize(
        source.chunks(getattr(args, "chunk_size", READ_SIZE)),
        args.api,
        model=args.model,
        provider=args.provider,
        choice=args.choice,
    )
    if tool_parser is not None:
        from .inline import NormalizingStream

        events = iter(NormalizingStream(events, tool_parser))
    return events


def _terminal_status(terminal: Done | Error | None, label: str) -> int:
    """0 for ``Done``; for ``Error`` a stderr line and 1."""
    if isinstance(terminal, Done):
        return EXIT_OK
    if terminal is None:
        _error_line(f"{label}: the stream produced no terminal event")
        return EXIT_STREAM_ERROR
    code = f", {terminal.code}" if terminal.code else ""
    _error_line(f"{label}: the stream ended in an error ({terminal.kind}{code}): {terminal.reason}")
    return EXIT_STREAM_ERROR


def _usage_text(usage: Usage, dot: str, *, full: bool = False) -> str:
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


def _stop_text(message: AssistantMessage) -> str:
    raw = message.raw_stop_reason
    return f"{message.stop_reason.value} ({raw})" if raw else message.stop_reason.value


# --------------------------------------------------------------------------
# normalize


def _cmd_normalize(args: argparse.Namespace) -> int:
    tool_parser = _make_tool_parser(args.tool_parser) if args.tool_parser else None
    source = _open_source(args.file)
    out = _JSONLines()
    terminal: Done | Error | None = None
    try:
        for event in _event_stream(source, args, tool_parser):
            if isinstance(event, (Done, Error)):
                terminal = event
            if not args.final:
                out.write(event.to_dict(), pretty=args.pretty)
    finally:
        source.close()
    if args.final and terminal is not None:
        out.write(terminal.message.to_dict(), pretty=args.pretty)
    return _terminal_status(terminal, source.label)


# --------------------------------------------------------------------------
# render


class _Renderer:
    """Draws a stream on a terminal as it arrives: thinking dimmed, text as
    is, tool calls with their arguments growing, then stop reason and usage."""

    def __init__(self, out: IO[str], style: _Style, glyphs: _Glyphs, delay: float) -> None:
        self._out = out
        self._s = style
        self._g = glyphs
        self._delay = delay
        self._block: int | None = None
        self._at_line_start = True
        self._printed = False
        self._names: dict[int, str] = {}

    def _write(self, text: str) -> None:
        if not text:
            return
        self._out.write(text)
        self._out.flush()
        self._at_line_start = text.endswith("\n")
        self._printed = True

    def _newline(self) -> None:
        if not self._at_line_start:
            self._write("\n")

    def _enter(self, index: int) -> bool:
        """Start a new section for block ``index`` unless it is the current one."""
        if self._block == index:
            return False
        self._newline()
        if self._printed:
            self._write("\n")
        self._block = index
        return True

    def _pause(self) -> None:
        if self._delay > 0:
            time.sleep(self._delay)

    def handle(self, event: Event) -> None:
        s, g = self._s, self._g
        if isinstance(event, Start):
            head = [event.api, event.model or "?"]
            if event.response_id:
                head.append(event.response_id)
            self._write(s.dim(g.dot.strip().join(f" {h} " for h in head).strip()) + "\n")
        elif isinstance(event, ThinkingDelta):
            if self._enter(event.index):
                self._write(s.dim("thinking: "))
            self._write(s.thinking(event.delta))
            self._pause()
        elif isinstance(event, TextDelta):
            self._enter(event.index)
            self._write(event.delta)
            self._pause()
        elif isinstance(event, ToolCallDelta):
            if self._enter(event.index):
                ident = f" {s.dim(event.id)}" if event.id else ""
                self._write(f"{s.cyan(g.arrow)} {s.bold(event.name)}{ident} ")
                self._names[event.index] = event.name
            self._write(s.cyan(event.raw_json_delta))
            self._pause()
        elif isinstance(event, BlockEnd):
            self._block_end(event.index, event.block)
        elif isinstance(event, NormalizationError):
            self._newline()
            self._write(s.yellow(f"! {event.kind}: {_one_line(event.detail, 200)}") + "\n")
            self._block = None
        elif isinstance(event, PromptProgress):
            self._newline()
            self._write(s.dim(f"prompt {event.processed}/{event.total} tokens processed") + "\n")
            self._block = None
        elif isinstance(event, UsageUpdate):
            pass  # shown once, at the end
        elif isinstance(event, (Done, Error)):
            self._finish(event)

    def _block_end(self, index: int, block: ContentBlock) -> None:
        s = self._s
        if isinstance(block, ToolCallBlock):
            if index not in self._names:  # a call that streamed no delta of its own
                self._enter(index)
                self._write(f"{s.cyan(self._g.arrow)} {s.bold(block.name)} {block.raw_arguments}")
            if block.error:
                self._write(s.yellow(f"  [{block.error}]"))
        elif isinstance(block, ProviderBlock):
            self._enter(index)
            self._write(s.dim(f"[{block.api} {block.kind}]"))
        elif isinstance(block, ThinkingBlock) and block.redacted:
            self._enter(index)
            self._write(s.dim("[redacted thinking]"))
        elif isinstance(block, TextBlock) and block.refusal and block.text:
            self._newline()
            self._write(s.yellow("[refusal]"))

    def _finish(self, event: Done | Error) -> None:
        s, g = self._s, self._g
        self._newline()
        if self._printed:
            self._write("\n")
        message = event.message
        if isinstance(event, Error):
            code = f", {event.code}" if event.code else ""
            self._write(s.red(f"error ({event.kind}{code}): {_one_line(event.reason)}") + "\n")
        else:
            self._write(s.dim("stop: ") + s.green(_stop_text(message)) + "\n")
        self._write(s.dim("usage: " + _usage_text(message.usage, g.dot)) + "\n")


def _cmd_render(args: argparse.Namespace) -> int:
    tool_parser = _make_tool_parser(args.tool_parser) if args.tool_parser else None
    source = _open_source(args.file)
    out = sys.stdout
    renderer = _Renderer(
        out,
        _Style(_color_enabled(args.color, out)),
        _Glyphs.for_stream(out),
        args.delay / 1000.0,
    )
    terminal: Done | Error | None = None
    try:
        for event in _event_stream(source, args, tool_parser):
            if isinstance(event, (Done, Error)):
                terminal = event
            renderer.handle(event)
    finally:
        source.close()
    if isinstance(terminal, Error):
        return EXIT_STREAM_ERROR  # already shown in the rendering
    return _terminal_status(terminal, source.label)


# --------------------------------------------------------------------------
# inspect


def _split_random(data: bytes, rng: random.Random, max_size: int) -> Iterator[bytes]:
    start = 0
    while start < len(data):
        size = rng.randint(1, max_size)
        yield data[start : start + size]
        start += size


def _split_bytes(data: bytes) -> Iterator[bytes]:
    for start in range(len(data)):
        yield data[start : start + 1]


def _run(chunks: Iterable[bytes], args: argparse.Namespace) -> list[Event]:
    return list(
        normalize(chunks, args.api, model=args.model, provider=args.provider, choice=args.choice)
    )


def _first_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


@dataclass
class _Summary:
    file: str
    api: str = ""
    model: str | None = None
    blocks: dict[str, int] = field(default_factory=dict)
    tool_calls: list[str] = field(default_factory=list)
    usage: Usage | None = None
    outcome: str = ""
    stop_reason: str | None = None
    raw_stop_reason: str | None = None
    error: dict[str, Any] | None = None
    diagnostics: dict[str, int] = field(default_factory=dict)
    events: int = 0
    chunkings: dict[str, str] = field(default_factory=dict)
    failure: str | None = None

    @property
    def invariant(self) -> bool:
        return all(v == "same" for v in self.chunkings.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "api": self.api,
            "model": self.model,
            "blocks": self.blocks,
            "tool_calls": self.tool_calls,
            "usage": self.usage.to_dict() if self.usage else None,
            "outcome": self.outcome,
            "stop_reason": self.stop_reason,
            "raw_stop_reason": self.raw_stop_reason,
            "error": self.error,
            "diagnostics": self.diagnostics,
            "events": self.events,
            "chunk_invariant": self.invariant if self.failure is None else None,
            "chunkings": self.chunkings,
            "failure": self.failure,
        }


def _block_kind(block: ContentBlock) -> str:
    if isinstance(block, ProviderBlock):
        return f"provider:{block.kind}"
    if isinstance(block, ThinkingBlock):
        return "redacted_thinking" if block.redacted else "thinking"
    if isinstance(block, TextBlock):
        return "refusal" if block.refusal else "text"
    return "toolcall"


def _summarize(label: str, data: bytes, args: argparse.Namespace) -> _Summary:
    summary = _Summary(label)
    events = _run([data], args)
    summary.events = len(events)
    terminal = events[-1] if events else None
    if not isinstance(terminal, (Done, Error)):
        summary.failure = "no terminal event"
        return summary
    message = terminal.message
    start = next((e for e in events if isinstance(e, Start)), None)
    summary.api = start.api if start else message.api
    summary.model = message.model
    summary.blocks = dict(Counter(_block_kind(b) for b in message.content))
    summary.tool_calls = [
        f"{b.name} [{b.error}]" if b.error else b.name for b in message.tool_calls
    ]
    summary.usage = message.usage
    summary.stop_reason = message.stop_reason.value
    summary.raw_stop_reason = message.raw_stop_reason
    if isinstance(terminal, Error):
        summary.outcome = "error"
        summary.error = {"kind": terminal.kind, "reason": terminal.reason, "code": terminal.code}
    else:
        summary.outcome = "done"
    summary.diagnostics = dict(Counter(e.kind for e in events if isinstance(e, NormalizationError)))

    reference = [e.to_dict() for e in events]
    splits: list[tuple[str, Iterable[bytes]]] = []
    if not args.quick:
        splits.append(("1-byte", _split_bytes(data)))
    for k in range(args.chunkings):
        rng = random.Random(args.seed * 1000 + k)
        max_size = (16, 256, 4096)[k % 3]
        splits.append((f"random-{max_size}#{k}", _split_random(data, rng, max_size)))
    for name, chunks in splits:
        other = [e.to_dict() for e in _run(chunks, args)]
        if other == reference:
            summary.chunkings[name] = "same"
        else:
            at = _first_difference(reference, other)
            summary.chunkings[name] = f"differs at event {at}"
    return summary


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cmd_inspect(args: argparse.Namespace) -> int:
    if sum(1 for f in args.files if f == "-") > 1:
        raise CLIError("stdin ('-') can be read only once")
    summaries: list[_Summary] = []
    status = EXIT_OK
    json_out = _JSONLines() if args.json else None
    for spec in args.files:
        try:
            source = _open_source(spec)
            try:
                data = source.read_all()
            finally:
                source.close()
        except CLIError as exc:
            _error_line(str(exc))
            status = EXIT_USAGE
            continue
        summary = _summarize(source.label, data, args)
        if not summary.invariant and status == EXIT_OK:
            status = EXIT_CHUNKING
        if json_out is not None:
            json_out.write(summary.to_dict())
        summaries.append(summary)
    if json_out is None and summaries:
        g = _Glyphs.for_stream(sys.stdout)
        rows = []
        for sm in summaries:
            blocks = " ".join(f"{k}:{v}" for k, v in sm.blocks.items()) or "-"
            u = sm.usage or Usage()
            usage = f"in {u.input_tokens} out {u.output_tokens}"
            if u.reasoning_tokens:
                usage += f" (r {u.reasoning_tokens})"
            if u.cache_read_tokens or u.cache_write_tokens:
                usage += f" cache {u.cache_read_tokens}/{u.cache_write_tokens}"
            if sm.error is not None:
                stop = f"error:{sm.error['kind']}"
            else:
                stop = sm.stop_reason or "-"
                if sm.raw_stop_reason:
                    stop += f" ({sm.raw_stop_reason})"
            diags = sum(sm.diagnostics.values())
            diag = str(diags) + (
                " (" + ", ".join(sorted(sm.diagnostics)) + ")" if sm.diagnostics else ""
            )
            if sm.invariant:
                chunks = f"{g.same} {len(sm.chunkings)} splits"
            else:
                bad = [f"{k}: {v}" for k, v in sm.chunkings.items() if v != "same"]
                chunks = f"{g.differs} " + "; ".join(bad)
            rows.append(
                [
                    sm.file,
                    sm.api,
                    sm.model or "-",
                    blocks,
                    ", ".join(sm.tool_calls) or "-",
                    usage,
                    stop,
                    diag,
                    chunks,
                ]
            )
        header = [
            "FILE",
            "API",
            "MODEL",
            "BLOCKS",
            "TOOL CALLS",
            "USAGE",
            "STOP",
            "DIAGNOSTICS",
            "CHUNKING",
        ]
        sys.stdout.write(_table(rows, header) + "\n")
        sys.stdout.flush()
    return status


# --------------------------------------------------------------------------
# demo


@dataclass
class _DemoColumn:
    api: str
    wire_bytes: int
    sse_events: int
    events: list[Event]
    message: AssistantMessage
    terminal: Done | Error
    chunk_invariant: bool


def _sse_event_count(data: bytes) -> int:
    normalized = data.replace(b"\r\n", b"\n")
    return sum(1 for block in normalized.split(b"\n\n") if block.strip())


def _demo_column(api: str) -> _DemoColumn:
    data = samples.read(api)
    events = list(normalize([data], api))
    one_byte = list(normalize(_split_bytes(data), api))
    terminal = events[-1]
    assert isinstance(terminal, (Done, Error))
    return _DemoColumn(
        api=api,
        wire_bytes=len(data),
        sse_events=_sse_event_count(data),
        events=events,
        message=terminal.message,
        terminal=terminal,
        chunk_invariant=[e.to_dict() for e in one_byte] == [e.to_dict() for e in events],
    )


def _demo_rows(cols: list[_DemoColumn], g: _Glyphs) -> list[tuple[str, list[str], bool | None]]:
    """(label, one cell per api, whether the row must agree across apis)."""

    def thinking(m: AssistantMessage) -> str:
        return "\n\n".join(b.thinking for b in m.content if isinstance(b, ThinkingBlock))

    def calls(m: AssistantMessage) -> str:
        return "\n".join(b.name for b in m.tool_calls)

    def arguments(m: AssistantMessage) -> str:
        return "\n".join(json.dumps(dict(b.arguments), ensure_ascii=False) for b in m.tool_calls)

    def signed(m: AssistantMessage) -> str:
        kinds = []
        for b in m.content:
            if not isinstance(b, ProviderBlock) and b.signature:
                kinds.append(_block_kind(b))
        return ", ".join(kinds) or "-"

    def order(m: AssistantMessage) -> str:
        return ", ".join(_block_kind(b) for b in m.content)

    rows: list[tuple[str, list[str], bool | None]] = [
        ("wire", [f"{c.sse_events} SSE events\n{c.wire_bytes} bytes" for c in cols], None),
        ("model", [c.message.model or "-" for c in cols], None),
        ("blocks", [order(c.message) for c in cols], True),
        ("thinking", [thinking(c.message) for c in cols], True),
        ("text", [c.message.text for c in cols], True),
        ("tool call", [calls(c.message) for c in cols], True),
        ("arguments", [arguments(c.message) for c in cols], True),
        ("call id", ["\n".join(b.id for b in c.message.tool_calls) for c in cols], None),
        ("signed", [signed(c.message) for c in cols], None),
        ("stop", [c.message.stop_reason.value for c in cols], True),
        ("raw stop", [c.message.raw_stop_reason or "-" for c in cols], None),
        ("usage", [_usage_text(c.message.usage, "\n", full=True) for c in cols], True),
        (
            "events",
            [f"{len(c.events)} canonical" for c in cols],
            None,
        ),
        (
            "1-byte feed",
            ["same events" if c.chunk_invariant else "DIFFERENT events" for c in cols],
            True,
        ),
    ]
    return rows


def _wrap_cell(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(
            textwrap.wrap(paragraph, width, break_long_words=True, break_on_hyphens=True) or [""]
        )
    return lines


def _cmd_demo(args: argparse.Namespace) -> int:
    out = sys.stdout
    g = _Glyphs.for_stream(out)
    s = _Style(_color_enabled(args.color, out))
    cols = [_demo_column(api) for api in samples.names()]
    rows = _demo_rows(cols, g)

    width = args.width or shutil.get_terminal_size((120, 24)).columns
    name_w = max(len(r[0]) for r in rows)
    mark_w = max(len(g.same), len(g.differs))
    label_w = name_w + 1 + mark_w + 2
    gap = 2
    col_w = max(14, (width - label_w - gap * (len(cols) - 1)) // len(cols))

    def render_row(label: str, cells: list[str], mark: str = "", mark_len: int = 0) -> list[str]:
        wrapped = [_wrap_cell(c, col_w) for c in cells]
        height = max(len(w) for w in wrapped)
        lines = []
        for i in range(height):
            if i == 0:
                lab = label.ljust(name_w) + " " + mark + " " * (mark_w - mark_len + 2)
            else:
                lab = " " * label_w
            parts = [(w[i] if i < len(w) else "").ljust(col_w) for w in wrapped]
            lines.append((lab + (" " * gap).join(parts)).rstrip())
        return lines

    text: list[str] = [
        s.bold("One turn, four wire APIs, one canonical result."),
        *(
            s.dim(x)
            for x in textwrap.wrap(
                "The samples shipped with streamnorm record the same turn on each API: the "
                "user asks for the weather in Paris; the model thinks, answers and calls "
                "get_weather.",
                width,
            )
        ),
        "",
    ]
    text.extend(s.bold(x) for x in render_row("", [c.api for c in cols]))
    text.append("-" * min(width, label_w + len(cols) * col_w + gap * (len(cols) - 1)))
    mismatches = []
    for label, cells, must_agree in rows:
        mark, mark_len = "", 0
        if must_agree:
            agree = all(c == cells[0] for c in cells)
            mark = s.green(g.same) if agree else s.red(g.differs)
            mark_len = len(g.same) if agree else len(g.differs)
            if not agree:
                mismatches.append(label)
        text.extend(render_row(label, cells, mark, mark_len))
    text.append("")
    failed = [c.api for c in cols if not isinstance(c.terminal, Done)]

    def paragraph(mark: str, plain_mark: str, body: str, style: Any = None) -> None:
        lines = textwrap.wrap(f"{plain_mark} {body}" if plain_mark else body, width)
        for i, row in enumerate(lines):
            if i == 0 and plain_mark:
                row = mark + row[len(plain_mark) :]
            text.append(style(row) if style else row)

    if failed:
        paragraph(s.red(g.differs), g.differs, f"did not complete: {', '.join(failed)}")
    if mismatches:
        paragraph(s.red(g.differs), g.differs, f"these rows differ: {', '.join(mismatches)}")
    if not failed and not mismatches:
        agreed = [r[0] for r in rows if r[2]]
        paragraph(
            s.green(g.same),
            g.same,
            f"{', '.join(agreed)}: identical across all {len(cols)} wire APIs.",
        )
        paragraph(
            "",
            "",
            "Ids, signatures, models and raw stop reasons stay provider-specific: they are "
            "what a replay to the same provider needs.",
            s.dim,
        )
    out.write("\n".join(text) + "\n")
    out.flush()
    return EXIT_STREAM_ERROR if failed or mismatches else EXIT_OK


# --------------------------------------------------------------------------
# Argument parsing


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one ``streamnorm: error:`` line."""

    def error(self, message: str) -> NoReturn:
        raise CLIError(f"{message} (see '{self.prog} --help')")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("streamnorm")
    except Exception:
        return "unknown"


_API_HELP = (
    "wire api: auto (detect from the first event), "
    + ", ".join(APIS)
    + ", or an alias ("
    + ", ".join(ALIASES)
    + ", openai)"
)

_INPUT_HELP = (
    "the SSE stream: a file, '-' for stdin (the default when stdin is a pipe), "
    "or 'sample:NAME' for a stream shipped with the package "
    f"({', '.join(samples.names())})"
)


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog=PROG,
        description=(
            "Normalize the streaming responses of LLM APIs (Anthropic Messages, OpenAI "
            "Responses, Chat Completions and compatibles, Google Gemini) into one canonical "
            "event sequence."
        ),
        epilog=(
            "exit status: 0 success; 1 the stream ended in an Error event; 2 usage error "
            "(bad arguments, unknown api or parser, unreadable input); 3 inspect found "
            "events that depend on the chunking. Try 'streamnorm demo'."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_ArgumentParser
    )

    stream_opts = _ArgumentParser(add_help=False)
    group = stream_opts.add_argument_group("stream options")
    group.add_argument("--api", type=_api_arg, default="auto", metavar="NAME", help=_API_HELP)
    group.add_argument(
        "--model", metavar="M", help="the model you asked for (recorded on the message)"
    )
    group.add_argument(
        "--provider", metavar="P", help="the host that served the stream, e.g. deepseek"
    )
    group.add_argument(
        "--choice",
        type=_nonnegative,
        default=0,
        metavar="N",
        help="choice / candidate of an n>1 stream (default 0)",
    )

    parser_opt = _ArgumentParser(add_help=False)
    parser_opt.add_argument(
        "--tool-parser",
        metavar="NAME",
        help="lift tool calls and reasoning written inline in the text "
        "(hermes, qwen3_coder, mistral, llama3_json, deepseek_v3, kimi_k2, harmony …)",
    )

    p = commands.add_parser(
        "normalize",
        parents=[stream_opts, parser_opt],
        help="print the canonical events as JSON lines (or the final message)",
        description=(
            "Normalize one stream and print its canonical events, one compact JSON object "
            "per line, as they complete. Exit status 0 when the stream ends in Done, 1 when "
            "it ends in an Error event, 2 for usage errors."
        ),
    )
    p.add_argument("file", nargs="?", metavar="FILE", help=_INPUT_HELP)
    p.add_argument(
        "--final",
        action="store_true",
        help="print only the final message (the partial one on error)",
    )
    p.add_argument("--pretty", action="store_true", help="indent the JSON")
    p.add_argument(
        "--chunk-size",
        type=_positive,
        default=READ_SIZE,
        metavar="BYTES",
        help=f"read the input in pieces of this size (default {READ_SIZE})",
    )
    p.set_defaults(handler=_cmd_normalize)

    p = commands.add_parser(
        "inspect",
        parents=[stream_opts],
        help="summarize streams and check that chunking does not change them",
        description=(
            "Summarize each stream (api, model, blocks, tool calls, usage, stop reason, "
            "diagnostics) and check chunk-boundary invariance: the whole input, one byte at "
            "a time and random chunkings must give identical events. Exit status 0 when "
            "every file was read and every check passed, 3 when events depend on the "
            "chunking, 2 when a file could not be read."
        ),
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="SSE files ('-', 'sample:NAME' too)")
    p.add_argument(
        "--json", action="store_true", help="one JSON summary per line instead of a table"
    )
    p.add_argument("--quick", action="store_true", help="skip the one-byte chunking (large files)")
    p.add_argument(
        "--chunkings",
        type=_nonnegative,
        default=3,
        metavar="N",
        help="number of random chunkings to compare (default 3)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random chunkings (default 0)")
    p.set_defaults(handler=_cmd_inspect)

    p = commands.add_parser(
        "render",
        parents=[stream_opts, parser_opt],
        help="draw a stream on the terminal as it arrives",
        description=(
            "Render a stream live: thinking dimmed, text as it arrives, tool calls with "
            "their arguments growing, then stop reason and usage. Colours only on a "
            "terminal and never when NO_COLOR is set. Exit status as for normalize."
        ),
    )
    p.add_argument("file", nargs="?", metavar="FILE", help=_INPUT_HELP)
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="ANSI colours (default auto: a terminal without NO_COLOR)",
    )
    p.add_argument(
        "--delay",
        type=_nonnegative,
        default=0,
        metavar="MS",
        help="pause after each delta, to replay a recording at reading speed",
    )
    p.set_defaults(handler=_cmd_render)

    p = commands.add_parser(
        "demo",
        help="show the four shipped samples normalizing to the same result",
        description=(
            "Normalize the sample streams shipped with the package — one turn recorded on "
            "each of the four wire APIs — and show side by side that thinking, text, tool "
            "call, stop reason and usage come out identical. Exit status 1 if they do not."
        ),
    )
    p.add_argument(
        "--width", type=_positive, metavar="COLS", help="output width (default: terminal)"
    )
    p.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto", help="ANSI colours"
    )
    p.set_defaults(handler=_cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    for stream in (sys.stdout, sys.stderr):
        # A terminal or pipe that cannot show some character gets an escape
        # for it rather than an exception (JSON output goes out as UTF-8 bytes).
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and not _unicode_ok(stream):
            reconfigure(errors="backslashreplace")
    try:
        args = parser.parse_args(argv)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        status: int = handler(args)
        return status
    except CLIError as exc:
        _error_line(str(exc))
        return exc.status
    except KeyboardInterrupt:
        _write_stderr("\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (``| head``): silence the flush at exit.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_BROKEN_PIPE
    except Exception as exc:
        _error_line(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_INTERNAL
