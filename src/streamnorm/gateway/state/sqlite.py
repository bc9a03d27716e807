"""The default response store: one SQLite file, shared by the workers of one host.

The file (and its directory) is created on first use. WAL journaling lets
readers go on while one process writes; every write is its own short
``BEGIN IMMEDIATE`` transaction, and a writer that finds the file locked
waits up to ``busy_timeout`` seconds rather than failing, so several worker
processes can write at once without losing a response. Within a process one
connection serves every thread, one call at a time.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .base import ResponseStore, Retention, StoredResponse

__all__ = ["SQLiteStore"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS responses ("
    "id TEXT PRIMARY KEY, created_at INTEGER NOT NULL, size INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS responses_created ON responses (created_at)",
    "CREATE TABLE IF NOT EXISTS response_items ("
    "item_id TEXT PRIMARY KEY, response_id TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS response_items_owner ON response_items (response_id)",
)
#: Ids per lookup query (SQLite caps the parameters of one statement).
_IDS_PER_QUERY = 500
#: Item rows whose response is gone (deleted or pruned).
_ORPHANS = "DELETE FROM response_items WHERE response_id NOT IN (SELECT id FROM responses)"


def open_sqlite(path: Path, busy_timeout: float, schema: Sequence[str]) -> sqlite3.Connection:
    """A connection to the SQLite file at ``path`` (created with its folder on
    first use) in WAL mode, ``schema``'s statements run; shared by threads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    for statement in schema:
        conn.execute(statement)
    return conn


class SQLiteStore(ResponseStore):
    """Stored responses in the SQLite file at ``path``."""

    def __init__(
        self, path: str | Path, retention: Retention | None = None, *, busy_timeout: float = 30.0
    ) -> None:
        super().__init__(retention)
        self.path = Path(path)
        self._busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = open_sqlite(self.path, self._busy_timeout, _SCHEMA)
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _save(self, response: StoredResponse) -> None:
        data = response.to_json()
        with self._write() as conn:
            conn.execute(
                "INSERT INTO responses (id, created_at, size, data) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO UPDATE SET created_at = excluded.created_at, "
                "size = excluded.size, data = excluded.data",
                (response.id, response.created_at, len(data), data),
            )
            conn.executemany(
                "INSERT INTO response_items (item_id, response_id) VALUES (?, ?) "
                "ON CONFLICT (item_id) DO UPDATE SET response_id = excluded.response_id",
                [(item_id, response.id) for item_id in response.item_ids],
            )

    def _owners(self, item_ids: Sequence[str]) -> dict[str, str]:
        ids = sorted(set(item_ids))
        owners: dict[str, str] = {}
        with self._lock:
            conn = self._connect()
            for start in range(0, len(ids), _IDS_PER_QUERY):
                part = ids[start : start + _IDS_PER_QUERY]
                rows = conn.execute(
                    "SELECT item_id, response_id FROM response_items "
                    f"WHERE item_id IN ({', '.join('?' * len(part))})",
                    part,
                ).fetchall()
                owners.update((str(item_id), str(owner)) for item_id, owner in rows)
        return owners

    def _load(self, response_id: str, not_before: int) -> bytes | None:
        with self._lock:
            row = (
                self._connect()
                .execute(
                    "SELECT data FROM responses WHERE id = ? AND created_at >= ?",
                    (response_id, not_before),
                )
                .fetchone()
            )
        return None if row is None else bytes(row[0])

    def delete(self, response_id: str) -> bool:
        with self._write() as conn:
            conn.execute("DELETE FROM response_items WHERE response_id = ?", (response_id,))
            return conn.execute("DELETE FROM responses WHERE id = ?", (response_id,)).rowcount > 0

    def prune(self) -> int:
        cutoff = int(time.time()) - self.retention.ttl_seconds
        with self._write() as conn:
            gone = conn.execute("DELETE FROM responses WHERE created_at < ?", (cutoff,)).rowcount
            # Keep the newest rows whose running total of bytes fits the limit.
            over = conn.execute(
                "DELETE FROM responses WHERE id IN (SELECT id FROM ("
                "SELECT id, SUM(size) OVER (ORDER BY created_at DESC, rowid DESC) AS kept "
                "FROM responses) WHERE kept > ?)",
                (self.retention.max_bytes,),
            ).rowcount
            conn.execute(_ORPHANS)
        return int(gone) + int(over)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
