"""``ollama-chat``: Ollama's native ``/api/chat`` and ``/api/generate`` (docs/apis.md)."""

from .decoder import OllamaDecoder

__all__ = ["OllamaDecoder"]
