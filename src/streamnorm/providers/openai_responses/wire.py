"""Wire facts of ``openai-responses`` shared by its stream decoder and its
request codec."""

from __future__ import annotations

from typing import Any

from ..._json import dumps_compact

__all__ = ["MESSAGE_PARTS", "item_signature"]

#: Content part types of message items. The stream decoder keeps a part it
#: has no text block for as a ``ProviderBlock`` of that kind; it is a part of
#: an item, not an item, and cannot be sent back on its own.
MESSAGE_PARTS = frozenset(
    ("input_text", "input_image", "input_file", "input_audio", "output_text", "output_audio")
)


def item_signature(fields: dict[str, Any]) -> str | None:
    """The signature of a message or function-call item (providers.md §2.2):
    compact JSON of its non-empty string fields among ``fields`` (``id`` and
    ``phase`` / ``namespace``); None when there are none."""
    present = {k: v for k, v in fields.items() if isinstance(v, str) and v}
    return dumps_compact(present) if present else None
