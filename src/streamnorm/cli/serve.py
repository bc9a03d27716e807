"""``streamnorm serve``: run the translating gateway (``streamnorm.gateway``).

The gateway's own modules load only when the command runs, so the rest of
the CLI works without the ``gateway`` extra installed.
"""

from __future__ import annotations

import argparse

from .common import EXIT_OK, CLIError, whole_number
from .options import SharedOptions, Subcommands


def register(commands: Subcommands, shared: SharedOptions) -> None:
    """Add the ``serve`` subcommand."""
    p = commands.add_parser(
        "serve",
        help="run the gateway: any of the four request APIs in front of any upstream",
        description=(
            "Serve the Anthropic Messages, OpenAI Responses, Chat Completions and Gemini "
            "request APIs at their own paths, answering each client in its own API from "
            "the upstreams the configuration file routes its model to (docs/gateway.md)."
        ),
    )
    p.add_argument("--config", required=True, metavar="FILE", help="the gateway's TOML file")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument(
        "--port", type=whole_number(1, 65535), default=8080, help="port to listen on (default 8080)"
    )
    p.add_argument(
        "--workers", type=whole_number(1, 256), default=1, help="worker processes (default 1)"
    )
    p.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="uvicorn's log level (the request lines are always written)",
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    try:
        from ..gateway import serve
    except ImportError as exc:
        raise CLIError(
            f"serve needs the gateway extra (pip install 'streamnorm[gateway]'): {exc}"
        ) from None
    try:
        serve.run(
            args.config,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_level=args.log_level,
        )
    except (OSError, ValueError) as exc:
        raise CLIError(str(exc)) from None
    return EXIT_OK
