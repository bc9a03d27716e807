"""``streamnorm inspect``: a summary of each stream, and a check that the
chunking of its bytes does not change its events."""

from __future__ import annotations

import argparse
import os
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from ..events import Done, Error, Event, NormalizationError, Start
from ..messages import Usage
from ..normalizer import normalize
from .common import (
    EXIT_CHUNKING,
    EXIT_OK,
    EXIT_USAGE,
    CLIError,
    block_kind,
    error_line,
    split_bytes,
    whole_number,
)
from .options import SharedOptions, Subcommands
from .output import Glyphs, JSONLines, stdout, write_text
from .source import open_source

#: inspect reads each input whole (it re-reads it in several chunkings), so an
#: input is refused beyond ``--max-bytes``: 64 MiB by default, 4 GiB at most.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
MAX_INPUT_LIMIT = 4 * 1024 * 1024 * 1024
#: Each chunking re-normalizes the whole input once.
MAX_CHUNKINGS = 1000

#: The columns of the table (``--json`` uses the keys of :meth:`Summary.to_dict`).
HEADER = [
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


def register(commands: Subcommands, shared: SharedOptions) -> None:
    """Add the ``inspect`` subcommand."""
    p = commands.add_parser(
        "inspect",
        parents=[shared.stream],
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
        type=whole_number(0, MAX_CHUNKINGS),
        default=3,
        metavar="N",
        help=f"number of random chunkings to compare (default 3, at most {MAX_CHUNKINGS})",
    )
    p.add_argument(
        "--max-bytes",
        type=whole_number(1, MAX_INPUT_LIMIT),
        default=DEFAULT_MAX_BYTES,
        metavar="BYTES",
        help=f"refuse an input larger than this (default {DEFAULT_MAX_BYTES}, "
        f"at most {MAX_INPUT_LIMIT}): each input is held in memory",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random chunkings (default 0)")
    p.set_defaults(handler=run)


@dataclass
class Summary:
    """What ``inspect`` reports for one stream."""

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
        """Whether every chunking gave the reference events."""
        return all(v == "same" for v in self.chunkings.values())

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` line."""
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


# --------------------------------------------------------------------------
# Summarizing one stream


def _split_random(data: bytes, rng: random.Random, max_size: int) -> Iterator[bytes]:
    start = 0
    while start < len(data):
        size = rng.randint(1, max_size)
        yield data[start : start + size]
        start += size


def _run(chunks: Iterable[bytes], args: argparse.Namespace) -> list[Event]:
    return list(
        normalize(
            chunks,
            args.api,
            model=args.model,
            provider=args.provider,
            choice=args.choice,
            max_stream_bytes=args.max_stream_bytes,
        )
    )


def _first_difference(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def _describe(summary: Summary, events: list[Event], terminal: Done | Error) -> None:
    """Fill ``summary`` from one reading's events."""
    message = terminal.message
    start = next((e for e in events if isinstance(e, Start)), None)
    summary.api = start.api if start else message.api
    summary.model = message.model
    summary.blocks = dict(Counter(block_kind(b) for b in message.content))
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


def _chunkings(data: bytes, args: argparse.Namespace) -> Iterator[tuple[str, Iterable[bytes]]]:
    """(name, chunks) of every chunking ``args`` asks to compare with the whole."""
    if not args.quick:
        yield "1-byte", split_bytes(data)
    for k in range(args.chunkings):
        rng = random.Random(args.seed * 1000 + k)
        max_size = (16, 256, 4096)[k % 3]
        yield f"random-{max_size}#{k}", _split_random(data, rng, max_size)


def summarize(label: str, data: bytes, args: argparse.Namespace) -> Summary:
    """Read ``data`` whole, describe it, then compare every chunking with it."""
    summary = Summary(label)
    events = _run([data], args)
    summary.events = len(events)
    terminal = events[-1] if events else None
    if not isinstance(terminal, (Done, Error)):
        summary.failure = "no terminal event"
        return summary
    _describe(summary, events, terminal)
    reference = [e.to_dict() for e in events]
    for name, chunks in _chunkings(data, args):
        other = [e.to_dict() for e in _run(chunks, args)]
        if other == reference:
            summary.chunkings[name] = "same"
        else:
            at = _first_difference(reference, other)
            summary.chunkings[name] = f"differs at event {at}"
    return summary


# --------------------------------------------------------------------------
# The table


def _usage_cell(usage: Usage | None) -> str:
    u = usage or Usage()
    text = f"in {u.input_tokens} out {u.output_tokens}"
    if u.reasoning_tokens:
        text += f" (r {u.reasoning_tokens})"
    if u.cache_read_tokens or u.cache_write_tokens:
        text += f" cache {u.cache_read_tokens}/{u.cache_write_tokens}"
    return text


def _stop_cell(sm: Summary) -> str:
    if sm.error is not None:
        return f"error:{sm.error['kind']}"
    stop = sm.stop_reason or "-"
    if sm.raw_stop_reason:
        stop += f" ({sm.raw_stop_reason})"
    return stop


def _diagnostics_cell(sm: Summary) -> str:
    count = str(sum(sm.diagnostics.values()))
    if not sm.diagnostics:
        return count
    return count + " (" + ", ".join(sorted(sm.diagnostics)) + ")"


def _chunking_cell(sm: Summary, g: Glyphs) -> str:
    if sm.invariant:
        return f"{g.same} {len(sm.chunkings)} splits"
    bad = [f"{k}: {v}" for k, v in sm.chunkings.items() if v != "same"]
    return f"{g.differs} " + "; ".join(bad)


def _row(sm: Summary, g: Glyphs) -> list[str]:
    return [
        sm.file,
        sm.api,
        sm.model or "-",
        " ".join(f"{k}:{v}" for k, v in sm.blocks.items()) or "-",
        ", ".join(sm.tool_calls) or "-",
        _usage_cell(sm.usage),
        _stop_cell(sm),
        _diagnostics_cell(sm),
        _chunking_cell(sm, g),
    ]


#: No column is narrowed below this many characters to fit the terminal.
_MIN_COLUMN = 6


def _table(
    rows: list[list[str]], header: list[str], columns: int | None = None, ellipsis: str = "…"
) -> str:
    """The rows as aligned columns; with ``columns`` (the terminal's width)
    the widest columns are narrowed until a line fits, and a cell cut short
    ends in ``ellipsis``."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    if columns is not None:
        widths = _fit(widths, columns)
    lines = []
    for row in [header, *rows]:
        cells = (_cut(c, w, ellipsis).ljust(w) for c, w in zip(row, widths, strict=True))
        lines.append("  ".join(cells).rstrip())
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fit(widths: list[int], columns: int) -> list[int]:
    """Narrow the widest column, one character at a time, until the line
    (columns joined by two spaces) fits in ``columns`` or none can shrink."""
    widths = list(widths)
    excess = sum(widths) + 2 * (len(widths) - 1) - columns
    while excess > 0:
        widest = max(range(len(widths)), key=widths.__getitem__)
        if widths[widest] <= _MIN_COLUMN:
            break
        widths[widest] -= 1
        excess -= 1
    return widths


def _cut(cell: str, width: int, ellipsis: str) -> str:
    if len(cell) <= width:
        return cell
    return cell[: max(width - len(ellipsis), 0)] + ellipsis


def _terminal_columns(out: IO[str]) -> int | None:
    """The width to fit the table to: ``COLUMNS`` when set, else the
    terminal's when the output is one; None (no limit) for a pipe or file."""
    value = os.environ.get("COLUMNS", "")
    if value.isdigit() and int(value) > 0:
        return int(value)
    try:
        if out.isatty():
            return os.get_terminal_size(out.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return None


# --------------------------------------------------------------------------
# The command


def _read(spec: str, limit: int) -> tuple[str, bytes] | None:
    """(label, bytes) of one input; None (after its error line) if it cannot be
    read or is larger than ``limit`` bytes (inspect holds it whole)."""
    try:
        source = open_source(spec)
        try:
            data = source.read_all(limit + 1)
            if len(data) > limit:
                raise CLIError(
                    f"{source.label}: larger than {limit} bytes; inspect holds each input in "
                    "memory (--max-bytes raises the limit)"
                )
            return source.label, data
        finally:
            source.close()
    except CLIError as exc:
        error_line(str(exc))
        return None


def run(args: argparse.Namespace) -> int:
    """Summarize every input; 2 if one could not be read, else 3 if a chunking differed."""
    if sum(1 for f in args.files if f == "-") > 1:
        raise CLIError("stdin ('-') can be read only once")
    out = stdout()
    summaries: list[Summary] = []
    status = EXIT_OK
    json_out = JSONLines() if args.json else None
    for spec in args.files:
        read = _read(spec, args.max_bytes)
        if read is None:
            status = EXIT_USAGE
            continue
        summary = summarize(*read, args)
        if not summary.invariant and status == EXIT_OK:
            status = EXIT_CHUNKING
        if json_out is not None:
            json_out.write(summary.to_dict())
        summaries.append(summary)
    if json_out is None and summaries:
        g = Glyphs.for_stream(out)
        table = _table(
            [_row(sm, g) for sm in summaries], HEADER, _terminal_columns(out), g.ellipsis
        )
        write_text(out, table + "\n")
    return status
