"""One decoder per wire API; each only translates wire JSON into builder calls."""

from __future__ import annotations

from typing import Any

from .anthropic import AnthropicDecoder
from .base import Decoder
from .bedrock_converse import BedrockConverseDecoder
from .bedrock_invoke import BedrockInvokeDecoder
from .google import GoogleDecoder
from .openai_completions import OpenAICompletionsDecoder
from .openai_responses import OpenAIResponsesDecoder

__all__ = ["DECODERS", "Decoder", "detect_api", "detect_frame_api"]

DECODERS: dict[str, type[Decoder]] = {
    AnthropicDecoder.api: AnthropicDecoder,
    GoogleDecoder.api: GoogleDecoder,
    OpenAICompletionsDecoder.api: OpenAICompletionsDecoder,
    OpenAIResponsesDecoder.api: OpenAIResponsesDecoder,
    BedrockConverseDecoder.api: BedrockConverseDecoder,
    BedrockInvokeDecoder.api: BedrockInvokeDecoder,
}

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


def detect_api(payload: dict[str, Any]) -> str | None:
    """The wire API of a stream from its first JSON payload (providers.md §0.9):
    an api name, ``"error"`` for a bare error object, or None when nothing
    matches."""
    kind = payload.get("type")
    if isinstance(kind, str):
        if kind in _ANTHROPIC_TYPES:
            return "anthropic-messages"
        if kind.startswith("response."):
            return "openai-responses"
    if "choices" in payload or payload.get("object") == "chat.completion.chunk":
        return "openai-completions"
    if "candidates" in payload or "usageMetadata" in payload or "promptFeedback" in payload:
        return "google-generative-ai"
    if "error" in payload:
        return "error"
    return None


def detect_frame_api(name: str) -> str:
    """The wire API of an AWS event stream from the name of its first frame:
    Invoke streams send ``chunk`` events, Converse streams the members of
    ``ConverseStreamOutput`` (an exception first counts as Converse)."""
    return BedrockInvokeDecoder.api if name == "chunk" else BedrockConverseDecoder.api
