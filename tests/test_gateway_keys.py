"""Scoped client keys, limits, budgets and the usage ledger (docs/gateway.md,
"Keys, limits, usage"): the ledger on real SQLite and PostgreSQL, the gateway
refusing in each client API's shape (across two worker processes), the CLI,
and the ledger agreeing with the Prometheus counters after 1,000 requests.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest

from streamnorm.cli import main
from streamnorm.gateway import parse_config
from streamnorm.gateway.state.ledger import (
    Budget,
    ClientKey,
    Ledger,
    LedgerRow,
    hash_key,
    open_ledger,
    parse_budget,
)

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    FakeUpstream,
    ServerThread,
    fixture_reply,
    gateway_env,
    gateway_toml,
    running_gateway,
)
from .postgres_support import postgres_server
from .stored_support import serve_workers, worker_clients, worker_of
from .support import needs_fixtures

#: A whole Chat Completions answer from an upstream named gpt-4o (the catalog prices it).
WHOLE = "named.chat"
#: Streamed answers, one per upstream API.
STREAMS = (
    "openai-completions.openai-text-include-usage",
    "anthropic-messages.text-basic",
    "google-generative-ai.text-basic",
)
CLIENT_APIS = (
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
)


def call(
    url: str,
    api: str,
    model: str,
    key: str,
    *,
    stream: bool = False,
    client: httpx2.Client | None = None,
) -> httpx.Response | httpx2.Response:
    """One request in ``api``'s own shape, with ``key`` where that API puts it:
    on a new connection, or on ``client``'s (its base URL is then ``url``)."""
    text = [{"role": "user", "content": "hi"}]
    if api == "anthropic-messages":
        body: dict[str, Any] = {"model": model, "max_tokens": 64, "messages": text}
        path, headers = "/v1/messages", {"x-api-key": key}
    elif api == "openai-responses":
        body, path = {"model": model, "input": "hi"}, "/v1/responses"
        headers = {"authorization": f"Bearer {key}"}
    elif api == "openai-completions":
        body, path = {"model": model, "messages": text}, "/v1/chat/completions"
        headers = {"authorization": f"Bearer {key}"}
    else:
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
        path, headers = f"/v1beta/models/{model}:{verb}", {"x-goog-api-key": key}
    if stream and api != "google-generative-ai":
        body["stream"] = True
    if client is not None:
        return client.post(path, json=body, headers=headers)
    return httpx.post(url + path, json=body, headers=headers, timeout=30)


def error_kind(api: str, body: dict[str, Any]) -> str:
    """The error's kind in ``api``'s own error body."""
    if api == "anthropic-messages":
        assert body["type"] == "error"
        return str(body["error"]["type"])
    if api == "google-generative-ai":
        return str(body["error"]["status"])
    return str(body["error"]["code"])


RATE_LIMITED = {
    "anthropic-messages": "rate_limit_error",
    "openai-responses": "rate_limit_exceeded",
    "openai-completions": "rate_limit_exceeded",
    "google-generative-ai": "RESOURCE_EXHAUSTED",
}
OVER_BUDGET = {
    "anthropic-messages": (402, "billing_error"),
    "openai-responses": (429, "insufficient_quota"),
    "openai-completions": (429, "insufficient_quota"),
    "google-generative-ai": (429, "RESOURCE_EXHAUSTED"),
}


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "store.sqlite3")
    else:
        yield _fresh_postgres(request.getfixturevalue("postgres_url"))


_counter = itertools.count()


def _fresh_postgres(url: str) -> str:
    """A new database on the module's server, so each test starts empty."""
    import psycopg

    name = f"ledger_{next(_counter)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    return url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture
def ledger(location: str) -> Iterator[Ledger]:
    opened = open_ledger(location)
    yield opened
    opened.close()


# -- the ledger on each backend ---------------------------------------------------


