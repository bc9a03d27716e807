"""The gateway under load: what it adds to the first byte and to the whole
answer, its CPU per relayed event and per MB, its memory per open stream.

One run, every server on 127.0.0.1 in a process of its own:

* the fake upstream of the tests (``tests/gateway_support.py``) replaying
  recorded Chat Completions streams: DeepSeek's reasoning then a tool call
  (53 events, 17 KB), at a model's pace (``--pace``, 20 ms between events,
  each event its own chunk) or at once; a short text answer (12 events) at
  that pace for the sequential runs;
* ``streamnorm serve`` (one uvicorn worker) with its own upstream client
  (``builtin``, the default) and with ``aiohttp``, and with ``--before
  REF`` the gateway of that git ref (its ``src/`` from ``git archive``):
  before and after in one run;
* LiteLLM's proxy (``--litellm PATH``, ``$LITELLM`` or ``litellm`` on PATH,
  with its proxy extra, in an environment of its own) and Portkey's gateway
  (``--portkey CMD`` or ``$PORTKEY``: ``"node -r ./benchmarks/portkey_fetch.cjs
  DIR/node_modules/@portkey-ai/gateway/build/start-server.js"``, the preload
  working around Portkey 1.15.2's ``TypeError: immutable``) in front of the
  same upstream, when given; the run says when they are absent. Portkey has
  no Messages → Chat route: its same-API route only;
* two floors, each a process of its own on the same event loop as the
  gateway: ``floor/relay``, the client's bytes to the upstream and back with
  no HTTP read at all (two ``asyncio.Protocol`` objects per connection), and
  ``floor/asgi``, uvicorn with an aiohttp client forwarding each upstream
  read unchanged: the frameworks the gateway runs on, doing nothing else.

Every proxy serves a same-API route (Chat client → Chat upstream: bytes
forwarded, normalized on the side) and a cross-API route (Anthropic Messages
client → Chat upstream: normalized, then encoded); the upstream reached
directly is the reference. In each of the first three phases the proxies
take turns, so that a change in what the machine charges meanwhile falls
on all of them alike. Phases:

1. ``low``: ``--sequential`` requests one after another, paced and unpaced,
   in four turns: time to first ``data:`` and to the end, p50/p99, and what
   the proxy adds to the reference's p50; each on a connection of its own
   (``low``), then again on one kept-alive connection a turn (``kept``), as
   SDK clients send them: the difference is what a client's new connection
   costs each proxy.
2. ``sweep``: ``--sweep`` levels of paced streams at once (in waves of that
   many, a wave a turn, ``--sweep-streams`` in all at least and at least
   four waves a proxy, as many turns as a sequential phase): TTFB p50/p99
   and the proxy process's CPU per relayed upstream event.
3. ``bulk``: ``--requests`` unpaced streams at once, four waves a proxy:
   CPU per MB and per event.
4. ``footprint``: one paced stream read event by event, ``--footprint``
   events: the distinct pages of memory the proxy touches per event (its
   referenced bits cleared through ``/proc/PID/clear_refs`` as an event
   arrives, counted in ``smaps_rollup`` at the next), and its CPU per event
   to the nanosecond.
5. ``open``: ``--open`` streams held open after their first event: the
   gateway's resident memory above idle, in all and per stream (the
   same-API route of each streamnorm gateway).

CPU is the proxy process's own user + system time, read to the nanosecond
from its CPU-time clock (Linux only), not wall time: on a shared machine it
is the steadier figure; the run prints the load average before and after as
the measure of its noise, and what this machine charges for a page touched
again after one pace of idleness (a process of its own), which is what the
CPU of paced events follows on a virtual machine whose host takes back an
idle guest's page mappings.

    python benchmarks/gateway.py [--sequential 20] [--sweep 20,100,200] [--requests 200]
        [--footprint 30] [--open 1000] [--before REF] [--litellm PATH] [--portkey CMD] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import secrets
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

LONG = "deepseek-tool-call"
SHORT = "openai-text-include-usage"
#: The upstream's models: (fixture, paced?).
MODELS = {
    "paced": (LONG, True),
    "fast": (LONG, False),
    "short": (SHORT, True),
    "hold": (LONG, None),
}
#: Seconds a ``hold`` stream waits after its first event.
HOLD = 120.0
#: How an Anthropic Messages stream says it failed.
_ERROR_EVENT = b"event: error"
REQUEST_TIMEOUT = 30.0
WARMUP = 5
#: The turns a sequential phase's requests are spread over, the proxies
#: taking turns (a sweep level takes a turn per wave).
TURNS = 4


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_upstream(port: int, pace: float) -> None:
    """Run the fake upstream (in its own process: ``--serve-upstream``) with
    the :data:`MODELS` scripted."""
    import uvicorn
    from tests.gateway_support import FakeUpstream, fixture_reply

    upstream = FakeUpstream()
    for model, (stem, paced) in MODELS.items():
        reply = fixture_reply("openai-completions", stem, stream=True)
        delay = HOLD if paced is None else pace if paced else 0.0
        upstream.script(model, dataclasses.replace(reply, delay=delay))
    uvicorn.run(
        upstream, host="127.0.0.1", port=port, log_level="warning", access_log=False, backlog=4096
    )


class _Upstream(asyncio.Protocol):
    """The floor relay's upstream side: every read goes to the client as it is."""

    def __init__(self, client: asyncio.Transport) -> None:
        self.client = client

    def data_received(self, data: bytes) -> None:
        self.client.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.client.close()


