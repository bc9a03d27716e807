"""Stored Responses through the gateway: ``previous_response_id`` on every
upstream API, ``GET``/``DELETE /v1/responses/{id}``, ``input_items``,
``store: false``, unknown ids, concurrent writers, several worker processes
(``streamnorm serve --workers 2``) on SQLite and on PostgreSQL, and a restart.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamnorm import Done, ThinkingBlock, normalize

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    SHORT,
    FakeUpstream,
    Reply,
    ServerThread,
    fixture_reply,
    gateway_toml,
    running_gateway,
    sse_events,
)
from .postgres_support import postgres_server
from .stored_support import (
    QUESTION,
    TOOLS,
    assert_full_history,
    responses_client,
    serve_workers,
    tool_loop,
    worker_clients,
    worker_of,
)
from .support import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

AUTH = {"authorization": f"Bearer {GATEWAY_KEY}"}
CROSS = ("anthropic-messages", "openai-completions", "google-generative-ai")


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    yield FakeUpstream()


@pytest.fixture(scope="module")
def upstream(fake: FakeUpstream) -> Iterator[str]:
    with ServerThread(fake) as up:
        yield up.url


@pytest.fixture(scope="module")
def url(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("store") / "responses.sqlite3"
    with running_gateway(upstream, store=str(store)) as (_, gw):
        yield gw.url


def _create(url: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(url + "/v1/responses", json=body, headers=AUTH, timeout=10)


def _text_answer(fake: FakeUpstream, api: str) -> str:
    """``api``'s upstream answers the next call with a recorded whole text answer."""
    stems = {
        "anthropic-messages": "a01_text_simple",
        "openai-completions": "c01_text_basic",
        "google-generative-ai": "g01_text_basic",
        "openai-responses": "r01_text_basic",
    }
    fake.script(NAMED_MODELS[api], fixture_reply(api, stems[api], stream=False))
    return f"named.{SHORT[api]}"


# -- the three-turn tool loop -------------------------------------------------


@pytest.mark.parametrize("api", CROSS)
def test_a_tool_loop_with_previous_response_id_sends_the_whole_history(
    url: str, fake: FakeUpstream, api: str
) -> None:
    fake.clear()
    loop = tool_loop(url, fake, api)
    bodies = [r.body for r in fake.requests_for(NAMED_MODELS[api])]
    assert len(bodies) == 3 and len(loop.results) == 2
    assert_full_history(api, bodies[2], loop.results)
    assert loop.responses[2].previous_response_id == loop.responses[1].id
    assert loop.responses[2].output_text
    for response in loop.responses:  # GET gives the object the stream ended with
        got = httpx.get(f"{url}/v1/responses/{response.id}", headers=AUTH).json()
        assert got == response.model_dump(mode="json", exclude_unset=True)


