"""Real servers for the gateway tests: a fake upstream and the gateway itself.

Both run under uvicorn on 127.0.0.1, on a free port, in a thread with its own
event loop; a test module starts one of each through a module-scoped fixture.

The fake upstream speaks all four APIs at their paths. It answers a model
named ``<api>.<stem>`` with the recorded fixture of that name — the ``.sse``
stream when the request streams, ``responses/<api>/<stem>.json`` otherwise —
cut into one chunk per SSE event as a server writes them, and records every
request it receives (path, headers, JSON body) and when each connection went
away. ``script(model, Reply(...))`` makes a model answer otherwise: an error
status, a connection cut mid-stream, a slow or endless stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn

from streamnorm import AssistantMessage, TextBlock, ThinkingBlock, ToolCallBlock
from streamnorm.gateway import Gateway, create_app, parse_config

from .support import FIXTURES

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

#: Upper bound for any single wait in these helpers (seconds).
WAIT = 10.0

UPSTREAM_KEYS = {
    "anthropic-messages": "sk-ant-upstream-SECRET-0a1b2c3d4e5f",
    "openai-responses": "sk-resp-upstream-SECRET-6a7b8c9d0e1f",
    "openai-completions": "sk-chat-upstream-SECRET-2a3b4c5d6e7f",
    "google-generative-ai": "AIza-upstream-SECRET-8a9b0c1d2e3f",
}
GATEWAY_KEY = "gw-client-key-7f3e9a"
#: Client model ``named.<short>`` reaches each API's upstream as this model, which
#: the tests script to answer (the recordings report these models, dated).
NAMED_MODELS = {
    "anthropic-messages": "claude-haiku-4-5",
    "openai-responses": "gpt-5",
    "openai-completions": "gpt-4o",
    "google-generative-ai": "gemini-3-pro-preview",
}
SHORT = {
    "anthropic-messages": "anthropic",
    "openai-responses": "responses",
    "openai-completions": "chat",
    "google-generative-ai": "gemini",
}


def api_of_path(path: str) -> str | None:
    if path.endswith("/v1/messages"):
        return "anthropic-messages"
    if path.endswith("/v1/responses"):
        return "openai-responses"
    if path.endswith("/chat/completions"):
        return "openai-completions"
    if path.endswith((":streamGenerateContent", ":generateContent")):
        return "google-generative-ai"
    return None


@dataclass
class Reply:
    """How the fake upstream answers one model.

    ``chunks`` are sent one by one, ``delay`` seconds apart; after them the
    connection is cut (``cut``), held open for ``hang`` more seconds (sending
    a keep-alive comment every ``delay``), or the response simply ends.
    """

    status: int = 200
    chunks: list[bytes] = field(default_factory=list)
    content_type: str = "text/event-stream"
    delay: float = 0.0
    cut: bool = False
    hang: float = 0.0


@dataclass
class Received:
    """One request as the fake upstream saw it."""

    api: str | None
    path: str
    query: str
    headers: dict[str, str]
    body: dict[str, Any]
    model: str | None
    closed_at: float | None = None


def sse_events(data: bytes) -> list[bytes]:
    """``data`` cut after every blank line, as servers write SSE events."""
    sep = b"\r\n\r\n" if b"\r\n\r\n" in data else b"\n\n"
    parts = data.split(sep)
    out = [p + sep for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def sse_to_json_array(data: bytes) -> bytes:
    """A Gemini SSE body as the JSON array ``:streamGenerateContent`` sends without alt=sse."""
    items = [
        line[5:].strip()
        for line in data.replace(b"\r\n", b"\n").split(b"\n")
        if line.startswith(b"data:")
    ]
    return b"[" + b",\r\n".join(items) + b"]"


def fixture_reply(api: str, stem: str, *, stream: bool, sse: bool = True) -> Reply:
    if not stream:
        body = (FIXTURES / "responses" / api / f"{stem}.json").read_bytes()
        return Reply(200, [body], "application/json")
    data = (FIXTURES / api / f"{stem}.sse").read_bytes()
    if api == "google-generative-ai" and not sse:
        return Reply(200, [sse_to_json_array(data)], "application/json")
    return Reply(200, sse_events(data))


class FakeUpstream:
    """An ASGI app that replays fixtures and records what it receives."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.scripts: dict[str, Reply] = {}
        self._lock = threading.Lock()

    def script(self, model: str, reply: Reply) -> None:
        with self._lock:
            self.scripts[model] = reply

    def requests_for(self, model: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.model == model]

    def clear(self) -> None:
        with self._lock:
            self.received.clear()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        record = self._record(scope, body)
        reply = self._reply(record)
        headers = [(b"content-type", reply.content_type.encode())]
        await send({"type": "http.response.start", "status": reply.status, "headers": headers})
        gone = asyncio.create_task(_wait_disconnect(receive))
        try:
            await self._play(reply, send, gone)
        finally:
            if gone.done():
                record.closed_at = time.monotonic()
            gone.cancel()

    async def _play(self, reply: Reply, send: Send, gone: asyncio.Task[None]) -> None:
        for chunk in reply.chunks:
            if gone.done():
                return
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
            if reply.delay:
                await asyncio.sleep(reply.delay)
        if reply.cut:
            raise ConnectionAbortedError("the fake upstream cuts this stream")
        deadline = time.monotonic() + reply.hang
        while time.monotonic() < deadline and not gone.done():
            await send({"type": "http.response.body", "body": b": wait\n\n", "more_body": True})
            await asyncio.wait({gone}, timeout=max(reply.delay, 0.01))
        if not gone.done():
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _record(self, scope: Scope, body: bytes) -> Received:
        path: str = scope["path"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        try:
            data = json.loads(body) if body else {}
        except ValueError:
            data = {"_raw": body.decode("utf-8", "replace")}
        api = api_of_path(path)
        model = data.get("model") if api != "google-generative-ai" else None
        if api == "google-generative-ai":
            model = path.rsplit("/", 1)[-1].split(":")[0]
        record = Received(api, path, scope["query_string"].decode(), headers, data, model)
        with self._lock:
            self.received.append(record)
        return record

    def _reply(self, record: Received) -> Reply:
        with self._lock:
            scripted = self.scripts.get(record.model or "")
        if scripted is not None:
            return scripted
        api, _, stem = (record.model or "").partition(".")
        if record.api is None or api != record.api:
            return _error_reply(400, f"fake upstream: no fixture for {record.model!r}")
        stream = record.body.get("stream") is True or record.path.endswith(":streamGenerateContent")
        try:
            return fixture_reply(api, stem, stream=stream, sse="alt=sse" in record.query)
        except OSError:
            return _error_reply(404, f"fake upstream: no fixture {stem!r} for {api}")


def _error_reply(status: int, message: str) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "invalid_request_error"}})
    return Reply(status, [body.encode()], "application/json")


