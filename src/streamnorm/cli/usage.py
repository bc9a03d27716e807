"""``streamnorm usage``: the gateway's ledger, summed or exported.

``--by key|model|day|upstream|route`` sums requests, tokens by kind and cost;
``--format csv|json`` writes the sums (or, with ``--rows``, every ledger
row) for a spreadsheet or another tool; the default is an aligned table.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import time
from typing import Any

from .common import EXIT_OK, whole_number
from .keys import open_cli_ledger, store_options
from .options import SharedOptions, Subcommands
from .output import stdout, write_text

GROUPS = ("key", "model", "day", "upstream", "route")


def register(commands: Subcommands, shared: SharedOptions) -> None:
    """Add the ``usage`` subcommand."""
    p = commands.add_parser(
        "usage",
        help="what the gateway's clients used: requests, tokens, cost",
        description="Sum the gateway's usage ledger by key, model, day, upstream or "
        "route (client API), or export it as CSV or JSON.",
    )
    store_options(p)
    p.add_argument("--by", choices=GROUPS, default="key", help="what to sum by (default key)")
    p.add_argument(
        "--days", type=whole_number(1, 36600), help="only the last N days (default: all)"
    )
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.add_argument("--rows", action="store_true", help="every ledger row rather than sums")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    since = time.time() - args.days * 86400 if args.days else 0.0
    ledger = open_cli_ledger(args)
    try:
        table = ledger.rows(since) if args.rows else ledger.usage(args.by, since)
    finally:
        ledger.close()
    write_text(stdout(), render(table, args.format))
    return EXIT_OK


def render(table: list[dict[str, Any]], fmt: str) -> str:
    """``table`` as CSV, JSON (an array) or an aligned text table."""
    if fmt == "json":
        return json.dumps(table, indent=1) + "\n"
    if not table:
        return "" if fmt == "csv" else "no usage recorded\n"
    names = list(table[0])
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, names, lineterminator="\n")
        writer.writeheader()
        writer.writerows(table)
        return buf.getvalue()
    cells = [names, *([_cell(row[n]) for n in names] for row in table)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(names))]
    lines = ("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells)
    return "".join(line.rstrip() + "\n" for line in lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".") or "0"
    return "" if value is None else str(value)