class _Client(asyncio.Protocol):
    """The floor relay's client side: one upstream connection per client connection."""

    def __init__(self, upstream: int) -> None:
        self.port = upstream
        self.upstream: asyncio.Transport | None = None
        self.early: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        # Held here: a task nothing refers to may be collected before it ends.
        self.opening = asyncio.get_running_loop().create_task(self.open())

    async def open(self) -> None:
        loop = asyncio.get_running_loop()
        up, _ = await loop.create_connection(
            lambda: _Upstream(self.transport), "127.0.0.1", self.port
        )
        up.write(b"".join(self.early))
        self.upstream = up

    def data_received(self, data: bytes) -> None:
        if self.upstream is None:
            self.early.append(data)
        else:
            self.upstream.write(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.upstream is not None:
            self.upstream.close()


def serve_floor_relay(port: int, upstream: int) -> None:
    """The byte relay floor (``--serve-floor relay``), on uvloop when installed."""

    async def serve() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Client(upstream), "127.0.0.1", port)
        await server.serve_forever()

    try:
        import uvloop
    except ImportError:
        asyncio.run(serve())
    else:
        uvloop.run(serve())


def serve_floor_asgi(port: int, upstream: int) -> None:
    """The frameworks' floor (``--serve-floor asgi``): uvicorn, woken as
    rarely as the gateway's (``QuietServer``), and aiohttp to the upstream,
    each upstream read sent on unchanged."""
    import aiohttp
    import uvicorn

    from streamnorm.gateway.serve import QuietServer

    sessions: list[aiohttp.ClientSession] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        if not sessions:
            sessions.append(aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)))
        url = f"http://127.0.0.1:{upstream}{scope['path']}"
        async with sessions[0].post(url, data=body) as answer:
            kind = answer.headers.get("content-type", "application/json")
            head = [(b"content-type", kind.encode())]
            await send({"type": "http.response.start", "status": answer.status, "headers": head})
            async for chunk in answer.content.iter_any():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    QuietServer(config).run()


def upstream_events(model: str) -> int:
    """The SSE events the upstream sends for ``model``."""
    from tests.gateway_support import fixture_reply

    return len(fixture_reply("openai-completions", MODELS[model][0], stream=True).chunks)


def _tree(pid: int) -> list[int]:
    """``pid`` and its live children."""
    with contextlib.suppress(OSError):
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        return [pid, *map(int, children)]
    return [pid]


def cpu_seconds(pid: int) -> float:
    """CPU (user + system) of ``pid`` and its live children to the nanosecond:
    each process's CPU-time clock (``clock_gettime`` on the clock id Linux
    derives from a pid), which counts its ended threads too. /proc's
    ``utime``/``stime`` count 10 ms ticks: too coarse for a few hundred
    short requests, and sampled, so a paced process can be over- or
    under-charged."""
    total = 0.0
    for p in _tree(pid):
        with contextlib.suppress(OSError):
            total += time.clock_gettime(((~p) << 3) | 2)  # CPUCLOCK_SCHED of the whole process
    return total


