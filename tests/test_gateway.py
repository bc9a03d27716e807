"""The gateway through real sockets: errors, limits, security, observability.

One fake upstream and one gateway (uvicorn on 127.0.0.1) serve the whole
module. Errors are checked in each client API's own format, where possible
by that API's official SDK raising its own exception for the status; every
response body and every log line of the module is then searched for the
keys the gateway holds.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from streamnorm import TextBlock
from streamnorm.gateway import Gateway
from streamnorm.gateway.telemetry import LOGGER, key_label

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    SHORT,
    UPSTREAM_KEYS,
    WAIT,
    FakeUpstream,
    Reply,
    ServerThread,
    fixture_reply,
    running_gateway,
    sse_events,
)
from .support import FIXTURES, final_done, needs_fixtures

pytestmark = needs_fixtures

MAX_BODY = 64 * 1024
MAX_CONCURRENCY = 3
SEEN: list[str] = []  # every response body and error text of the module
LOG_LINES: list[str] = []


def log_for(request_id: str) -> dict[str, Any]:
    """The log line of a request (written just after its last byte is sent)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for line in LOG_LINES:
            data: dict[str, Any] = json.loads(line)
            if data["request_id"] == request_id:
                return data
        time.sleep(0.01)
    raise AssertionError(f"no log line for {request_id}")


class _Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LOG_LINES.append(record.getMessage())


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[FakeUpstream, Gateway, str]]:
    handler = _Collect()
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    fake = FakeUpstream()
    fake.script("busy-503", Reply(503, [b'{"error":{"message":"busy"}}'], "application/json"))
    try:
        with (
            ServerThread(fake) as up,
            running_gateway(up.url, max_body_bytes=MAX_BODY, max_concurrency=MAX_CONCURRENCY) as (
                app,
                gw,
            ),
        ):
            yield fake, app, gw.url
    finally:
        LOGGER.removeHandler(handler)


@pytest.fixture
def fake(servers: tuple[FakeUpstream, Gateway, str]) -> FakeUpstream:
    return servers[0]


@pytest.fixture
def url(servers: tuple[FakeUpstream, Gateway, str]) -> str:
    return servers[2]


HEADERS = {
    "anthropic-messages": {"x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01"},
    "openai-responses": {"authorization": f"Bearer {GATEWAY_KEY}"},
    "openai-completions": {"authorization": f"Bearer {GATEWAY_KEY}"},
    "google-generative-ai": {"x-goog-api-key": GATEWAY_KEY},
}
PATHS = {
    "anthropic-messages": "/v1/messages",
    "openai-responses": "/v1/responses",
    "openai-completions": "/v1/chat/completions",
}


def body_for(api: str, model: str, *, stream: bool = True) -> dict[str, Any]:
    if api == "anthropic-messages":
        return {
            "model": model,
            "max_tokens": 64,
            "stream": stream,
            "messages": [{"role": "user", "content": "hi"}],
        }
    if api == "openai-responses":
        return {"model": model, "input": "hi", "stream": stream}
    if api == "openai-completions":
        return {"model": model, "stream": stream, "messages": [{"role": "user", "content": "hi"}]}
    return {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def path_for(api: str, model: str, *, stream: bool = True) -> str:
    if api == "google-generative-ai":
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"/v1beta/models/{model}:{method}"
    return PATHS[api]


def post(url: str, api: str, model: str, *, stream: bool = True, **kw: Any) -> httpx.Response:
    headers = kw.pop("headers", HEADERS[api])
    json_body = kw.pop("json", body_for(api, model, stream=stream))
    with httpx.Client(timeout=WAIT) as client:
        r = client.post(
            url + path_for(api, model, stream=stream), headers=headers, json=json_body, **kw
        )
    SEEN.append(r.text)
    return r


def error_message(api: str, data: dict[str, Any]) -> str:
    """The message of an error body, asserting the body has ``api``'s error shape."""
    if api == "anthropic-messages":
        assert data["type"] == "error" and set(data["error"]) == {"type", "message"}, data
    elif api == "google-generative-ai":
        assert set(data["error"]) == {"code", "message", "status"}, data
    else:
        assert {"message", "type", "param", "code"} <= set(data["error"]), data
    return str(data["error"]["message"])


APIS = list(HEADERS)
#: A plain text stream recorded from each API.
TEXT = {
    "anthropic-messages": "text-basic",
    "openai-responses": "text-basic",
    "openai-completions": "openai-text-include-usage",
    "google-generative-ai": "text-basic",
}


# -- authentication ---------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_missing_or_wrong_key_is_401_in_the_clients_format(
    url: str, fake: FakeUpstream, api: str
) -> None:
    fake.clear()
    for headers in ({}, {k: v.replace(GATEWAY_KEY, "wrong") for k, v in HEADERS[api].items()}):
        r = post(url, api, f"{api}.text-basic", headers=headers)
        assert r.status_code == 401
        assert "gateway key" in error_message(api, r.json())
    assert fake.received == []


