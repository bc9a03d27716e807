"""The relays fed chunk by chunk, as the gateway feeds them: what the client
sees after each upstream chunk. The cross-API one (``gateway/translate.py``)
and the passthrough (``gateway/relay.py``)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from streamnorm import AssistantMessage, Event, StopReason, StreamNormalizer, UsageUpdate
from streamnorm.gateway.relay import Passthrough
from streamnorm.gateway.translate import Translate
from streamnorm.providers import DECODERS

from .gateway_support import sse_events
from .support import api_of, fixture_id, fixture_paths, load, random_split, split_every

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


# --- The passthrough relay (``gateway/relay.py``) ---------------------------


def _passthrough(api: str, **options: Any) -> Passthrough:
    return Passthrough(api, model="m", provider="p", sse=True, keep_content=True, **options)


def _whole_message(data: bytes, api: str) -> AssistantMessage:
    normalizer = StreamNormalizer(api, model="m", provider="p")
    normalizer.feed(data)
    normalizer.flush()
    return normalizer.message


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_a_passthrough_forwards_every_chunk_at_once_and_reads_the_same_message(
    path: Path,
) -> None:
    """However the stream is cut, each chunk goes out as it came, when it
    came, and the message read on the side is the stream's, as if read whole."""
    data, api = path.read_bytes(), api_of(path)
    expected = _whole_message(data, api)
    rng = random.Random(path.name)
    for chunks in (sse_events(data), split_every(data, 7), random_split(data, rng, 400)):
        relay = _passthrough(api)
        outs, closed = [], []
        for chunk in chunks:
            outs.append(relay.feed(chunk))
            closed.append(relay.closed)
        sent = b"".join(outs) + relay.close()
        assert data.startswith(sent)
        # Nothing waits once the stream looks like its API (its first
        # event), up to the chunk that ends it; nothing goes after that.
        first = next(i for i, out in enumerate(outs) if out)
        last = closed.index(True) if True in closed else len(chunks)
        assert outs[first + 1 : last + 1] == chunks[first + 1 : last + 1]
        assert not any(outs[last + 1 :])
        assert relay.closed
        assert relay.message == expected


def test_a_paced_stream_is_parsed_in_a_few_passes_not_one_per_event(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = load("openai-completions/deepseek-tool-call.sse")
    reads: list[int] = []
    feed = StreamNormalizer.feed

    def counted(self: StreamNormalizer, chunk: bytes) -> list[Event]:
        reads.append(len(chunk))
        return feed(self, chunk)

    monkeypatch.setattr(StreamNormalizer, "feed", counted)
    chunks = sse_events(data)
    relay = _passthrough("openai-completions")
    outs = [relay.feed(chunk) for chunk in chunks]
    assert outs == chunks  # each event out as it came
    assert len(chunks) == 53 and len(reads) <= 3  # (the first event, the rest, the end)
    assert relay.message.stop_reason is StopReason.TOOL_USE


@pytest.mark.parametrize("cut", [3, 5, 7, 9])
def test_a_closing_word_cut_across_chunks_ends_the_stream_at_once(cut: int) -> None:
    chunks = sse_events(load("openai-completions/deepseek-tool-call.sse"))
    last = chunks.pop()  # data: [DONE]
    assert b"[DONE]" in last
    relay = _passthrough("openai-completions")
    for chunk in chunks:
        relay.feed(chunk)
    assert not relay.closed
    relay.feed(last[:cut])
    assert not relay.closed
    assert relay.feed(last[cut:]) == last[cut:]
    assert relay.closed  # not waiting for the upstream to end its body


def test_what_was_set_aside_is_in_the_message_of_a_stream_cut_short() -> None:
    """A client that leaves mid-stream: the log and the ledger read the
    message, and the bytes it was sent count in it."""
    chunks = sse_events(load("anthropic-messages/max-tokens-text.sse"))[:-2]
    relay = _passthrough("anthropic-messages")
    for chunk in chunks:
        relay.feed(chunk)
    normalizer = StreamNormalizer("anthropic-messages", model="m", provider="p")
    for chunk in chunks:
        normalizer.feed(chunk)
    assert relay.message == normalizer.message
    assert relay.message.content  # (something was read)


def test_the_byte_limit_ends_a_passthrough_at_the_chunk_that_crosses_it() -> None:
    chunks = sse_events(load("openai-completions/deepseek-tool-call.sse"))
    limit = sum(map(len, chunks[:20])) + 5  # crossed by the 21st event
    relay = _passthrough("openai-completions", max_stream_bytes=limit)
    outs = [relay.feed(chunk) for chunk in chunks]
    assert outs[:20] == chunks[:20]
    assert outs[20].startswith(chunks[20]) and b"max_stream_bytes" in outs[20]
    assert relay.closed and not any(outs[21:])


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_the_event_that_ends_a_recorded_stream_holds_a_closing_word(path: Path) -> None:
    """``Decoder.closing_words``'s promise, on every recording: the event
    at which the normalizer ends the stream (or a Gemini answer settles)
    holds one of its API's words, so a passthrough never waits past it."""
    api = api_of(path)
    words = DECODERS[api].closing_words
    normalizer = StreamNormalizer(api)
    for event in sse_events(path.read_bytes()):
        normalizer.feed(event)
        if normalizer.closed or normalizer.settled:
            assert any(word in event for word in words), event[:200]
            break
    # (Two recordings end only with their bytes, the last event unterminated
    # or the stream cut: a passthrough reads what waits at the end.)


def test_an_error_event_mid_stream_ends_a_passthrough_at_once() -> None:
    chunks = sse_events(load("anthropic-messages/max-tokens-text.sse"))[:4]
    error = (
        b'event: error\ndata: {"type":"error","error":'
        b'{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    relay = _passthrough("anthropic-messages")
    assert [relay.feed(chunk) for chunk in chunks] == chunks
    assert relay.feed(error) == error
    assert relay.closed
    assert relay.message.stop_reason is StopReason.ERROR
