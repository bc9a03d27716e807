"""``ollama-chat``: Ollama's native NDJSON streams (``/api/chat``, ``/api/generate``).

The recorded streams are read back by the official ``ollama`` client, through
an httpx transport that serves the same bytes, as the oracle for text,
thinking, tool calls, stop reason and counts.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import httpx
import ollama
import pytest

from streamnorm import (
    Error,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallDelta,
)

from .support import (
    assert_chunk_invariant,
    done,
    extra_fixture_paths,
    failed,
    fixture_id,
    needs_fixtures,
    run,
    run_bytes,
)

API = "ollama-chat"
PATHS = extra_fixture_paths("ollama-chat")


def ndjson(*objects: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


def line(content: str = "", thinking: str | None = None, **fields: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking is not None:
        message["thinking"] = thinking
    return {"model": "m", "created_at": "t", "message": message, "done": False, **fields}


END = {
    "model": "m",
    "created_at": "t",
    "message": {"role": "assistant", "content": ""},
    "done": True,
    "done_reason": "stop",
    "prompt_eval_count": 7,
    "eval_count": 3,
}


def _client(data: bytes) -> ollama.Client:
    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=data, headers={"content-type": "application/x-ndjson"})

    return ollama.Client(host="http://127.0.0.1:9", transport=httpx.MockTransport(serve))


def _sdk_parts(data: bytes) -> list[Any]:
    """What the ollama client yields for these bytes (chat or generate)."""
    client = _client(data)
    if b'"response"' in data.split(b"\n", 1)[0]:
        return list(client.generate(model="m", prompt="", stream=True))
    return list(client.chat(model="m", messages=[], stream=True))


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_fixture_is_chunk_invariant_with_one_terminal(path: Path) -> None:
    events = assert_chunk_invariant(path.read_bytes(), API, path.name)
    if path.name.startswith("error-"):
        end = failed(events)
        assert (end.kind, end.reason) == ("upstream", "model 'nonexistent-model:latest' not found")
        assert end.message.api == API
    else:
        assert done(events).message.api == API


@needs_fixtures
def test_all_ollama_fixtures_are_found() -> None:
    assert len(PATHS) == 8


@needs_fixtures
@pytest.mark.parametrize("path", [p for p in PATHS if "error" not in p.name], ids=fixture_id)
def test_the_ollama_client_reads_the_same_message(path: Path) -> None:
    data = path.read_bytes()
    parts = _sdk_parts(data)
    message = done(run_bytes(data, API)).message
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    thinking = "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock))
    calls = [b for b in message.content if isinstance(b, ToolCallBlock)]
    if isinstance(parts[0], ollama.GenerateResponse):
        assert text == "".join(p.response for p in parts)
        assert thinking == "".join(p.thinking or "" for p in parts)
        sdk_calls: list[Any] = []
    else:
        assert text == "".join(p.message.content or "" for p in parts)
        assert thinking == "".join(p.message.thinking or "" for p in parts)
        sdk_calls = [c for p in parts for c in p.message.tool_calls or ()]
    assert [(c.name, c.arguments) for c in calls] == [
        (c.function.name, dict(c.function.arguments)) for c in sdk_calls
    ]
    last = parts[-1]
    assert last.done is True
    assert message.raw_stop_reason == last.done_reason
    assert message.usage.input_tokens == last.prompt_eval_count
    assert message.usage.output_tokens == last.eval_count
    assert message.usage.total_tokens == last.prompt_eval_count + last.eval_count


@needs_fixtures
def test_thinking_then_text_and_a_complete_tool_call() -> None:
    data = (PATHS[0].parent / "nonstream-thinking-tool-calls-qwen3-6.ndjson").read_bytes()
    message = done(run_bytes(data, API)).message
    thinking, call = message.content
    assert isinstance(thinking, ThinkingBlock) and thinking.thinking.startswith("Thinking Process")
    assert call == ToolCallBlock(
        "call_gsiiy8py", "get_current_weather", {"city": "Paris"}, '{"city":"Paris"}'
    )
    assert message.stop_reason is StopReason.TOOL_USE
    assert message.raw_stop_reason == "stop"


def test_calls_without_ids_get_deterministic_ids() -> None:
    calls = [
        {"function": {"name": "a", "arguments": {"x": 1}}},
        {"function": {"name": "b", "arguments": '{"y": [2]}'}},
    ]
    data = ndjson(line() | {"message": {"role": "assistant", "tool_calls": calls}}, END)
    events = run_bytes(data, API)
    message = done(events).message
    first, second = message.content
    assert isinstance(first, ToolCallBlock) and isinstance(second, ToolCallBlock)
    assert (first.id, first.name, first.arguments, first.raw_arguments) == (
        "call_0", "a", {"x": 1}, '{"x":1}',
    )  # fmt: skip
    assert (second.id, second.arguments) == ("call_1", {"y": [2]})
    assert second.raw_arguments == '{"y": [2]}'
    # Every delta of a call carries its id, and a second run gives the same ids.
    assert {e.id for e in events if isinstance(e, ToolCallDelta)} == {"call_0", "call_1"}
    assert run_bytes(data, API) == events


def test_runs_of_thinking_and_text_keep_their_order() -> None:
    data = ndjson(
        line(thinking="a"), line(thinking="b"), line("c"), line(thinking="d"), line("e"), END
    )
    content = done(run_bytes(data, API)).content
    assert content == (
        ThinkingBlock("ab"), TextBlock("c"), ThinkingBlock("d"), TextBlock("e"),
    )  # fmt: skip


def test_generate_response_and_top_level_thinking() -> None:
    start = {"model": "m", "created_at": "t", "done": False}
    data = ndjson(
        start | {"response": "", "thinking": "hm"},
        start | {"response": "Hi"},
        start | {"response": "!"},
        {"model": "m", "created_at": "t", "response": "", "done": True, "done_reason": "stop"},
    )
    assert done(run_bytes(data)).content == (ThinkingBlock("hm"), TextBlock("Hi!"))


def test_length_is_length_and_cuts_nothing_that_ended() -> None:
    data = ndjson(line("partial"), END | {"done_reason": "length"})
    message = done(run_bytes(data, API)).message
    assert (message.stop_reason, message.raw_stop_reason) == (StopReason.LENGTH, "length")
    assert message.content == (TextBlock("partial"),)


def test_a_stream_cut_before_done_is_truncated_with_its_text() -> None:
    data = ndjson(line("Hel"), line("lo"))
    for cut in (data, data[:-1], data[: len(data) // 2 + 5]):
        end = failed(run_bytes(cut, API))
        assert end.kind == "truncated"
    assert failed(run_bytes(data, API)).message.content == (TextBlock("Hello"),)


def test_an_error_line_mid_stream_is_upstream_and_keeps_the_text() -> None:
    reason = "an error was encountered while running the model"
    end = failed(run_bytes(ndjson(line("Hel"), {"error": reason})))
    assert (end.kind, end.reason) == ("upstream", reason)
    assert end.message.content == (TextBlock("Hel"),)


def test_done_without_done_reason_is_stop_with_a_diagnostic() -> None:
    end = {k: v for k, v in END.items() if k != "done_reason"}
    events = run_bytes(ndjson(line("x"), end), API)
    assert done(events).message.raw_stop_reason is None
    assert "missing_stop_reason" in [getattr(e, "kind", None) for e in events]


def test_a_line_longer_than_max_event_bytes_is_refused() -> None:
    data = ndjson(line("x" * 5000), END)
    end = failed(run_bytes(data, API, max_event_bytes=1000))
    assert isinstance(end, Error) and (end.kind, end.code) == ("limit", "max_event_bytes")
    # Also when the long line never ends.
    end = failed(run_bytes(data[:3000], API, max_event_bytes=1000))
    assert (end.kind, end.code) == ("limit", "max_event_bytes")


def test_crlf_lines_and_blank_lines_read_the_same() -> None:
    data = ndjson(line("a"), line("b"), END)
    assert run_bytes(data.replace(b"\n", b"\r\n\n"), API) == run_bytes(data, API)


def test_a_long_line_in_small_chunks_costs_linear_time() -> None:
    """n and 4n bytes of one content line in 16-byte chunks: about 4x the
    time (asserted loosely, < 8x), never the square."""

    def seconds(size: int) -> float:
        data = ndjson(line("x" * size), END)
        started = time.process_time()
        run([data[i : i + 16] for i in range(0, len(data), 16)], API)
        return time.process_time() - started

    # The best of three runs each, in CPU time: a busy machine does not decide.
    ratio = min(seconds(4 * 256 * 1024) for _ in range(3)) / max(
        min(seconds(256 * 1024) for _ in range(3)), 1e-6
    )
    assert ratio < 8, f"x{ratio:.1f} for x4 bytes"


@needs_fixtures
@pytest.mark.parametrize("path", [p for p in PATHS if "error" not in p.name], ids=fixture_id)
def test_a_cut_before_the_done_line_is_truncated_with_a_prefix_of_the_text(path: Path) -> None:
    data = path.read_bytes()
    full = done(run_bytes(data, API)).message
    texts = "".join(b.text for b in full.content if isinstance(b, TextBlock))
    rng = random.Random(path.name)
    last = data.rstrip().rindex(b"}")  # the done object ends here
    for cut in sorted(rng.randrange(0, last) for _ in range(40)):
        end = failed(run_bytes(data[:cut], API))
        assert end.kind == "truncated", (cut, end.reason)
        text = "".join(b.text for b in end.message.content if isinstance(b, TextBlock))
        assert texts.startswith(text)
