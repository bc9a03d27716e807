"""``streamnorm serve``: run the translating gateway (``streamnorm.gateway``).

The gateway's own modules load only when the command runs, so the rest of
the CLI works without the ``gateway`` extra installed.
"""

from __future__ import annotations

import argparse
import errno
import socket
from pathlib import Path

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
    """Serve until interrupted. A missing or unreadable configuration, an
    address that cannot be listened on, or a server that fails to start is
    one error line and exit status 2, before anything is served."""
    try:
        from ..gateway import serve
    except ImportError as exc:
        raise CLIError(
            f"serve needs the gateway extra (pip install 'streamnorm[gateway]'): {exc}"
        ) from None
    _check_config(args.config)
    _check_address(args.host, args.port)
    try:
        serve.run(
            args.config,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_level=args.log_level,
        )
    except OSError as exc:
        raise CLIError(f"{args.config}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    except SystemExit as exc:  # the server's own exit when it cannot start
        if exc.code in (None, 0):
            return EXIT_OK
        raise CLIError(f"the gateway could not start on {args.host}:{args.port}") from None
    return EXIT_OK


def _check_config(path: str) -> None:
    """The configuration must be a readable file: said in words, not as an errno."""
    config = Path(path)
    if not config.exists():
        raise CLIError(f"--config {path}: no such file")
    if not config.is_file():
        raise CLIError(f"--config {path}: not a file")
    try:
        config.open("rb").close()
    except OSError as exc:
        raise CLIError(f"--config {path}: cannot be read ({exc.strerror or exc})") from None


def _check_address(host: str, port: int) -> None:
    """Bind ``host:port`` once, at once: a busy port or an address of no
    interface is a usage error naming it, not the server's start-up failure."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as exc:
        raise CLIError(f"--host {host}: cannot be resolved ({exc})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise CLIError(
                    f"cannot listen on {host}:{port}: the port is already in use "
                    "(--port chooses another)"
                ) from None
            raise CLIError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
