"""Wire facts of ``google-generative-ai`` shared by its stream decoder and
its request codec."""

from __future__ import annotations

__all__ = ["METADATA_BLOCKS"]

#: Candidate metadata the stream decoder keeps as a ``ProviderBlock`` at the
#: end of the message, in this order. They describe a response, they are not
#: parts: a request never sends them back.
METADATA_BLOCKS = ("groundingMetadata", "urlContextMetadata")
