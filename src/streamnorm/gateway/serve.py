"""Running the gateway under uvicorn (``streamnorm serve``).

``run`` reads and checks the configuration first (a mistake raises
``ValueError`` before any worker starts), then hands uvicorn an application
factory: with ``workers > 1`` each worker process builds its own app from
the same file, found through ``STREAMNORM_GATEWAY_CONFIG``. ``app_from_env``
is that factory, usable by any ASGI server (gunicorn with uvicorn workers:
docs/gateway.md).

uvicorn's access log is off: the gateway writes its own line per request,
and an access log would record query strings, where Gemini clients may put
their key.
"""

from __future__ import annotations

import logging
import os
import sys

import uvicorn

from .app import Gateway, create_app
from .config import load_config
from .telemetry import LOGGER

__all__ = ["CONFIG_ENV", "app_from_env", "run"]

CONFIG_ENV = "STREAMNORM_GATEWAY_CONFIG"


def app_from_env() -> Gateway:
    """The app for the configuration file named by ``STREAMNORM_GATEWAY_CONFIG``."""
    _log_to_stderr()
    return create_app(load_config(os.environ[CONFIG_ENV]))


def _log_to_stderr() -> None:
    """The request log lines go to stderr as they are: one JSON object a line."""
    if not LOGGER.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        LOGGER.addHandler(handler)
        LOGGER.setLevel(logging.INFO)
        LOGGER.propagate = False


def run(config: str, *, host: str, port: int, workers: int, log_level: str = "info") -> None:
    """Serve ``config`` until interrupted; ``OSError``/``ValueError`` for a bad file."""
    checked = load_config(config)
    missing = sorted(
        {u.api_key_env or "" for r in checked.routes for u in r.upstreams if u.missing_key}
    )
    for name in missing:
        print(f"streamnorm: warning: {name} is not set: its upstreams are skipped", file=sys.stderr)
    os.environ[CONFIG_ENV] = os.path.abspath(config)
    uvicorn.run(
        "streamnorm.gateway.serve:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=log_level,
        access_log=False,
        timeout_graceful_shutdown=5,
    )