@pytest.mark.parametrize(
    ("api", "headers", "query"),
    [
        ("anthropic-messages", {"x-api-key": GATEWAY_KEY}, {}),
        ("anthropic-messages", {"authorization": f"Bearer {GATEWAY_KEY}"}, {}),
        ("openai-completions", {"authorization": f"bearer {GATEWAY_KEY}"}, {}),
        ("google-generative-ai", {"x-goog-api-key": GATEWAY_KEY}, {}),
        ("google-generative-ai", {}, {"key": GATEWAY_KEY}),
    ],
)
def test_each_api_own_key_header_is_accepted(
    url: str, api: str, headers: dict[str, str], query: dict[str, str]
) -> None:
    stem = TEXT[api]
    params = {"alt": "sse", **query} if api == "google-generative-ai" else query
    r = post(url, api, f"{api}.{stem}", headers=headers, params=params)
    assert r.status_code == 200, r.text
    assert r.content == b"".join(fixture_reply(api, stem, stream=True).chunks)


def test_a_key_in_another_apis_header_is_refused(url: str) -> None:
    r = post(
        url, "openai-completions", "openai-completions.text", headers={"x-api-key": GATEWAY_KEY}
    )
    assert r.status_code == 401


# -- bad requests, unknown models, size limits ------------------------------


@pytest.mark.parametrize("api", APIS)
def test_bad_bodies_are_400_naming_the_field(url: str, api: str) -> None:
    with httpx.Client(timeout=WAIT) as client:
        r = client.post(url + path_for(api, "x"), headers=HEADERS[api], content=b"{not json")
    SEEN.append(r.text)
    assert r.status_code == 400
    assert error_message(api, r.json()).startswith("body:")
    if api != "google-generative-ai":
        r = post(url, api, "", json={"stream": True})
        assert r.status_code == 400
        assert error_message(api, r.json()).startswith("model:")
        if api != "anthropic-messages":
            assert r.json()["error"]["param"] == "model"


def test_unknown_model_is_404_through_each_sdk(url: str, fake: FakeUpstream) -> None:
    fake.clear()
    client_a = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
    with pytest.raises(anthropic.NotFoundError) as exc_a:
        client_a.messages.create(
            model="nope", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    assert "'nope' is not served" in str(exc_a.value)
    client_o = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    with pytest.raises(openai.NotFoundError) as exc_o:
        client_o.chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])
    assert exc_o.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError):
        client_o.responses.create(model="nope", input="hi")
    client_g = genai.Client(api_key=GATEWAY_KEY, http_options=genai_types.HttpOptions(base_url=url))
    with pytest.raises(genai_errors.ClientError) as exc_g:
        client_g.models.generate_content(model="nope", contents="hi")
    assert exc_g.value.code == 404 and exc_g.value.status == "NOT_FOUND"
    SEEN.extend(str(e.value) for e in (exc_a, exc_o, exc_g))
    assert fake.received == []


