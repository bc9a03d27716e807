"""Serving one front-door request: route, call the upstream, answer the client.

    client call ─► route (model glob) ─► request per upstream ─► open_first (fallbacks)
        ─► stream: relay chunk by chunk     ─► client, in its own API
        ─► whole:  one body, translated or not

A *same-API* upstream gets the client's body as it came (``outgoing.py``)
and its bytes go back unchanged (``relay.Passthrough``). A *cross-API*
upstream gets the request re-encoded for its API, and its answer is
normalized and encoded again for the client (``translate.py``; for a whole
answer ``decode_response`` then ``encode_response``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from .._json import dumps_bytes
from ..codec import decode_response
from ..encoder import encode_response
from ..errors import aws_error_type
from ..messages import AssistantMessage, StopReason
from .config import GatewayConfig, Route
from .doors import ClientCall
from .errors import GatewayError, Redactor, redact, upstream_message
from .exchange import Exchange, printable
from .outgoing import ClientRequest
from .relay import Passthrough, Relay
from .state import new_response_id
from .stored import StoredResponses
from .telemetry import RequestRecord
from .translate import Translate
from .upstream import Client, Opened, Pipe, UpstreamBroke, open_first, release

__all__ = ["Proxy"]

#: Most bytes of a non-streaming upstream answer the gateway holds.
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


#: Called with the final message once a stream's end has been read, before
#: the client is sent that end (stored Responses are written then).
Finish = Callable[[AssistantMessage], Awaitable[None]]


class Proxy:
    """The front doors' request handler, sharing one HTTP client to upstreams."""

    def __init__(
        self,
        config: GatewayConfig,
        client: Callable[[], Client],
        stored: StoredResponses | None = None,
    ) -> None:
        self._config = config
        self._client = client
        self._stored = stored or StoredResponses(None)

    async def handle(self, ex: Exchange, call: ClientCall) -> None:
        route = self._route(call)
        responses = call.api == "openai-responses"
        prefetched = await self._stored.prefetch(call.body) if responses else None
        request = ClientRequest(
            call,
            ex.path,
            ex.headers,
            stored=prefetched,
            foreign_thinking=route.foreign_thinking,
            server_tools=self._config.server_tools,
            anthropic_betas=self._config.anthropic_betas,
        )
        opened = await open_first(self._client(), route.upstreams, request.for_upstream)
        up = opened.upstream
        ex.record.warnings += [str(w) for w in request.warnings.get(up.name, ())]
        ex.record.upstream, ex.record.upstream_api = up.name, up.api
        ex.record.upstream_model, ex.record.provider = up.model or call.model, up.provider
        ex.record.attempts = opened.attempts
        status = opened.response.status_code
        if 300 <= status < 400:
            raise GatewayError(502, f"upstream {up.name} answered with a redirect (not followed)")
        if status >= 400:
            raise _upstream_error(up.name, status, opened)
        answer = _Answer(call, up.api != call.api, int(time.time()))
        keep = responses and self._stored.keeps(call.body)
        finish = self._finisher(call, request, answer) if keep else None
        # Every byte the client gets passes the redactor: an upstream that
        # echoes its key (in an error event, a 200 error body) shows ***.
        secrets = self._config.secrets()
        redactor = Redactor(secrets)
        guard = _Guard(ex, self._config.max_stream_seconds)
        if call.stream:
            relay, content_type = _relay(
                call,
                opened,
                answer,
                limit=self._config.max_stream_bytes,
                # The whole message is used by the store and by the logged content only.
                keep=finish is not None or self._config.log_content,
            )
            try:
                await _stream(ex, (opened, guard), relay, (content_type, redactor), finish)
            finally:
                _stream_failure(ex.record, relay.message, secrets)
        else:
            await _whole(ex, call, (opened, guard), answer, (finish, redactor))

    def _finisher(self, call: ClientCall, request: ClientRequest, answer: _Answer) -> Finish:
        """Keep a finished Responses answer (``store`` true) under the id the client sees."""

        async def finish(message: AssistantMessage) -> None:
            try:
                canonical = request.canonical()
            except GatewayError:  # an id only the upstream holds: its history is not here
                return
            await self._stored.keep(
                call.body,
                canonical,
                message,
                response_id=answer.response_id,
                model=call.model,
                created=answer.created,
            )

        return finish

    def _route(self, call: ClientCall) -> Route:
        route = self._config.route(call.model)
        if route is None:
            raise GatewayError(404, f"model: {call.model!r} is not served here", param="model")
        return route


def _upstream_error(name: str, status: int, opened: Opened) -> GatewayError:
    """An upstream's error status, for the client. A 401 or 403 says the
    operator's upstream key was refused, not the client's: a 502 saying so
    (with the exception's name when AWS gives one), never the client's own 401."""
    if status in (401, 403):
        kind = aws_error_type(opened.response.headers)
        named = f", {kind}" if kind else ""
        return GatewayError(
            502, f"upstream {name} refused the gateway's credentials (HTTP {status}{named})"
        )
    return GatewayError(status, upstream_message(opened.first, status, opened.response.headers))