def test_a_key_is_kept_hashed_found_by_its_secret_and_revoked_at_once(ledger: Ledger) -> None:
    secret, key = ledger.create_key(models=["claude-*"], rpm=60, budget=Budget(50, "month"))
    assert secret.startswith("sk-sn-") and key.label.startswith("key-")
    found = ledger.find_key(secret)
    assert found is not None and found.models == ("claude-*",) and found.rpm == 60
    assert found.budget == Budget(50.0, "month")
    assert found.allows("claude-sonnet-4-5") and not found.allows("gpt-5")
    assert ledger.find_key(secret + "x") is None
    assert ledger.revoke_key(key.label) and not ledger.revoke_key(key.label)
    assert ledger.find_key(secret) is None
    assert [k.revoked_at is not None for k in ledger.list_keys()] == [True]


def test_the_store_holds_the_hash_never_the_secret(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    ledger = open_ledger(str(path))
    secret, _ = ledger.create_key()
    ledger.close()
    with sqlite3.connect(path) as conn:
        dump = "\n".join(conn.iterdump())
    assert secret not in dump and hash_key(secret) in dump


def test_the_sixth_request_of_a_minute_is_refused_until_the_first_leaves(ledger: Ledger) -> None:
    key = ClientKey("key-rpm", rpm=5)
    answers = [ledger.admit(f"r{i}", key, now=1000.0 + i) for i in range(6)]
    assert answers[:5] == [None] * 5
    refusal = answers[5]
    assert refusal is not None and refusal.kind == "rpm"
    assert refusal.retry_after == 55  # the first leaves the window at 1060; now is 1005
    assert ledger.admit("r6", key, now=1005.5) is not None  # refusals never count
    assert ledger.admit("r7", key, now=1060.5) is None


def test_tokens_a_minute_count_the_finished_requests(ledger: Ledger) -> None:
    key = ClientKey("key-tpm", tpm=100)
    assert ledger.admit("t0", key, now=2000.0) is None
    ledger.record(LedgerRow("t0", key.label, 2000.0, input_tokens=60, output_tokens=40))
    refusal = ledger.admit("t1", key, now=2010.0)
    assert refusal is not None and refusal.kind == "tpm" and refusal.retry_after == 50


def test_a_spent_budget_refuses_until_the_period_ends(ledger: Ledger) -> None:
    key = ClientKey("key-budget", budget=Budget(1.0, "day"))
    day = 86400.0 * 20000  # a UTC midnight
    assert ledger.admit("b0", key, now=day + 10) is None
    ledger.record(LedgerRow("b0", key.label, day + 10, cost_usd=0.6, status=200))
    assert ledger.admit("b1", key, now=day + 20) is None
    ledger.record(LedgerRow("b1", key.label, day + 20, cost_usd=0.6, status=200))
    refusal = ledger.admit("b2", key, now=day + 30)
    assert refusal is not None and refusal.kind == "budget"
    assert refusal.retry_after == 86400 - 30
    assert ledger.admit("b3", key, now=day + 86400 + 1) is None  # a new day


def test_usage_sums_by_key_model_and_day(ledger: Ledger) -> None:
    day = 86400.0 * 20000
    rows = [
        LedgerRow("u0", "key-a", day + 1, model="m1", input_tokens=3, cost_usd=0.5, status=200),
        LedgerRow("u1", "key-a", day + 2, model="m2", output_tokens=4, cost_usd=0.25, status=200),
        LedgerRow("u2", "key-b", day + 86401, model="m1", input_tokens=5, status=200),
    ]
    for row in rows:
        ledger.record(row)
    by_key = {r["key"]: r for r in ledger.usage("key")}
    assert by_key["key-a"]["requests"] == 2 and by_key["key-a"]["cost_usd"] == 0.75
    assert by_key["key-b"]["unpriced"] == 1 and by_key["key-b"]["input_tokens"] == 5
    by_model = {r["model"]: r["input_tokens"] for r in ledger.usage("model")}
    assert by_model == {"m1": 8, "m2": 0}
    assert [r["day"] for r in ledger.usage("day")] == ["2024-10-04", "2024-10-05"]
    with pytest.raises(ValueError, match="by: one of"):
        ledger.usage("colour")


def test_budgets_are_amounts_per_period() -> None:
    assert parse_budget("50/month") == Budget(50.0, "month")
    assert parse_budget("0.5/hour") == Budget(0.5, "hour")
    for bad in ("50", "50/year", "-1/day", "x/day", "nan/day"):
        with pytest.raises(ValueError, match="budget: "):
            parse_budget(bad)


def test_the_ledger_needs_the_store() -> None:
    with pytest.raises(ValueError, match=r"gateway\.ledger: .*gateway\.store"):
        parse_config(gateway_toml("http://127.0.0.1:9", ledger=True), {"GW_KEYS": "k"})


# -- the gateway -------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    yield FakeUpstream()


@pytest.fixture(scope="module")
def upstream(fake: FakeUpstream) -> Iterator[str]:
    whole = fixture_reply("openai-completions", "c01_text_basic", stream=False)
    fake.script(NAMED_MODELS["openai-completions"], whole)
    with ServerThread(fake) as up:
        yield up.url


@contextlib.contextmanager
def ledger_gateway(upstream: str, tmp_path: Path) -> Iterator[tuple[Ledger, ServerThread]]:
    """A gateway whose store and ledger are a SQLite file under ``tmp_path``."""
    with running_gateway(upstream, store=str(tmp_path / "gw.sqlite3"), ledger=True) as (app, gw):
        assert app.accounts.ledger is not None
        yield app.accounts.ledger, gw


@needs_fixtures
def test_scoped_keys_env_keys_models_and_revocation(upstream: str, tmp_path: Path) -> None:
    with ledger_gateway(upstream, tmp_path) as (ledger, gw):
        secret, key = ledger.create_key(models=["named.*"])
        for api in CLIENT_APIS:
            assert call(gw.url, api, WHOLE, secret).status_code == 200
            assert call(gw.url, api, WHOLE, GATEWAY_KEY).status_code == 200  # unscoped
            denied = call(gw.url, api, "anthropic-messages.text-basic", secret)
            assert denied.status_code == 403, denied.text
            assert "may not use" in denied.text
        ledger.revoke_key(key.label)
        for api in CLIENT_APIS:
            assert call(gw.url, api, WHOLE, secret).status_code == 401
        assert call(gw.url, "openai-completions", WHOLE, GATEWAY_KEY).status_code == 200


@needs_fixtures
def test_requests_the_gateway_refused_itself_do_not_count(upstream: str, tmp_path: Path) -> None:
    with ledger_gateway(upstream, tmp_path) as (ledger, gw):
        secret, _ = ledger.create_key(models=["named.*"], rpm=2)
        denied = [call(gw.url, "openai-completions", "other.model", secret) for _ in range(3)]
        assert [d.status_code for d in denied] == [403] * 3
        for answer in denied:
            _wait_for_row(ledger, answer.headers["x-request-id"])
        answers = [call(gw.url, "openai-completions", WHOLE, secret) for _ in range(3)]
        assert [a.status_code for a in answers] == [200, 200, 429]


@needs_fixtures
@pytest.mark.parametrize("api", CLIENT_APIS)
def test_a_budget_stops_requests_once_spent(upstream: str, tmp_path: Path, api: str) -> None:
    with ledger_gateway(upstream, tmp_path) as (ledger, gw):
        secret, key = ledger.create_key(budget=Budget(1e-9, "day"))
        first = call(gw.url, api, WHOLE, secret)
        assert first.status_code == 200
        _wait_for_row(ledger, first.headers["x-request-id"])
        refused = call(gw.url, api, WHOLE, secret)
        status, kind = OVER_BUDGET[api]
        assert refused.status_code == status, refused.text
        assert error_kind(api, refused.json()) == kind
        assert 0 < int(refused.headers["retry-after"]) <= 86400
        spent = ledger.usage("key")
        assert [(r["key"], r["requests"], r["refused"]) for r in spent] == [(key.label, 2, 1)]
        assert spent[0]["cost_usd"] > 1e-9


def _rows_once(
    ledger: Ledger, done: Callable[[list[dict[str, Any]]], bool], what: str
) -> list[dict[str, Any]]:
    """The ledger's rows once ``done`` holds of them: a finished request's
    row is written just after its answer has gone (at most 10 s)."""
    deadline = time.monotonic() + 10
    while not done(rows := ledger.rows()):
        if time.monotonic() > deadline:
            raise AssertionError(f"the ledger never held {what}")
        time.sleep(0.02)
    return rows


def _wait_for_row(ledger: Ledger, request_id: str) -> None:
    _rows_once(
        ledger,
        lambda rows: any(r["request_id"] == request_id and r["status"] for r in rows),
        f"a row for {request_id}",
    )


@needs_fixtures
def test_five_a_minute_across_two_workers_in_every_client_api(
    upstream: str, location: str, tmp_path: Path
) -> None:
    config = gateway_toml(upstream, store=location, ledger=True)
    ledger = open_ledger(location)
    limited = {api: ledger.create_key(rpm=5) for api in CLIENT_APIS}
    keys = {api: secret for api, (secret, _) in limited.items()}
    answered: list[str] = []
    with serve_workers(config, tmp_path, workers=2) as (url, log), worker_clients(url, log) as on:
        # In turn on a connection each worker holds (back to back, well inside
        # the keep-alive): the six requests of a key reach both workers, which
        # share its five a minute.
        for api in CLIENT_APIS:
            answers = [call(url, api, WHOLE, keys[api], client=on[i % 2]) for i in range(6)]
            assert [a.status_code for a in answers] == [200] * 5 + [429], answers[-1].text
            refused = answers[5]
            assert error_kind(api, refused.json()) == RATE_LIMITED[api]
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            answered += [a.headers["x-request-id"] for a in answers]
        # A key both workers have accepted, revoked elsewhere (here, as the
        # command line does), is refused at once by both.
        fresh = ledger.create_key()
        accepted = [call(url, "openai-completions", WHOLE, fresh[0], client=c) for c in on * 2]
        assert all(a.is_success for a in accepted)
        assert ledger.revoke_key(fresh[1].label)
        revoked = [call(url, "openai-completions", WHOLE, fresh[0], client=c) for c in on * 3]
        assert [r.status_code for r in revoked] == [401] * 6
        answered += [a.headers["x-request-id"] for a in accepted + revoked]
        workers = [worker_of(request_id, log) for request_id in answered]
    # Every request on the first connection went to one worker, every one on
    # the second to the other.
    assert len(set(zip(workers[::2], workers[1::2], strict=True))) == 1 and len(set(workers)) == 2
    counted = {r["key"]: (r["requests"], r["refused"]) for r in ledger.usage("key")}
    ledger.close()
    assert sorted(counted[k.label] for _, k in limited.values()) == [(6, 1)] * 4


# -- 1,000 mixed requests: the ledger agrees with Prometheus ------------------------


def _sample(app: Any, name: str, **labels: str) -> float:
    total = 0.0
    for metric in app.metrics.registry.collect():
        for s in metric.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                total += s.value
    return total


@needs_fixtures
def test_the_ledger_sums_equal_the_prometheus_counters_after_1000_requests(
    upstream: str, tmp_path: Path
) -> None:
    store = str(tmp_path / "load.sqlite3")
    with running_gateway(upstream, store=store, ledger=True) as (app, gw):
        ledger = app.accounts.ledger
        assert ledger is not None
        limited = ledger.create_key(rpm=40)[0]
        plain = ledger.create_key()[0]
        plan = [
            (api, model, stream, key)
            for api in CLIENT_APIS
            for model, stream in [(WHOLE, False), *((m, True) for m in STREAMS), ("nope.x", False)]
            for key in (limited, plain, GATEWAY_KEY)
        ]
        jobs = list(itertools.islice(itertools.cycle(plan), 1000))
        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda j: call(gw.url, j[0], j[1], j[3], stream=j[2]), jobs))
        statuses = {a.status_code for a in answers}
        assert {200, 404, 429} <= statuses, statuses
        rows = _rows_once(ledger, lambda rows: len(rows) >= 1000, "1,000 rows")
    assert len(rows) == 1000 == _sample(app, "streamnorm_gateway_requests_total")
    for direction, column in (("input", "input_tokens"), ("output", "output_tokens")):
        counted = _sample(app, "streamnorm_gateway_tokens_total", direction=direction)
        assert sum(r[column] for r in rows) == counted > 0
    cost = _sample(app, "streamnorm_gateway_cost_usd_total")
    assert sum(r["cost_usd"] or 0 for r in rows) == pytest.approx(cost, rel=1e-9)
    for status in (200, 404, 429):
        n = _sample(app, "streamnorm_gateway_requests_total", status=str(status))
        assert sum(r["status"] == status for r in rows) == n