def test_a_path_model_that_is_not_a_name_never_reaches_an_upstream(
    url: str, fake: FakeUpstream
) -> None:
    fake.clear()
    for model in ("..%2F..%2Fadmin", "a%3Fb", "%2e%2e"):
        r = post(url, "google-generative-ai", model)
        assert r.status_code in (400, 404), (model, r.text)
    assert fake.received == []


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("api", ["anthropic-messages", "google-generative-ai"])
def test_body_over_the_limit_is_413(url: str, fake: FakeUpstream, api: str, chunked: bool) -> None:
    fake.clear()
    big = json.dumps({**body_for(api, f"{api}.text-basic"), "pad": "x" * MAX_BODY}).encode()
    content: Any = iter([big[i : i + 8192] for i in range(0, len(big), 8192)]) if chunked else big
    with httpx.Client(timeout=WAIT) as client:
        r = client.post(
            url + path_for(api, f"{api}.text-basic"), headers=HEADERS[api], content=content
        )
    SEEN.append(r.text)
    assert r.status_code == 413
    assert "limit" in error_message(api, r.json())
    assert fake.received == []


# -- upstream failures -------------------------------------------------------


def test_upstream_error_keeps_status_and_message_and_hides_the_key(
    url: str, fake: FakeUpstream
) -> None:
    key = UPSTREAM_KEYS["anthropic-messages"]
    err = {"type": "error", "error": {"type": "invalid_request_error", "message": f"bad key {key}"}}
    fake.script(
        "anthropic-messages.echo-key", Reply(400, [json.dumps(err).encode()], "application/json")
    )
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    fake.script(
        "anthropic-messages.limited", Reply(429, [json.dumps(limited).encode()], "application/json")
    )
    client = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
    with pytest.raises(anthropic.BadRequestError) as exc:
        client.messages.create(
            model="anthropic-messages.echo-key",
            max_tokens=8,
            messages=[{"role": "user", "content": "hi"}],
        )
    SEEN.append(str(exc.value))
    assert "bad key ***" in str(exc.value) and key not in str(exc.value)
    with pytest.raises(anthropic.RateLimitError) as exc2:
        client.messages.create(
            model="anthropic-messages.limited",
            max_tokens=8,
            messages=[{"role": "user", "content": "hi"}],
        )
    assert "slow down" in str(exc2.value)


def test_unreachable_upstream_is_502_through_the_sdk(url: str) -> None:
    client = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    with pytest.raises(openai.InternalServerError) as exc:
        client.chat.completions.create(
            model="dead.model", messages=[{"role": "user", "content": "hi"}]
        )
    assert exc.value.status_code == 502 and "unreachable" in str(exc.value)


def test_fallbacks_pass_a_dead_and_a_busy_upstream_before_the_first_byte(
    url: str, fake: FakeUpstream
) -> None:
    fake.clear()
    fake.script(
        "fallback.ok", fixture_reply("openai-completions", "openai-text-include-usage", stream=True)
    )
    r = post(url, "openai-completions", "fallback.ok")
    assert r.status_code == 200
    expected = (FIXTURES / "openai-completions" / "openai-text-include-usage.sse").read_bytes()
    assert r.content == expected
    assert [x.model for x in fake.received] == ["busy-503", "fallback.ok"]
    line = log_for(r.headers["x-request-id"])
    assert line["attempts"] == ["dead", "busy", "chat"] and line["upstream"] == "chat"
    assert line["status"] == 200 and line["output_tokens"] > 0


def test_an_upstream_without_its_key_is_skipped(url: str, fake: FakeUpstream) -> None:
    fake.clear()
    fake.script(
        "keyless.ok", fixture_reply("openai-completions", TEXT["openai-completions"], stream=True)
    )
    r = post(url, "openai-completions", "keyless.ok")
    assert r.status_code == 200 and len(fake.received) == 1
    line = log_for(r.headers["x-request-id"])
    assert line["attempts"] == ["keyless", "chat"] and line["upstream"] == "chat"


