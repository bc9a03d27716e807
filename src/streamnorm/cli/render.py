"""``streamnorm render``: a stream drawn on the terminal as it arrives."""

from __future__ import annotations

import argparse
import time
from typing import IO

from ..events import (
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
)
from ..messages import ContentBlock, ProviderBlock, TextBlock, ThinkingBlock, ToolCallBlock
from .common import (
    event_stream,
    make_tool_parser,
    one_line,
    stop_text,
    terminal_status,
    usage_text,
    whole_number,
)
from .options import COLOR_CHOICES, INPUT_HELP, SharedOptions, Subcommands
from .output import Glyphs, Style, color_enabled, stdout, write_text
from .source import open_source

#: The longest ``--delay``, in milliseconds: a minute per delta.
MAX_DELAY_MS = 60_000


def register(commands: Subcommands, shared: SharedOptions) -> None:
    """Add the ``render`` subcommand."""
    p = commands.add_parser(
        "render",
        parents=[shared.stream, shared.tool_parser],
        help="draw a stream on the terminal as it arrives",
        description=(
            "Render a stream live: thinking dimmed, text as it arrives, tool calls with "
            "their arguments growing, then stop reason and usage. Colours only on a "
            "terminal and never when NO_COLOR is set. Exit status as for normalize."
        ),
    )
    p.add_argument("file", nargs="?", metavar="FILE", help=INPUT_HELP)
    p.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="ANSI colours (default auto: a terminal without NO_COLOR)",
    )
    p.add_argument(
        "--delay",
        type=whole_number(0, MAX_DELAY_MS),
        default=0,
        metavar="MS",
        help="pause after each delta, to replay a recording at reading speed "
        f"(at most {MAX_DELAY_MS})",
    )
    p.set_defaults(handler=run)


class Renderer:
    """Draws a stream on a terminal as it arrives: thinking dimmed, text as
    is, tool calls with their arguments growing, then stop reason and usage."""

    def __init__(self, out: IO[str], style: Style, glyphs: Glyphs, delay: float) -> None:
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
        write_text(self._out, text)
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
        """Draw one event (usage waits for the end)."""
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
            self._tool_call_delta(event)
        elif isinstance(event, BlockEnd):
            self._block_end(event.index, event.block)
        elif isinstance(event, NormalizationError):
            self._note(s.yellow(f"! {event.kind}: {one_line(event.detail, 200)}"))
        elif isinstance(event, PromptProgress):
            self._note(s.dim(f"prompt {event.processed}/{event.total} tokens processed"))
        elif isinstance(event, (Done, Error)):
            self._finish(event)

    def _tool_call_delta(self, event: ToolCallDelta) -> None:
        s = self._s
        if self._enter(event.index):
            ident = f" {s.dim(event.id)}" if event.id else ""
            self._write(f"{s.cyan(self._g.arrow)} {s.bold(event.name)}{ident} ")
            self._names[event.index] = event.name
        self._write(s.cyan(event.raw_json_delta))
        self._pause()

    def _note(self, line: str) -> None:
        """A line of its own between blocks."""
        self._newline()
        self._write(line + "\n")
        self._block = None

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
            self._write(s.red(f"error ({event.kind}{code}): {one_line(event.reason)}") + "\n")
        else:
            self._write(s.dim("stop: ") + s.green(stop_text(message)) + "\n")
        self._write(s.dim("usage: " + usage_text(message.usage, g.dot)) + "\n")


def run(args: argparse.Namespace) -> int:
    """Draw the stream; the exit status of the stream."""
    tool_parser = make_tool_parser(args.tool_parser) if args.tool_parser else None
    source = open_source(args.file)
    out = stdout()
    renderer = Renderer(
        out,
        Style(color_enabled(args.color, out)),
        Glyphs.for_stream(out),
        args.delay / 1000.0,
    )
    terminal: Done | Error | None = None
    try:
        for event in event_stream(source, args, tool_parser):
            if isinstance(event, (Done, Error)):
                terminal = event
            renderer.handle(event)
    finally:
        source.close()
    return terminal_status(terminal, source.label)
