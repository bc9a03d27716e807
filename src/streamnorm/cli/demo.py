"""``streamnorm demo``: the four shipped samples normalized side by side."""

from __future__ import annotations

import argparse
import json
import shutil
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from .. import samples
from ..apis import resolve_api
from ..events import Done, Error, Event
from ..messages import AssistantMessage, ProviderBlock, ThinkingBlock
from ..normalizer import normalize
from .common import (
    EXIT_OK,
    EXIT_STREAM_ERROR,
    block_kind,
    split_bytes,
    usage_text,
    whole_number,
)
from .options import COLOR_CHOICES, SharedOptions, Subcommands
from .output import Glyphs, Style, color_enabled, stdout, write_text

#: (label, one cell per api, whether the row must agree across apis).
Row = tuple[str, list[str], bool | None]

GAP = 2
#: The widest output, whatever the terminal (or ``COLUMNS``) says.
MAX_WIDTH = 1000
MIN_COLUMN = 14


def register(commands: Subcommands, shared: SharedOptions) -> None:
    """Add the ``demo`` subcommand."""
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
        "--width",
        type=whole_number(1, MAX_WIDTH),
        metavar="COLS",
        help=f"output width (default: the terminal's, at most {MAX_WIDTH})",
    )
    p.add_argument("--color", choices=COLOR_CHOICES, default="auto", help="ANSI colours")
    p.set_defaults(handler=run)


@dataclass
class Column:
    """One sample, normalized."""

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


def column(api: str) -> Column:
    """Normalize the sample of ``api`` whole and one byte at a time."""
    data = samples.read(api)
    events = list(normalize([data], resolve_api(api)))
    one_byte = list(normalize(split_bytes(data), resolve_api(api)))
    terminal = events[-1]
    assert isinstance(terminal, (Done, Error))
    return Column(
        api=api,
        wire_bytes=len(data),
        sse_events=_sse_event_count(data),
        events=events,
        message=terminal.message,
        terminal=terminal,
        chunk_invariant=[e.to_dict() for e in one_byte] == [e.to_dict() for e in events],
    )


def _thinking(m: AssistantMessage) -> str:
    return "\n\n".join(b.thinking for b in m.content if isinstance(b, ThinkingBlock))


def _arguments(m: AssistantMessage) -> str:
    return "\n".join(json.dumps(dict(b.arguments), ensure_ascii=False) for b in m.tool_calls)


def _signed(m: AssistantMessage) -> str:
    kinds = [block_kind(b) for b in m.content if not isinstance(b, ProviderBlock) and b.signature]
    return ", ".join(kinds) or "-"


def rows(cols: list[Column]) -> list[Row]:
    """The rows of the table, the ones that must agree marked True."""
    messages = [c.message for c in cols]
    return [
        ("wire", [f"{c.sse_events} SSE events\n{c.wire_bytes} bytes" for c in cols], None),
        ("model", [m.model or "-" for m in messages], None),
        ("blocks", [", ".join(block_kind(b) for b in m.content) for m in messages], True),
        ("thinking", [_thinking(m) for m in messages], True),
        ("text", [m.text for m in messages], True),
        ("tool call", ["\n".join(b.name for b in m.tool_calls) for m in messages], True),
        ("arguments", [_arguments(m) for m in messages], True),
        ("call id", ["\n".join(b.id for b in m.tool_calls) for m in messages], None),
        ("signed", [_signed(m) for m in messages], None),
        ("stop", [m.stop_reason.value for m in messages], True),
        ("raw stop", [m.raw_stop_reason or "-" for m in messages], None),
        ("usage", [usage_text(m.usage, "\n", full=True) for m in messages], True),
        ("events", [f"{len(c.events)} canonical" for c in cols], None),
        (
            "1-byte feed",
            ["same events" if c.chunk_invariant else "DIFFERENT events" for c in cols],
            True,
        ),
    ]


def _wrap_cell(text: str, width: int) -> list[str]:
    lines: list[str] = []
    for paragraph in text.split("\n"):
        lines.extend(
            textwrap.wrap(paragraph, width, break_long_words=True, break_on_hyphens=True) or [""]
        )
    return lines


def _label_width(name_w: int, mark_w: int) -> int:
    return name_w + 1 + mark_w + 2


