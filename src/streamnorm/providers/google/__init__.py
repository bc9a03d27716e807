"""``google-generative-ai``: everything that knows the Gemini wire JSON."""

from .decoder import GoogleDecoder

__all__ = ["GoogleDecoder"]
