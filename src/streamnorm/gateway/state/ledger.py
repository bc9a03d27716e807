"""Client keys with scopes, and the usage ledger, in the gateway's store (DESIGN.md §5b).

A *client key* is a random secret handed out once by ``streamnorm keys
create``; the store keeps only its SHA-256 (keys carry 256 random bits, so a
fast hash is as good as a slow one) and its label (``key-`` and the first 8
hex digits of that hash, the label logs and metrics already use). Each key
has allowed model globs, requests and tokens per minute, and a spending
budget per calendar period (UTC hour, day, week or month).

The *ledger* has one row per front-door request: key label, client API
(the route), upstream, model, tokens by kind, cost, status, latency and
request id. Limits are enforced from it, so they hold across every worker
and host that shares the store and survive restarts:

* admission (:meth:`Ledger.admit`) counts the key's admitted rows of the
  last 60 seconds and inserts the request's own row in the same
  transaction (SQLite's ``BEGIN IMMEDIATE``; on PostgreSQL an advisory lock
  on the key), so two workers cannot both take the last request of a minute;
* tokens per minute and the budget are read from the finished rows, so they
  may be passed by the requests in flight when the limit is reached (at most
  one per concurrent request), never by more.

A refused request gets a row too (``admitted`` 0, its status), which never
counts against a limit.
"""

from __future__ import annotations

import calendar
import fnmatch
import hashlib
import math
import secrets
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

__all__ = [
    "PERIODS",
    "Budget",
    "ClientKey",
    "Ledger",
    "LedgerRow",
    "Refusal",
    "hash_key",
    "key_label",
    "open_ledger",
    "parse_budget",
]

Period = Literal["hour", "day", "week", "month"]
PERIODS: tuple[Period, ...] = ("hour", "day", "week", "month")
#: The rate limits' window, in seconds.
WINDOW = 60.0
#: Days of rows a ledger keeps by default, and at least (a monthly budget
#: reads back to the start of its month: 31 days).
DEFAULT_LEDGER_DAYS, MIN_LEDGER_DAYS = 400, 32
#: Seconds between two prunings of old rows by one process.
PRUNE_EVERY = 3600.0
#: What ``usage --by`` groups on: a column, or the UTC day of ``at``.
GROUPS = ("key", "model", "day", "upstream", "route")

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS streamnorm_keys ("
    "hash TEXT PRIMARY KEY, label TEXT NOT NULL UNIQUE, name TEXT, models TEXT NOT NULL, "
    "rpm INTEGER, tpm INTEGER, budget_usd DOUBLE PRECISION, budget_period TEXT, "
    "created_at DOUBLE PRECISION NOT NULL, revoked_at DOUBLE PRECISION)",
    "CREATE TABLE IF NOT EXISTS streamnorm_ledger ("
    "request_id TEXT PRIMARY KEY, key TEXT, at DOUBLE PRECISION NOT NULL, "
    "admitted INTEGER NOT NULL, route TEXT, upstream TEXT, model TEXT, "
    "input_tokens BIGINT NOT NULL DEFAULT 0, output_tokens BIGINT NOT NULL DEFAULT 0, "
    "cache_read_tokens BIGINT NOT NULL DEFAULT 0, cache_write_tokens BIGINT NOT NULL DEFAULT 0, "
    "reasoning_tokens BIGINT NOT NULL DEFAULT 0, cost_usd DOUBLE PRECISION, "
    "status INTEGER NOT NULL DEFAULT 0, latency_ms DOUBLE PRECISION, error TEXT)",
    "CREATE INDEX IF NOT EXISTS streamnorm_ledger_key_at ON streamnorm_ledger (key, at)",
    "CREATE INDEX IF NOT EXISTS streamnorm_ledger_at ON streamnorm_ledger (at)",
)
#: Columns added after a table's first release: (table, column, type). A
#: store made before them gets them when a ledger opens it.
ADDED_COLUMNS = (("streamnorm_ledger", "error", "TEXT"),)

TOKEN_KINDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)

#: The ledger's columns, in export order.
COLUMNS = (
    "request_id",
    "key",
    "at",
    "admitted",
    "route",
    "upstream",
    "model",
    *TOKEN_KINDS,
    "cost_usd",
    "status",
    "latency_ms",
    "error",
)


