"""One HTTP exchange over plain ASGI: read the request, send the answer.

The gateway needs four things from a server and nothing more: the request
line and headers, the body (bounded), a response started lazily with its
first body bytes, and notice when the client goes away. A framework would
add routing and request objects the gateway does not use, so this is the
whole of its server interface.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Generator, MutableMapping, Sequence
from typing import Any, TypeVar
from urllib.parse import parse_qsl

from .deadline import cancel_after, forget_cancel
from .errors import GatewayError
from .telemetry import RequestRecord

__all__ = [
    "MAX_WARNINGS",
    "WARNINGS_HEADER",
    "Budget",
    "ClientGone",
    "Exchange",
    "Receive",
    "Scope",
    "Send",
    "printable",
    "warnings_header",
]

#: The response header that says what the request lost on the way to the
#: upstream (``"; "``-separated, the first :data:`MAX_WARNINGS`).
WARNINGS_HEADER = "x-streamnorm-warnings"
MAX_WARNINGS = 20

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


#: Longest header value the warnings are given.
_MAX_HEADER = 2000


def warnings_header(warnings: Sequence[str]) -> str:
    """The :data:`WARNINGS_HEADER` value: the first :data:`MAX_WARNINGS`
    warnings and how many more there were."""
    shown = list(warnings[:MAX_WARNINGS])
    if len(warnings) > MAX_WARNINGS:
        shown.append(f"{len(warnings) - MAX_WARNINGS} more")
    return _header_text("; ".join(shown))


def _header_text(text: str) -> str:
    """``text`` as a safe header value: printable ASCII only, bounded (a
    warning may quote a name the client chose)."""
    return printable(text[:_MAX_HEADER])


def printable(text: str) -> str:
    """``text`` with every character but printable ASCII as ``?`` (a header
    value cannot carry them); text that has none comes back as it is."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(c if " " <= c <= "~" else "?" for c in text)


class ClientGone(Exception):
    """The client closed its connection; nothing more can be sent to it."""


_T = TypeVar("_T")


class Budget:
    """The bytes of request and answer bodies one worker holds at once.

    Each exchange takes what it buffers and gives it all back when it ends;
    a take that would pass ``limit`` is refused with a 503, so that many
    large bodies at once cannot grow a worker without bound.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, n: int) -> None:
        if self.held + n > self.limit:
            raise GatewayError(
                503, "the gateway holds its maximum of bytes in flight; try again shortly"
            )
        self.held += n

    def give(self, n: int) -> None:
        self.held -= n


class _Resumed:
    """The rest of a coroutine that was stepped outside a task and stopped at
    ``waited`` (the future it waits for), as an awaitable: the task that
    awaits it waits for that future, then drives the coroutine on."""

    __slots__ = ("_coro", "_waited")

    def __init__(self, coro: Coroutine[Any, Any, None], waited: Any) -> None:
        self._coro = coro
        self._waited = waited

    def __await__(self) -> Generator[Any, Any, None]:
        coro, waited = self._coro, self._waited
        while True:
            try:
                sent = yield waited
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:  # (cancelled: the coroutine sees it where it waits)
                try:
                    waited = coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    waited = coro.send(sent)
                except StopIteration:
                    return


class _Watch:
    """A coroutine driven by the futures it waits for, not by a task: stepped
    at once, then from the callback of each future it waits for (a bare
    ``yield``, at the next loop pass), until it returns or is cancelled.

    For the client watch, which waits on the server's ``receive`` for the
    whole exchange: as a task it was a task made, stepped and cancelled for
    each request. What it raises goes to the loop's exception handler, as
    an unretrieved task exception would."""

    __slots__ = ("_closed", "_coro", "_loop", "_waited")

    def __init__(self, coro: Coroutine[Any, Any, None]) -> None:
        self._coro = coro
        self._loop = asyncio.get_running_loop()
        self._waited: asyncio.Future[Any] | None = None
        self._closed = False
        self._step()

    def _step(self, _: object = None) -> None:
        self._waited = None
        if self._closed:
            return
        try:
            waited = self._coro.send(None)  # (an awaited future reads its own result)
            if waited is None:
                self._loop.call_soon(self._step)
            else:
                waited._asyncio_future_blocking = False
                waited.add_done_callback(self._step)
                self._waited = waited
        except StopIteration:
            self._closed = True
        except BaseException as exc:
            self._closed = True
            self._loop.call_exception_handler({"message": "client watch failed", "exception": exc})

    def cancel(self) -> None:
        """Stop watching: the coroutine is closed where it waits (its
        ``finally`` clauses run), and its future's callback removed."""
        if self._waited is not None:
            self._waited.remove_done_callback(self._step)
            self._waited = None
        self._closed = True
        self._coro.close()


