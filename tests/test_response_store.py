"""The response store (gateway/state): SQLite and PostgreSQL behind one interface.

Each test runs on both backends: a SQLite file in a temporary folder, and a
PostgreSQL server the module starts on 127.0.0.1 (postgres_support.py). The
library side, ``decode_request(..., store=...)``, is checked here too.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from streamnorm import (
    AssistantMessage,
    StopReason,
    TextBlock,
    ToolCallBlock,
    ToolResultMessage,
    UnknownItem,
    UnknownResponse,
    Usage,
    UserMessage,
    decode_request,
    encode_request,
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
        conn.execute("DROP TABLE IF EXISTS streamnorm_response_items")


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


#: A Responses answer's output items as a client received them.
REASONING: dict[str, Any] = {
    "id": "rs_1",
    "type": "reasoning",
    "summary": [],
    "encrypted_content": "sn1.x",
}
TEXT_ITEM: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}],
}


def _with_output(record: StoredResponse, *items: dict[str, Any]) -> StoredResponse:
    return dataclasses.replace(record, response={**record.response, "output": list(items)})


def test_output_items_are_found_by_id_until_their_response_goes(opener: Opener) -> None:
    store = opener(Retention(ttl_seconds=3600))
    kept = _with_output(_stored(), REASONING, TEXT_ITEM)
    old = _with_output(_stored(created=int(time.time()) - 7200), {**TEXT_ITEM, "id": "msg_old"})
    store.put(kept)
    store.put(old)
    assert store.items(["rs_1", "msg_1", "msg_old", "rs_none"]) == {
        "rs_1": REASONING,
        "msg_1": TEXT_ITEM,
    }  # the expired response's item is invisible, an unknown id is left out
    assert store.item("msg_1") == TEXT_ITEM and store.item("rs_none") is None
    store.prune()
    assert store.items(["msg_old"]) == {}
    assert store.delete(kept.id)
    assert store.items(["rs_1", "msg_1"]) == {}


def test_many_references_are_looked_up_at_once(opener: Opener) -> None:
    store = opener()
    items = [{**TEXT_ITEM, "id": f"msg_{i}"} for i in range(1200)]
    store.put(_with_output(_stored(), *items))
    found = store.items([f"msg_{i}" for i in range(0, 1200, 1)] + ["msg_x"])
    assert len(found) == 1200 and found["msg_1199"]["id"] == "msg_1199"


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


def test_decode_request_resolves_item_references_from_a_store(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite3")
    store.put(_with_output(_stored(), TEXT_ITEM))
    body = {
        "model": "m",
        "input": [
            {"role": "user", "content": "weather?"},
            {"type": "item_reference", "id": "msg_1"},
        ],
    }
    request = decode_request(body, "openai-responses", store=store)
    assert request.messages[0] == UserMessage("weather?")
    answer = request.messages[1]
    assert isinstance(answer, AssistantMessage)
    assert [b.text for b in answer.content if isinstance(b, TextBlock)] == ["Sunny."]
    unknown = {**body, "input": [*body["input"], {"type": "item_reference", "id": "rs_gone"}]}
    with pytest.raises(UnknownItem, match=r"^input\[2\]\.id: no stored item 'rs_gone'"):
        decode_request(unknown, "openai-responses", store=store)
    store.close()


def test_without_a_store_an_item_reference_stays_for_a_responses_api_to_resolve() -> None:
    reference = {"type": "item_reference", "id": "msg_1"}
    body = {"model": "m", "input": [{"role": "user", "content": "hi"}, reference]}
    request = decode_request(body, "openai-responses", provider="openai")
    wire = encode_request(request, "openai-responses", provider="openai")
    assert wire.body["input"][1] == reference


def test_decode_request_with_an_unknown_id_names_it(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite3")
    body = {"model": "m", "previous_response_id": "resp_gone", "input": "more"}
    with pytest.raises(UnknownResponse, match=r"previous_response_id: .*'resp_gone'"):
        decode_request(body, "openai-responses", store=store)
    store.close()
