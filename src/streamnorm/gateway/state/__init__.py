"""State the gateway keeps between requests: stored Responses (DESIGN.md §7).

``open_store(location)`` picks the backend: a ``postgresql://`` (or
``postgres://``) URL is a PostgreSQL database (the ``postgres`` extra),
anything else the path of a SQLite file. Both share the interface of
:class:`ResponseStore`; the library's ``decode_request(..., store=...)``
accepts either to expand ``previous_response_id``.
"""

from __future__ import annotations

from pathlib import Path

from .base import ResponseStore, Retention, StoredResponse, new_response_id
from .sqlite import SQLiteStore

__all__ = [
    "ResponseStore",
    "Retention",
    "SQLiteStore",
    "StoredResponse",
    "new_response_id",
    "open_store",
]


def open_store(location: str | Path, retention: Retention | None = None) -> ResponseStore:
    """The store at ``location``: a PostgreSQL URL or a SQLite file path."""
    text = str(location)
    if text.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore

        return PostgresStore(text, retention)
    return SQLiteStore(Path(location), retention)
