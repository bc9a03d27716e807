"""``openai-completions`` as Mistral's own endpoint sends it (content arrays
with ``thinking`` chunks, complete tool calls without ``index``) and as
OpenAI's legacy ``/v1/completions`` sends it (``object: "text_completion"``,
``choices[].text``); chunk shapes the decoder does not understand say so.

The Mistral oracle is the stream read with the standard library alone: its
``data:`` lines parsed by ``json``, the text and thinking joined by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamnorm import NormalizationError, StopReason, TextBlock, ThinkingBlock, ToolCallBlock

from .support import (
    assert_chunk_invariant,
    done,
    extra_fixture_paths,
    failed,
    fixture_id,
    needs_fixtures,
    run_bytes,
)

API = "openai-completions"
PATHS = extra_fixture_paths("mistral-chat")


def sse(*payloads: dict[str, Any] | str) -> bytes:
    return b"".join(
        b"data: " + (p if isinstance(p, str) else json.dumps(p)).encode() + b"\n\n"
        for p in payloads
    )


def _payloads(data: bytes) -> list[dict[str, Any]]:
    lines = data.decode().split("\n")
    return [json.loads(x[6:]) for x in lines if x.startswith("data: {")]


def _joined(data: bytes) -> tuple[str, str, list[tuple[str, str, Any]]]:
    """Text, thinking and tool calls, read from the payloads by hand."""
    text, thinking, calls = "", "", []
    for payload in _payloads(data):
        delta = payload["choices"][0]["delta"] if payload["choices"] else {}
        content = delta.get("content")
        if isinstance(content, str):
            text += content
        for part in content if isinstance(content, list) else []:
            thinking += "".join(piece["text"] for piece in part["thinking"])
        for call in delta.get("tool_calls") or []:
            function = call["function"]
            calls.append((call["id"], function["name"], json.loads(function["arguments"])))
    return text, thinking, calls


@needs_fixtures
def test_all_mistral_fixtures_are_found() -> None:
    assert len(PATHS) == 6


@needs_fixtures
@pytest.mark.parametrize("path", PATHS, ids=fixture_id)
def test_mistral_fixture_is_chunk_invariant_and_matches_its_payloads(path: Path) -> None:
    data = path.read_bytes()
    events = assert_chunk_invariant(data, API, path.name)
    message = done(events).message
    assert not [e for e in events if isinstance(e, NormalizationError)]
    text, thinking, calls = _joined(data)
    assert "".join(b.text for b in message.content if isinstance(b, TextBlock)) == text
    assert "".join(b.thinking for b in message.content if isinstance(b, ThinkingBlock)) == thinking
    got = [(b.id, b.name, b.arguments) for b in message.content if isinstance(b, ToolCallBlock)]
    assert got == calls
    last = _payloads(data)[-1]
    assert message.raw_stop_reason == last["choices"][0]["finish_reason"]
    assert message.usage.input_tokens == last["usage"]["prompt_tokens"]
    assert message.stop_reason is (StopReason.TOOL_USE if calls else StopReason.STOP)


@needs_fixtures
def test_magistral_thinking_comes_before_the_answer() -> None:
    data = (PATHS[0].parent / "magistral-thinking-chunks.sse").read_bytes()
    thinking, text = done(run_bytes(data, API)).content
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert thinking.thinking.startswith("Okay, the user is asking how to cross the street.")


def _legacy(text: str, finish: str | None = None, **fields: Any) -> dict[str, Any]:
    choice = {"text": text, "index": 0, "logprobs": None, "finish_reason": finish}
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 1,
        "model": "gpt-3.5-turbo-instruct",
        "choices": [choice],
        **fields,
    }


LEGACY = sse(
    _legacy("Once"),
    _legacy(" upon"),
    _legacy(" a time", finish="length"),
    {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "gpt-3.5-turbo-instruct",
     "choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}},
    "[DONE]",
)  # fmt: skip


def test_legacy_completion_stream_gives_its_text() -> None:
    events = assert_chunk_invariant(LEGACY, API, "legacy")
    message = done(events).message
    assert message.content == (TextBlock("Once upon a time"),)
    assert (message.stop_reason, message.raw_stop_reason) == (StopReason.LENGTH, "length")
    assert (message.usage.input_tokens, message.usage.output_tokens) == (4, 3)
    assert (message.response_id, message.model) == ("cmpl-1", "gpt-3.5-turbo-instruct")
    assert not [e for e in events if isinstance(e, NormalizationError)]


def test_legacy_completion_cut_before_its_end_is_truncated() -> None:
    cut = sse(_legacy("Once"), _legacy(" upon"))
    end = failed(run_bytes(cut, API))
    assert end.kind == "truncated" and end.message.content == (TextBlock("Once upon"),)


def _chunk(choice: dict[str, Any]) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}


def _diagnostics(data: bytes) -> list[NormalizationError]:
    return [e for e in run_bytes(data, API) if isinstance(e, NormalizationError)]


@pytest.mark.parametrize(
    ("choice", "detail"),
    [
        ({"index": 0, "message": {"role": "assistant", "content": "x"}}, "a non-streaming message"),
        ({"index": 0, "delta": "x"}, "no delta"),
        ({"index": 0, "logprobs": None}, "no delta"),
        ({"index": 0, "delta": {"content": 5}}, "content of type int"),
        ({"index": 0, "delta": {"content": [{"type": "image_url"}]}}, "type 'image_url'"),
    ],
)
def test_an_unknown_chunk_shape_gives_a_diagnostic(choice: dict[str, Any], detail: str) -> None:
    data = sse(_chunk(choice), _chunk({"index": 0, "delta": {}, "finish_reason": "stop"}), "[DONE]")
    (diagnostic,) = _diagnostics(data)
    assert diagnostic.kind == "unknown_delta" and detail in diagnostic.detail
    assert diagnostic.raw is not None


def test_a_choice_that_only_finishes_needs_no_delta() -> None:
    data = sse(
        _chunk({"index": 0, "delta": {"content": "hi"}}),
        _chunk({"index": 0, "finish_reason": "stop"}),
        "[DONE]",
    )
    assert not _diagnostics(data)
    assert done(run_bytes(data, API)).content == (TextBlock("hi"),)


def test_text_beside_a_delta_is_not_read_twice() -> None:
    # Together repeats each content delta in choices[].text.
    data = sse(
        _chunk({"index": 0, "text": "hi", "delta": {"content": "hi"}}),
        _chunk({"index": 0, "text": "", "delta": {}, "finish_reason": "stop"}),
        "[DONE]",
    )
    assert done(run_bytes(data, API)).content == (TextBlock("hi"),)
