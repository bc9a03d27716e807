"""``streamnorm translate``: a stream re-encoded in another API's wire format.

The input is normalized as ``normalize`` reads it, and each canonical event
is written at once, encoded by :class:`streamnorm.StreamEncoder` for
``--to``, so the command works in a pipe between a recorded or live stream
and a client of another API.
"""

from __future__ import annotations

import argparse
from typing import IO

from ..apis import APIS, resolve_spoken_api
from ..encoder import StreamEncoder
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
from .output import output_errors, stdout
from .source import open_source


def _target(value: str) -> str:
    """``--to``: one of the four apis streamnorm writes (an alias too);
    ``auto`` and the apis it only reads are usage errors saying so."""
    if value.strip().lower() in ("auto", "openai"):
        raise argparse.ArgumentTypeError(
            f"--to needs one api, not {value}; one of: {', '.join(APIS)}"
        )
    try:
        return resolve_spoken_api(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def register(commands: Subcommands, shared: SharedOptions) -> None:
    """Add the ``translate`` subcommand."""
    p = commands.add_parser(
        "translate",
        parents=[shared.stream, shared.tool_parser],
        help="write the stream re-encoded as another API's SSE (a translating pipe)",
        description=(
            "Normalize one stream and write it again as the SSE bytes of the api given "
            "by --to, event by event, as that api's server would send them (docs/encoding.md). "
            "Exit status 0 when the stream ends in Done, 1 when it ends in an Error event "
            "(written as the target's own error event), 2 for usage errors."
        ),
    )
    p.add_argument("file", nargs="?", metavar="FILE", help=INPUT_HELP)
    p.add_argument(
        "--to",
        required=True,
        type=_target,
        metavar="API",
        help=f"the api to write: {', '.join(APIS)} (or an alias: anthropic, gemini, google)",
    )
    p.add_argument(
        "--as-model", metavar="M", help="the model name the output names (default: the stream's)"
    )
    p.add_argument(
        "--chunk-size",
        type=whole_number(1, MAX_CHUNK_SIZE),
        default=READ_SIZE,
        metavar="BYTES",
        help=f"read the input in pieces of this size (default {READ_SIZE})",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Write each event's bytes as soon as it exists; the exit status of the stream."""
    tool_parser = make_tool_parser(args.tool_parser) if args.tool_parser else None
    source = open_source(args.file)
    text = stdout()
    out: IO[bytes] | None = getattr(text, "buffer", None)
    encoder = StreamEncoder(args.to, model=args.as_model)
    terminal: Done | Error | None = None
    try:
        for event in event_stream(source, args, tool_parser):
            if isinstance(event, (Done, Error)):
                terminal = event
            _write(out, text, encoder.feed(event))
        _write(out, text, encoder.close())
    finally:
        source.close()
    return terminal_status(terminal, source.label)


def _write(out: IO[bytes] | None, text: IO[str], data: bytes) -> None:
    """Write and flush at once: a client downstream sees each event when it exists."""
    if not data:
        return
    with output_errors():
        if out is not None:
            out.write(data)
            out.flush()
        else:
            text.write(data.decode("utf-8"))
            text.flush()
