"""The ledger and client keys in the gateway's PostgreSQL database (see ``postgres.py``).

Needs the ``postgres`` extra. An admission takes a transaction-scoped
advisory lock on its key's label, so the admissions of one key are
serialized across every host while other keys go on in parallel.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .ledger import ADDED_COLUMNS, DEFAULT_LEDGER_DAYS, SCHEMA, Ledger
from .postgres import open_postgres, psycopg_module

__all__ = ["PostgresLedger"]

#: The tables, and the columns a database made before them lacks.
_SCHEMA = (
    *SCHEMA,
    *(f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS {c} {k}" for t, c, k in ADDED_COLUMNS),
)
#: The advisory lock that serializes creating the tables.
_SCHEMA_LOCK = 7316022


class _Cursor:
    """``execute`` with the ledger's ``?`` placeholders on a psycopg connection."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Any = ()) -> Any:
        return self._conn.execute(sql.replace("?", "%s"), params)


class PostgresLedger(Ledger):
    """Keys and the ledger in the PostgreSQL database at ``url``."""

    def __init__(self, url: str, retention_days: int = DEFAULT_LEDGER_DAYS) -> None:
        super().__init__(retention_days)
        self._psycopg: Any = psycopg_module()
        self._url = url
        self._conn: Any = None
        self._lock = threading.Lock()

    def _connect(self) -> Any:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = open_postgres(self._psycopg, self._url, _SCHEMA, _SCHEMA_LOCK)
        return self._conn

    @contextmanager
    def _transaction(self, lock: str | None = None, *, write: bool = True) -> Iterator[_Cursor]:
        with self._lock:
            conn = self._connect()
            with conn.transaction():
                if lock is not None:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (zlib.crc32(lock.encode()),))
                yield _Cursor(conn)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
