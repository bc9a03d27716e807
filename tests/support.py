"""Shared helpers for the tests: where the recorded fixtures are, and how to
run bytes through the normalizer under a given chunking."""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import json
import os
import random
import struct
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from streamnorm import ContentBlock, Done, Error, Event, ToolCallBlock
from streamnorm.apis import ApiName, resolve_api
from streamnorm.normalizer import StreamNormalizer

REPO = Path(__file__).resolve().parents[1]
#: The recorded traffic lives beside the repository, never inside it;
#: ``STREAMNORM_FIXTURES`` points at a corpus elsewhere.
FIXTURES = Path(os.environ.get("STREAMNORM_FIXTURES") or REPO.parent / "shared" / "fixtures")
#: The read-only APIs recorded one level down, each in its own folder.
EXTRA_FIXTURES = FIXTURES / "extra-apis"
APIS = ("anthropic-messages", "openai-responses", "openai-completions", "google-generative-ai")

#: The api each folder of ``EXTRA_FIXTURES`` holds.
EXTRA_APIS = {
    "bedrock-converse-stream": "bedrock-converse-stream",
    "bedrock-invoke-stream": "bedrock-invoke-stream",
    "ollama-chat": "ollama-chat",
    "gemini-json-array": "google-generative-ai",
    "cohere-chat": "cohere-chat",
    "mistral-chat": "openai-completions",
}

needs_fixtures = pytest.mark.skipif(
    not FIXTURES.is_dir(),
    reason=f"no fixture corpus at {FIXTURES} (set STREAMNORM_FIXTURES to point at one)",
)


def fixture_paths(api: str | None = None) -> list[Path]:
    """Every ``.sse`` fixture (of one api), sorted; [] when the folder is absent."""
    if not FIXTURES.is_dir():
        return []
    apis = [api] if api else list(APIS)
    return sorted(p for a in apis for p in (FIXTURES / a).glob("*.sse"))


def extra_fixture_paths(folder: str) -> list[Path]:
    """Every fixture in one folder of ``EXTRA_FIXTURES``, sorted; [] when absent."""
    return sorted(p for p in (EXTRA_FIXTURES / folder).glob("*") if p.is_file())


def extra_api_of(path: Path) -> str:
    """The api of a fixture in ``EXTRA_FIXTURES``."""
    return EXTRA_APIS[path.parent.name]


def assert_chunk_invariant(data: bytes, api: str, seed: str) -> list[Event]:
    """The events of ``data``: exactly one terminal event, and the same
    events whole, one byte at a time, under five seeded random chunkings and
    with ``api="auto"``."""
    whole = run([data], api)
    terminal(whole)
    expected = dicts(whole)
    rng = random.Random(seed)
    for chunks in (split_every(data, 1), *(random_split(data, rng) for _ in range(5))):
        assert dicts(run(chunks, api)) == expected
    assert dicts(run([data], "auto")) == expected
    return whole


def fixture_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def api_of(path: Path) -> ApiName:
    return path.parent.name


def load(name: str) -> bytes:
    """A fixture's bytes by ``"<api>/<file>"``."""
    return (FIXTURES / name).read_bytes()


