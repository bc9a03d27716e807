"""``openai-completions`` non-streaming responses (a ``chat.completion``, a
legacy ``text_completion``, or an error body) → ``AssistantMessage``.

Each choice's ``message`` is what the deltas of its stream add up to: the
body is replayed to the stream decoder as one chunk whose deltas are the
messages (tool calls numbered by position, as streams number them), then
``[DONE]``, so both forms share one mapping of reasoning fields, tool calls,
usage and stop reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...events import Event
from ...messages import AssistantMessage
from ..base import as_dict, as_list
from ..codecbase import drive
from .decoder import OpenAICompletionsDecoder

__all__ = ["decode_response"]


def _delta(choice: dict[str, Any]) -> dict[str, Any]:
    message = choice.get("message")
    if not isinstance(message, dict):
        text = choice.get("text")  # legacy /v1/completions
        return {"content": text} if isinstance(text, str) else {}
    delta = dict(message)
    calls = as_list(message.get("tool_calls"))
    if calls:
        delta["tool_calls"] = [
            {**call, "index": i} if isinstance(call, dict) else call for i, call in enumerate(calls)
        ]
    return delta


def _chunk(body: Mapping[str, Any]) -> dict[str, Any]:
    chunk = {k: v for k, v in body.items() if k != "choices"}
    chunk["choices"] = [
        {**{k: v for k, v in c.items() if k != "message"}, "delta": _delta(c)}
        for c in map(as_dict, as_list(body.get("choices")))
    ]
    return chunk


def decode_response(
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    provider: str | None = None,
    events: list[Event] | None = None,
) -> AssistantMessage:
    decoder_events = [("message", _chunk(body))]
    message = drive(
        OpenAICompletionsDecoder,
        decoder_events,
        model=model,
        provider=provider,
        done=True,
        events=events,
    )
    return message
