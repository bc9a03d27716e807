"""Running the gateway under uvicorn (``streamnorm serve``).

``run`` reads and checks the configuration first (a mistake raises
``ValueError`` before any worker starts), then hands uvicorn an application
factory: with ``workers > 1`` each worker process builds its own app from
the same file, found through ``STREAMNORM_GATEWAY_CONFIG``. ``app_from_env``
is that factory, usable by any ASGI server (gunicorn with uvicorn workers:
docs/gateway.md).

With one worker the server is uvicorn's woken once a second rather than
ten times (:class:`QuietServer`): an idle worker's wakeups are CPU, and a
share of every short stream's cost. Several workers are uvicorn's own
supervisor and servers.

uvicorn's access log is off: the gateway writes its own line per request,
and an access log would record query strings, where Gemini clients may put
their key.

The HTTP protocol is uvicorn's own (httptools when installed, else h11)
with a guard in front of its parser (:class:`HeadGuard`): a request head
larger than ``max_head_bytes`` is answered 431 and the connection closed as
soon as that many bytes have come without the head ending, and a head not
complete ``head_timeout`` seconds after the connection opened (or after the
previous response on a kept-alive connection) is answered 408 and closed.
Without it, httptools parses an unbounded head in quadratic time and an
idle half-open connection is kept for ever (docs/gateway.md, Reliability).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import sys
from types import FrameType
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from .app import Gateway, create_app
from .config import GatewayConfig, load_config
from .telemetry import LOGGER, Lines

__all__ = [
    "CONFIG_ENV",
    "HeadGuard",
    "QuietServer",
    "app_from_env",
    "protocol_class",
    "run",
    "server_options",
]

CONFIG_ENV = "STREAMNORM_GATEWAY_CONFIG"


def app_from_env() -> Gateway:
    """The app for the configuration file named by ``STREAMNORM_GATEWAY_CONFIG``,
    in a worker whose start-up objects are frozen (:func:`_freeze_start_up`)."""
    _log_to_stderr()
    app = create_app(load_config(os.environ[CONFIG_ENV]))
    _freeze_start_up()
    return app


def _freeze_start_up() -> None:
    """Keep the objects made so far out of every later collection.

    The modules, the configuration, the model catalog and the app live as
    long as the worker, yet each full collection walked them all (about
    40,000 objects: 5-10 ms of CPU on the benchmark's machine, every stream
    stalled meanwhile). ``gc.freeze`` moves them to a generation no
    collection visits; what was garbage already is collected first, so that
    nothing unreachable is kept for ever."""
    gc.collect()
    gc.freeze()


def _log_to_stderr() -> None:
    """The request log lines go to stderr as they are: one JSON object a line."""
    if not LOGGER.handlers:
        LOGGER.addHandler(Lines(sys.stderr))
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
    options: dict[str, Any] = {
        "factory": True,
        "host": host,
        "port": port,
        "workers": workers,
        "log_level": log_level,
        **server_options(checked),
    }
    if workers > 1:  # uvicorn's supervisor starts its own servers
        uvicorn.run("streamnorm.gateway.serve:app_from_env", **options)
        return
    server = QuietServer(uvicorn.Config("streamnorm.gateway.serve:app_from_env", **options))
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    if not server.started:
        sys.exit(_STARTUP_FAILURE)


def server_options(config: GatewayConfig) -> dict[str, Any]:
    """uvicorn's settings for serving ``config``: the guarded protocol, h11's
    own head limit set to the same bound, no access log, and no
    ``X-Forwarded-*`` rewriting: the gateway reads no client address or
    scheme, and the middleware was one more coroutine that each event of a
    stream passes through."""
    return {
        "http": protocol_class(),
        "h11_max_incomplete_event_size": config.max_head_bytes,
        "ws": "none",
        "access_log": False,
        "proxy_headers": False,
        "timeout_graceful_shutdown": 5,
    }


#: uvicorn's exit status for a server that could not start.
_STARTUP_FAILURE = 3
#: Seconds between the server's checks for an exit and refreshes of its
#: ``Date`` header (uvicorn: 0.1; an exit signal wakes it at once).
TICK_SECONDS = 1.0


class QuietServer(uvicorn.Server):
    """uvicorn's server, woken once a second instead of ten times.

    Each wakeup of an idle process costs CPU (on a virtual machine whose
    host takes back an idle guest's pages, every page it touches again:
    docs/gateway.md), and uvicorn's ten a second are a share of every short
    stream's cost: a 12-event answer at a model's pace woke the worker about
    15 times, 2.5 of them for the tick.
    ``Date`` stays exact to the second: uvicorn refreshes it once a second.
    """

    _loop: asyncio.AbstractEventLoop | None = None
    _wake: asyncio.Event | None = None

    async def main_loop(self) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 10) % 864000  # a multiple of 10: the Date header is refreshed
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), TICK_SECONDS)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """uvicorn's, then a wakeup, so that the exit does not wait for the tick."""
        super().handle_exit(sig, frame)
        if self._loop is not None and self._wake is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._wake.set)


