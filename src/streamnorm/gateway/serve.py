"""``streamnorm serve``: run the gateway under uvicorn.

``main(argv)`` reads and checks the configuration first (a mistake is one
line on stderr and exit status 2, before any worker starts), then hands
uvicorn an application factory: with ``--workers N`` each worker process
builds its own app from the same file, found through
``STREAMNORM_GATEWAY_CONFIG``. ``app_from_env`` is that factory, usable by
any ASGI server (gunicorn with uvicorn workers: docs/gateway.md).

uvicorn's access log is off: the gateway writes its own line per request,
and an access log would record query strings, where Gemini clients may put
their key.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from .app import Gateway, create_app
from .config import load_config
from .telemetry import LOGGER

__all__ = ["CONFIG_ENV", "app_from_env", "main"]

CONFIG_ENV = "STREAMNORM_GATEWAY_CONFIG"


def app_from_env() -> Gateway:
    """The app for the configuration file named by ``STREAMNORM_GATEWAY_CONFIG``."""
    _log_to_stderr()
    return create_app(load_config(os.environ[CONFIG_ENV]))


def _log_to_stderr() -> None:
    if not LOGGER.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        LOGGER.addHandler(handler)
        LOGGER.setLevel(logging.INFO)
        LOGGER.propagate = False


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="streamnorm serve",
        description="Serve the four LLM request APIs in front of the configured upstreams.",
    )
    p.add_argument("--config", required=True, help="the gateway's TOML file (see gateway.toml)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port to listen on (default 8080)")
    p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        import uvicorn
    except ImportError:
        print(
            "streamnorm: error: serve needs the gateway extra: pip install 'streamnorm[gateway]'",
            file=sys.stderr,
        )
        return 2
    if args.workers < 1:
        print("streamnorm: error: --workers must be at least 1", file=sys.stderr)
        return 2
    try:
        load_config(args.config)
    except (OSError, ValueError) as exc:
        print(f"streamnorm: error: {exc}", file=sys.stderr)
        return 2
    os.environ[CONFIG_ENV] = os.path.abspath(args.config)
    uvicorn.run(
        "streamnorm.gateway.serve:app_from_env",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level=args.log_level,
        access_log=False,
        timeout_graceful_shutdown=5,
    )
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
