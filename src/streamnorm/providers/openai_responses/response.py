"""``openai-responses`` non-streaming responses (a ``Response`` object or an
error body) → ``AssistantMessage``.

A ``Response`` is exactly what the stream's terminal event carries: it is
replayed to the stream decoder as ``response.completed`` (``incomplete``,
``failed``), whose backfill completes every output item, so both forms share
one mapping of items, signatures, usage and stop reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...events import Event
from ...messages import AssistantMessage
from ..codecbase import drive
from .decoder import OpenAIResponsesDecoder

__all__ = ["decode_response"]

_TERMINAL = {"incomplete": "response.incomplete", "failed": "response.failed"}


def decode_response(
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    provider: str | None = None,
    events: list[Event] | None = None,
) -> AssistantMessage:
    if "error" in body and body.get("object") != "response" and "output" not in body:
        return drive(
            OpenAIResponsesDecoder,
            [("error", dict(body))],
            model=model,
            provider=provider,
            events=events,
        )
    status = body.get("status")
    kind = _TERMINAL.get(status, "response.completed") if isinstance(status, str) else None
    event = {"type": kind or "response.completed", "response": dict(body)}
    return drive(
        OpenAIResponsesDecoder, [("message", event)], model=model, provider=provider, events=events
    )
