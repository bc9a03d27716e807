"""One decoder per wire API; each only translates wire JSON into builder calls."""

from __future__ import annotations

from typing import Any

from .anthropic import AnthropicDecoder
from .base import Decoder
from .bedrock_converse import BedrockConverseDecoder
from .bedrock_invoke import BedrockInvokeDecoder
from .cohere import CohereDecoder
from .google import GoogleDecoder
from .ollama import OllamaDecoder
from .openai_completions import OpenAICompletionsDecoder
from .openai_responses import OpenAIResponsesDecoder

__all__ = ["DECODERS", "Decoder", "detect_api", "detect_frame_api", "error_body_api"]

DECODERS: dict[str, type[Decoder]] = {
    AnthropicDecoder.api: AnthropicDecoder,
    GoogleDecoder.api: GoogleDecoder,
    OpenAICompletionsDecoder.api: OpenAICompletionsDecoder,
    OpenAIResponsesDecoder.api: OpenAIResponsesDecoder,
    BedrockConverseDecoder.api: BedrockConverseDecoder,
    BedrockInvokeDecoder.api: BedrockInvokeDecoder,
    OllamaDecoder.api: OllamaDecoder,
    CohereDecoder.api: CohereDecoder,
}

_COMPLETION_OBJECTS = frozenset(("chat.completion.chunk", "text_completion"))

_ANTHROPIC_TYPES = frozenset(
    (
        "message_start",
        "message_delta",
        "message_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "ping",
    )
)


#: Cohere v2 event types (``type`` of the payload, also the SSE event name).
_COHERE_TYPES = frozenset(
    (
        "message-start",
        "content-start",
        "content-delta",
        "content-end",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "citation-start",
        "citation-end",
        "message-end",
    )
)


def detect_api(payload: dict[str, Any], event: str = "message", framing: str = "sse") -> str | None:
    """The wire API of a stream from its first JSON payload (providers.md §0.9),
    its event name (an SSE ``event:``, an event-stream frame's name) and its
    framing: an api name, ``"error"`` for a bare error object (or an
    event-stream exception frame), or None when nothing matches."""
    if framing == "eventstream":
        return "error" if ":" in event else detect_frame_api(event)
    kind = payload.get("type")
    if isinstance(kind, str):
        if kind in _ANTHROPIC_TYPES:
            return "anthropic-messages"
        if kind.startswith("response."):
            return "openai-responses"
        if kind in _COHERE_TYPES:
            return "cohere-chat"
    if "choices" in payload or payload.get("object") in _COMPLETION_OBJECTS:
        return "openai-completions"
    if "candidates" in payload or "usageMetadata" in payload or "promptFeedback" in payload:
        return "google-generative-ai"
    if isinstance(payload.get("done"), bool) and ("message" in payload or "response" in payload):
        return "ollama-chat"
    if "error" in payload:
        return "error"
    return None


def error_body_api(payload: dict[str, Any], framing: str | None) -> str | None:
    """The api whose shape a bare error body has, when the shape says so
    unambiguously (for a ``Start`` that names an api): Anthropic's
    ``{"type": "error"}``, Google's ``{"error": {"code": 400, "status": …}}``
    or an error item of a Gemini JSON array, Ollama's ``{"error": "text"}``
    in newline-delimited JSON. None otherwise."""
    error = payload.get("error")
    if payload.get("type") == "error":
        return "anthropic-messages"
    if framing == "json-array" or (
        isinstance(error, dict)
        and isinstance(error.get("status"), str)
        and type(error.get("code")) is int
    ):
        return "google-generative-ai"
    if framing == "ndjson" and isinstance(error, str):
        return "ollama-chat"
    return None


def detect_frame_api(name: str) -> str:
    """The wire API of an AWS event stream from the name of its first frame:
    Invoke streams send ``chunk`` events, Converse streams the members of
    ``ConverseStreamOutput`` (an exception first counts as Converse)."""
    return BedrockInvokeDecoder.api if name == "chunk" else BedrockConverseDecoder.api
