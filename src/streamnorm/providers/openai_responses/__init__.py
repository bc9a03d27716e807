"""``openai-responses``: everything that knows the OpenAI Responses wire JSON."""

from .decoder import OpenAIResponsesDecoder

__all__ = ["OpenAIResponsesDecoder"]
