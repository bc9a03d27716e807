"""The ledger and client keys in the gateway's SQLite file (see ``sqlite.py``).

The same file as the stored Responses, in tables of their own; WAL lets the
workers of one host read while one writes, and every write transaction is
``BEGIN IMMEDIATE``, which serializes admissions across the processes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .ledger import ADDED_COLUMNS, DEFAULT_LEDGER_DAYS, SCHEMA, Ledger
from .sqlite import open_sqlite

__all__ = ["SQLiteLedger"]


class SQLiteLedger(Ledger):
    """Keys and the ledger in the SQLite file at ``path``."""

    def __init__(
        self,
        path: str | Path,
        retention_days: int = DEFAULT_LEDGER_DAYS,
        *,
        busy_timeout: float = 30.0,
    ) -> None:
        super().__init__(retention_days)
        self.path = Path(path)
        self._busy_timeout = busy_timeout
        self._conn: sqlite3.Connection | None = None

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = open_sqlite(self.path, self._busy_timeout, SCHEMA)
            _add_columns(conn)
            self._conn = conn
        return self._conn

    @contextmanager
    def _transaction(
        self, lock: str | None = None, *, write: bool = True
    ) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connect()
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def _add_columns(conn: sqlite3.Connection) -> None:
    """Add the :data:`ADDED_COLUMNS` a file made before them lacks. SQLite's
    ``ADD COLUMN`` has no ``IF NOT EXISTS``, so the check and the change are
    one ``BEGIN IMMEDIATE`` transaction: two workers cannot both add."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table, column, kind in ADDED_COLUMNS:
            names = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
            if column not in names:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
