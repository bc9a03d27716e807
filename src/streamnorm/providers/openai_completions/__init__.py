"""``openai-completions``: everything that knows the Chat Completions wire JSON."""

from .decoder import OpenAICompletionsDecoder

__all__ = ["OpenAICompletionsDecoder"]