def _summed_kb(pid: int, file: str, field: str) -> int:
    """A kB ``field`` of ``/proc/PID/file``, summed over ``pid`` and its live children."""
    total = 0
    for p in _tree(pid):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{p}/{file}").read_text().splitlines():
                if line.startswith(field):
                    total += int(line.split()[1])
    return total


def rss_kb(pid: int) -> int:
    """Resident memory of ``pid`` and its live children (KB), from /proc."""
    return _summed_kb(pid, "status", "VmRSS:")


#: Pages touched again after an idle pause are dear on some virtual machines
#: (the host takes back the mappings of an idle guest's pages): a process of
#: its own touches PAGES distinct pages after each pause, ROUNDS times.
_PAGE_PROBE = """
import sys, time
pace, pages, rounds, stride = float(sys.argv[1]), 1000, 30, 7 * 4096
buf = bytearray(pages * stride)
def run(pause, touch):
    start = time.process_time()
    for k in range(rounds):
        if pause:
            time.sleep(pause)
        for i in range(0, len(buf), stride) if touch else ():
            buf[i] = k & 255
    return (time.process_time() - start) / rounds / pages * 1e6
run(0, True)
print(run(pace, True) - run(pace, False), run(0, True))
"""


def page_cost(pace: float) -> tuple[float, float]:
    """CPU µs per page touched again after ``pace`` seconds idle, and without
    a pause: what this machine charges for a process's footprint."""
    out = subprocess.run(
        [sys.executable, "-c", _PAGE_PROBE, str(pace)], capture_output=True, check=True, text=True
    ).stdout.split()
    return float(out[0]), float(out[1])


def clear_referenced(pid: int) -> None:
    """Clear the referenced bits of the pages of ``pid`` and its live children."""
    for p in _tree(pid):
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):  # a child gone
            Path(f"/proc/{p}/clear_refs").write_text("1")


def referenced_pages(pid: int) -> int:
    """Pages of ``pid`` and its live children referenced since their bits were cleared."""
    return _summed_kb(pid, "smaps_rollup", "Referenced:") * 1024 // os.sysconf("SC_PAGE_SIZE")


def _answers(url: str) -> bool:
    parts = urlsplit(url)
    with (
        contextlib.suppress(OSError),
        socket.create_connection((parts.hostname, parts.port or 80), timeout=1) as sock,
    ):
        sock.sendall(f"GET {parts.path or '/'} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
        return sock.recv(12).startswith(b"HTTP/1.1")
    return False


@contextlib.contextmanager
def process(command: list[str], url: str, env: dict[str, str] | None = None) -> Iterator[int]:
    """Run ``command`` until ``url`` answers (bounded); yield its pid; stop it."""
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO
    )
    try:
        deadline = time.monotonic() + 120
        while not _answers(url):
            if proc.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with {proc.returncode}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{command[0]} did not start")
            time.sleep(0.2)
        yield proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@dataclass
class Route:
    """One client API through one proxy (``pid`` None: the upstream itself)."""

    proxy: str
    kind: str  # "same-API" or "cross-API"
    url: str
    headers: dict[str, str]
    messages: bool = False
    pid: int | None = None

    @property
    def name(self) -> str:
        return f"{self.proxy} {self.kind}"

    def body(self, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "stream": True,
            "messages": [{"role": "user", "content": "hi"}],
        }
        return {**body, "max_tokens": 1024} if self.messages else body


@dataclass
class Outcome:
    """One request: when its first event and its end came (ms), its bytes, what went wrong."""

    ttfb_ms: float | None = None
    total_ms: float | None = None
    size: int = 0
    error: str | None = None


