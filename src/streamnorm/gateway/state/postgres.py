"""The response store of a gateway on several hosts: one PostgreSQL database.

Selected by a ``postgresql://`` URL in the configuration; needs the
``postgres`` extra (psycopg 3). The table is created on first use. Each
write is one short transaction; concurrent writers on any number of hosts
are serialized by PostgreSQL's row locks, so none loses a response. Within a
process one connection serves every thread, one call at a time, and is
opened again if the server dropped it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from .base import ResponseStore, Retention, StoredResponse

__all__ = ["PostgresStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS streamnorm_responses ("
    "seq BIGSERIAL, id TEXT PRIMARY KEY, created_at BIGINT NOT NULL, size BIGINT NOT NULL, "
    "data BYTEA NOT NULL)",
    "CREATE INDEX IF NOT EXISTS streamnorm_responses_created "
    "ON streamnorm_responses (created_at, seq)",
    "CREATE TABLE IF NOT EXISTS streamnorm_response_items ("
    "item_id TEXT PRIMARY KEY, response_id TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS streamnorm_response_items_owner "
    "ON streamnorm_response_items (response_id)",
)
#: Item rows whose response is gone (deleted or pruned).
_ORPHANS = (
    "DELETE FROM streamnorm_response_items WHERE response_id NOT IN "
    "(SELECT id FROM streamnorm_responses)"
)


def psycopg_module() -> Any:
    """psycopg 3, or a ``ValueError`` saying which extra brings it."""
    try:
        import psycopg
    except ImportError:
        raise ValueError(
            "a postgresql:// store needs psycopg: pip install 'streamnorm[postgres]'"
        ) from None
    return psycopg


def open_postgres(psycopg: Any, url: str, schema: Sequence[str], lock: int) -> Any:
    """An autocommit connection to ``url`` with ``schema``'s statements run
    under the advisory lock ``lock``: one creator at a time, since concurrent
    ``CREATE ... IF NOT EXISTS`` can collide."""
    conn = psycopg.connect(url, autocommit=True)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock,))
        for statement in schema:
            conn.execute(statement)
    return conn


class PostgresStore(ResponseStore):
    """Stored responses in the PostgreSQL database at ``url``."""

    def __init__(self, url: str, retention: Retention | None = None) -> None:
        super().__init__(retention)
        self._psycopg: Any = psycopg_module()
        self._url = url
        self._conn: Any = None
        self._lock = threading.Lock()

    def _connect(self) -> Any:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = open_postgres(self._psycopg, self._url, _SCHEMA, 7316021)
        return self._conn

    def _save(self, response: StoredResponse) -> None:
        data = response.to_json()
        with self._lock:
            conn = self._connect()
            with conn.transaction():
                conn.execute(
                    "INSERT INTO streamnorm_responses (id, created_at, size, data) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                    "created_at = EXCLUDED.created_at, size = EXCLUDED.size, data = EXCLUDED.data",
                    (response.id, response.created_at, len(data), data),
                )
                conn.cursor().executemany(
                    "INSERT INTO streamnorm_response_items (item_id, response_id) "
                    "VALUES (%s, %s) ON CONFLICT (item_id) DO UPDATE SET "
                    "response_id = EXCLUDED.response_id",
                    [(item_id, response.id) for item_id in response.item_ids],
                )

    def _owners(self, item_ids: Sequence[str]) -> dict[str, str]:
        with self._lock:
            rows = (
                self._connect()
                .execute(
                    "SELECT item_id, response_id FROM streamnorm_response_items "
                    "WHERE item_id = ANY(%s)",
                    (list(item_ids),),
                )
                .fetchall()
            )
        return {str(item_id): str(owner) for item_id, owner in rows}

    def _load(self, response_id: str, not_before: int) -> bytes | None:
        with self._lock:
            row = (
                self._connect()
                .execute(
                    "SELECT data FROM streamnorm_responses WHERE id = %s AND created_at >= %s",
                    (response_id, not_before),
                )
                .fetchone()
            )
        return None if row is None else bytes(row[0])

    def delete(self, response_id: str) -> bool:
        with self._lock:
            conn = self._connect()
            with conn.transaction():
                conn.execute(
                    "DELETE FROM streamnorm_response_items WHERE response_id = %s", (response_id,)
                )
                cur = conn.execute("DELETE FROM streamnorm_responses WHERE id = %s", (response_id,))
            return bool(cur.rowcount)

    def prune(self) -> int:
        cutoff = int(time.time()) - self.retention.ttl_seconds
        with self._lock:
            conn = self._connect()
            with conn.transaction():
                gone = conn.execute(
                    "DELETE FROM streamnorm_responses WHERE created_at < %s", (cutoff,)
                ).rowcount
                # Keep the newest rows whose running total of bytes fits the limit.
                over = conn.execute(
                    "DELETE FROM streamnorm_responses WHERE id IN (SELECT id FROM ("
                    "SELECT id, SUM(size) OVER (ORDER BY created_at DESC, seq DESC) AS kept "
                    "FROM streamnorm_responses) newest WHERE kept > %s)",
                    (self.retention.max_bytes,),
                ).rowcount
                conn.execute(_ORPHANS)
        return int(gone) + int(over)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