def test_a_redirect_is_not_followed(url: str, fake: FakeUpstream) -> None:
    fake.clear()
    fake.script("openai-completions.redirect", Reply(307, [b""], "text/plain"))
    r = post(url, "openai-completions", "openai-completions.redirect")
    assert r.status_code == 502 and "redirect" in r.json()["error"]["message"]
    assert len(fake.received) == 1


def _cut_reply(api: str, stem: str, keep: int, *, cut: bool) -> Reply:
    events = sse_events((FIXTURES / api / f"{stem}.sse").read_bytes())
    return Reply(200, events[:keep], cut=cut)


def test_anthropic_stream_cut_midway_ends_with_an_error_event(url: str, fake: FakeUpstream) -> None:
    fake.script(
        "anthropic-messages.cut", _cut_reply("anthropic-messages", "text-basic", 3, cut=True)
    )
    client = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
    with (
        pytest.raises(anthropic.APIStatusError) as exc,
        client.messages.stream(
            model="anthropic-messages.cut",
            max_tokens=8,
            messages=[{"role": "user", "content": "hi"}],
        ) as stream,
    ):
        for _ in stream:
            pass
    assert "connection broke" in str(exc.value)


def test_chat_stream_ended_early_ends_with_an_error_chunk(url: str, fake: FakeUpstream) -> None:
    fake.script(
        "openai-completions.short",
        _cut_reply("openai-completions", "openai-text-include-usage", 2, cut=False),
    )
    r = post(url, "openai-completions", "openai-completions.short")
    last = r.text.strip().split("\n\n")[-1]
    assert json.loads(last.removeprefix("data: "))["error"]["message"].startswith("the upstream")
    client = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    with pytest.raises(openai.APIError, match="ended before its last event"):
        for _ in client.chat.completions.create(
            model="openai-completions.short",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        ):
            pass


def test_gemini_stream_cut_midway_raises_in_the_sdk(url: str, fake: FakeUpstream) -> None:
    fake.script(
        "google-generative-ai.cut", _cut_reply("google-generative-ai", "text-basic", 1, cut=True)
    )
    client = genai.Client(api_key=GATEWAY_KEY, http_options=genai_types.HttpOptions(base_url=url))
    with pytest.raises(genai_errors.ServerError, match="connection broke"):
        for _ in client.models.generate_content_stream(
            model="google-generative-ai.cut", contents="hi"
        ):
            pass


def test_responses_stream_cut_midway_ends_with_an_error_event_in_sequence(
    url: str, fake: FakeUpstream
) -> None:
    model = "openai-responses.cut"
    fake.script(model, _cut_reply("openai-responses", "text-basic", 5, cut=True))
    sdk = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    events = list(sdk.responses.create(model=model, input="hi", stream=True))
    assert [e.type for e in events[:1]] == ["response.created"] and len(events) == 6
    last = events[-1]
    assert last.type == "error" and "connection broke" in last.message
    assert last.sequence_number == 5


@pytest.mark.parametrize("client_api", ["openai-completions", "anthropic-messages"])
def test_a_client_that_disconnects_closes_the_upstream_within_a_second(
    url: str, fake: FakeUpstream, client_api: str
) -> None:
    """Same API and cross API: the client reads its first bytes and leaves while
    the upstream keeps streaming; the upstream connection closes under a second."""
    model = f"openai-completions.endless-{client_api}"
    events = sse_events(
        (FIXTURES / "openai-completions" / TEXT["openai-completions"])
        .with_suffix(".sse")
        .read_bytes()
    )
    fake.script(model, Reply(200, events[:3], delay=0.05, hang=8.0))
    fake.clear()
    with (
        httpx.Client(timeout=WAIT) as client,
        client.stream(
            "POST",
            url + PATHS[client_api],
            headers=HEADERS[client_api],
            json=body_for(client_api, model),
        ) as r,
    ):
        assert r.status_code == 200
        chunks = r.iter_raw()
        assert next(chunks)
    closed = time.monotonic()  # leaving the block closed the connection
    deadline = closed + 3
    while fake.received[0].closed_at is None and time.monotonic() < deadline:
        time.sleep(0.01)
    closed_at = fake.received[0].closed_at
    assert closed_at is not None and closed_at - closed < 1.0