# -- the commands -------------------------------------------------------------------


def test_keys_create_list_revoke_and_usage_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "cli.sqlite3")
    argv = ["keys", "create", "--store", store, "--models", "claude-*", "--rpm", "60"]
    assert main([*argv, "--tpm", "200000", "--budget", "50/month"]) == 0
    out = capsys.readouterr()
    secret = out.out.strip()
    assert re.fullmatch(r"sk-sn-[\w-]{43}", secret)
    assert "rpm=60 tpm=200000 budget=50/month" in out.err
    assert main(["keys", "list", "--store", store, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["models"] == ["claude-*"] and listed["revoked_at"] is None
    assert main(["keys", "revoke", "--store", store, listed["label"]]) == 0
    assert main(["keys", "revoke", "--store", store, listed["label"]]) == 1
    assert main(["keys", "create", "--store", store, "--budget", "5/year"]) == 2
    capsys.readouterr()
    with contextlib.closing(open_ledger(store)) as ledger:
        assert ledger.find_key(secret) is None
        ledger.record(LedgerRow("q1", listed["label"], 86400.0 * 20000, model="m", cost_usd=0.5))
    assert main(["usage", "--store", store, "--by", "model", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("model,requests,refused,input_tokens")
    assert lines[1].startswith("m,1,0,") and lines[0].endswith(",unpriced,failed")
    assert main(["usage", "--store", store, "--by", "day", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["day"] == "2024-10-04"
    assert main(["usage", "--store", store, "--rows", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["request_id"] == "q1"


#: The ledger's table as its first release made it, before the ``error`` column.
_FIRST_LEDGER_TABLE = (
    "CREATE TABLE streamnorm_ledger (request_id TEXT PRIMARY KEY, key TEXT, "
    "at DOUBLE PRECISION NOT NULL, admitted INTEGER NOT NULL, route TEXT, upstream TEXT, "
    "model TEXT, input_tokens BIGINT NOT NULL DEFAULT 0, output_tokens BIGINT NOT NULL DEFAULT 0, "
    "cache_read_tokens BIGINT NOT NULL DEFAULT 0, cache_write_tokens BIGINT NOT NULL DEFAULT 0, "
    "reasoning_tokens BIGINT NOT NULL DEFAULT 0, cost_usd DOUBLE PRECISION, "
    "status INTEGER NOT NULL DEFAULT 0, latency_ms DOUBLE PRECISION)"
)


def _make_first_release_table(location: str) -> None:
    if location.endswith(".sqlite3"):
        with contextlib.closing(sqlite3.connect(location)) as conn:
            conn.execute(_FIRST_LEDGER_TABLE)
            conn.execute(
                "INSERT INTO streamnorm_ledger (request_id, at, admitted) VALUES ('old', 1e10, 1)"
            )
            conn.commit()
        return
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        conn.execute(_FIRST_LEDGER_TABLE)
        conn.execute(
            "INSERT INTO streamnorm_ledger (request_id, at, admitted) VALUES ('old', 1e10, 1)"
        )


def test_a_store_made_before_the_error_column_gets_it_and_keeps_its_rows(location: str) -> None:
    _make_first_release_table(location)
    for _ in range(2):  # a second opening finds the column there
        ledger = open_ledger(location)
        try:
            ledger.record(LedgerRow("new", "key-a", 1e10, status=200, error="upstream broke"))
            rows = {r["request_id"]: r for r in ledger.rows()}
        finally:
            ledger.close()
        assert rows["old"]["error"] is None and rows["new"]["error"] == "upstream broke"


def test_usage_counts_the_requests_that_failed_after_their_200(ledger: Ledger) -> None:
    rows = [
        LedgerRow("f0", "key-a", 1.0, status=200),
        LedgerRow("f1", "key-a", 2.0, status=200, error="Overloaded"),
        LedgerRow("f2", "key-a", 3.0, status=502, error="upstream refused"),
        LedgerRow("f3", "key-a", 4.0, admitted=0, status=429),
    ]
    for row in rows:
        ledger.record(row)
    (total,) = ledger.usage("key")
    assert (total["requests"], total["refused"], total["failed"]) == (4, 1, 2)


@needs_fixtures
def test_a_stream_that_breaks_after_its_200_is_a_failed_row(upstream: str, tmp_path: Path) -> None:
    with ledger_gateway(upstream, tmp_path) as (ledger, gw):
        model = "openai-completions.openrouter-midstream-error"
        answer = call(gw.url, "openai-completions", model, GATEWAY_KEY, stream=True)
        assert answer.status_code == 200
        _wait_for_row(ledger, answer.headers["x-request-id"])
        (row,) = [r for r in ledger.rows() if r["request_id"] == answer.headers["x-request-id"]]
        assert row["status"] == 200 and row["error"], row
        assert ledger.usage("route")[0]["failed"] == 1


@needs_fixtures
def test_a_scoped_key_lists_only_the_models_it_may_use(upstream: str, tmp_path: Path) -> None:
    with ledger_gateway(upstream, tmp_path) as (ledger, gw):
        secret, _ = ledger.create_key(models=["named.c*", "named.g*"])

        def listed(key: str) -> set[str]:
            got = httpx.get(gw.url + "/v1/models", headers={"authorization": f"Bearer {key}"})
            assert got.status_code == 200, got.text
            return {m["id"] for m in got.json()["data"]}

        everything, scoped = listed(GATEWAY_KEY), listed(secret)
        assert scoped == {"named.chat", "named.gemini"} < everything
        hidden = sorted(everything - scoped)[0]
        one = httpx.get(
            gw.url + f"/v1/models/{hidden}", headers={"authorization": f"Bearer {secret}"}
        )
        assert one.status_code == 404
        shown = sorted(scoped)[0]
        one = httpx.get(
            gw.url + f"/v1/models/{shown}", headers={"authorization": f"Bearer {secret}"}
        )
        assert one.status_code == 200 and one.json()["id"] == shown


def test_rows_older_than_the_retention_are_pruned(location: str) -> None:
    day = 86400.0
    now = time.time()
    ledger = open_ledger(location, retention_days=40)
    try:
        for name, age in (("old", 41 * day), ("month", 39 * day)):
            ledger.admit(name, ClientKey("key-a"), now=now - age)
        ledger.record(LedgerRow("new", "key-a", now, status=200))  # its first record prunes
        assert sorted(r["request_id"] for r in ledger.rows()) == ["month", "new"]
        assert ledger.prune(now + 2 * day) == 1  # "month" is now past 40 days
    finally:
        ledger.close()


def test_the_ledger_keeps_at_least_a_month() -> None:
    def config(**more: Any) -> Any:
        toml = gateway_toml("http://127.0.0.1:9", store="s.sqlite3", ledger=True, **more)
        return parse_config(toml, gateway_env())

    assert config().ledger_retention_days == 400
    assert config(ledger_retention_days=32).ledger_retention_days == 32
    with pytest.raises(ValueError, match="ledger_retention_days: at least 32"):
        config(ledger_retention_days=31)
