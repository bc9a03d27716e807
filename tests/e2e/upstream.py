"""A scripted model behind the gateway, speaking each API natively.

One ``ScriptedUpstream`` serves the four request APIs at their own paths on
127.0.0.1 (Anthropic Messages, Responses, Chat Completions, Gemini; streaming
and not) and plays one script whatever client is in front of the gateway:

* turn 1 (the request offers tools and its last user turn holds no tool
  result): the model reasons — with opaque state the upstream issues itself —
  and calls the shell tool the client offers (``Bash``, ``shell``,
  ``exec_command``, ``run_shell_command`` …) or the ``e2e_probe`` tool of the
  scripted clients;
* turn 2 (the last user turn holds tool results): the model answers with
  ``FINAL_TEXT``;
* any other request (a title, a topic check): a short text answer.

It refuses what the real API refuses, with that API's status and error body:
Anthropic thinking budgets under 1024 or not under ``max_tokens``; thinking
signatures, encrypted reasoning and thought signatures it did not issue or
that come back altered; tool results without their call; Gemini 3 function
calls of the current turn without their ``thoughtSignature``; Responses
reasoning items without ``encrypted_content`` when ``store`` is false; an
Anthropic turn that calls a tool without its thinking when thinking is on.

Every request is recorded (path, body, the answer's kind and the state it
issued) under the cell the harness named last (``POST /_e2e/cell/<name>``),
so a test reads exactly its own exchange.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = dict[str, Any]

#: The command every shell tool is asked to run, and what it prints. The
#: printed text is not in the command, so finding it in a tool result proves
#: the client really ran the command.
COMMAND = "printf 'e2e-%s\\n' tool-ran"
TOOL_OUTPUT = "e2e-tool-ran"
#: The scripted clients' own tool: ``e2e_probe(text)`` returns ``"e2e-" + text``.
PROBE_TOOL = "e2e_probe"
FINAL_TEXT = "E2E-FINAL-ANSWER: the tool printed its marker."
THINKING = "The user wants the marker printed; I will run the tool first."

#: Tool arguments per tool name, in order of preference when several are offered.
TOOL_ARGUMENTS: dict[str, JSON] = {
    "Bash": {"command": COMMAND, "description": "Print the e2e marker"},
    "run_shell_command": {"command": COMMAND, "description": "Print the e2e marker"},
    "shell_command": {"command": COMMAND},
    "exec_command": {"cmd": COMMAND},
    "shell": {"command": ["bash", "-lc", COMMAND]},
    PROBE_TOOL: {"text": "tool-ran"},
}


def base64_form(value: str) -> str:
    """The standard base64 spelling of a base64 value written in either alphabet.

    Gemini's ``thoughtSignature`` is a bytes field: its JSON form is base64 and
    the API reads the URL-safe alphabet as well (the google-genai SDK sends
    back what it received in that alphabet), so the bytes are what must come
    back unchanged. The other APIs' state is never written with ``-`` or ``_``
    by this upstream, so the mapping leaves theirs as it is.
    """
    return value.replace("-", "+").replace("_", "/")


class Refusal(Exception):
    """A request the real API refuses: HTTP ``status`` with ``message``."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class Exchange:
    """One request the upstream received and what it answered."""

    cell: str
    api: str
    path: str
    body: JSON
    stream: bool
    kind: str = "text"  # "call" (turn 1), "final" (turn 2), "text", "refused"
    refusal: str | None = None
    #: The opaque reasoning state this answer issued (signature, encrypted
    #: content or thought signature), byte for byte.
    issued: list[str] = field(default_factory=list)


@dataclass
class Turn:
    """What the scripted model says: reasoning + a call, or a text."""

    kind: str
    tool: str | None = None
    arguments: JSON | None = None
    call_id: str = ""
    text: str = ""


class ScriptedUpstream:
    """The upstream server: start it, point the gateway at ``base_url``."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.cell = "-"
        self.issued: set[str] = set()
        self.thinking_of: dict[str, str] = {}
        self._counter = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> ScriptedUpstream:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def of_cell(self, cell: str) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.cell == cell]

    def next_id(self) -> str:
        with self._lock:
            self._counter += 1
            return f"{self._counter:06d}"

    def issue(self, kind: str, thinking: str = "") -> str:
        """A fresh opaque state value, remembered with the thinking it signs."""
        raw = hashlib.sha256(f"{kind}:{self.next_id()}:{thinking}".encode()).digest()
        value = base64.b64encode(b"e2e" + raw * 2).decode()
        with self._lock:
            self.issued.add(value)
            self.thinking_of[value] = thinking
        return value

    def check_state(self, value: str, where: str, thinking: str | None = None) -> None:
        """Refuse state the upstream did not issue, or issued for other thinking."""
        value = base64_form(value)
        if value not in self.issued:
            raise Refusal(
                f"{where}: invalid signature: not issued by this model (altered or foreign)"
            )
        if thinking is not None and self.thinking_of[value] != thinking:
            raise Refusal(f"{where}: the thinking text does not match its signature")

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)


def choose_turn(tools: list[str], tool_results: list[str] | None, up: ScriptedUpstream) -> Turn:
    """The script: a call when tools are offered, the answer after a result."""
    if tool_results is not None:
        return Turn("final", text=FINAL_TEXT)
    for name in TOOL_ARGUMENTS:
        if name in tools:
            return Turn("call", name, TOOL_ARGUMENTS[name], call_id=f"call_e2e{up.next_id()}")
    return Turn("text", text="OK")


def sse(event: str | None, data: JSON | str) -> bytes:
    """One server-sent event (with its ``event:`` line where the API names events)."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


Handler = Callable[[ScriptedUpstream, str, JSON, Exchange], "Answer"]


@dataclass
class Answer:
    """A whole JSON body, or the events of a stream."""

    body: JSON | None = None
    events: list[bytes] | None = None

    def chunks(self) -> Iterator[bytes]:
        yield from self.events or []


def _handler_for(up: ScriptedUpstream) -> type[BaseHTTPRequestHandler]:
    from . import upstream_apis

    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the exchanges are recorded instead."""

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if self.path.startswith("/_e2e/cell/"):
                up.cell = self.path.removeprefix("/_e2e/cell/")
                self._send_json(200, {"cell": up.cell})
                return
            route = upstream_apis.route(self.path)
            if route is None:
                self._send_json(404, {"error": {"message": f"no such path {self.path}"}})
                return
            api, handler, stream = route
            body = json.loads(raw or b"{}")
            stream = stream or bool(body.get("stream"))
            exchange = Exchange(up.cell, api, self.path, body, stream)
            up.record(exchange)
            try:
                answer = handler(up, self.path, body, exchange)
            except Refusal as refusal:
                exchange.kind, exchange.refusal = "refused", str(refusal)
                self._send_json(refusal.status, upstream_apis.error_body(api, refusal))
                return
            if answer.body is not None:
                self._send_json(200, answer.body)
            else:
                self._send_stream(answer)

        def do_GET(self) -> None:
            self._send_json(404, {"error": {"message": f"no such path {self.path}"}})

        def _send_json(self, status: int, body: JSON) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send_stream(self, answer: Answer) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for chunk in answer.chunks():
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    return _Handler