def _stream_failure(record: RequestRecord, message: AssistantMessage, secrets: list[str]) -> None:
    """Why a stream that had started ended in its API's error event (the
    upstream's own error, a limit, a body that was no stream), for the log
    line and the trace, unless the gateway has said already; keys cut out."""
    if record.error is None and message.stop_reason is StopReason.ERROR:
        record.error = redact(message.error or "the stream failed", secrets)


class _Answer:
    """What the client's answer is labelled with: the time, and for a
    translated Responses answer the gateway's own unguessable id."""

    def __init__(self, call: ClientCall, translated: bool, created: int) -> None:
        self.created = created
        self.request = call.body if call.api == "openai-responses" else None
        self.response_id = new_response_id() if translated and self.request is not None else None


def _relay(
    call: ClientCall, opened: Opened, answer: _Answer, *, limit: int, keep: bool
) -> tuple[Relay, str]:
    """The relay for this pair of APIs, and the content type the client gets.
    ``limit``: the stream's most bytes; ``keep``: whether a passthrough relay
    keeps the content (a translating one needs it)."""
    up = opened.upstream
    model = up.model or call.model
    if up.api == call.api:
        content_type = str(opened.response.headers.get("content-type", "text/event-stream"))
        same = Passthrough(
            call.api,
            model=model,
            provider=up.provider,
            sse=call.sse,
            max_stream_bytes=limit,
            keep_content=keep,
        )
        return same, content_type
    relay = Translate(
        up.api,
        call.api,
        upstream_model=model,
        client_model=call.model,
        provider=up.provider,
        sse=call.sse,
        created=answer.created,
        response_id=answer.response_id,
        request=answer.request,
        max_stream_bytes=limit,
    )
    return relay, "text/event-stream" if call.sse else "application/json"


async def _whole(
    ex: Exchange,
    call: ClientCall,
    reading: tuple[Opened, _Guard],
    answer: _Answer,
    finishing: tuple[Finish | None, Redactor],
) -> None:
    """A non-streaming answer: forwarded as it is, or decoded and encoded again.
    The upstream's host is its issuer, as for a stream, so the next turn
    returns its reasoning state to it. An error body under a 200 is an error
    in the client's own API on a translated route (never an empty answer)."""
    (opened, guard), (finish, redactor) = reading, finishing
    try:  # the upstream is closed however the read ends (a failure, the client leaving)
        ex.hold(len(opened.first))
        body = bytearray(opened.first)
        body += await _read_rest(opened.rest, guard, MAX_RESPONSE_BYTES - len(body))
    finally:
        await opened.response.aclose()
    up = opened.upstream
    try:
        message = decode_response(
            bytes(body), up.api, model=up.model or call.model, provider=up.provider
        )
    except ValueError:
        raise GatewayError(
            502, f"upstream {up.name} answered with a body that is not JSON"
        ) from None
    ex.record.count(message)
    if up.api != call.api and message.stop_reason is StopReason.ERROR:
        raise GatewayError(502, f"upstream {up.name}: {message.error or 'an error'}")
    if finish is not None:
        await finish(message)
    if up.api == call.api:
        content_type = str(opened.response.headers.get("content-type", "application/json"))
        await ex.respond(200, _header(content_type, redactor), redactor.whole(bytes(body)))
        return
    if answer.response_id is not None:
        message = dataclasses.replace(message, response_id=answer.response_id)
    out = encode_response(
        message, call.api, model=call.model, created=answer.created, request=answer.request
    )
    await ex.respond(200, "application/json", redactor.whole(dumps_bytes(out)))


def _header(value: str, redactor: Redactor) -> str:
    """An upstream header value as the client gets it: no secret, printable ASCII only."""
    return printable(redactor.whole(value.encode("utf-8", "replace")).decode("utf-8", "replace"))


async def _read_rest(rest: AsyncIterator[bytes], guard: _Guard, limit: int) -> bytes:
    buf = bytearray()
    try:
        async for chunk in rest:
            guard.check(chunk)
            buf += chunk
            if len(buf) > limit:
                raise GatewayError(502, "the upstream answer exceeds the gateway's response limit")
    except UpstreamBroke as exc:
        status = 504 if exc.timeout else 502
        raise GatewayError(status, f"{exc} before the answer ended") from None
    return bytes(buf)