@dataclass(frozen=True)
class Layout:
    """Column widths: a label column (name and agreement mark), then one per api."""

    width: int
    name_w: int
    mark_w: int
    col_w: int
    columns: int

    @staticmethod
    def fit(width: int, table: list[Row], columns: int, g: Glyphs) -> Layout:
        """Share ``width`` between the label and ``columns`` equal columns."""
        name_w = max(len(r[0]) for r in table)
        mark_w = max(len(g.same), len(g.differs))
        label_w = _label_width(name_w, mark_w)
        col_w = max(MIN_COLUMN, (width - label_w - GAP * (columns - 1)) // columns)
        return Layout(width, name_w, mark_w, col_w, columns)

    @property
    def label_w(self) -> int:
        """Width of the label column."""
        return _label_width(self.name_w, self.mark_w)

    def rule(self) -> str:
        """The line under the header."""
        return "-" * min(
            self.width, self.label_w + self.columns * self.col_w + GAP * (self.columns - 1)
        )

    def row(self, label: str, cells: list[str], mark: str = "", mark_len: int = 0) -> list[str]:
        """One table row, cells wrapped to the column width."""
        wrapped = [_wrap_cell(c, self.col_w) for c in cells]
        lines = []
        for i in range(max(len(w) for w in wrapped)):
            if i == 0:
                lab = label.ljust(self.name_w) + " " + mark + " " * (self.mark_w - mark_len + 2)
            else:
                lab = " " * self.label_w
            parts = [(w[i] if i < len(w) else "").ljust(self.col_w) for w in wrapped]
            lines.append((lab + (" " * GAP).join(parts)).rstrip())
        return lines


def _paragraph(
    width: int,
    body: str,
    mark: str = "",
    plain_mark: str = "",
    style: Callable[[str], str] | None = None,
) -> list[str]:
    """``body`` wrapped to ``width``, led by ``mark`` (``plain_mark`` is its unstyled text)."""
    lines = textwrap.wrap(f"{plain_mark} {body}" if plain_mark else body, width)
    out = []
    for i, line in enumerate(lines):
        if i == 0 and plain_mark:
            line = mark + line[len(plain_mark) :]
        out.append(style(line) if style else line)
    return out


def _table(
    cols: list[Column], table: list[Row], layout: Layout, s: Style, g: Glyphs
) -> tuple[list[str], list[str]]:
    """(the table's lines, the labels of the rows that should agree and do not)."""
    lines = [s.bold(x) for x in layout.row("", [c.api for c in cols])]
    lines.append(layout.rule())
    mismatches = []
    for label, cells, must_agree in table:
        mark, mark_len = "", 0
        if must_agree:
            agree = all(c == cells[0] for c in cells)
            mark = s.green(g.same) if agree else s.red(g.differs)
            mark_len = len(g.same) if agree else len(g.differs)
            if not agree:
                mismatches.append(label)
        lines.extend(layout.row(label, cells, mark, mark_len))
    return lines, mismatches


def _verdict(
    width: int,
    table: list[Row],
    failed: list[str],
    mismatches: list[str],
    columns: int,
    s: Style,
    g: Glyphs,
) -> list[str]:
    """What the table shows, in words."""
    lines: list[str] = []
    if failed:
        lines += _paragraph(
            width, f"did not complete: {', '.join(failed)}", s.red(g.differs), g.differs
        )
    if mismatches:
        lines += _paragraph(
            width, f"these rows differ: {', '.join(mismatches)}", s.red(g.differs), g.differs
        )
    if failed or mismatches:
        return lines
    agreed = ", ".join(r[0] for r in table if r[2])
    lines += _paragraph(
        width, f"{agreed}: identical across all {columns} wire APIs.", s.green(g.same), g.same
    )
    lines += _paragraph(
        width,
        "Ids, signatures, models and raw stop reasons stay provider-specific: they are "
        "what a replay to the same provider needs.",
        style=s.dim,
    )
    return lines


INTRO = (
    "The samples shipped with streamnorm record the same turn on each API: the "
    "user asks for the weather in Paris; the model thinks, answers and calls "
    "get_weather."
)


def run(args: argparse.Namespace) -> int:
    """Print the side-by-side table; 1 if a sample failed or a row disagrees."""
    out = stdout()
    g = Glyphs.for_stream(out)
    s = Style(color_enabled(args.color, out))
    cols = [column(api) for api in samples.names()]
    table = rows(cols)
    width = args.width or min(MAX_WIDTH, shutil.get_terminal_size((120, 24)).columns)
    layout = Layout.fit(width, table, len(cols), g)
    text = [s.bold("One turn, four wire APIs, one canonical result.")]
    text += [s.dim(x) for x in textwrap.wrap(INTRO, width)]
    text.append("")
    grid, mismatches = _table(cols, table, layout, s, g)
    text += grid
    text.append("")
    failed = [c.api for c in cols if not isinstance(c.terminal, Done)]
    text += _verdict(width, table, failed, mismatches, len(cols), s, g)
    write_text(out, "\n".join(text) + "\n")
    return EXIT_STREAM_ERROR if failed or mismatches else EXIT_OK