def test_turn_two_carries_the_first_answers_reasoning_state_back(
    url: str, fake: FakeUpstream
) -> None:
    """The Anthropic signature the first answer issued reaches Anthropic again."""
    fake.clear()
    tool_loop(url, fake, "anthropic-messages")
    last = fake.requests_for(NAMED_MODELS["anthropic-messages"])[-1].body
    thinking = [b for m in last["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "thinking"]  # fmt: skip
    assert thinking and thinking[0]["signature"].startswith("Eo")


# -- item_reference (the AI SDK's Responses provider with store: true) -------


def _ai_sdk_turn_two(response: Any, result: str) -> list[dict[str, Any]]:
    """Turn two as the AI SDK sends it with ``store: true``: the answer's
    reasoning and text as ``item_reference``s, its calls whole, then results."""
    items: list[dict[str, Any]] = [{"role": "user", "content": QUESTION}]
    for item in response.output:
        if item.type in ("reasoning", "message"):
            items.append({"type": "item_reference", "id": item.id})
        else:
            items.append(item.model_dump(mode="json", exclude_unset=True))
    calls = [item for item in response.output if item.type == "function_call"]
    items += [
        {"type": "function_call_output", "call_id": c.call_id, "output": result} for c in calls
    ]
    return items


def _first_turn(url: str, fake: FakeUpstream, stem: str) -> Any:
    api = "anthropic-messages"
    data = (FIXTURES / api / f"{stem}.sse").read_bytes()
    fake.script(NAMED_MODELS[api], Reply(200, sse_events(data)))
    stream = responses_client(url).responses.create(
        model=f"named.{SHORT[api]}", input=QUESTION, tools=TOOLS, stream=True
    )
    return [e.response for e in stream if e.type == "response.completed"][-1]


def test_item_references_become_the_items_this_gateway_kept(url: str, fake: FakeUpstream) -> None:
    """The Anthropic signature of turn one reaches Anthropic again byte for
    byte, though the client sent only a reference to the reasoning item."""
    api = "anthropic-messages"
    events = normalize((FIXTURES / api / "thinking-then-tool-use.sse").read_bytes(), api)
    signed = next(e.message for e in events if isinstance(e, Done))
    signature = next(b.signature for b in signed.content if isinstance(b, ThinkingBlock))
    first = _first_turn(url, fake, "thinking-then-tool-use")
    assert any(item.type == "reasoning" for item in first.output)
    fake.script(NAMED_MODELS[api], fixture_reply(api, "a01_text_simple", stream=False))
    fake.clear()
    body = {
        "model": f"named.{SHORT[api]}",
        "input": _ai_sdk_turn_two(first, "18 C"),
        "tools": TOOLS,
    }
    answer = _create(url, body)
    assert answer.status_code == 200, answer.text
    sent = fake.requests_for(NAMED_MODELS[api])[-1].body
    assistant = next(m for m in sent["messages"] if m["role"] == "assistant")
    kinds = [b["type"] for b in assistant["content"]]
    assert kinds[0] == "thinking" and "tool_use" in kinds
    assert assistant["content"][0]["signature"] == signature
    assert "x-streamnorm-warnings" not in answer.headers


def test_an_item_reference_the_gateway_does_not_hold_is_refused_naming_it(
    url: str, fake: FakeUpstream
) -> None:
    model = _text_answer(fake, "anthropic-messages")
    fake.clear()
    body = {"model": model, "input": [{"role": "user", "content": "hi"},
                                      {"type": "item_reference", "id": "rs_nowhere"}]}  # fmt: skip
    answer = _create(url, body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["param"] == "input[1].id" and "'rs_nowhere'" in error["message"]
    assert "store: false" in error["message"]
    assert fake.requests_for(NAMED_MODELS["anthropic-messages"]) == []


def test_an_item_reference_goes_to_a_responses_upstream_unchanged(
    url: str, fake: FakeUpstream
) -> None:
    model = _text_answer(fake, "openai-responses")
    fake.clear()
    reference = {"type": "item_reference", "id": "msg_upstream_own"}
    body = {"model": model, "input": [{"role": "user", "content": "hi"}, reference]}
    assert _create(url, body).status_code == 200
    sent = fake.requests_for(NAMED_MODELS["openai-responses"])[-1].body
    assert sent["input"][1] == reference


def test_without_a_store_an_item_reference_is_refused(upstream: str, fake: FakeUpstream) -> None:
    with running_gateway(upstream) as (_, gw):
        model = _text_answer(fake, "google-generative-ai")
        body = {"model": model, "input": [{"role": "user", "content": "hi"},
                                          {"type": "item_reference", "id": "msg_1"}]}  # fmt: skip
        answer = _create(gw.url, body)
        assert answer.status_code == 400
        assert answer.json()["error"]["param"] == "input[1].id"
        assert "gateway.store" in answer.json()["error"]["message"]


# -- the stored-response endpoints ---------------------------------------------


def test_get_returns_the_object_the_client_received(url: str, fake: FakeUpstream) -> None:
    model = _text_answer(fake, "anthropic-messages")
    created = _create(url, {"model": model, "input": "hi", "temperature": 0.25}).json()
    got = httpx.get(f"{url}/v1/responses/{created['id']}", headers=AUTH)
    assert got.status_code == 200
    assert got.json() == created
    assert got.json()["temperature"] == 0.25 and got.json()["store"] is True


def test_input_items_list_the_history_in_either_order(url: str, fake: FakeUpstream) -> None:
    api = "openai-completions"
    loop = tool_loop(url, fake, api)
    results = loop.results
    last = loop.responses[-1].id
    asc = httpx.get(f"{url}/v1/responses/{last}/input_items?order=asc", headers=AUTH).json()
    assert asc["object"] == "list" and asc["has_more"] is False
    kinds = [i["type"] for i in asc["data"]]
    assert kinds == ["message", *["function_call", "function_call_output"] * 2]
    assert asc["data"][0]["content"] == [{"type": "input_text", "text": QUESTION}]
    assert [i["output"] for i in asc["data"] if i["type"] == "function_call_output"] == results
    desc = httpx.get(f"{url}/v1/responses/{last}/input_items", headers=AUTH).json()
    assert [i["id"] for i in desc["data"]] == [i["id"] for i in reversed(asc["data"])]
    page = httpx.get(
        f"{url}/v1/responses/{last}/input_items?order=asc&limit=2&after={asc['data'][0]['id']}",
        headers=AUTH,
    ).json()
    assert [i["id"] for i in page["data"]] == [i["id"] for i in asc["data"][1:3]]
    assert page["has_more"] is True


def test_delete_removes_it_and_a_later_turn_is_told_which_id(url: str, fake: FakeUpstream) -> None:
    model = _text_answer(fake, "google-generative-ai")
    rid = _create(url, {"model": model, "input": "hi"}).json()["id"]
    deleted = httpx.delete(f"{url}/v1/responses/{rid}", headers=AUTH)
    assert deleted.json() == {"id": rid, "object": "response", "deleted": True}
    missing = httpx.get(f"{url}/v1/responses/{rid}", headers=AUTH)
    assert missing.status_code == 404 and rid in missing.json()["error"]["message"]
    assert httpx.delete(f"{url}/v1/responses/{rid}", headers=AUTH).status_code == 404
    fake.clear()
    again = _create(url, {"model": model, "input": "more", "previous_response_id": rid})
    assert again.status_code == 400
    error = again.json()["error"]
    assert rid in error["message"]
    assert error["param"] == "previous_response_id"
    assert error["code"] == "previous_response_not_found"
    assert fake.requests_for(NAMED_MODELS["google-generative-ai"]) == []


def test_store_false_keeps_nothing(url: str, fake: FakeUpstream) -> None:
    model = _text_answer(fake, "openai-completions")
    created = _create(url, {"model": model, "input": "hi", "store": False}).json()
    assert created["store"] is False
    assert httpx.get(f"{url}/v1/responses/{created['id']}", headers=AUTH).status_code == 404


def test_the_stored_endpoints_need_the_gateway_key(url: str, fake: FakeUpstream) -> None:
    model = _text_answer(fake, "anthropic-messages")
    rid = _create(url, {"model": model, "input": "hi"}).json()["id"]
    assert httpx.get(f"{url}/v1/responses/{rid}").status_code == 401
    assert httpx.delete(f"{url}/v1/responses/{rid}").status_code == 401


def test_an_id_the_gateway_never_issued_goes_to_a_responses_upstream_unchanged(
    url: str, fake: FakeUpstream
) -> None:
    model = _text_answer(fake, "openai-responses")
    fake.clear()
    body = {"model": model, "input": "more", "previous_response_id": "resp_upstream_own"}
    assert _create(url, body).status_code == 200
    sent = fake.requests_for(NAMED_MODELS["openai-responses"])[-1].body
    assert sent["previous_response_id"] == "resp_upstream_own"


def test_a_stored_id_is_expanded_for_a_responses_upstream_too(url: str, fake: FakeUpstream) -> None:
    first = _create(url, {"model": _text_answer(fake, "anthropic-messages"), "input": "hi"})
    model = _text_answer(fake, "openai-responses")
    fake.clear()
    body = {"model": model, "input": "and then?", "previous_response_id": first.json()["id"]}
    assert _create(url, body).status_code == 200
    sent = fake.requests_for(NAMED_MODELS["openai-responses"])[-1].body
    assert "previous_response_id" not in sent
    roles = [i.get("role") for i in sent["input"] if i.get("type", "message") == "message"]
    assert roles == ["user", "assistant", "user"]


def test_conversation_is_refused_where_it_would_be_lost(url: str, fake: FakeUpstream) -> None:
    model = _text_answer(fake, "anthropic-messages")
    answer = _create(url, {"model": model, "input": "hi", "conversation": "conv_1"})
    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == "conversation"


def test_parallel_requests_are_all_kept(url: str, fake: FakeUpstream) -> None:
    model = _text_answer(fake, "openai-completions")
    with ThreadPoolExecutor(8) as pool:
        answers = list(
            pool.map(lambda i: _create(url, {"model": model, "input": f"n{i}"}), range(24))
        )
    ids = [a.json()["id"] for a in answers]
    assert len(set(ids)) == 24
    for rid in ids:
        assert httpx.get(f"{url}/v1/responses/{rid}", headers=AUTH).status_code == 200


def test_without_a_store_previous_response_id_is_refused(upstream: str, fake: FakeUpstream) -> None:
    with running_gateway(upstream) as (_, gw):
        model = _text_answer(fake, "anthropic-messages")
        answer = _create(gw.url, {"model": model, "input": "x", "previous_response_id": "resp_1"})
        assert answer.status_code == 400
        assert "gateway.store" in answer.json()["error"]["message"]
        assert httpx.get(f"{gw.url}/v1/responses/resp_1", headers=AUTH).status_code == 404


# -- two worker processes, SQLite and PostgreSQL, a restart --------------------


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store_location(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path_factory.mktemp("shared") / "responses.sqlite3")
    else:
        with postgres_server() as pg:
            yield pg


def test_two_workers_serve_tool_loops_and_a_restart_keeps_them(
    upstream: str,
    fake: FakeUpstream,
    store_location: str,
    tmp_path: Path,
) -> None:
    config = gateway_toml(upstream, store=store_location)
    kept: list[str] = []
    with serve_workers(config, tmp_path, workers=2) as (url, log):
        # Each turn from a new client, on a connection one worker holds and
        # then the other's: no turn is served by the worker of the turn before.
        turns: list[list[str]] = []
        with worker_clients(url, log) as on:
            for api in CROSS:
                fake.clear()
                loop = tool_loop(url, fake, api, on)
                last = fake.requests_for(NAMED_MODELS[api])[-1].body
                assert_full_history(api, last, loop.results)
                kept += [r.id for r in loop.responses]
                turns.append(loop.request_ids)
        for ids in turns:
            workers = [worker_of(i, log) for i in ids]
            assert all(a != b for a, b in itertools.pairwise(workers)), workers
        model = _text_answer(fake, "openai-completions")
        with ThreadPoolExecutor(8) as pool:
            answers = list(
                pool.map(lambda i: _create(url, {"model": model, "input": f"n{i}"}), range(16))
            )
        kept += [a.json()["id"] for a in answers]
    with serve_workers(config, tmp_path, workers=2) as (url, _):
        for rid in kept:
            got = httpx.get(f"{url}/v1/responses/{rid}", headers=AUTH)
            assert got.status_code == 200 and got.json()["id"] == rid
        client = responses_client(url)
        model = _text_answer(fake, "anthropic-messages")
        fake.clear()
        later = client.responses.create(
            model=model, input="thanks", previous_response_id=kept[2], tools=TOOLS, stream=False
        )
        assert later.previous_response_id == kept[2]
        sent = fake.requests_for(NAMED_MODELS["anthropic-messages"])[-1].body
        assert json.dumps(sent).index(QUESTION) < json.dumps(sent).index("thanks")


# -- configuration ----------------------------------------------------------------


def test_the_store_settings_are_read_and_checked(tmp_path: Path) -> None:
    from streamnorm.gateway import load_config, parse_config

    from .gateway_support import gateway_env

    env = gateway_env()
    config = parse_config(gateway_toml("http://127.0.0.1:9"), env)
    assert config.store is None  # nothing is kept unless a store is named
    data = gateway_toml("http://127.0.0.1:9", store="r.sqlite3", store_ttl_seconds=60)
    config = parse_config(data, env, base=tmp_path)
    assert config.store == str(tmp_path / "r.sqlite3")
    assert config.store_retention.ttl_seconds == 60
    assert config.store_retention.max_bytes == 1024**3
    (tmp_path / "g.toml").write_text(
        '[gateway]\nstore = "state/r.sqlite3"\n'
        '[upstreams.a]\napi = "anthropic"\nbase_url = "http://127.0.0.1:9"\n'
        '[[routes]]\nmodels = "*"\nupstreams = "a"\n'
    )
    assert load_config(tmp_path / "g.toml", env).store == str(tmp_path / "state" / "r.sqlite3")
    url = "postgresql://gw:pg-SECRET-pass@db.internal/streamnorm"
    config = parse_config(gateway_toml("http://127.0.0.1:9", store=url), env)
    assert config.store == url and "pg-SECRET-pass" in config.secrets()
    for bad, key in (({"store": "redis://x"}, "store"), ({"store_max_bytes": 0}, "store_max")):
        with pytest.raises(ValueError, match=f"^gateway.{key}"):
            parse_config(gateway_toml("http://127.0.0.1:9", **bad), env)


def test_a_store_that_fails_is_a_503_and_its_password_stays_out_of_the_log(
    upstream: str, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("psycopg")
    from .gateway_support import free_port

    store = f"postgresql://gw:pw-SECRET-7a@127.0.0.1:{free_port()}/nowhere"
    with running_gateway(upstream, store=store) as (_, gw), caplog.at_level("WARNING"):
        got = httpx.get(f"{gw.url}/v1/responses/resp_1", headers=AUTH)
        assert got.status_code == 503
        assert got.json()["error"]["message"] == "the response store is unavailable"
        model = _text_answer(fake, "anthropic-messages")
        body = {"model": model, "input": "x", "previous_response_id": "resp_1"}
        assert _create(gw.url, body).status_code == 503
        answer = _create(gw.url, {"model": model, "input": "x"})
        assert answer.status_code == 200  # the answer stands; the log says it was not kept
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "store_failed" in logged and "store_unavailable" in logged
    assert "pw-SECRET-7a" not in logged