def hash_key(secret: str) -> str:
    """The SHA-256 of a client key, as the store keeps it."""
    return hashlib.sha256(secret.encode()).hexdigest()


def key_label(secret: str) -> str:
    """A key's label: ``key-`` and the first 8 hex digits of its SHA-256."""
    return "key-" + hash_key(secret)[:8]


@dataclass(frozen=True, slots=True)
class Budget:
    """At most ``usd`` of cost per calendar ``period`` (UTC)."""

    usd: float
    period: Period

    def bounds(self, now: float) -> tuple[float, float]:
        """The start and end (epoch seconds) of the period ``now`` falls in."""
        t = datetime.fromtimestamp(now, timezone.utc)
        if self.period == "hour":
            start = t.replace(minute=0, second=0, microsecond=0)
            end = start + timedelta(hours=1)
        elif self.period == "day":
            start = t.replace(hour=0, minute=0, second=0, microsecond=0)
            end = start + timedelta(days=1)
        elif self.period == "week":
            start = t.replace(hour=0, minute=0, second=0, microsecond=0)
            start -= timedelta(days=start.weekday())
            end = start + timedelta(days=7)
        else:
            start = t.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
            days = calendar.monthrange(start.year, start.month)[1]
            end = start + timedelta(days=days)
        return start.timestamp(), end.timestamp()

    def __str__(self) -> str:
        return f"{self.usd:g}/{self.period}"


def parse_budget(text: str) -> Budget:
    """``"50/month"``: US dollars per hour, day, week or month; ``ValueError`` otherwise."""
    amount, _, period = text.partition("/")
    try:
        usd = float(amount)
    except ValueError:
        usd = math.nan
    if not math.isfinite(usd) or usd <= 0 or period not in PERIODS:
        raise ValueError(
            f"budget: {text!r} is not AMOUNT/PERIOD (a positive number of US dollars per "
            f"{', '.join(PERIODS)}), e.g. 50/month"
        )
    return Budget(usd, period)