def test_beyond_the_concurrency_limit_is_429_in_the_clients_format(
    url: str, fake: FakeUpstream
) -> None:
    model = "anthropic-messages.hold"
    fake.script(
        model, Reply(200, [b'event: ping\ndata: {"type":"ping"}\n\n'], delay=0.05, hang=5.0)
    )
    stop = threading.Event()
    opened = threading.Semaphore(0)

    def hold() -> None:
        with (
            httpx.Client(timeout=WAIT) as client,
            client.stream(
                "POST",
                url + PATHS["anthropic-messages"],
                headers=HEADERS["anthropic-messages"],
                json=body_for("anthropic-messages", model),
            ) as r,
        ):
            chunks = r.iter_raw()  # kept: dropping the iterator closes the response
            next(chunks)
            opened.release()
            stop.wait(WAIT)

    threads = [threading.Thread(target=hold) for _ in range(MAX_CONCURRENCY)]
    for t in threads:
        t.start()
    try:
        for _ in threads:
            assert opened.acquire(timeout=WAIT)
        client = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
        with pytest.raises(anthropic.RateLimitError, match="concurrent"):
            client.messages.create(
                model="anthropic-messages.text-basic",
                max_tokens=8,
                messages=[{"role": "user", "content": "hi"}],
            )
    finally:
        stop.set()
        for t in threads:
            t.join(WAIT)
    deadline = time.monotonic() + 3  # the held requests end once their clients go
    while time.monotonic() < deadline:
        if post(url, "anthropic-messages", "anthropic-messages.text-basic").status_code == 200:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the gateway did not release its concurrency slots")


# -- the other endpoints -----------------------------------------------------


def test_healthz_and_models_in_both_shapes(
    url: str, servers: tuple[FakeUpstream, Gateway, str]
) -> None:
    with httpx.Client(timeout=WAIT) as client:
        assert client.get(url + "/healthz").json() == {"status": "ok"}
    named = [f"named.{SHORT[api]}" for api in NAMED_MODELS]  # the literal names, not globs
    assert servers[1].config.listed_models() == named
    client_o = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    assert [m.id for m in client_o.models.list()] == named
    client_a = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
    assert [m.id for m in client_a.models.list()] == named
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(api_key="wrong", base_url=url + "/v1", max_retries=0).models.list()


def test_metrics_count_requests_tokens_and_latency(url: str) -> None:
    log_for(
        post(url, "anthropic-messages", "anthropic-messages.text-basic").headers["x-request-id"]
    )
    with httpx.Client(timeout=WAIT) as client:
        text = client.get(url + "/metrics").text
    assert (
        'streamnorm_gateway_requests_total{client_api="anthropic-messages",status="200",upstream="anthropic"}'
        in text
    )
    line = next(
        x
        for x in text.splitlines()
        if x.startswith(
            'streamnorm_gateway_tokens_total{client_api="anthropic-messages",direction="output",'
            'upstream="anthropic"}'
        )
    )
    assert float(line.split()[-1]) > 0
    assert "streamnorm_gateway_time_to_first_byte_seconds_bucket" in text


# -- the same failures through a cross-API route ------------------------------


@pytest.mark.parametrize("api", APIS)
def test_unreachable_upstream_is_502_for_every_client(url: str, api: str) -> None:
    r = post(url, api, "dead.model")  # a Chat Completions upstream on a closed port
    assert r.status_code == 502
    assert "unreachable" in error_message(api, r.json())


