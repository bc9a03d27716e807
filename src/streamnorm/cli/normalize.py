"""``streamnorm normalize``: the canonical events as JSON lines, or the final message."""

from __future__ import annotations

import argparse

from ..events import Done, Error
from .common import (
    MAX_CHUNK_SIZE,
    READ_SIZE,
    event_stream,
    make_tool_parser,
    terminal_status,
    whole_number,
)
from .options import INPUT_HELP, SharedOptions, Subcommands
from .output import JSONLines
from .source import open_source


def register(commands: Subcommands, shared: SharedOptions) -> None:
    """Add the ``normalize`` subcommand."""
    p = commands.add_parser(
        "normalize",
        parents=[shared.stream, shared.tool_parser],
        help="print the canonical events as JSON lines (or the final message)",
        description=(
            "Normalize one stream and print its canonical events, one compact JSON object "
            "per line, as they complete. Exit status 0 when the stream ends in Done, 1 when "
            "it ends in an Error event, 2 for usage errors."
        ),
    )
    p.add_argument("file", nargs="?", metavar="FILE", help=INPUT_HELP)
    p.add_argument(
        "--final",
        action="store_true",
        help="print only the final message (the partial one on error)",
    )
    p.add_argument("--pretty", action="store_true", help="indent the JSON")
    p.add_argument(
        "--chunk-size",
        type=whole_number(1, MAX_CHUNK_SIZE),
        default=READ_SIZE,
        metavar="BYTES",
        help=f"read the input in pieces of this size (default {READ_SIZE}, "
        f"at most {MAX_CHUNK_SIZE})",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print each event (or only the final message); the exit status of the stream."""
    tool_parser = make_tool_parser(args.tool_parser) if args.tool_parser else None
    source = open_source(args.file)
    out = JSONLines()
    terminal: Done | Error | None = None
    try:
        for event in event_stream(source, args, tool_parser):
            if isinstance(event, (Done, Error)):
                terminal = event
            if not args.final:
                out.write(event.to_dict(), pretty=args.pretty)
    finally:
        source.close()
    if args.final and terminal is not None:
        out.write(terminal.message.to_dict(), pretty=args.pretty)
    return terminal_status(terminal, source.label)