class Exchange:
    """The request as the gateway reads it, and the one response it sends."""

    def __init__(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        record: RequestRecord,
        budget: Budget | None = None,
    ) -> None:
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        query: bytes = scope.get("query_string", b"")
        self.query: dict[str, str] = dict(parse_qsl(query.decode("latin-1"))) if query else {}
        self.headers: dict[str, str] = {}
        for name, value in scope.get("headers", []):
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1")
            self.headers[key] = f"{self.headers[key]}, {text}" if key in self.headers else text
        self.record = record
        self._receive = receive
        self._send = send
        self.started = False
        self.disconnected = False
        self._budget = budget or Budget(1 << 62)
        self._held = 0
        self._unread = False
        self._complete = False
        self._watch: _Watch | None = None
        #: The task ``unless_gone`` runs work in, while it does.
        self._working: asyncio.Task[Any] | None = None

    def hold(self, n: int) -> None:
        """Count ``n`` more buffered bytes against the worker's budget (503 beyond it)."""
        self._budget.take(n)
        self._held += n

    def release(self) -> None:
        """Give back everything this exchange held, and stop watching the client."""
        self._budget.give(self._held)
        self._held = 0
        if self._watch is not None:
            self._watch.cancel()

    async def read_body(self, limit: int, timeout: float | None = None) -> bytes:
        """The whole body; ``GatewayError(413)`` as soon as it exceeds ``limit``,
        ``GatewayError(408)`` when it has not all come within ``timeout`` seconds.
        An answer to a body not read to its end closes the connection."""
        declared = self.headers.get("content-length", "")
        self._unread = True
        if declared.isdigit() and int(declared) > limit:
            raise GatewayError(413, f"body: larger than the limit of {limit} bytes", param="body")
        try:
            with cancel_after(timeout):
                body = await self._read_body(limit)
        except asyncio.TimeoutError:
            raise GatewayError(
                408, f"body: not received within {timeout:g} seconds", param="body"
            ) from None
        self._unread = False
        return body

    async def _read_body(self, limit: int) -> bytes:
        buf = bytearray()
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                raise ClientGone
            chunk = message.get("body", b"")
            self.hold(len(chunk))
            buf += chunk
            if len(buf) > limit:
                raise GatewayError(
                    413, f"body: larger than the limit of {limit} bytes", param="body"
                )
            if not message.get("more_body", False):
                return bytes(buf)

    async def _watch_client(self) -> None:
        """Read the server's messages for the rest of the exchange (after
        the body): a disconnect cancels the task running ``unless_gone``'s work."""
        while (await self._receive())["type"] != "http.disconnect":
            pass
        if not self._complete:  # servers say "disconnect" once the response is sent too
            self.disconnected = True
            if self._working is not None:
                self._working.cancel()

    async def unless_gone(self, work: Coroutine[Any, Any, _T]) -> _T:
        """``work``'s result, or ``ClientGone`` as soon as the client leaves:
        ``work`` is then cancelled, which closes whatever upstream it has open
        and stops it before any fallback. It runs in the caller's own task
        (a task of its own and one to wait on both would cost two tasks a
        request); the watch cancels that task, and the cancellation is the
        client's when the watch has seen it leave."""
        self._working = asyncio.current_task()
        if self._watch is None:
            self._watch = _Watch(self._watch_client())
        try:
            return await work
        except asyncio.CancelledError:
            if self.disconnected:
                forget_cancel(self._working)
                raise ClientGone from None
            raise
        finally:
            self._working = None

    async def start(
        self, status: int, content_type: str, extra: dict[str, str] | None = None
    ) -> None:
        headers = {"content-type": content_type, "x-request-id": self.record.request_id}
        if self.record.warnings:
            headers[WARNINGS_HEADER] = warnings_header(self.record.warnings)
        headers.update(extra or {})
        if self._unread:  # the rest of the body would be taken for the next request
            headers["connection"] = "close"
        self.record.status = status
        self.started = True
        await self._send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
            }
        )

    async def write(self, chunk: bytes, *, more: bool = True) -> None:
        if chunk and self.record.ttfb_ms is None:
            self.record.first_byte()
        try:
            await self._send({"type": "http.response.body", "body": chunk, "more_body": more})
            self._complete = not more
        except OSError:  # the server's way of saying the client is gone
            self.disconnected = True
            raise ClientGone from None

    def write_now(self, chunk: bytes) -> Awaitable[None] | None:
        """``write(chunk)`` run as far as it goes at once, outside any task (a
        callback's): None once the bytes are handed to the server, which is
        every time the client keeps up (uvicorn waits only while the client's
        socket is full). Otherwise what is left of the write, for a task to
        await; ``ClientGone`` as ``write`` raises it."""
        writing = self.write(chunk)
        try:
            waited = writing.send(None)
        except StopIteration:
            return None
        return _Resumed(writing, waited)

    async def respond(
        self, status: int, content_type: str, body: bytes, extra: dict[str, str] | None = None
    ) -> None:
        """A whole response at once (``extra``: more headers)."""
        await self.start(status, content_type, {"content-length": str(len(body)), **(extra or {})})
        await self.write(body, more=False)