def test_a_chat_upstreams_429_reaches_other_clients_in_their_format(
    url: str, fake: FakeUpstream
) -> None:
    err = {"error": {"message": "Rate limit reached for gpt-4o", "type": "requests", "code": None}}
    fake.script(
        "openai-completions.limited", Reply(429, [json.dumps(err).encode()], "application/json")
    )
    client_g = genai.Client(api_key=GATEWAY_KEY, http_options=genai_types.HttpOptions(base_url=url))
    with pytest.raises(genai_errors.ClientError) as exc_g:
        client_g.models.generate_content(model="openai-completions.limited", contents="hi")
    assert exc_g.value.code == 429 and exc_g.value.status == "RESOURCE_EXHAUSTED"
    assert "Rate limit reached" in str(exc_g.value)
    client_a = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
    with pytest.raises(anthropic.RateLimitError, match="Rate limit reached"):
        client_a.messages.create(
            model="openai-completions.limited",
            max_tokens=8,
            messages=[{"role": "user", "content": "hi"}],
        )


def test_a_body_the_codec_rejects_is_400_naming_the_field(url: str, fake: FakeUpstream) -> None:
    fake.clear()
    body = {"model": "openai-completions.x", "max_tokens": 8, "messages": [{"role": "robot"}]}
    r = post(url, "anthropic-messages", "", json=body)
    assert r.status_code == 400
    assert error_message("anthropic-messages", r.json()).startswith("messages[0]")
    assert fake.received == []


@pytest.mark.parametrize(
    ("client", "upstream", "stem"),
    [
        ("anthropic-messages", "openai-completions", "openai-text-include-usage"),
        ("openai-completions", "google-generative-ai", "text-basic"),
        ("google-generative-ai", "anthropic-messages", "text-basic"),
    ],
)
def test_a_cross_api_stream_cut_midway_raises_in_the_clients_sdk(
    url: str, fake: FakeUpstream, client: str, upstream: str, stem: str
) -> None:
    model = f"{upstream}.cut-{client}"
    fake.script(model, _cut_reply(upstream, stem, 2, cut=True))
    messages: Any = [{"role": "user", "content": "hi"}]
    if client == "anthropic-messages":
        sdk_a = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
        with (
            pytest.raises(anthropic.APIStatusError),
            sdk_a.messages.stream(model=model, max_tokens=8, messages=messages) as s,
        ):
            s.get_final_message()
    elif client == "openai-completions":
        sdk_o = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
        with pytest.raises(openai.APIError):
            for _ in sdk_o.chat.completions.create(model=model, messages=messages, stream=True):
                pass
    else:
        sdk_g = genai.Client(
            api_key=GATEWAY_KEY, http_options=genai_types.HttpOptions(base_url=url)
        )
        with pytest.raises(genai_errors.APIError):
            for _ in sdk_g.models.generate_content_stream(model=model, contents="hi"):
                pass


def test_a_responses_client_stream_ends_with_response_failed(url: str, fake: FakeUpstream) -> None:
    model = "anthropic-messages.cut-responses"
    fake.script(model, _cut_reply("anthropic-messages", "text-basic", 4, cut=True))
    sdk = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    events = list(sdk.responses.create(model=model, input="hi", stream=True))
    assert events[0].type == "response.created" and events[-1].type == "response.failed"
    failed = events[-1].response
    assert failed.status == "failed" and failed.error is not None
    assert "broke before the stream ended" in failed.error.message


@pytest.mark.parametrize("upstream", ["google-generative-ai", "openai-responses"])
def test_gemini_stream_without_alt_sse_is_one_json_array(url: str, upstream: str) -> None:
    stem = TEXT[upstream]
    with httpx.Client(timeout=WAIT) as client:
        r = client.post(
            url + f"/v1beta/models/{upstream}.{stem}:streamGenerateContent",
            headers=HEADERS["google-generative-ai"],
            json=body_for("google-generative-ai", ""),
        )
    SEEN.append(r.text)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    chunks = json.loads(r.text)
    text = "".join(
        p.get("text", "")
        for c in chunks
        for cand in c.get("candidates", [])
        for p in cand.get("content", {}).get("parts", [])
        if not p.get("thought")
    )
    expected = final_done((FIXTURES / upstream / f"{stem}.sse").read_bytes(), upstream).message
    assert text == "".join(b.text for b in expected.content if isinstance(b, TextBlock))
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"