def split_every(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def random_split(data: bytes, rng: random.Random, max_size: int = 64) -> list[bytes]:
    out, i = [], 0
    while i < len(data):
        n = rng.randint(1, max_size)
        out.append(data[i : i + n])
        i += n
    return out


def run(chunks: Iterable[bytes], api: str = "auto", **options: Any) -> list[Event]:
    """All events of a stream fed as ``chunks``, flush included."""
    n = StreamNormalizer(resolve_api(api, allow_auto=True), **options)
    events: list[Event] = []
    for chunk in chunks:
        events.extend(n.feed(chunk))
    events.extend(n.flush())
    return events


def run_bytes(data: bytes, api: str = "auto", **options: Any) -> list[Event]:
    return run([data], api, **options)


def dicts(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [e.to_dict() for e in events]


def terminal(events: Sequence[Event]) -> Done | Error:
    """The single terminal event, asserting there is exactly one and it is last."""
    ends = [e for e in events if isinstance(e, (Done, Error))]
    assert len(ends) == 1, f"expected one terminal event, got {len(ends)}"
    assert events[-1] is ends[0], "events after the terminal event"
    return ends[0]


def final(data: bytes, api: str = "auto", **options: Any) -> Done | Error:
    return terminal(run_bytes(data, api, **options))


def done(events: Sequence[Event]) -> Done:
    """The terminal event, asserting it is a ``Done``."""
    end = terminal(events)
    assert isinstance(end, Done), end
    return end


def failed(events: Sequence[Event]) -> Error:
    """The terminal event, asserting it is an ``Error``."""
    end = terminal(events)
    assert isinstance(end, Error), end
    return end


def final_done(data: bytes, api: str = "auto", **options: Any) -> Done:
    """The ``Done`` that ends ``data``; fails on an ``Error``."""
    return done(run_bytes(data, api, **options))


def all_calls(blocks: Sequence[ContentBlock]) -> list[ToolCallBlock]:
    """``blocks``, asserting every one is a tool call."""
    calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
    assert len(calls) == len(blocks), blocks
    return calls


# -- AWS event-stream frames (Bedrock), written independently of the decoder --


def aws_frame(headers: dict[str, Any], payload: bytes = b"") -> bytes:
    """One ``application/vnd.amazon.eventstream`` frame. Header values: bool,
    int (int32), bytes, str, or ``(type_byte, raw_value_bytes)`` for any
    other type."""
    block = bytearray()
    for name, value in headers.items():
        raw = name.encode()
        block += bytes([len(raw)]) + raw
        if isinstance(value, tuple):
            block += bytes([value[0]]) + value[1]
        elif isinstance(value, bool):
            block += b"\x00" if value else b"\x01"
        elif isinstance(value, int):
            block += b"\x04" + struct.pack(">i", value)
        else:
            data = value.encode() if isinstance(value, str) else value
            block += (b"\x07" if isinstance(value, str) else b"\x06") + struct.pack(">H", len(data))
            block += data
    total = 16 + len(block) + len(payload)
    prelude = struct.pack(">II", total, len(block))
    head = prelude + struct.pack(">I", binascii.crc32(prelude)) + bytes(block) + payload
    return head + struct.pack(">I", binascii.crc32(head))


def aws_event(event_type: str, payload: dict[str, Any]) -> bytes:
    """An event frame with a JSON payload, as Bedrock sends them."""
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return aws_frame(headers, json.dumps(payload).encode())


def invoke_chunk(inner: dict[str, Any] | bytes) -> bytes:
    """A Bedrock Invoke ``chunk`` frame carrying one inner event."""
    raw = inner if isinstance(inner, bytes) else json.dumps(inner).encode()
    return aws_event("chunk", {"bytes": base64.b64encode(raw).decode()})


def aws_frame_ends(data: bytes) -> list[int]:
    """The offsets where the frames of ``data`` end (from the total lengths)."""
    ends, pos = [], 0
    while pos < len(data):
        pos += int.from_bytes(data[pos : pos + 4], "big")
        ends.append(pos)
    return ends


@contextlib.contextmanager
def mypy_cache_held() -> Iterator[None]:
    """Run mypy on the repository's cache alone. mypy's SQLite cache refuses
    a second process that opens it while another sets it up ("database is
    locked"), and the tests that run mypy may run at once on two workers:
    their ``xdist_group`` keeps them on one worker only where pytest-xdist
    applies it (it does not under every pytest release). A lock file in the
    temporary directory, named for this checkout, makes them take turns."""
    try:
        import fcntl
    except ImportError:  # no POSIX file locks: the xdist group alone
        yield
        return
    name = hashlib.sha256(str(REPO).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"streamnorm-mypy-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
