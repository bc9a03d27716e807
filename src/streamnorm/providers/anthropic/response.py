"""``anthropic-messages`` non-streaming responses (a ``Message`` object or an
error body) → ``AssistantMessage``.

The body is replayed to the stream decoder as the events its streaming form
carries (``message_start``, one start/stop pair per block holding the whole
block, ``message_delta`` with the stop reason and usage, ``message_stop``),
so both forms share one mapping of blocks, signatures, usage and stop reasons.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...events import Event
from ...messages import AssistantMessage
from ..base import as_dict, as_list
from ..codecbase import drive
from .decoder import AnthropicDecoder

__all__ = ["decode_response", "replay"]


def replay(body: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The stream events of a whole Messages API response, in order."""
    if body.get("type") == "error" or "error" in body:
        return [("error", dict(body))]
    head = {k: body.get(k) for k in ("id", "model", "usage")}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": head})
    ]
    for index, block in enumerate(as_list(body.get("content"))):
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": as_dict(block)},
            )
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"type": "message_delta", "delta": {"stop_reason": body.get("stop_reason")}}
    events.append(("message_delta", delta))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def decode_response(
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    provider: str | None = None,
    events: list[Event] | None = None,
) -> AssistantMessage:
    """The message of a Messages API response body (its usage is the final
    one: the ``message_start`` of the replay carries it whole)."""
    return drive(AnthropicDecoder, replay(body), model=model, provider=provider, events=events)