@dataclass(frozen=True, slots=True)
class ClientKey:
    """A key's scope. None means no limit of that kind; ``models`` ``("*",)`` any model."""

    label: str
    name: str | None = None
    models: tuple[str, ...] = ("*",)
    rpm: int | None = None
    tpm: int | None = None
    budget: Budget | None = None
    created_at: float = 0.0
    revoked_at: float | None = None

    def allows(self, model: str) -> bool:
        return any(fnmatch.fnmatchcase(model, glob) for glob in self.models)

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "name": self.name,
            "models": list(self.models),
            "rpm": self.rpm,
            "tpm": self.tpm,
            "budget": str(self.budget) if self.budget else None,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
        }


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a request is not admitted: ``kind`` ``rpm``, ``tpm`` or ``budget``,
    the seconds until it may be, and a sentence for the client."""

    kind: Literal["rpm", "tpm", "budget"]
    retry_after: int
    message: str


@dataclass(slots=True)
class LedgerRow:
    """One request as the ledger keeps it (the columns of :data:`COLUMNS`)."""

    request_id: str
    key: str | None
    at: float
    admitted: int = 1
    route: str | None = None
    upstream: str | None = None
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    status: int = 0
    latency_ms: float | None = None
    #: Why the request failed, when it did; also for a stream that began with
    #: a 200 and then ended in an error (the log line's ``error``).
    error: str | None = None

    def values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, c) for c in COLUMNS)


def _seconds_until(moment: float, now: float) -> int:
    return max(1, math.ceil(moment - now))


class Ledger(ABC):
    """Keys and the ledger over one DB-API connection; SQL written with ``?``."""

    def __init__(self, retention_days: int = DEFAULT_LEDGER_DAYS) -> None:
        self._lock = threading.Lock()
        self._keep_seconds = retention_days * 86400.0
        self._pruned = -math.inf

    @abstractmethod
    @contextmanager
    def _transaction(self, lock: str | None = None, *, write: bool = True) -> Iterator[Any]:
        """A transaction; its cursor-like ``execute(sql, params)`` (``lock``:
        serialize with every other transaction naming it; ``write`` False: a
        read, which takes no write lock)."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection."""

    # -- keys ----------------------------------------------------------------

    def create_key(
        self,
        *,
        name: str | None = None,
        models: Sequence[str] = ("*",),
        rpm: int | None = None,
        tpm: int | None = None,
        budget: Budget | None = None,
    ) -> tuple[str, ClientKey]:
        """A new key: its secret (shown once, never stored) and its scope."""
        while True:
            secret = "sk-sn-" + secrets.token_urlsafe(32)
            key = ClientKey(
                key_label(secret), name, tuple(models), rpm, tpm, budget, round(time.time(), 3)
            )
            with self._transaction() as tx:
                taken = tx.execute(
                    "SELECT 1 FROM streamnorm_keys WHERE label = ?", (key.label,)
                ).fetchone()
                if taken is None:
                    tx.execute(
                        "INSERT INTO streamnorm_keys (hash, label, name, models, rpm, tpm, "
                        "budget_usd, budget_period, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (
                            hash_key(secret),
                            key.label,
                            name,
                            "\n".join(key.models),
                            rpm,
                            tpm,
                            budget.usd if budget else None,
                            budget.period if budget else None,
                            key.created_at,
                        ),
                    )
                    return secret, key

    def find_key(self, secret: str) -> ClientKey | None:
        """The scope of a key that is not revoked (one indexed read); None: no such key."""
        with self._transaction() as tx:
            row = tx.execute(
                f"SELECT {_KEY_COLUMNS} FROM streamnorm_keys WHERE hash = ? AND revoked_at IS NULL",
                (hash_key(secret),),
            ).fetchone()
        return None if row is None else _key(row)

    def list_keys(self) -> list[ClientKey]:
        with self._transaction(write=False) as tx:
            rows = tx.execute(
                f"SELECT {_KEY_COLUMNS} FROM streamnorm_keys ORDER BY created_at, label"
            ).fetchall()
        return [_key(r) for r in rows]

    def revoke_key(self, label: str) -> bool:
        """Revoke the key of ``label``; False: no such key, or revoked already."""
        with self._transaction() as tx:
            cur = tx.execute(
                "UPDATE streamnorm_keys SET revoked_at = ? WHERE label = ? AND revoked_at IS NULL",
                (time.time(), label),
            )
            return bool(cur.rowcount)

    # -- admission and accounting ------------------------------------------------

    def admit(self, request_id: str, key: ClientKey, now: float | None = None) -> Refusal | None:
        """Check ``key``'s limits and, if it is within them, write the request's
        row in the same transaction (a refused request gets a row not admitted)."""
        now = time.time() if now is None else now
        with self._transaction(lock=key.label) as tx:
            refusal = _check(tx, key, now)
            tx.execute(
                "INSERT INTO streamnorm_ledger (request_id, key, at, admitted, status) "
                "VALUES (?, ?, ?, ?, ?)",
                (request_id, key.label, now, 0 if refusal else 1, 429 if refusal else 0),
            )
        return refusal

    def record(self, row: LedgerRow) -> None:
        """Write a finished request's row (replacing its admission row), and
        prune old rows when this process has not for :data:`PRUNE_EVERY`."""
        if time.monotonic() - self._pruned >= PRUNE_EVERY:
            self._pruned = time.monotonic()
            self.prune()
        names = ", ".join(COLUMNS)
        marks = ", ".join("?" for _ in COLUMNS)
        updates = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS[4:])
        with self._transaction() as tx:
            tx.execute(
                f"INSERT INTO streamnorm_ledger ({names}) VALUES ({marks}) "
                f"ON CONFLICT (request_id) DO UPDATE SET {updates}",
                row.values(),
            )

    def prune(self, now: float | None = None) -> int:
        """Delete the rows older than the retention; how many went (one
        indexed range delete: cost linear in the rows deleted)."""
        cutoff = (time.time() if now is None else now) - self._keep_seconds
        with self._transaction() as tx:
            cur = tx.execute("DELETE FROM streamnorm_ledger WHERE at < ?", (cutoff,))
            return int(cur.rowcount)

    def rows(self, since: float = 0.0) -> list[dict[str, Any]]:
        """Every row from ``since`` on, oldest first."""
        with self._transaction(write=False) as tx:
            found = tx.execute(
                f"SELECT {', '.join(COLUMNS)} FROM streamnorm_ledger WHERE at >= ? "
                "ORDER BY at, request_id",
                (since,),
            ).fetchall()
        return [dict(zip(COLUMNS, r, strict=True)) for r in found]

    def usage(self, by: str, since: float = 0.0) -> list[dict[str, Any]]:
        """Requests, tokens and cost summed by ``by`` (one of :data:`GROUPS`)."""
        if by not in GROUPS:
            raise ValueError(f"by: one of {', '.join(GROUPS)} is required")
        totals: dict[str, dict[str, Any]] = {}
        for row in self.rows(since):
            name = _group(row, by)
            total = totals.setdefault(name, _empty_total(by, name))
            total["requests"] += 1
            total["refused"] += 1 - int(row["admitted"])
            total["failed"] += _failed(row)
            for kind in TOKEN_KINDS:
                total[kind] += int(row[kind])
            if row["cost_usd"] is not None:
                total["cost_usd"] = round(total["cost_usd"] + float(row["cost_usd"]), 9)
            elif row["admitted"] and row["status"] == 200:
                total["unpriced"] += 1
        return [totals[k] for k in sorted(totals)]