async def _wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class ServerThread:
    """uvicorn serving ``app`` on 127.0.0.1 in a thread; ``url`` once started."""

    def __init__(self, app: Any, *, port: int = 0) -> None:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="on"
        )
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        deadline = time.monotonic() + WAIT
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        return self

    @property
    def port(self) -> int:
        sock = self.server.servers[0].sockets[0]
        return int(sock.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self._thread.join(WAIT)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def gateway_toml(upstream_url: str, **gateway: Any) -> dict[str, Any]:
    """A configuration (parsed TOML) routing ``<api>.*`` to that API on the fake upstream.

    Also: ``fallback.*`` tries a dead port, then a 503 model, then the chat
    upstream; ``dead.*`` only a dead port; ``keyless.*`` an upstream whose key
    variable is unset, then the chat upstream; ``named.<short>`` an API's
    upstream under the model ``NAMED_MODELS`` gives.
    """
    dead = f"http://127.0.0.1:{free_port()}"
    ups: dict[str, Any] = {
        SHORT[api]: {
            "api": api,
            "base_url": upstream_url,
            "api_key_env": f"UP_KEY_{SHORT[api].upper()}",
            "timeout": 5.0,
        }
        for api in UPSTREAM_KEYS
    }
    ups["dead"] = {"api": "openai-completions", "base_url": dead, "connect_timeout": 1.0}
    ups["busy"] = {**ups["chat"], "model": "busy-503"}
    ups["keyless"] = {**ups["chat"], "api_key_env": "UP_KEY_UNSET"}
    routes = [{"models": f"{api}.*", "upstreams": [SHORT[api]]} for api in UPSTREAM_KEYS]
    routes += [
        {"models": "fallback.*", "upstreams": ["dead", "busy", "chat"]},
        {"models": "dead.*", "upstreams": ["dead"]},
        {"models": "keyless.*", "upstreams": ["keyless", "chat"]},
    ]
    for api, model in NAMED_MODELS.items():
        ups[f"named-{SHORT[api]}"] = {**ups[SHORT[api]], "model": model}
        routes.append({"models": f"named.{SHORT[api]}", "upstreams": [f"named-{SHORT[api]}"]})
    return {"gateway": {"keys_env": "GW_KEYS", **gateway}, "upstreams": ups, "routes": routes}


def gateway_env() -> dict[str, str]:
    env = {f"UP_KEY_{SHORT[api].upper()}": key for api, key in UPSTREAM_KEYS.items()}
    env["GW_KEYS"] = f"other-key,{GATEWAY_KEY}"
    return env


@contextlib.contextmanager
def running_gateway(upstream_url: str, **gateway: Any) -> Iterator[tuple[Gateway, ServerThread]]:
    app = create_app(parse_config(gateway_toml(upstream_url, **gateway), gateway_env()))
    with ServerThread(app) as server:
        yield app, server


# -- what a client ends up with, in one shape for every SDK ------------------


@dataclass(frozen=True)
class View:
    """The parts of a final message every API can carry: text, reasoning text,
    tool calls (name, arguments), canonical stop reason, usage as (all input
    tokens, output tokens)."""

    text: str
    thinking: str
    calls: tuple[tuple[str, str], ...]
    stop: str
    usage: tuple[int, int]


def _calls(pairs: Iterable[tuple[str, Any]]) -> tuple[tuple[str, str], ...]:
    return tuple((name, json.dumps(args or {}, sort_keys=True)) for name, args in pairs)


def canonical_view(message: AssistantMessage) -> View:
    u = message.usage
    return View(
        "".join(b.text for b in message.content if isinstance(b, TextBlock)),
        "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock)),
        _calls((b.name, b.arguments) for b in message.content if isinstance(b, ToolCallBlock)),
        message.stop_reason.value,
        (u.input_tokens + u.cache_read_tokens + u.cache_write_tokens, u.output_tokens),
    )


_ANTHROPIC_STOPS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_use",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "pause_turn": "pause",
}


