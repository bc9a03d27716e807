"""The response store (gateway/state): SQLite and PostgreSQL behind one interface.

Each test runs on both backends: a SQLite file in a temporary folder, and a
PostgreSQL server the module starts on 127.0.0.1 (postgres_support.py). The
library side, ``decode_request(..., store=...)``, is checked here too.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from streamnorm import (
    AssistantMessage,
    StopReason,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownResponse,
    Usage,
    UserMessage,
    decode_request,
)
from streamnorm.gateway.state import (
    ResponseStore,
    Retention,
    SQLiteStore,
    StoredResponse,
    new_response_id,
    open_store,
)

from .postgres_support import postgres_server

Opener = Callable[..., ResponseStore]


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens stores on one location (a fresh file, or a freshly emptied database)."""
    if request.param == "sqlite":
        location = str(tmp_path / "state" / "responses.sqlite3")
    else:
        location = request.getfixturevalue("pg_url")
        _empty(location)
    opened: list[ResponseStore] = []

    def open_(retention: Retention | None = None) -> ResponseStore:
        store = open_store(location, retention)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        store.close()


def _empty(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS streamnorm_responses")


def _answer(text: str, *, api: str = "anthropic-messages") -> AssistantMessage:
    return AssistantMessage(
        (TextBlock(text),),
        api,
        "claude-haiku-4-5",
        StopReason.STOP,
        "end_turn",
        Usage(input_tokens=3, output_tokens=2),
        "msg_1",
        provider="anthropic",
    )


def _stored(
    rid: str | None = None, *, created: int | None = None, text: str = "hi there"
) -> StoredResponse:
    rid = rid or new_response_id()
    return StoredResponse(
        rid,
        int(time.time()) if created is None else created,
        (UserMessage("hello"),),
        _answer(text),
        {"id": rid, "object": "response"},
    )


def test_put_get_delete_and_input_items(opener: Opener) -> None:
    store = opener()
    record = _stored()
    assert store.get(record.id) is None
    store.put(record)
    got = store.get(record.id)
    assert got == record
    assert got is not None and got.output.provider == "anthropic"  # the issuer survives
    assert store.input_items(record.id) == (UserMessage("hello"),)
    assert store.history(record.id) == (UserMessage("hello"), record.output)
    assert store.delete(record.id) is True
    assert store.get(record.id) is None
    assert store.delete(record.id) is False


def test_a_new_store_on_the_same_location_sees_what_was_kept(opener: Opener) -> None:
    """A restarted gateway keeps its stored responses."""
    record = _stored()
    first = opener()
    first.put(record)
    first.close()
    assert opener().get(record.id) == record


def test_expired_responses_are_invisible_and_pruned(opener: Opener) -> None:
    store = opener(Retention(ttl_seconds=60, prune_every=0))
    old = _stored(created=int(time.time()) - 120)
    store.put(old)  # pruned by this very put
    assert store.get(old.id) is None
    fresh = _stored()
    store.put(fresh)
    assert store.get(fresh.id) == fresh
    assert store.prune() == 0


def test_the_oldest_go_first_beyond_the_byte_limit(opener: Opener) -> None:
    one = len(_stored().to_json())
    store = opener(Retention(max_bytes=3 * one + one // 2, prune_every=0))
    now = int(time.time())
    records = [_stored(created=now - 10 + i) for i in range(5)]
    for record in records:
        store.put(record)
    kept = [r.id for r in records if store.get(r.id) is not None]
    assert kept == [r.id for r in records[2:]]


def test_concurrent_writers_lose_nothing(opener: Opener) -> None:
    stores = [opener() for _ in range(4)]
    records = [_stored(text=f"answer {i}") for i in range(80)]
    threads = [
        threading.Thread(target=lambda s=s, k=k: [s.put(r) for r in records[k::4]])
        for k, s in enumerate(stores)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    reader = opener()
    assert all(reader.get(r.id) == r for r in records)


def _write_many(location: str, texts: list[str], out: multiprocessing.Queue[list[str]]) -> None:
    store = open_store(location)
    ids = []
    for text in texts:
        record = _stored(text=text)
        store.put(record)
        ids.append(record.id)
    store.close()
    out.put(ids)


def test_processes_writing_one_sqlite_file_lose_nothing(tmp_path: Path) -> None:
    location = str(tmp_path / "shared.sqlite3")
    ctx = multiprocessing.get_context("spawn")
    queue: multiprocessing.Queue[list[str]] = ctx.Queue()
    procs = [
        ctx.Process(target=_write_many, args=(location, [f"p{p} {i}" for i in range(40)], queue))
        for p in range(3)
    ]
    for p in procs:
        p.start()
    ids = [i for _ in procs for i in queue.get(timeout=60)]
    for p in procs:
        p.join(60)
    store = SQLiteStore(location)
    assert len(set(ids)) == 120
    assert all(store.get(i) is not None for i in ids)
    store.close()


def test_the_sqlite_file_is_created_on_first_use_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "folder" / "r.sqlite3"
    store = SQLiteStore(path)
    assert not path.exists()
    store.put(_stored())
    assert path.exists()
    import sqlite3

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


def test_ids_are_unguessable() -> None:
    ids = {new_response_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(i.startswith("resp_") and len(i) == 5 + 48 for i in ids)


def test_default_retention_bounds_the_store() -> None:
    retention = Retention()
    assert retention.ttl_seconds == 30 * 24 * 3600
    assert retention.max_bytes == 1024**3


# -- the library side: decode_request ----------------------------------------


def test_decode_request_without_a_store_refuses_previous_response_id() -> None:
    body = {"model": "m", "previous_response_id": "resp_x", "input": "and then?"}
    with pytest.raises(ValueError, match=r"^previous_response_id: .*no response store"):
        decode_request(body, "openai-responses")


def test_decode_request_with_a_store_expands_the_history(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite3")
    call = ToolCallBlock("call_1", "get_weather", {"city": "Paris"}, '{"city":"Paris"}')
    first = AssistantMessage(
        (call,), "google-generative-ai", "gemini-3-pro-preview", StopReason.TOOL_USE,
        "STOP", Usage(), None, provider="google",
    )  # fmt: skip
    record = StoredResponse(
        new_response_id(), int(time.time()), (UserMessage("weather?"),), first, {}
    )
    store.put(record)
    body = {
        "model": "m",
        "previous_response_id": record.id,
        "input": [{"type": "function_call_output", "call_id": "call_1", "output": "sunny"}],
    }
    request = decode_request(body, "openai-responses", store=store)
    assert request.messages[:2] == (UserMessage("weather?"), first)
    assert isinstance(request.messages[2], ToolResultMessage)
    assert request.messages[2].tool_call_id == "call_1"
    assert "previous_response_id" not in (request.extra or {}).get("openai-responses", {})
    store.close()


def test_decode_request_with_an_unknown_id_names_it(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite3")
    body = {"model": "m", "previous_response_id": "resp_gone", "input": "more"}
    with pytest.raises(UnknownResponse, match=r"previous_response_id: .*'resp_gone'"):
        decode_request(body, "openai-responses", store=store)
    store.close()
