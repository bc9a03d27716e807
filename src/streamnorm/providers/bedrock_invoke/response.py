"""``bedrock-invoke-stream`` non-streaming responses: an ``InvokeModel``
answer for an Anthropic model (a Messages API ``Message``) or a Bedrock
error body → ``AssistantMessage``.

The body is the Messages API's own, so it is replayed as the Messages events
its streaming form carries (``anthropic.response.replay``), each read as an
Invoke chunk's inner event: the message is the one the Invoke stream of the
same answer gives, labelled with the Invoke api.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...events import Event
from ...messages import AssistantMessage
from ..anthropic.response import replay
from ..bedrock_converse.decoder import error_event
from ..codecbase import drive
from .decoder import BedrockInvokeDecoder

__all__ = ["decode_response"]


class _WholeDecoder(BedrockInvokeDecoder):
    """Reads the inner events themselves: a whole answer has no chunks."""

    def handle(self, event: str, payload: dict[str, Any]) -> None:
        if ":" in event:  # a Bedrock error body
            super().handle(event, payload)
        else:
            self.inner_event(payload)


def decode_response(
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    provider: str | None = None,
    events: list[Event] | None = None,
) -> AssistantMessage:
    """The message of an Invoke response body (or a Bedrock error body)."""
    error = error_event(dict(body))
    payloads = [error] if error is not None else replay(body)
    return drive(_WholeDecoder, payloads, model=model, provider=provider, events=events)
