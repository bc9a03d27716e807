"""A Responses client's tool loop through the gateway, and the gateway as workers.

``tool_loop`` runs three turns with the OpenAI SDK: a question with a tool,
then twice the tool's result with ``previous_response_id`` only. Each turn is
answered by a recording of the upstream's API (two different tool calls,
then text), so the last request the upstream receives must hold the whole
conversation. ``serve_workers`` runs ``streamnorm serve --workers N`` in a
subprocess against a configuration, for the multi-process tests, and
``worker_clients`` gives a client kept on each of its workers.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import httpx2
import openai

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    SHORT,
    FakeUpstream,
    Reply,
    free_port,
    gateway_env,
    sse_events,
)
from .support import FIXTURES, REPO

#: Per upstream API: two recorded tool-call answers with different calls, then a text answer.
LOOP_STEMS = {
    "anthropic-messages": ("tool-use-no-args", "thinking-then-tool-use", "text-basic"),
    "openai-completions": ("openai-tool-call", "deepseek-tool-call", "openai-text-include-usage"),
    "google-generative-ai": ("function-call", "function-call-thought-signature", "text-basic"),
}
QUESTION = "What is the weather in Paris?"
TOOLS: Any = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "the weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
]


def responses_client(url: str, http_client: httpx2.Client | None = None) -> openai.OpenAI:
    """The OpenAI SDK on the gateway at ``url``: on connections of its own, or
    on ``http_client``'s."""
    return openai.OpenAI(
        api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0, http_client=http_client
    )


class Loop:
    """What a tool loop saw: the final responses, the tool results sent in
    order, and the gateway's request id of each turn (``x-request-id``)."""

    def __init__(self) -> None:
        self.responses: list[Any] = []
        self.results: list[str] = []
        self.request_ids: list[str] = []


def tool_loop(
    url: str, fake: FakeUpstream, api: str, connections: Sequence[httpx2.Client] = ()
) -> Loop:
    """Three streamed turns to ``api``'s upstream, each from a new client: on
    a new connection, or on the ``connections`` in turn."""
    upstream_model = NAMED_MODELS[api]
    turn_input: Any = QUESTION
    previous: str | None = None
    loop = Loop()
    for turn, stem in enumerate(LOOP_STEMS[api]):
        data = (FIXTURES / api / f"{stem}.sse").read_bytes()
        fake.script(upstream_model, Reply(200, sse_events(data)))
        extra: Any = {"previous_response_id": previous} if previous else {}
        held = connections[turn % len(connections)] if connections else None
        stream = responses_client(url, held).responses.create(
            model=f"named.{SHORT[api]}", input=turn_input, tools=TOOLS, stream=True, **extra
        )
        done = [e.response for e in stream if e.type == "response.completed"]
        loop.request_ids.append(stream.response.headers["x-request-id"])
        response = done[-1]
        loop.responses.append(response)
        previous = response.id
        turn_input = []
        for call in (item for item in response.output if item.type == "function_call"):
            loop.results.append(f"result {len(loop.results)} of {call.name}")
            turn_input.append(
                {
                    "type": "function_call_output",
                    "call_id": call.call_id,
                    "output": loop.results[-1],
                }
            )
    return loop


def history_shape(api: str, body: dict[str, Any]) -> list[str]:
    """The roles of the turns an upstream request holds, in that API's spelling."""
    if api == "google-generative-ai":
        return [c["role"] for c in body["contents"]]
    return [m["role"] for m in body["messages"]]


#: What the upstream's last request must hold: question, call, result, call, result.
FULL_HISTORY = {
    "anthropic-messages": ["user", "assistant", "user", "assistant", "user"],
    "openai-completions": ["user", "assistant", "tool", "assistant", "tool"],
    "google-generative-ai": ["user", "model", "user", "model", "user"],
}


def assert_full_history(api: str, body: dict[str, Any], results: list[str]) -> None:
    assert history_shape(api, body) == FULL_HISTORY[api]
    if api == "google-generative-ai":  # each result named after its call
        parts = [p for c in body["contents"] for p in c["parts"]]
        calls = [p["functionCall"]["name"] for p in parts if "functionCall" in p]
        answered = [p["functionResponse"]["name"] for p in parts if "functionResponse" in p]
        assert answered == calls
    text = json.dumps(body)
    positions = [text.index(s) for s in (QUESTION, *results)]
    assert positions == sorted(positions)


def toml_text(data: dict[str, Any]) -> str:
    """Just enough TOML for a test configuration (tables, arrays of tables, scalars)."""
    lines = ["[gateway]", *(f"{k} = {json.dumps(v)}" for k, v in data["gateway"].items())]
    for name, table in data["upstreams"].items():
        lines.append(f"[upstreams.{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    for route in data["routes"]:
        lines += ["[[routes]]", *(f"{k} = {json.dumps(v)}" for k, v in route.items())]
    return "\n".join(lines) + "\n"


def worker_of(request_id: str, log: Path) -> int:
    """The worker process that logged ``request_id`` (its line may come a moment later)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for line in log.read_text().splitlines():
            if request_id in line and line.startswith("{"):
                return int(json.loads(line)["worker"])
        time.sleep(0.05)
    raise AssertionError(f"no log line for {request_id}")


@contextlib.contextmanager
def serve_workers(
    config: dict[str, Any], folder: Path, workers: int = 2
) -> Iterator[tuple[str, Path]]:
    """``streamnorm serve --workers N`` on ``config``; yields its URL once
    healthy, and the file its log lines go to."""
    path = folder / "gateway.toml"
    path.write_text(toml_text(config))
    port = free_port()
    env = {**os.environ, **gateway_env(), "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "streamnorm", "serve", "--config", str(path)]
    command += ["--port", str(port), "--workers", str(workers), "--log-level", "warning"]
    lines = folder / f"serve-{port}.log"
    log = lines.open("w")
    proc = subprocess.Popen(command, env=env, stderr=log, stdout=log)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc, lines)
        with worker_clients(url, lines, workers):
            pass  # until each worker has answered: the healthy answer says one listens
        yield url, lines
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(20)
        log.close()


@contextlib.contextmanager
def worker_clients(url: str, log: Path, workers: int = 2) -> Iterator[list[httpx2.Client]]:
    """One client per worker, each holding a kept-alive connection the kernel
    gave that worker: requests sent through them in turn reach every worker,
    where new connections reach whichever one the kernel picks (often the same
    one, request after request). Clients of ``httpx2``, which the SDKs take.
    Bounded: at most 60 s of new connections."""
    pinned: dict[int, httpx2.Client] = {}
    deadline = time.monotonic() + 60
    try:
        while len(pinned) < workers:
            if time.monotonic() > deadline:
                raise RuntimeError(f"only {len(pinned)} of {workers} workers took a connection")
            limits = httpx2.Limits(max_connections=1)
            client = httpx2.Client(base_url=url, timeout=30, limits=limits)
            worker = worker_of(client.get("/healthz").headers["x-request-id"], log)
            if worker in pinned:
                client.close()
            else:
                pinned[worker] = client
        yield list(pinned.values())
    finally:
        for client in pinned.values():
            client.close()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the gateway exited: " + log.read_text())
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the gateway did not become healthy")
