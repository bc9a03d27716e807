"""The benchmark workloads carry what their names say: ``tool-1MB`` one call of
1 MB of arguments, ``text-events`` the text stream one wire event per chunk."""

from __future__ import annotations

import importlib.util
import json
import sys
from typing import Any

import pytest

from streamnorm import Done, normalize
from streamnorm.apis import resolve_api

from .support import REPO


def _load(name: str) -> Any:
    """A module of benchmarks/, registered under its name (its dataclasses
    look their module up)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


workloads = _load("workloads")
peers = _load("peers")


@pytest.mark.parametrize("api", workloads.APIS)
def test_tool_1mb_carries_a_megabyte_of_arguments(api: str) -> None:
    wl = workloads.synthetic_workload(api, "tool-1MB")
    assert wl.expect is not None
    ((name, arguments),) = wl.expect.calls
    assert len(json.dumps(arguments, separators=(",", ":"))) >= workloads.MB
    events = list(normalize(wl.chunks[0], resolve_api(api)))
    end = events[-1]
    assert isinstance(end, Done)
    ((call,),) = [end.message.tool_calls]
    assert (call.name, dict(call.arguments)) == (name, arguments)


@pytest.mark.parametrize("api", workloads.APIS)
def test_text_events_is_the_text_stream_one_wire_event_per_chunk(api: str) -> None:
    text = workloads.synthetic_workload(api, "text", 200_000)
    events = workloads.synthetic_workload(api, "text-events", 200_000)
    assert events.bodies == text.bodies
    (chunks,) = events.chunks
    assert b"".join(chunks) == events.bodies[0]
    blank = b"\r\n\r\n" if api == "google-generative-ai" else b"\n\n"
    assert all(c.endswith(blank) and blank not in c[: -len(blank)] for c in chunks)
    assert len(chunks) == events.bodies[0].count(blank)


@pytest.mark.parametrize("name", ["text", "text-events"])
@pytest.mark.parametrize("api", workloads.APIS)
def test_the_minimal_normalizer_reads_the_text_the_stream_carries(api: str, name: str) -> None:
    """The reference is timed only as a correct reader of the same chunks."""
    wl = workloads.synthetic_workload(api, name, 200_000)
    assert wl.expect is not None
    run = peers.Minimal().prepare(api)
    assert run(wl.bodies[0], wl.chunks[0]) == "".join(wl.expect.text)


gateway_bench = _load("gateway")

_TOUCHER = """
import sys
buf = bytearray(8000 * 4096)
for i in range(0, len(buf), 4096):
    buf[i] = 1
print("ready", flush=True)
n = int(sys.stdin.readline())
for i in range(0, n * 4096, 4096):
    buf[i] = 2