_KEY_COLUMNS = "label, name, models, rpm, tpm, budget_usd, budget_period, created_at, revoked_at"


def _key(row: Sequence[Any]) -> ClientKey:
    label, name, models, rpm, tpm, usd, period, created, revoked = row
    budget = Budget(float(usd), period) if usd is not None else None
    return ClientKey(label, name, tuple(models.split("\n")), rpm, tpm, budget, created, revoked)


def _check(tx: Any, key: ClientKey, now: float) -> Refusal | None:
    """The first limit of ``key`` the request would pass, read from the ledger."""
    window = now - WINDOW
    if key.rpm is not None or key.tpm is not None:
        count, tokens, oldest = tx.execute(
            "SELECT COUNT(*), COALESCE(SUM(input_tokens + output_tokens + cache_read_tokens "
            "+ cache_write_tokens), 0), MIN(at) FROM streamnorm_ledger "
            "WHERE key = ? AND at > ? AND admitted = 1",
            (key.label, window),
        ).fetchone()
        wait = _seconds_until(float(oldest or now) + WINDOW, now)
        if key.rpm is not None and count >= key.rpm:
            return Refusal(
                "rpm", wait, f"rate limit: this key may make {key.rpm} requests a minute"
            )
        if key.tpm is not None and tokens >= key.tpm:
            return Refusal("tpm", wait, f"rate limit: this key may use {key.tpm} tokens a minute")
    if key.budget is not None:
        start, end = key.budget.bounds(now)
        (spent,) = tx.execute(
            "SELECT COALESCE(SUM(cost_usd), 0) FROM streamnorm_ledger "
            "WHERE key = ? AND at >= ? AND admitted = 1",
            (key.label, start),
        ).fetchone()
        if float(spent) >= key.budget.usd:
            return Refusal(
                "budget",
                _seconds_until(end, now),
                f"budget exhausted: this key has spent its {key.budget.usd:g} USD "
                f"for this {key.budget.period}",
            )
    return None


def _group(row: dict[str, Any], by: str) -> str:
    if by == "day":
        return datetime.fromtimestamp(float(row["at"]), timezone.utc).strftime("%Y-%m-%d")
    return str(row[by] or "none")


def _failed(row: dict[str, Any]) -> int:
    """1 for an admitted request that failed: an error status, or a stream
    that broke after its 200."""
    return int(bool(row["admitted"]) and (row["status"] >= 400 or row["error"] is not None))


def _empty_total(by: str, name: str) -> dict[str, Any]:
    return {
        by: name,
        "requests": 0,
        "refused": 0,
        **dict.fromkeys(TOKEN_KINDS, 0),
        "cost_usd": 0.0,
        "unpriced": 0,
        "failed": 0,
    }


def open_ledger(location: str, retention_days: int = DEFAULT_LEDGER_DAYS) -> Ledger:
    """The ledger in the store at ``location``: a PostgreSQL URL or a SQLite
    file path; rows older than ``retention_days`` are pruned."""
    if location.startswith(("postgresql://", "postgres://")):
        from .ledger_postgres import PostgresLedger

        return PostgresLedger(location, retention_days)
    from .ledger_sqlite import SQLiteLedger

    return SQLiteLedger(location, retention_days)