async def _stream(
    ex: Exchange,
    reading: tuple[Opened, _Guard],
    relay: Relay,
    head: tuple[str, Redactor],
    finish: Finish | None,
) -> None:
    """Relay the stream until it ends or the client goes (``Exchange.unless_gone``
    cancels the handler then). The upstream is closed either way; after a
    whole stream the rest of its body is read first (``upstream.release``),
    so that its connection can be kept."""
    opened = reading[0]
    whole = False
    try:
        await _pump(ex, reading, relay, head, finish)
        whole = relay.closed and ex.record.error is None
    finally:
        if not whole:
            await opened.response.aclose()
        ex.record.count(relay.message)
    if whole:
        await release(opened)


async def _pump(
    ex: Exchange,
    reading: tuple[Opened, _Guard],
    relay: Relay,
    head: tuple[str, Redactor],
    finish: Finish | None,
) -> None:
    """Upstream chunks through the relay to the client, until the stream is
    over for the client: its terminal event (or a limit) ends the response
    at once, and nothing more is read from the upstream. The bytes that end
    the stream go out with the response's end, in one write."""
    (opened, guard), (content_type, redactor) = reading, head
    ex.hold(len(opened.first))
    out = redactor.feed(relay.feed(opened.first))
    await ex.start(200, _header(content_type, redactor), {"cache-control": "no-cache"})
    try:
        # One pass per upstream read, whose only await is the write: at a
        # model's pace each pass is a wakeup's work. The bytes that end the
        # stream are kept, to go out with the response's end.
        if not relay.closed:
            if out:
                await ex.write(out)
            step = _Step(ex, guard, relay, redactor)
            await _relay_reads(opened, step)
            out = step.end
        tail = out + redactor.feed(relay.close())
        finish = await _finish_once(relay, finish)
    except UpstreamBroke as exc:
        tail = redactor.feed(relay.fail(f"{exc} before the stream ended"))
        ex.record.error = "upstream_timeout" if exc.timeout else "upstream_broke"
    except GatewayError as exc:  # the worker's bytes in flight are spent
        tail = redactor.feed(relay.fail(exc.message))
        ex.record.error = exc.message
    await ex.write(tail + redactor.close(), more=False)


class _Step:
    """One upstream read through the relay to the client, written at once:
    the sink of a piped body (``http1``), and the body of the loop that reads
    any other. Called with each read, it returns True when reading must stop:
    the stream is over for the client (``end`` then holds the bytes that end
    it, which go out with the response's end) or the client's write waits
    for its socket (``waiting``, to be awaited before reading on)."""

    __slots__ = ("_ex", "_guard", "_redactor", "_relay", "end", "waiting")

    def __init__(self, ex: Exchange, guard: _Guard, relay: Relay, redactor: Redactor) -> None:
        self._ex = ex
        self._guard = guard
        self._relay = relay
        self._redactor = redactor
        self.end = b""
        self.waiting: Awaitable[None] | None = None

    def __call__(self, chunk: bytes) -> bool:
        self._guard.check(chunk)
        data = self._redactor.feed(self._relay.feed(chunk))
        if self._relay.closed:
            self.end = data
            return True
        if data:
            self.waiting = self._ex.write_now(data)
            return self.waiting is not None
        return False


async def _relay_reads(opened: Opened, step: _Step) -> None:
    """The upstream's reads after the first through ``step``, until it
    stops for good or the body ends. Piped where the upstream client can
    (one wakeup's work per read, no task woken), else read as an iterator;
    a write that waits is awaited before reading on."""
    pipe: Pipe | None = getattr(opened.response, "pipe", None)
    while True:
        piping = pipe(step) if pipe is not None else None
        if piping is not None:
            await piping
        else:
            async for chunk in opened.rest:
                if step(chunk):
                    break
        if step.waiting is None:
            return
        waiting, step.waiting = step.waiting, None
        await waiting


class _Guard:
    """The bounds on reading an upstream answer: each chunk counts against
    the worker's bytes in flight as it comes (``Exchange.hold``: an answer's
    bytes are held until the exchange ends), and ``GatewayError(504)`` once
    ``seconds`` have passed since the guard was made. Checked as each chunk
    arrives (a call in the loop that reads, not a generator around it: one
    layer less per chunk); an upstream that goes silent meanwhile is ended
    by its own ``timeout``."""

    __slots__ = ("_clock", "_deadline", "_ex", "_seconds")

    def __init__(self, ex: Exchange, seconds: float) -> None:
        self._ex = ex
        self._seconds = seconds
        self._clock = asyncio.get_running_loop().time
        self._deadline = self._clock() + seconds

    def check(self, chunk: bytes) -> None:
        self._ex.hold(len(chunk))
        if self._clock() > self._deadline:
            raise GatewayError(
                504,
                f"the upstream answer took longer than max_stream_seconds ({self._seconds:g} s)",
            )


async def _finish_once(relay: Relay, finish: Finish | None) -> Finish | None:
    """Run ``finish`` once the relay has read the stream's end (None: done already)."""
    if finish is not None and relay.closed:
        await finish(relay.message)
        return None
    return finish
