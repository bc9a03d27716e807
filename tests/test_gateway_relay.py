"""The cross-API relay (``gateway/translate.py``) fed chunk by chunk, as the
gateway feeds it: what the client sees after each upstream chunk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from streamnorm import StreamNormalizer, UsageUpdate
from streamnorm.gateway.translate import Translate

FIXTURES = Path(os.environ.get("STREAMNORM_FIXTURES", "/nonexistent"))


def _gemini_streams() -> list[Path]:
    folder = FIXTURES / "google-generative-ai"
    return sorted(folder.glob("*.sse")) if folder.is_dir() else []


def _first_chunk(data: bytes) -> bytes:
    """The upstream's first SSE event, as one network chunk."""
    ends = [data.find(sep) + len(sep) for sep in (b"\r\n\r\n", b"\n\n") if sep in data]
    return data[: min(ends)]


def _relay() -> Translate:
    return Translate(
        "google-generative-ai",
        "anthropic-messages",
        upstream_model="gemini",
        client_model="claude-x",
        provider="google",
        sse=True,
        created=0,
    )


def _frames(data: bytes) -> list[dict[str, object]]:
    return [json.loads(x[6:]) for x in data.split(b"\n") if x.startswith(b"data: ")]


@pytest.mark.parametrize("path", _gemini_streams(), ids=lambda p: p.name)
def test_message_start_carries_the_input_count_of_the_first_upstream_chunk(path: Path) -> None:
    first = _first_chunk(path.read_bytes())
    read = StreamNormalizer("google-generative-ai").feed(first)
    counts = [e.usage.input_tokens for e in read if isinstance(e, UsageUpdate)]
    start = _frames(_relay().feed(first))[0]
    assert start["type"] == "message_start"  # written on the first chunk, not delayed
    usage = start["message"]["usage"]  # type: ignore[index]
    assert usage["input_tokens"] == (counts[-1] if counts else 0)
    assert usage["output_tokens"] == 0
