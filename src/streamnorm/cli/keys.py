"""``streamnorm keys create|list|revoke``: the gateway's scoped client keys.

The keys live in the gateway's store (``gateway.store`` of ``--config``, or
``--store``), hashed; ``create`` prints the new key once, on stdout, and
what it may do on stderr. A gateway with ``ledger = true`` accepts them at
its next request, and refuses a revoked one at its next request.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from .common import EXIT_OK, EXIT_STREAM_ERROR, CLIError, whole_number, write_stderr
from .options import SharedOptions, Subcommands
from .output import stdout, write_text

if TYPE_CHECKING:
    from ..gateway.state.ledger import Budget, ClientKey, Ledger


def register(commands: Subcommands, shared: SharedOptions) -> None:
    """Add the ``keys`` subcommand and its three actions."""
    p = commands.add_parser(
        "keys",
        help="create, list and revoke the gateway's scoped client keys",
        description="Client keys with allowed models, rate limits and a budget "
        "(docs/gateway.md, 'Keys, limits, usage').",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="make a key; it is printed once")
    store_options(create)
    create.add_argument("--name", help="a note on whom the key is for")
    create.add_argument(
        "--models", action="append", metavar="GLOB", help="allowed models (repeatable; default *)"
    )
    create.add_argument("--rpm", type=whole_number(1, 10**9), help="requests a minute")
    create.add_argument("--tpm", type=whole_number(1, 10**12), help="tokens a minute")
    create.add_argument("--budget", metavar="USD/PERIOD", help="e.g. 50/month (hour|day|week)")
    create.set_defaults(handler=_create)
    listing = actions.add_parser("list", help="every key: label, scope, revoked or not")
    store_options(listing)
    listing.add_argument("--json", action="store_true", help="one JSON object a line")
    listing.set_defaults(handler=_list)
    revoke = actions.add_parser("revoke", help="refuse a key from its next request on")
    store_options(revoke)
    revoke.add_argument("label", help="the key's label (key-…), as list shows it")
    revoke.set_defaults(handler=_revoke)


def store_options(p: argparse.ArgumentParser) -> None:
    """``--config`` or ``--store``: where the gateway's store is."""
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--config", metavar="FILE", help="the gateway's TOML file (its store)")
    where.add_argument("--store", metavar="LOCATION", help="a SQLite file or postgresql:// URL")


def open_cli_ledger(args: argparse.Namespace) -> Ledger:
    """The ledger of the store ``--config`` or ``--store`` names."""
    try:
        from ..gateway.config import store_of
        from ..gateway.state.ledger import open_ledger
    except ImportError as exc:
        raise CLIError(f"keys and usage need the gateway extra: {exc}") from None
    try:
        location = args.store or store_of(args.config)
        if location is None:
            raise CLIError(f"--config {args.config}: gateway.store is not set")
        return open_ledger(location)
    except (OSError, ValueError) as exc:
        raise CLIError(str(exc)) from None


def _budget(text: str | None) -> Budget | None:
    """``--budget``'s value, checked before the store is opened."""
    from ..gateway.state.ledger import parse_budget

    try:
        return parse_budget(text) if text is not None else None
    except ValueError as exc:
        raise CLIError(f"--{exc}") from None


def _create(args: argparse.Namespace) -> int:
    budget = _budget(args.budget)
    ledger = open_cli_ledger(args)
    try:
        secret, key = ledger.create_key(
            name=args.name, models=args.models or ["*"], rpm=args.rpm, tpm=args.tpm, budget=budget
        )
    finally:
        ledger.close()
    write_text(stdout(), secret + "\n")
    write_stderr(f"created {key.label} (shown once; the store keeps its hash): {_scope(key)}\n")
    return EXIT_OK


def _list(args: argparse.Namespace) -> int:
    ledger = open_cli_ledger(args)
    try:
        keys = ledger.list_keys()
    finally:
        ledger.close()
    out = stdout()
    for key in keys:
        if args.json:
            write_text(out, json.dumps(key.to_dict()) + "\n")
        else:
            state = "revoked" if key.revoked_at is not None else "active"
            write_text(out, f"{key.label}  {state}  {_scope(key)}\n")
    return EXIT_OK


def _revoke(args: argparse.Namespace) -> int:
    ledger = open_cli_ledger(args)
    try:
        done = ledger.revoke_key(args.label)
    finally:
        ledger.close()
    if not done:
        write_stderr(f"{args.label}: no such active key\n")
        return EXIT_STREAM_ERROR
    write_stderr(f"revoked {args.label}\n")
    return EXIT_OK


def _scope(key: ClientKey) -> str:
    """A key's scope on one line: ``models=claude-* rpm=60 budget=50/month``."""
    d = key.to_dict()
    parts = [f"models={','.join(d['models'])}"]
    parts += [f"{k}={d[k]}" for k in ("rpm", "tpm", "budget") if d[k] is not None]
    if d["name"]:
        parts.append(f"name={d['name']}")
    return " ".join(parts)
