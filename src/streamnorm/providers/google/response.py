"""``google-generative-ai`` non-streaming responses (``:generateContent``'s
``GenerateContentResponse``, or an error body) → ``AssistantMessage``.

A streamed Gemini chunk is a whole ``GenerateContentResponse``: the body is
the one chunk of its streaming form, replayed to the stream decoder, so both
forms share one mapping of parts, signatures, usage and stop reasons.
Vertex's ``enum-encoding=int`` spells ``finishReason`` as a number; it is
named here before the replay.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...events import Event
from ...messages import AssistantMessage
from ..base import as_dict, as_list
from ..codecbase import drive
from .decoder import GoogleDecoder

__all__ = ["decode_response"]

#: ``FinishReason`` by proto number, as far as the Gemini API and Vertex
#: protos agree (later numbers differ between them and stay unnamed).
_FINISH_REASONS = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
)


def _named(body: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(body)
    candidates = as_list(body.get("candidates"))
    if any(type(as_dict(c).get("finishReason")) is int for c in candidates):
        out["candidates"] = [_candidate(as_dict(c)) for c in candidates]
    return out


def _candidate(candidate: dict[str, Any]) -> dict[str, Any]:
    reason = candidate.get("finishReason")
    if type(reason) is int and 0 <= reason < len(_FINISH_REASONS):
        return {**candidate, "finishReason": _FINISH_REASONS[reason]}
    return candidate


def decode_response(
    body: Mapping[str, Any],
    *,
    model: str | None = None,
    provider: str | None = None,
    events: list[Event] | None = None,
) -> AssistantMessage:
    return drive(
        GoogleDecoder, [("message", _named(body))], model=model, provider=provider, events=events
    )
