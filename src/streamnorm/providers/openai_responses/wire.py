"""Wire facts of ``openai-responses`` shared by its stream decoder and its
request codec."""

from __future__ import annotations

from typing import Any

from ..._json import dumps_compact

__all__ = ["item_signature"]


def item_signature(fields: dict[str, Any]) -> str | None:
    """The signature of a message or function-call item (providers.md §2.2):
    compact JSON of its non-empty string fields among ``fields`` (``id`` and
    ``phase`` / ``namespace``); None when there are none."""
    present = {k: v for k, v in fields.items() if isinstance(v, str) and v}
    return dumps_compact(present) if present else None
