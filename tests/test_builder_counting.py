"""A builder that keeps no content (``keep_content=False``): what it still
says about a stream, for a caller that only counts it (the gateway's
passthrough relay)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from streamnorm import Done, Error, StreamNormalizer
from streamnorm.messages import (
    AssistantMessage,
    ContentBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)

from .support import api_of, fixture_id, fixture_paths, split_every


def _terminal(data: bytes, api: str, keep: bool) -> Done | Error:
    normalizer = StreamNormalizer(api, keep_content=keep)
    events = [e for chunk in split_every(data, 97) for e in normalizer.feed(chunk)]
    events += normalizer.flush()
    last = events[-1]
    assert isinstance(last, (Done, Error))
    assert normalizer.message == last.message
    return last


def _hollow(message: AssistantMessage) -> AssistantMessage:
    """``message`` as a builder that keeps no content makes it."""
    blocks: list[ContentBlock] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            blocks.append(TextBlock("", None, (), block.refusal))
        elif isinstance(block, ThinkingBlock):
            blocks.append(ThinkingBlock("", None, block.redacted))
        elif isinstance(block, ToolCallBlock):
            error = block.error if block.error == "incomplete" else None
            blocks.append(ToolCallBlock(block.id, block.name, {}, "", None, error))
        else:
            blocks.append(dataclasses.replace(block, data={}))
    return dataclasses.replace(message, content=tuple(blocks))


@pytest.mark.parametrize("path", fixture_paths(), ids=fixture_id)
def test_without_content_a_stream_counts_as_with_it(path: Path) -> None:
    """Usage, stop reason, error, ids, model and the blocks' kinds, ids and
    names are those of the whole message; no text, reasoning, argument or
    provider content is kept."""
    data, api = path.read_bytes(), api_of(path)
    whole = _terminal(data, api, keep=True)
    counted = _terminal(data, api, keep=False)
    assert type(counted) is type(whole)
    assert counted.message == _hollow(whole.message)