@dataclass
class Hold:
    """Held streams: how many have their first event, and the signal to let go."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    ready: int = 0


@dataclass
class Kept:
    """A client's kept-alive connection (``sequential(kept=True)``): opened
    by the first request, dropped after a failure."""

    connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    def close(self) -> None:
        if self.connection is not None:
            self.connection[1].close()
            self.connection = None


#: How a chunked body ends: the last chunk's CR LF, the zero-size chunk, the blank line.
_CHUNKED_END = b"\r\n0\r\n\r\n"


async def one(
    route: Route, model: str, hold: Hold | None = None, kept: Kept | None = None
) -> Outcome:
    """One streamed request, read to the end (or, with ``hold``, to its first
    event, then kept open until ``hold`` is set), in at most REQUEST_TIMEOUT
    seconds unless held. With ``kept``, on that kept-alive connection."""
    out = Outcome()
    try:
        await asyncio.wait_for(
            _one(route, model, out, hold, kept), None if hold else REQUEST_TIMEOUT
        )
    except (OSError, RuntimeError, asyncio.TimeoutError) as exc:
        out.error = repr(exc)
        if kept is not None:
            kept.close()
    return out


async def _one(
    route: Route, model: str, out: Outcome, hold: Hold | None, kept: Kept | None
) -> None:
    """A bare HTTP/1.1 exchange, ``Connection: close`` unless ``kept``. The
    load generator shares the machine with the servers, so it parses nothing
    but the status line, looks only for the first SSE ``data:``, and knows a
    kept-alive answer's end by the chunked framing's last bytes (every proxy
    here streams chunked)."""
    parts = urlsplit(route.url)
    start = time.perf_counter()
    connection = kept.connection if kept is not None else None
    if connection is None:
        connection = await asyncio.open_connection(parts.hostname, parts.port)
        if kept is not None:
            kept.connection = connection
    reader, writer = connection
    try:
        writer.write(_request_bytes(route, model, keep_alive=kept is not None))
        received = bytearray()
        tail = b""
        while chunk := await reader.read(65536):
            out.size += len(chunk)
            tail = tail[-16:] + chunk
            if _ERROR_EVENT in tail:  # a stream ended by an error is no answer
                raise RuntimeError(f"{route.name}: an error event in the stream")
            if out.ttfb_ms is None:
                received += chunk
                if b"data:" in received:
                    out.ttfb_ms = (time.perf_counter() - start) * 1000
                    if not received.startswith(b"HTTP/1.1 200"):
                        raise RuntimeError(f"{route.name}: {bytes(received[:12])!r}")
                    if hold is not None:
                        hold.ready += 1
                        await hold.release.wait()
                        return
            if kept is not None and tail.endswith(_CHUNKED_END):
                break
        if kept is not None and not tail.endswith(_CHUNKED_END):
            raise RuntimeError(f"{route.name}: the kept-alive connection was closed")
        out.total_ms = (time.perf_counter() - start) * 1000
        if out.ttfb_ms is None:
            raise RuntimeError(f"{route.name}: no event in {bytes(received[:40])!r}")
    finally:
        if kept is None:
            writer.close()


def _request_bytes(route: Route, model: str, *, keep_alive: bool = False) -> bytes:
    """A streamed request for ``model`` on ``route`` (``Connection: close``
    unless ``keep_alive``)."""
    parts = urlsplit(route.url)
    body = json.dumps(route.body(model)).encode()
    head = [
        f"POST {parts.path} HTTP/1.1",
        f"host: {parts.hostname}:{parts.port}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        f"connection: {'keep-alive' if keep_alive else 'close'}",
        *(f"{k}: {v}" for k, v in route.headers.items()),
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@dataclass
class Row:
    """One phase on one route."""

    phase: str
    route: str
    outcomes: list[Outcome]
    events: int  # upstream events per stream
    cpu_s: float | None
    extra: dict[str, Any] = field(default_factory=dict)

    def pct(self, attr: str, q: float) -> float | None:
        values = sorted(v for o in self.outcomes if (v := getattr(o, attr)) is not None)
        return values[min(len(values) - 1, int(q * len(values)))] if values else None

    def fields(self, reference: Row | None) -> dict[str, Any]:
        done = [o for o in self.outcomes if o.error is None]
        mb = sum(o.size for o in self.outcomes) / 1e6
        relayed = len(done) * self.events
        cpu = self.cpu_s
        p50, ref = self.pct("ttfb_ms", 0.5), reference.pct("ttfb_ms", 0.5) if reference else None
        total, ref_total = (
            self.pct("total_ms", 0.5),
            (reference.pct("total_ms", 0.5) if reference else None),
        )
        return {
            "phase": self.phase,
            "route": self.route,
            "requests": len(self.outcomes),
            "complete": len(done),
            "ttfb_p50_ms": _round(p50, 2),
            "ttfb_p99_ms": _round(self.pct("ttfb_ms", 0.99), 2),
            "added_ttfb_p50_ms": _round(_diff(p50, ref), 2),
            "total_p50_ms": _round(total, 1),
            "added_total_p50_ms": _round(_diff(total, ref_total), 1),
            "cpu_us_per_event": _round(cpu * 1e6 / relayed, 1) if cpu and relayed else None,
            "cpu_ms_per_mb": _round(cpu * 1000 / mb, 0) if cpu and mb else None,
            **self.extra,
        }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


Run = Callable[[Route], Awaitable[list[Outcome]]]


async def measured(phase: str, routes: list[Route], model: str, run: Run, turns: int) -> list[Row]:
    """``run`` ``turns`` times on each of ``routes``, after a warm-up of each,
    the routes taking turns (each turn in a rotated order); a proxy's CPU is
    summed over its own turns. What the machine charges for a wakeup changes
    from minute to minute (docs/gateway.md): turns spread that over every
    route alike, where one route after another measured each on another
    machine."""
    for route in routes:
        await asyncio.gather(*(one(route, model) for _ in range(WARMUP)))
    outcomes: dict[str, list[Outcome]] = {route.name: [] for route in routes}
    cpu = dict.fromkeys(outcomes, 0.0)
    for turn in range(turns):
        at = turn % len(routes)
        for route in routes[at:] + routes[:at]:
            cpu0 = cpu_seconds(route.pid) if route.pid else 0.0
            outcomes[route.name] += await run(route)
            cpu[route.name] += cpu_seconds(route.pid) - cpu0 if route.pid else 0.0
    rows = []
    for route in routes:
        errors = [o.error for o in outcomes[route.name] if o.error]
        if errors:
            print(
                f"{phase} {route.name}: {len(errors)} failed, first: {errors[0]}", file=sys.stderr
            )
        used = cpu[route.name] if route.pid else None
        rows.append(Row(phase, route.name, outcomes[route.name], upstream_events(model), used))
    return rows


def sequential(model: str, n: int, *, kept: bool = False) -> Run:
    """``n`` requests one after another; with ``kept``, on one kept-alive
    connection (as SDK clients send them), closed after the ``n``."""

    async def run(route: Route) -> list[Outcome]:
        connection = Kept() if kept else None
        try:
            return [await one(route, model, kept=connection) for _ in range(n)]
        finally:
            if connection is not None:
                connection.close()

    return run


def wave(model: str, n: int) -> Run:
    """``n`` requests at once."""

    async def run(route: Route) -> list[Outcome]:
        return list(await asyncio.gather(*(one(route, model) for _ in range(n))))

    return run


async def held_open(route: Route, n: int) -> Row:
    """``n`` streams opened (in batches, so that no listen queue overflows)
    and held after their first event: the proxy's resident memory above idle."""
    assert route.pid is not None
    await asyncio.sleep(1.0)
    idle = rss_kb(route.pid)
    hold = Hold()
    tasks = []
    for start in range(0, n, 100):
        batch = range(start, min(n, start + 100))
        tasks += [asyncio.create_task(one(route, "hold", hold)) for _ in batch]
        await asyncio.sleep(0.2)
    deadline = time.monotonic() + REQUEST_TIMEOUT
    while hold.ready < n and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    await asyncio.sleep(1.0)
    held, opened = rss_kb(route.pid), hold.ready
    hold.release.set()
    outcomes = list(await asyncio.gather(*tasks))
    extra = {
        "open_streams": opened,
        "rss_idle_mb": round(idle / 1024, 1),
        "rss_above_idle_mb": round((held - idle) / 1024, 1),
        "kb_per_stream": round((held - idle) / max(opened, 1), 1),
    }
    return Row("open", route.name, outcomes, 1, None, extra)