def test_one_log_line_per_request_without_content_or_secrets(url: str) -> None:
    """Every log line of the module's requests (whichever ran on this worker
    before, and one of its own, so the test stands alone)."""
    r = post(url, "anthropic-messages", "anthropic-messages.text-basic")
    assert r.status_code == 200
    log_for(r.headers["x-request-id"])
    records = [json.loads(line) for line in LOG_LINES]
    ids = [r["request_id"] for r in records]
    assert len(ids) == len(set(ids))
    for r in records:
        assert {
            "request_id",
            "client_api",
            "model",
            "upstream",
            "status",
            "input_tokens",
            "output_tokens",
            "ttfb_ms",
            "duration_ms",
        } <= set(r)
        assert "content" not in r
    ok = [
        r for r in records if r["model"] == "anthropic-messages.text-basic" and r["status"] == 200
    ]
    assert ok and ok[0]["output_tokens"] > 0 and ok[0]["ttfb_ms"] is not None
    text = "\n".join(LOG_LINES + SEEN)
    for secret in [*UPSTREAM_KEYS.values(), GATEWAY_KEY]:
        assert secret not in text


# -- cost ---------------------------------------------------------------------


def test_cost_by_client_key_route_and_model_in_log_and_metrics(
    url: str, fake: FakeUpstream
) -> None:
    """A Chat client's call to claude-haiku-4-5 (Anthropic's prices on
    2025-10-15: $1 input, $5 output, $1.25 cache writes, $0.10 cache reads
    per million tokens) is priced in the log line and the cost counter."""
    fake.script("claude-haiku-4-5", fixture_reply("anthropic-messages", "text-basic", stream=True))
    record = log_for(post(url, "openai-completions", "named.anthropic").headers["x-request-id"])
    assert record["upstream_model"] == "claude-haiku-4-5" and record["usage_reported"]
    expected = (
        record["input_tokens"] * 1.0
        + record["output_tokens"] * 5.0
        + record["cache_write_tokens"] * 1.25
        + record["cache_read_tokens"] * 0.10
    ) / 1e6
    assert record["output_tokens"] > 0
    assert record["cost_usd"] == pytest.approx(expected)
    label = key_label(GATEWAY_KEY)
    assert record["client_key"] == label and GATEWAY_KEY not in json.dumps(record)
    with httpx.Client(timeout=WAIT) as client:
        text = client.get(url + "/metrics").text
    line = next(
        x
        for x in text.splitlines()
        if x.startswith(
            f'streamnorm_gateway_cost_usd_total{{client_api="openai-completions",'
            f'client_key="{label}",model="claude-haiku-4-5",upstream="named-anthropic"}}'
        )
    )
    assert float(line.split()[-1]) == pytest.approx(expected)


def test_an_unknown_models_cost_is_null_and_counted_unpriced(url: str) -> None:
    record = log_for(
        post(url, "anthropic-messages", "anthropic-messages.text-basic").headers["x-request-id"]
    )
    assert record["cost_usd"] is None and record["output_tokens"] > 0
    with httpx.Client(timeout=WAIT) as client:
        text = client.get(url + "/metrics").text
    assert (
        'streamnorm_gateway_unpriced_requests_total{client_api="anthropic-messages",'
        f'client_key="{key_label(GATEWAY_KEY)}",model="anthropic-messages.text-basic",'
        'upstream="anthropic"}'
    ) in text


def test_a_responses_upstream_is_asked_for_encrypted_reasoning(
    url: str, fake: FakeUpstream
) -> None:
    """An Anthropic client with thinking on, through a Responses upstream:
    the upstream request asks for the reasoning back (#27 finding 6)."""
    model = "openai-responses.reasoning-encrypted-function-call"
    body = {**body_for("anthropic-messages", model), "max_tokens": 2048}
    body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    fake.clear()
    assert post(url, "anthropic-messages", model, json=body).status_code == 200
    [sent] = fake.requests_for(model)
    assert sent.body["include"] == ["reasoning.encrypted_content"]
    assert sent.body["store"] is False