print("done", flush=True)
sys.stdin.readline()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_footprint_counts_the_pages_a_process_touches_after_the_clear() -> None:
    import subprocess

    child = subprocess.Popen(
        [sys.executable, "-c", _TOUCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline() == "ready\n"
        gateway_bench.clear_referenced(child.pid)
        idle = gateway_bench.referenced_pages(child.pid)
        child.stdin.write("6000\n")
        child.stdin.flush()
        assert child.stdout.readline() == "done\n"
        touched = gateway_bench.referenced_pages(child.pid)
    finally:
        child.kill()
        child.wait()
    # 6,000 pages of the buffer, plus what the interpreter touched on its way
    # (6,350 here), never the 2,000 buffer pages left alone. Some kernels lose
    # a share of the bits meanwhile (Linux 6.18 in a Firecracker guest: one
    # run in four reads 5,000-5,800), so the count is a lower bound.
    assert idle < 1000
    assert 4000 <= touched < 6000 + 2000


_BURNER = """
import threading, time
def burn():
    end = time.thread_time() + 0.2
    while time.thread_time() < end:
        pass
worker = threading.Thread(target=burn)
worker.start()
worker.join()
print("done", flush=True)
time.sleep(60)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux clock id")
def test_cpu_seconds_counts_a_thread_that_has_ended() -> None:
    """A proxy's CPU includes its ended threads' (a resolver's, say), to the
    nanosecond: a sum over live threads would read nearly 0 here."""
    import subprocess

    child = subprocess.Popen([sys.executable, "-c", _BURNER], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == "done\n"
        spent = gateway_bench.cpu_seconds(child.pid)
    finally:
        child.kill()
        child.wait()
    assert 0.2 <= spent < 5.0


_SSE_ANSWER = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
    b"a\r\ndata: {}\n\n\r\n0\r\n\r\n"
)


def test_a_kept_alive_route_sends_its_requests_on_one_connection() -> None:
    """``sequential(kept=True)`` reads each answer to the chunked framing's
    end (here in a read of its own) and sends the next request on the same
    connection: three answers, one connection, closed by the client."""
    import asyncio

    async def scenario() -> tuple[list[Any], int, int]:
        accepted = served = 0
        ended = asyncio.Event()

        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            nonlocal accepted, served
            accepted += 1
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                    await reader.readexactly(length)
                    writer.write(_SSE_ANSWER[:-5])
                    await writer.drain()
                    await asyncio.sleep(0.01)
                    writer.write(_SSE_ANSWER[-5:])
                    served += 1
            except asyncio.IncompleteReadError:  # the client closed the connection
                ended.set()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        route = gateway_bench.Route("test", "same-API", f"http://127.0.0.1:{port}/v1/x", {})
        outcomes = await gateway_bench.sequential("short", 3, kept=True)(route)
        await asyncio.wait_for(ended.wait(), 5)
        server.close()
        return outcomes, accepted, served

    outcomes, accepted, served = asyncio.run(scenario())
    assert [o.error for o in outcomes] == [None] * 3
    assert all(o.total_ms is not None and o.total_ms >= 10 for o in outcomes)
    assert (accepted, served) == (1, 3)


def _phases_taken(monkeypatch: pytest.MonkeyPatch, **given: Any) -> list[tuple[str, int]]:
    """The phases ``phases`` runs for ``given`` options, in order, with the
    turns each is given (``measured`` replaced: nothing is started)."""
    import argparse
    import asyncio

    taken: list[tuple[str, int]] = []

    class Row:
        def fields(self, reference: object) -> dict[str, Any]:
            return {}

    async def measured(phase: str, _routes: object, _model: str, _run: object, n: int) -> list[Row]:
        taken.append((phase, n))
        return [Row()]

    monkeypatch.setattr(gateway_bench, "measured", measured)
    args = argparse.Namespace(footprint=0, open=0, **given)
    asyncio.run(gateway_bench.phases(args, None, []))
    return taken


def test_a_sweep_level_or_a_bulk_of_zero_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--sweep 0 --requests 0`` leave the sweep and the bulk phase out (a
    level of 0 divided the streams by zero), the other phases run."""
    ran = _phases_taken(monkeypatch, sequential=8, sweep=[0, 20], sweep_streams=40, requests=0)
    assert [phase for phase, _ in ran] == [
        "low paced",
        "low unpaced",
        "kept paced",
        "kept unpaced",
        "sweep 20",
    ]


def test_every_phase_takes_four_turns_at_least(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sweep level or the bulk phase with fewer streams than four waves
    still takes four turns (one wave alone is one sample of what the machine
    charged, the proxies taking no turns); more streams, more turns."""
    turns = dict(
        _phases_taken(
            monkeypatch, sequential=8, sweep=[20, 100, 200], sweep_streams=200, requests=200
        )
    )
    assert turns == {
        "low paced": 4,
        "low unpaced": 4,
        "kept paced": 4,
        "kept unpaced": 4,
        "sweep 20": 10,
        "sweep 100": 4,
        "sweep 200": 4,
        "bulk unpaced": 4,
    }
