"""``cohere-chat``: Cohere's v2 ``/v2/chat`` stream (docs/apis.md)."""

from .decoder import CohereDecoder

__all__ = ["CohereDecoder"]
