"""A scripted HTTP server on 127.0.0.1 for the client's tests: each
connection takes the next step of its script (an answer, a connection reset
before any byte, or a stream cut after its first bytes) and records the
request it got."""

from __future__ import annotations

import json
import socket
import socketserver
import struct
import threading
from dataclasses import dataclass, field
from typing import Any

ANTHROPIC_SSE = b"".join(
    f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
    for name, data in [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-x",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 5, "output_tokens": 0},
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hi"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
)

#: One Chat Completions stream: "ok", then [DONE].
CHAT_SSE = (
    b'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt","choices":'
    b'[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def error_body(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


@dataclass
class Step:
    """One answer: ``status`` with ``headers`` and ``body``; ``reset`` closes
    the connection before any byte; ``cut`` sends the status line, headers
    and ``body``, then closes without ending the body."""

    status: int = 200
    body: bytes = ANTHROPIC_SSE
    headers: dict[str, str] = field(default_factory=dict)
    reset: bool = False
    cut: bool = False


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


def read_request(conn: socket.socket) -> Seen:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        rest += conn.recv(65536)
    return Seen(method, path, headers, rest)


def _reset(conn: socket.socket) -> None:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


class ScriptedServer:
    """Serves ``steps`` in order (the last repeats); ``seen`` the requests."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = steps
        self.seen: list[Seen] = []
        self.refused: list[Step] = []
        owner = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                owner.serve(self.request)

        self._server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def serve(self, conn: socket.socket) -> None:
        seen = read_request(conn)
        self.seen.append(seen)
        refusal = self.refusal(seen)
        if refusal is not None:
            self.refused.append(refusal)
        self.reply(conn, refusal or self.next_step())

    def refusal(self, seen: Seen) -> Step | None:
        """The answer refusing ``seen`` (a fake of a host checks what the
        host checks); None: it is answered with the next step."""
        return None

    def next_step(self) -> Step:
        """The step of the latest request (the last one repeats)."""
        return self.steps[min(len(self.seen) - 1, len(self.steps) - 1)]

    def reply(self, conn: socket.socket, step: Step) -> None:
        if step.reset:
            _reset(conn)
            return
        headers = {"content-type": "text/event-stream", **step.headers}
        if not step.cut:
            headers["content-length"] = str(len(step.body))
        else:
            headers["content-length"] = str(len(step.body) + 1000)
        head = f"HTTP/1.1 {step.status} X\r\n" + "".join(
            f"{k}: {v}\r\n" for k, v in headers.items()
        )
        conn.sendall(head.encode() + b"connection: close\r\n\r\n" + step.body)
        if step.cut:
            _reset(conn)
        else:
            conn.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
