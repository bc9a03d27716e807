"""The gateway under load: what it adds to time to first byte, and its CPU per MB.

One run, every server on 127.0.0.1 in a process of its own:

* the fake upstream of the tests (``tests/gateway_support.py``), replaying a
  recorded Chat Completions stream (DeepSeek: reasoning, then a tool call;
  53 events, 17 KB) at a model's pace (``--pace``, 20 ms between events);
* ``streamnorm serve`` (one uvicorn worker) in front of it;
* LiteLLM's proxy in front of the same upstream, when a ``litellm`` command
  with its proxy extra is found (``--litellm PATH``, else ``$LITELLM`` or
  ``litellm`` on PATH; install it in a virtualenv of its own, it pins many
  packages).

For each route, ``--requests`` (default 200) streaming requests are sent at
once, after a warm-up of 10, and read to the end: straight to the upstream
(the reference), through the gateway on a same-API route (Chat client → Chat
upstream: bytes forwarded, normalized on the side), and on a cross-API
route (Anthropic Messages client → Chat upstream: normalize, then encode).
Reported: time to first byte p50/p99 and what the proxy adds to the
reference's, and the proxy process's CPU seconds per MB it streamed to the
clients (from /proc, so Linux only). Every request is bounded by a timeout
and the whole run by the count of requests.

    python benchmarks/gateway.py [--requests 200] [--litellm PATH] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

STEM = "deepseek-tool-call"
MODEL = f"openai-completions.{STEM}"
REQUEST_TIMEOUT = 20.0
WARMUP = 10


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_upstream(port: int, pace: float) -> None:
    """Run the fake upstream (in its own process: ``--serve-upstream``), its
    recording paced at ``pace`` seconds between SSE events."""
    import uvicorn
    from tests.gateway_support import FakeUpstream, fixture_reply

    upstream = FakeUpstream()
    reply = fixture_reply("openai-completions", STEM, stream=True)
    reply.delay = pace
    upstream.script(MODEL, reply)
    uvicorn.run(upstream, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of ``pid`` and its live children, from /proc."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    with contextlib.suppress(OSError):
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    for p in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


@contextlib.contextmanager
def process(command: list[str], url: str, env: dict[str, str] | None = None) -> Iterator[int]:
    """Run ``command`` until ``url`` answers (bounded); yield its pid; stop it."""
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{command[0]} exited with {proc.returncode}")
            with contextlib.suppress(httpx.TransportError):
                httpx.get(url, timeout=1)
                break
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
    name: str
    url: str
    headers: dict[str, str]
    body: dict[str, Any]
    pid: int | None = None


@dataclass
class Result:
    """One route's run: the times to first byte of the requests that got one,
    all bytes received, the proxy's CPU seconds, the requests read to the end."""

    route: str
    ttfb_ms: list[float]
    bytes: int
    cpu_s: float | None
    complete: int

    def pct(self, q: float) -> float | None:
        ordered = sorted(self.ttfb_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None


@dataclass
class Outcome:
    """One request: when its first event came (ms), the bytes it got, what went wrong."""

    ttfb_ms: float | None = None
    size: int = 0
    error: str | None = None


async def one(route: Route) -> Outcome:
    """One streamed request read to the end, in at most REQUEST_TIMEOUT seconds
    (a request cut by the timeout keeps its time to first byte)."""
    out = Outcome()
    try:
        await asyncio.wait_for(_one(route, out), REQUEST_TIMEOUT)
    except (OSError, RuntimeError, asyncio.TimeoutError) as exc:
        out.error = repr(exc)
    return out


async def _one(route: Route, out: Outcome) -> None:
    """A bare HTTP/1.1 exchange (``Connection: close``), read to the end. The load
    generator shares the machine with the servers, so it parses nothing but the
    status line and looks only for the first SSE ``data:``."""
    url = httpx.URL(route.url)
    body = json.dumps(route.body).encode()
    head = [
        f"POST {url.raw_path.decode()} HTTP/1.1",
        f"host: {url.host}:{url.port}",
        "content-type: application/json",
        f"content-length: {len(body)}",
        "connection: close",
        *(f"{k}: {v}" for k, v in route.headers.items()),
    ]
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection(url.host, url.port)
    try:
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        received = bytearray()
        while chunk := await reader.read(65536):
            out.size += len(chunk)
            if out.ttfb_ms is None:
                received += chunk
                if b"data:" in received:
                    out.ttfb_ms = (time.perf_counter() - start) * 1000
                    if not received.startswith(b"HTTP/1.1 200"):
                        raise RuntimeError(f"{route.name}: {bytes(received[:12])!r}")
        if out.ttfb_ms is None:
            raise RuntimeError(f"{route.name}: no event in {bytes(received[:40])!r}")
    finally:
        writer.close()


async def load(route: Route, n: int) -> Result:
    await asyncio.gather(*(one(route) for _ in range(WARMUP)))
    cpu0 = cpu_seconds(route.pid) if route.pid else None
    outcomes = await asyncio.gather(*(one(route) for _ in range(n)))
    cpu1 = cpu_seconds(route.pid) if route.pid else None
    errors = [o.error for o in outcomes if o.error]
    if errors:
        print(f"{route.name}: {len(errors)} not complete, first: {errors[0]}", file=sys.stderr)
    cpu = cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None
    ttfb = [o.ttfb_ms for o in outcomes if o.ttfb_ms is not None]
    complete = len(outcomes) - len(errors)
    return Result(route.name, ttfb, sum(o.size for o in outcomes), cpu, complete)


def gateway_config(upstream: str) -> str:
    return (
        f'[upstreams.chat]\napi = "openai-completions"\nbase_url = "{upstream}"\n'
        '[[routes]]\nmodels = ["*"]\nupstreams = ["chat"]\n'
    )


def litellm_config(upstream: str) -> str:
    return (
        "model_list:\n"
        f"  - model_name: {MODEL}\n"
        "    litellm_params:\n"
        f"      model: openai/{MODEL}\n"
        f"      api_base: {upstream}/v1\n"
        "      api_key: unused\n"
        "litellm_settings:\n  drop_params: true\n  telemetry: false\n"
    )


def chat_body() -> dict[str, Any]:
    return {"model": MODEL, "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def messages_body() -> dict[str, Any]:
    return {**chat_body(), "max_tokens": 1024}


def routes_for(name: str, base: str, pid: int | None, key: str) -> list[Route]:
    bearer = {"authorization": f"Bearer {key}"}
    anthropic = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return [
        Route(
            f"{name} same-API (chat→chat)", base + "/v1/chat/completions", bearer, chat_body(), pid
        ),
        Route(
            f"{name} cross-API (messages→chat)",
            base + "/v1/messages",
            anthropic,
            messages_body(),
            pid,
        ),
    ]


def find_litellm(given: str | None) -> str | None:
    for candidate in (given, os.environ.get("LITELLM"), shutil.which("litellm")):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, 1)


def report(results: list[Result], n: int, as_json: bool) -> None:
    reference = results[0]
    rows = []
    for r in results:
        mb = r.bytes / 1e6
        p50, p99 = r.pct(0.5), r.pct(0.99)
        rows.append(
            {
                "route": r.route,
                "requests": n,
                "first_byte": len(r.ttfb_ms),
                "complete": r.complete,
                "ttfb_p50_ms": _ms(p50),
                "ttfb_p99_ms": _ms(p99),
                "added_p50_ms": _diff(p50, reference.pct(0.5)),
                "added_p99_ms": _diff(p99, reference.pct(0.99)),
                "streamed_mb": round(mb, 2),
                "cpu_ms_per_mb": round(r.cpu_s * 1000 / mb) if r.cpu_s is not None and mb else None,
            }
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    columns = [
        "first_byte",
        "complete",
        "ttfb_p50_ms",
        "ttfb_p99_ms",
        "added_p50_ms",
        "added_p99_ms",
        "streamed_mb",
        "cpu_ms_per_mb",
    ]
    print(f"{'route':38}" + "".join(f"{c:>14}" for c in columns))
    for row in rows:
        cells = ("-" if row[c] is None else str(row[c]) for c in columns)
        print(f"{row['route']:38}" + "".join(f"{c:>14}" for c in cells))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--litellm", help="the litellm command of an environment with litellm[proxy]")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--pace",
        type=float,
        default=0.02,
        help="seconds between the upstream's SSE events (default 0.02: 50 a second)",
    )
    p.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.serve_upstream:
        serve_upstream(args.serve_upstream, args.pace)
        return
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    up_port, gw_port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{up_port}"
    gateway = f"http://127.0.0.1:{gw_port}"
    results: list[Result] = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        config = Path(tmp) / "gateway.toml"
        config.write_text(gateway_config(upstream))
        stack.enter_context(
            process(
                [
                    sys.executable,
                    __file__,
                    "--serve-upstream",
                    str(up_port),
                    "--pace",
                    str(args.pace),
                ],
                upstream,
                env,
            )
        )
        serve = [
            sys.executable,
            "-m",
            "streamnorm",
            "serve",
            "--config",
            str(config),
            "--port",
            str(gw_port),
            "--log-level",
            "warning",
        ]
        gw_pid = stack.enter_context(process(serve, gateway + "/healthz", env))
        direct = Route("direct to the upstream", upstream + "/v1/chat/completions", {}, chat_body())
        routes = [direct, *routes_for("streamnorm", gateway, gw_pid, "none")]
        litellm = find_litellm(args.litellm)
        if litellm:
            lt_port = free_port()
            lt_config = Path(tmp) / "litellm.yaml"
            lt_config.write_text(litellm_config(upstream))
            lt_env = {**os.environ, "LITELLM_LOG": "ERROR", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
            command = [
                litellm,
                "--config",
                str(lt_config),
                "--port",
                str(lt_port),
                "--host",
                "127.0.0.1",
                "--num_workers",
                "1",
            ]
            lt_url = f"http://127.0.0.1:{lt_port}"
            try:
                lt_pid = stack.enter_context(
                    process(command, lt_url + "/health/liveliness", lt_env)
                )
                routes += routes_for("litellm", lt_url, lt_pid, "sk-none")
            except RuntimeError as exc:  # e.g. litellm without its proxy extra
                print(f"LiteLLM proxy did not start ({exc}): not compared", file=sys.stderr)
        else:
            print("LiteLLM proxy not found: pass --litellm PATH to compare", file=sys.stderr)
        for route in routes:
            print(f"{route.name} …", file=sys.stderr, flush=True)
            results.append(asyncio.run(load(route, args.requests)))
    report(results, args.requests, args.json)


if __name__ == "__main__":
    main()
