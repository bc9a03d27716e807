"""``anthropic-messages``: everything that knows the Anthropic Messages wire JSON."""

from .decoder import AnthropicDecoder

__all__ = ["AnthropicDecoder"]