async def footprint(route: Route, samples: int) -> Row:
    """Pages the proxy touches per paced event: one paced stream read event
    by event; when an event arrives the proxy's referenced bits are cleared,
    and the pages it has touched by the next one are counted (median of
    ``samples``), with its CPU over the same span. Unlike CPU, the count does
    not depend on what the machine charges for a page."""
    assert route.pid is not None
    parts = urlsplit(route.url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    pages, cpu = [], []
    try:
        writer.write(_request_bytes(route, "paced"))
        head = b""
        while b"data:" not in head:
            chunk = await asyncio.wait_for(reader.read(65536), REQUEST_TIMEOUT)
            if not chunk:
                raise RuntimeError(f"{route.name}: no event in {head[:40]!r}")
            head += chunk
        for _ in range(samples):
            clear_referenced(route.pid)
            cpu0 = cpu_seconds(route.pid)
            if not await asyncio.wait_for(reader.read(65536), REQUEST_TIMEOUT):
                break
            pages.append(referenced_pages(route.pid))
            cpu.append(cpu_seconds(route.pid) - cpu0)
    finally:
        writer.close()
    extra = {
        "pages_per_event": statistics.median(pages) if pages else None,
        "footprint_cpu_us_per_event": _round(statistics.mean(cpu) * 1e6, 0) if cpu else None,
    }
    return Row("footprint", route.name, [Outcome()], 1, None, extra)


# -- the proxies --------------------------------------------------------------


def gateway_config(upstream: str, client: str | None) -> str:
    chosen = f'upstream_client = "{client}"\n' if client else ""
    return (
        f"[gateway]\nmax_concurrency = 100000\n{chosen}"
        f'[upstreams.chat]\napi = "openai-completions"\nbase_url = "{upstream}"\n'
        '[[routes]]\nmodels = ["*"]\nupstreams = ["chat"]\n'
    )


def litellm_config(upstream: str) -> str:
    entries = "".join(
        f"  - model_name: {model}\n    litellm_params:\n      model: openai/{model}\n"
        f"      api_base: {upstream}/v1\n      api_key: unused\n"
        for model in MODELS
    )
    return (
        "model_list:\n" + entries + "litellm_settings:\n  drop_params: true\n  telemetry: false\n"
    )


def routes_for(name: str, base: str, pid: int | None, key: str) -> list[Route]:
    bearer = {"authorization": f"Bearer {key}"}
    anthropic = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return [
        Route(name, "same-API", base + "/v1/chat/completions", bearer, pid=pid),
        Route(name, "cross-API", base + "/v1/messages", anthropic, messages=True, pid=pid),
    ]


def source_of(ref: str, into: Path) -> Path:
    """The ``src/`` of git ``ref``, unpacked under ``into``."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, "src"], cwd=REPO, capture_output=True, check=True
    ).stdout
    tar = into / "before.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as unpacked:
        unpacked.extractall(into / "before", filter="data")
    return into / "before" / "src"


def start_gateways(
    stack: contextlib.ExitStack, tmp: Path, upstream: str, before: str | None
) -> list[Route]:
    """``streamnorm serve`` with its default upstream client and with aiohttp,
    and once for ``before``."""
    variants: list[tuple[str, str | None, Path]] = [
        ("streamnorm", None, REPO / "src"),
        ("streamnorm/aiohttp", "aiohttp", REPO / "src"),
    ]
    if before:
        variants.append((f"streamnorm@{before}", None, source_of(before, tmp)))
    routes: list[Route] = []
    for name, client, src in variants:
        port = free_port()
        config = tmp / f"gateway-{port}.toml"
        config.write_text(gateway_config(upstream, client))
        command = [sys.executable, "-m", "streamnorm", "serve", "--config", str(config)]
        command += ["--port", str(port), "--log-level", "warning"]
        env = {**os.environ, "PYTHONPATH": str(src)}
        base = f"http://127.0.0.1:{port}"
        pid = stack.enter_context(process(command, base + "/healthz", env))
        routes += routes_for(name, base, pid, "none")
    return routes


def start_floors(stack: contextlib.ExitStack, upstream: int, env: dict[str, str]) -> list[Route]:
    """The two floors' same-API routes (the relay's health check is the
    upstream's, answered through it)."""
    routes = []
    for kind in ("relay", "asgi"):
        port = free_port()
        command = [sys.executable, __file__, "--serve-floor", kind, str(port), str(upstream)]
        base = f"http://127.0.0.1:{port}"
        pid = stack.enter_context(process(command, base + "/", env))
        routes.append(routes_for(f"floor/{kind}", base, pid, "none")[0])
    return routes


def start_litellm(
    stack: contextlib.ExitStack, tmp: Path, upstream: str, given: str | None
) -> list[Route]:
    command = next(
        (
            c
            for c in (given, os.environ.get("LITELLM"), shutil.which("litellm"))
            if c and Path(c).exists()
        ),
        None,
    )
    if command is None:
        print("LiteLLM proxy: not found (--litellm PATH): not compared", file=sys.stderr)
        return []
    port = free_port()
    config = tmp / "litellm.yaml"
    config.write_text(litellm_config(upstream))
    # The proxy refuses to start without a master key; the routes present it.
    key = f"sk-{secrets.token_hex(16)}"
    env = {
        **os.environ,
        "LITELLM_LOG": "ERROR",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_MASTER_KEY": key,
    }
    args = [command, "--config", str(config), "--port", str(port), "--host", "127.0.0.1"]
    base = f"http://127.0.0.1:{port}"
    try:
        pid = stack.enter_context(
            process([*args, "--num_workers", "1"], base + "/health/liveliness", env)
        )
    except RuntimeError as exc:  # e.g. litellm without its proxy extra
        print(f"LiteLLM proxy: did not start ({exc}): not compared", file=sys.stderr)
        return []
    return routes_for("litellm", base, pid, key)


def start_portkey(stack: contextlib.ExitStack, upstream: str, given: str | None) -> list[Route]:
    command = given or os.environ.get("PORTKEY")
    if not command:
        print("Portkey gateway: not given (--portkey CMD): not compared", file=sys.stderr)
        return []
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    try:
        pid = stack.enter_context(
            process([*shlex.split(command), f"--port={port}"], base + "/", None)
        )
    except RuntimeError as exc:
        print(f"Portkey gateway: did not start ({exc}): not compared", file=sys.stderr)
        return []
    # Portkey's /v1/messages serves Anthropic-shaped providers only ("messages
    # is not supported by openai"): it has no cross-API route to a Chat upstream.
    print("Portkey gateway: same-API route only (no Messages → Chat)", file=sys.stderr)
    route = routes_for("portkey", base, pid, "unused")[0]
    route.headers.update(
        {"x-portkey-provider": "openai", "x-portkey-custom-host": upstream + "/v1"}
    )
    return [route]


# -- the run ------------------------------------------------------------------


async def phases(
    args: argparse.Namespace, direct: Route, routes: list[Route]
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    async def phase(name: str, model: str, run: Run, turns: int) -> None:
        print(f"{name} …", file=sys.stderr, flush=True)
        reference, *measured_rows = await measured(name, [direct, *routes], model, run, turns)
        rows.append(reference.fields(None))
        rows.extend(row.fields(reference) for row in measured_rows)

    each = max(1, args.sequential // TURNS)
    await phase("low paced", "short", sequential("short", each), TURNS)
    await phase("low unpaced", "fast", sequential("fast", each), TURNS)
    await phase("kept paced", "short", sequential("short", each, kept=True), TURNS)
    await phase("kept unpaced", "fast", sequential("fast", each, kept=True), TURNS)
    for level in filter(None, args.sweep):
        # Enough streams at each level for the figure to settle, and a wave
        # a turn at least TURNS times: with one wave the proxies take no
        # turns, and a level's figure is one sample of what the machine charged.
        turns = max(TURNS, args.sweep_streams // level)
        await phase(f"sweep {level}", "paced", wave("paced", level), turns)
    if args.requests:
        await phase("bulk unpaced", "fast", wave("fast", args.requests), TURNS)
    if args.footprint:
        print("footprint …", file=sys.stderr, flush=True)
        for route in routes:
            try:
                rows.append((await footprint(route, args.footprint)).fields(None))
            except (OSError, RuntimeError, asyncio.TimeoutError) as exc:
                print(f"footprint {route.name}: not measured ({exc!r})", file=sys.stderr)
    if args.open:
        print("open …", file=sys.stderr, flush=True)
        for route in routes:
            # One route per process: a second would reuse the heap the first grew.
            if route.proxy.startswith("streamnorm") and route.kind == "same-API":
                rows.append((await held_open(route, args.open)).fields(None))
    return rows


def ratios(rows: list[dict[str, Any]]) -> list[str]:
    """CPU per event of each variant against streamnorm's, by route: medians over phases."""
    lines = []
    by: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        if row["cpu_us_per_event"]:
            proxy, kind = row["route"].rsplit(" ", 1)
            by.setdefault((proxy, kind), []).append(row["cpu_us_per_event"])
    for (proxy, kind), values in by.items():
        base = by.get(("streamnorm", kind))
        if proxy != "streamnorm" and base:
            ratio = statistics.median(b / v for b, v in zip(base, values, strict=False))
            lines.append(
                f"CPU per event, streamnorm / {proxy} {kind}: {ratio:.2f}× (median over phases)"
            )
    return lines


COLUMNS = [
    "complete",
    "ttfb_p50_ms",
    "ttfb_p99_ms",
    "added_ttfb_p50_ms",
    "total_p50_ms",
    "added_total_p50_ms",
    "cpu_us_per_event",
    "cpu_ms_per_mb",
]


#: The phases whose rows have columns of their own.
EXTRA_COLUMNS = {
    "footprint": ("pages_per_event", "footprint_cpu_us_per_event"),
    "open": ("open_streams", "rss_idle_mb", "rss_above_idle_mb", "kb_per_stream"),
}


def report(
    rows: list[dict[str, Any]], load: tuple[str, str], pages: tuple[float, float], as_json: bool
) -> None:
    if as_json:
        print(json.dumps({"load_average": load, "page_cost_us": pages, "rows": rows}, indent=2))
        return
    print(f"load average before / after: {load[0]} / {load[1]} (2 cores shared)")
    print(
        f"a page touched again after one pace idle: {pages[0]:.2f} µs of CPU "
        f"({pages[1]:.2f} µs without the pause)"
    )
    print(f"{'phase':14}{'route':34}" + "".join(f"{c[:16]:>17}" for c in COLUMNS))
    for row in rows:
        if row["phase"] in EXTRA_COLUMNS:
            extra = {k: row[k] for k in EXTRA_COLUMNS[row["phase"]]}
            print(
                f"{row['phase']:14}{row['route']:34}  "
                + "  ".join(f"{k} {v}" for k, v in extra.items())
            )
            continue
        cells = ("-" if row[c] is None else str(row[c]) for c in COLUMNS)
        print(f"{row['phase']:14}{row['route']:34}" + "".join(f"{c:>17}" for c in cells))
    for line in ratios(rows):
        print(line)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sequential", type=int, default=20, help="requests one at a time (low load)")
    p.add_argument(
        "--sweep", default="20,100,200", help="paced streams at once, per level (0: skip)"
    )
    p.add_argument(
        "--sweep-streams", type=int, default=100, help="streams per sweep level, at least"
    )
    p.add_argument(
        "--requests", type=int, default=200, help="unpaced streams at once (bulk; 0: skip)"
    )
    p.add_argument("--open", type=int, default=1000, help="streams held open (0: skip)")
    p.add_argument(
        "--footprint", type=int, default=30, help="paced events whose pages are counted (0: skip)"
    )
    p.add_argument("--pace", type=float, default=0.02, help="seconds between paced events")
    p.add_argument("--before", help="a git ref whose gateway runs beside this one")
    p.add_argument("--litellm", help="the litellm command of an environment with litellm[proxy]")
    p.add_argument("--portkey", help='the command that starts Portkey\'s gateway ("npx …")')
    p.add_argument("--json", action="store_true")
    p.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    p.add_argument("--serve-floor", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream, args.pace)
        return
    if args.serve_floor:
        kind, port, up = args.serve_floor
        (serve_floor_relay if kind == "relay" else serve_floor_asgi)(int(port), int(up))
        return
    args.sweep = [int(level) for level in args.sweep.split(",") if level]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    up_port = free_port()
    upstream = f"http://127.0.0.1:{up_port}"
    load_before = Path("/proc/loadavg").read_text().split()[0]
    pages = page_cost(args.pace)
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        serve = [
            sys.executable,
            __file__,
            "--serve-upstream",
            str(up_port),
            "--pace",
            str(args.pace),
        ]
        stack.enter_context(process(serve, upstream + "/", env))
        routes = start_floors(stack, up_port, env)
        routes += start_gateways(stack, Path(tmp), upstream, args.before)
        routes += start_litellm(stack, Path(tmp), upstream, args.litellm)
        routes += start_portkey(stack, upstream, args.portkey)
        direct = Route("upstream", "direct", upstream + "/v1/chat/completions", {})
        rows = asyncio.run(phases(args, direct, routes))
    load = (load_before, Path("/proc/loadavg").read_text().split()[0])
    report(rows, load, pages, args.json)


if __name__ == "__main__":
    main()