_STATUS = {408: b"408 Request Timeout", 431: b"431 Request Header Fields Too Large"}


class HeadGuard(asyncio.Protocol):
    """Bounds a request head in bytes and in time, before the HTTP parser.

    Mixed in before one of uvicorn's HTTP protocols. The bounds are the
    served app's ``max_head_bytes`` and ``head_timeout`` (found through the
    middleware uvicorn wraps it in; defaults otherwise). A head counts as
    complete when the protocol starts a new request cycle, which both of
    uvicorn's protocols do as soon as the headers are parsed.
    """

    transport: asyncio.Transport
    loop: asyncio.AbstractEventLoop

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)  # type: ignore[call-arg]
        limits = _gateway_config(config.loaded_app)
        self._max_head = limits.max_head_bytes
        self._head_timeout = limits.head_timeout
        self._head_bytes = 0
        self._in_head = True
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._in_head:
            super().data_received(data)
            return
        before = self._cycle()
        super().data_received(data)
        if self._cycle() is not before:
            self._in_head = False
            self._stop_timer()
            return
        self._head_bytes += len(data)
        if self._head_bytes > self._max_head:
            self._refuse(431)

    def on_response_complete(self) -> None:
        """The next request on a kept-alive connection gets the same bounds
        (unless it came pipelined and has started already)."""
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing() and getattr(self._cycle(), "response_complete", True):
            self._await_head()

    def _cycle(self) -> object:
        """The protocol's current request cycle (a new one per parsed head)."""
        return getattr(self, "cycle", None)

    def _await_head(self) -> None:
        self._in_head, self._head_bytes = True, 0
        self._stop_timer()
        self._head_timer = self.loop.call_later(self._head_timeout, self._refuse, 408)

    def _stop_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _refuse(self, status: int) -> None:
        """Answer ``status`` with no body and close; the app never sees the request."""
        self._stop_timer()
        if self.transport.is_closing():
            return
        self.transport.write(
            b"HTTP/1.1 " + _STATUS[status] + b"\r\nconnection: close\r\ncontent-length: 0\r\n\r\n"
        )
        self.transport.close()


class GuardedH11Protocol(HeadGuard, H11Protocol):
    """uvicorn's h11 protocol behind :class:`HeadGuard`."""


_PROTOCOL: type[asyncio.Protocol] = GuardedH11Protocol
try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - uvicorn without httptools
    pass
else:

    class GuardedHttpToolsProtocol(HeadGuard, HttpToolsProtocol):
        """uvicorn's httptools protocol behind :class:`HeadGuard`."""

    _PROTOCOL = GuardedHttpToolsProtocol


def protocol_class() -> type[asyncio.Protocol]:
    """The guarded protocol over httptools when it is installed, else over h11
    (uvicorn's own choice, made safe)."""
    return _PROTOCOL


def _gateway_config(app: Any) -> GatewayConfig:
    """The configuration of the gateway app under uvicorn's middleware."""
    while not isinstance(app, Gateway) and hasattr(app, "app"):
        app = app.app
    return app.config if isinstance(app, Gateway) else GatewayConfig(routes=())