def anthropic_view(m: Any) -> View:
    u = m.usage
    return View(
        "".join(b.text for b in m.content if b.type == "text"),
        "".join(b.thinking for b in m.content if b.type == "thinking"),
        _calls((b.name, b.input) for b in m.content if b.type == "tool_use"),
        _ANTHROPIC_STOPS[m.stop_reason],
        (
            u.input_tokens
            + (u.cache_read_input_tokens or 0)
            + (u.cache_creation_input_tokens or 0),
            u.output_tokens,
        ),
    )


_CHAT_STOPS = {
    "stop": "stop",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "length",
    "content_filter": "content_filter",
}


def chat_view(c: Any) -> View:
    msg = c.choices[0].message
    extra = msg.model_extra or {}
    calls = [
        (t.function.name, json.loads(t.function.arguments or "{}")) for t in msg.tool_calls or ()
    ]
    u = c.usage
    return View(
        msg.content or "",
        extra.get("reasoning_content") or extra.get("reasoning") or "",
        _calls(calls),
        _CHAT_STOPS[c.choices[0].finish_reason],
        (u.prompt_tokens, u.completion_tokens) if u else (0, 0),
    )


def responses_view(r: Any) -> View:
    text = [
        part.text
        for item in r.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    ]
    # streamnorm joins the summary parts of one reasoning item with a blank line.
    thinking = [
        "\n\n".join(s.text for s in item.summary or ())
        for item in r.output
        if item.type == "reasoning"
    ]
    calls = [
        (i.name, json.loads(i.arguments or "{}")) for i in r.output if i.type == "function_call"
    ]
    if r.status == "incomplete":
        reason = r.incomplete_details.reason if r.incomplete_details else None
        stop = "content_filter" if reason == "content_filter" else "length"
    else:
        stop = "tool_use" if calls else "stop"
    u = r.usage
    return View(
        "".join(text),
        "".join(thinking),
        _calls(calls),
        stop,
        (u.input_tokens, u.output_tokens) if u else (0, 0),
    )


_GEMINI_STOPS = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter"}


def gemini_view(responses: Sequence[Any]) -> View:
    """The view of a Gemini answer: one response, or the chunks of a stream."""
    text: list[str] = []
    thinking: list[str] = []
    calls: list[tuple[str, Any]] = []
    finish, usage = None, None
    for r in responses:
        usage = r.usage_metadata or usage
        for cand in (r.candidates or ())[:1]:
            finish = cand.finish_reason or finish
            for part in (cand.content.parts if cand.content else None) or ():
                if part.function_call is not None:
                    calls.append((part.function_call.name, part.function_call.args))
                elif part.text is not None:
                    (thinking if part.thought else text).append(part.text)
    stop = _GEMINI_STOPS.get(finish.value if finish else "STOP", "content_filter")
    if stop == "stop" and calls:
        stop = "tool_use"
    tokens = (0, 0)
    if usage is not None:
        output = (usage.candidates_token_count or 0) + (usage.thoughts_token_count or 0)
        tokens = (usage.prompt_token_count or 0, output)
    return View("".join(text), "".join(thinking), _calls(calls), stop, tokens)
