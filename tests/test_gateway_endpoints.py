"""The endpoints agent clients call besides the front doors: token counts, model
lists, ``HEAD /``, and a 404 that says "no such endpoint"; and the server tools
those clients send, through a cross-API route.

A small upstream of our own speaks each API's count and list endpoints (and
answers generation requests with a minimal whole response), recording what
it receives; the gateway runs in front of it on 127.0.0.1. Where an official
SDK has a method for the endpoint, the SDK is the client.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google import genai
from google.genai import types as genai_types

from streamnorm.gateway import create_app, parse_config
from streamnorm.gateway.listing import TTL, Listing
from streamnorm.gateway.telemetry import LOGGER

from .gateway_support import WAIT, Receive, Scope, Send, ServerThread

KEY = "gw-endpoints-key-51c2"
UP_KEY = "sk-up-endpoints-SECRET-9f8e"


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


#: What the upstream answers at each count path.
COUNTS = {"anthropic": 101, "responses": 202, "gemini": 303}


class AgentUpstream:
    """Each API's count and list endpoints; everything it receives is recorded."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self._lock = threading.Lock()

    def of(self, method: str, path_part: str) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if s.method == method and path_part in s.path]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        seen = Seen(scope["method"], scope["path"], headers, json.loads(raw) if raw else None)
        with self._lock:
            self.seen.append(seen)
        status, body = self.answer(seen)
        data = json.dumps(body).encode()
        ctype = [(b"content-type", b"application/json")]
        if status == 200 and isinstance(seen.body, dict) and seen.body.get("stream") is True:
            data, ctype = CHAT_STREAM, [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": status, "headers": ctype})
        await send({"type": "http.response.body", "body": data})

    def answer(self, seen: Seen) -> tuple[int, Any]:
        path = seen.path
        if path.startswith("/nocount/"):
            return 404, {"error": {"message": "no such path", "type": "invalid_request_error"}}
        if path == "/v1/messages/count_tokens":
            return 200, {"input_tokens": COUNTS["anthropic"]}
        if path == "/v1/responses/input_tokens":
            return 200, {"object": "response.input_tokens", "input_tokens": COUNTS["responses"]}
        if path.endswith(":countTokens"):
            return 200, {"totalTokens": COUNTS["gemini"]}
        if path == "/v1/models" and "anthropic-version" in seen.headers:
            ids = ["claude-up-1", "other-x"]
            return 200, {"data": [{"type": "model", "id": i} for i in ids], "has_more": False}
        if path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": "gpt-up-1"}, {"id": "dall-e"}]}
        if path == "/v1beta/models":
            return 200, {"models": [{"name": "models/gemini-up-1"}, {"name": "models/imagen"}]}
        if seen.method == "POST" and path in ANSWERS:
            return 200, ANSWERS[path]
        return 404, {"error": {"message": f"no {path}", "type": "invalid_request_error"}}


#: A whole "ok" answer of each API, by path.
ANSWERS: dict[str, Any] = {
    "/v1/messages": {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 1},
    },
    "/v1/responses": {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": "m",
        "output": [
            {
                "type": "message",
                "id": "msg_1",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 3, "output_tokens": 1, "total_tokens": 4},
    },
    "/v1/chat/completions": {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    },
}


#: A streamed "ok" of Chat Completions (the only API these tests stream from).
CHAT_STREAM = (
    b"".join(
        b"data: " + json.dumps(chunk).encode() + b"\n\n"
        for chunk in (
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}],
            },
            {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            },
        )
    )
    + b"data: [DONE]\n\n"
)


def _config(url: str, **gateway: Any) -> dict[str, Any]:
    def up(api: str, **kw: Any) -> dict[str, Any]:
        return {"api": api, "base_url": url, "api_key_env": "UP_KEY", "timeout": 5.0, **kw}

    return {
        "gateway": {"keys_env": "GW_KEYS", **gateway},
        "upstreams": {
            "claude": up("anthropic-messages"),
            "resp": up("openai-responses"),
            "chat": up("openai-completions"),
            "gem": up("google-generative-ai"),
            "nocount": up("anthropic-messages", base_url=url + "/nocount"),
        },
        "routes": [
            {"models": ["claude-*"], "upstreams": ["claude"]},
            {"models": ["gpt-*"], "upstreams": ["resp"]},
            {"models": ["chat-fixed"], "upstreams": ["chat"]},
            {"models": ["gemini-*"], "upstreams": ["gem"]},
            {"models": ["broken-count"], "upstreams": ["nocount"]},
        ],
    }


LOG_LINES: list[str] = []


class _Collect(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        LOG_LINES.append(record.getMessage())


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[AgentUpstream, str]]:
    handler = _Collect()
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    fake = AgentUpstream()
    try:
        with ServerThread(fake) as up:
            config = parse_config(_config(up.url), {"UP_KEY": UP_KEY, "GW_KEYS": KEY})
            with ServerThread(create_app(config)) as gw:
                yield fake, gw.url
    finally:
        LOGGER.removeHandler(handler)


@pytest.fixture
def fake(servers: tuple[AgentUpstream, str]) -> AgentUpstream:
    return servers[0]


@pytest.fixture
def url(servers: tuple[AgentUpstream, str]) -> str:
    return servers[1]


def _anthropic(url: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=url, api_key=KEY, max_retries=0, timeout=WAIT)


def _openai(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url + "/v1", api_key=KEY, max_retries=0, timeout=WAIT)


def _genai(url: str) -> genai.Client:
    options = genai_types.HttpOptions(base_url=url, timeout=int(WAIT * 1000))
    return genai.Client(api_key=KEY, http_options=options)


CLAUDE_CODE_COUNT = {
    "model": "claude-sonnet-4-5",
    "messages": [{"role": "user", "content": "count me"}],
    "system": [{"type": "text", "text": "You are Claude Code."}],
    "tools": [
        {
            "name": "Bash",
            "description": "Run a command",
            "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
        }
    ],
}


def _http(url: str, method: str, path: str, **kw: Any) -> httpx.Response:
    with httpx.Client(timeout=WAIT) as client:
        return client.request(method, url + path, **kw)


# -- token counts -------------------------------------------------------------


def test_claude_code_count_tokens_is_answered_by_the_anthropic_upstream(
    url: str, fake: AgentUpstream
) -> None:
    r = _http(
        url,
        "POST",
        "/v1/messages/count_tokens",
        json=CLAUDE_CODE_COUNT,
        headers={
            "x-api-key": KEY,
            "anthropic-version": "2023-06-01",
            "anthropic-beta": "claude-code-20250219",
        },
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"input_tokens": COUNTS["anthropic"]}
    assert r.headers["x-streamnorm-token-count"] == "exact"
    sent = fake.of("POST", "/v1/messages/count_tokens")[-1]
    assert sent.body == CLAUDE_CODE_COUNT
    assert (
        sent.headers["x-api-key"] == UP_KEY
        and sent.headers["anthropic-beta"] == "claude-code-20250219"
    )


def test_anthropic_sdk_counts_a_gemini_model_through_gemini_count_tokens(
    url: str, fake: AgentUpstream
) -> None:
    count = _anthropic(url).messages.count_tokens(
        model="gemini-2.5-flash", messages=[{"role": "user", "content": "hello there"}]
    )
    assert count.input_tokens == COUNTS["gemini"]
    sent = fake.of("POST", ":countTokens")[-1]
    assert sent.path == "/v1beta/models/gemini-2.5-flash:countTokens"
    inner = sent.body["generateContentRequest"]
    assert inner["model"] == "models/gemini-2.5-flash"
    assert inner["contents"][0]["parts"][0]["text"] == "hello there"


def test_openai_sdk_counts_responses_input_tokens_through_anthropic(
    url: str, fake: AgentUpstream
) -> None:
    count = _openai(url).responses.input_tokens.count(
        model="claude-opus-4-1", input="hello", instructions="be brief"
    )
    assert count.input_tokens == COUNTS["anthropic"]
    sent = fake.of("POST", "/v1/messages/count_tokens")[-1]
    assert sent.body["model"] == "claude-opus-4-1"
    assert sent.body["system"] == "be brief"
    assert "max_tokens" not in sent.body and "stream" not in sent.body


def test_gemini_sdk_count_tokens_through_the_responses_upstream(
    url: str, fake: AgentUpstream
) -> None:
    client = _genai(url)
    count = client.models.count_tokens(model="gpt-5", contents="hello")
    assert count.total_tokens == COUNTS["responses"]
    sent = fake.of("POST", "/v1/responses/input_tokens")[-1]
    assert sent.body["model"] == "gpt-5"
    assert sent.headers["authorization"] == f"Bearer {UP_KEY}"


def test_a_chat_upstream_is_estimated_and_the_header_says_so(url: str, fake: AgentUpstream) -> None:
    before = len(fake.seen)
    body = {**CLAUDE_CODE_COUNT, "model": "chat-fixed"}
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    r = _http(url, "POST", "/v1/messages/count_tokens", json=body, headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["x-streamnorm-token-count"] == "estimate"
    assert 10 <= r.json()["input_tokens"] <= 200
    assert len(fake.seen) == before  # Chat Completions has nothing to ask


def test_an_upstream_without_a_count_endpoint_falls_back_to_the_estimate(url: str) -> None:
    body = {**CLAUDE_CODE_COUNT, "model": "broken-count"}
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    r = _http(url, "POST", "/v1/messages/count_tokens", json=body, headers=headers)
    assert r.status_code == 200, r.text
    assert r.headers["x-streamnorm-token-count"] == "estimate"
    assert r.json()["input_tokens"] > 0


def test_count_tokens_checks_the_key_and_the_model(url: str) -> None:
    headers = {"x-api-key": "wrong", "anthropic-version": "2023-06-01"}
    r = _http(url, "POST", "/v1/messages/count_tokens", json=CLAUDE_CODE_COUNT, headers=headers)
    assert r.status_code == 401 and r.json()["type"] == "error"
    with pytest.raises(openai.NotFoundError) as exc:
        _openai(url).responses.input_tokens.count(model="nobody-serves-me", input="x")
    assert exc.value.code == "model_not_found"


# -- model lists --------------------------------------------------------------


def test_claude_code_lists_routes_and_upstream_models_in_anthropic_shape(url: str) -> None:
    page = _anthropic(url).models.list()
    names = [m.id for m in page.data]
    assert names[0] == "chat-fixed" and "broken-count" in names  # literal route names first
    assert {"claude-up-1", "gpt-up-1", "gemini-up-1"} <= set(names)
    assert not {"other-x", "dall-e", "imagen"} & set(names)  # no route serves them
    assert all(m.type == "model" for m in page.data)


def test_openai_clients_get_the_openai_list_and_one_model(url: str) -> None:
    client = _openai(url)
    names = [m.id for m in client.models.list()]
    assert {"chat-fixed", "claude-up-1", "gpt-up-1", "gemini-up-1"} <= set(names)
    one = client.models.retrieve("claude-anything")  # served by the claude-* route
    assert (one.id, one.object) == ("claude-anything", "model")
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nobody-serves-me")


def test_anthropic_sdk_retrieves_one_model(url: str) -> None:
    info = _anthropic(url).models.retrieve("gemini-2.5-pro")
    assert (info.id, info.type) == ("gemini-2.5-pro", "model")


def test_gemini_clients_list_and_get_models_in_gemini_shape(url: str) -> None:
    client = _genai(url)
    names = [m.name or "" for m in client.models.list()]
    assert "models/gemini-up-1" in names and "models/chat-fixed" in names
    model = client.models.get(model="gemini-2.5-flash")
    assert model.name == "models/gemini-2.5-flash"
    assert model.supported_actions is not None and "countTokens" in model.supported_actions


def test_upstream_lists_are_cached(url: str, fake: AgentUpstream) -> None:
    _openai(url).models.list()
    asked = len(fake.of("GET", "models"))
    _openai(url).models.list()
    _anthropic(url).models.list()
    assert len(fake.of("GET", "models")) == asked


def test_model_lists_need_the_gateway_key(url: str) -> None:
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=url + "/v1", api_key="wrong", max_retries=0).models.list()


# -- probes and unknown paths -------------------------------------------------


def test_head_root_answers_200_without_a_body(url: str) -> None:
    r = _http(url, "HEAD", "/")
    assert r.status_code == 200 and r.content == b""


@pytest.mark.parametrize(
    ("headers", "path", "check"),
    [
        ({"authorization": f"Bearer {KEY}"}, "/v1/embeddings", "openai"),
        ({"x-api-key": KEY, "anthropic-version": "2023-06-01"}, "/v1/files", "anthropic"),
        ({"x-goog-api-key": KEY}, "/v1beta/cachedContents", "gemini"),
    ],
)
def test_an_unserved_path_is_404_no_such_endpoint_in_the_clients_shape(
    url: str, headers: dict[str, str], path: str, check: str
) -> None:
    r = _http(url, "POST", path, headers=headers, json={})
    assert r.status_code == 404
    data = r.json()
    assert "no such endpoint" in data["error"]["message"]
    if check == "openai":
        assert data["error"]["code"] == "unknown_url"
    elif check == "anthropic":
        assert data["type"] == "error" and data["error"]["type"] == "not_found_error"
    else:
        assert data["error"]["status"] == "NOT_FOUND"


# -- server tools through cross-API routes ------------------------------------

#: Claude Code's WebSearch sub-request (whole answer, to keep the test short).
CLAUDE_CODE_WEB_SEARCH: dict[str, Any] = {
    "model": "chat-fixed",
    "max_tokens": 8000,
    "system": [
        {"type": "text", "text": "You are an assistant for performing a web search tool use"}
    ],
    "messages": [{"role": "user", "content": "Perform a web search for the query: streamnorm"}],
    "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 8}],
    "tool_choice": {"type": "tool", "name": "web_search"},
}
ANTHROPIC_HEADERS = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}


def _log_line(request_id: str) -> dict[str, Any]:
    """The exchange's log line; it is written once the answer is sent, so it
    may trail the client's read by a moment (waited for, up to 5 s)."""
    deadline = time.monotonic() + 5
    while True:
        lines = [json.loads(line) for line in LOG_LINES]
        found = [line for line in lines if line["request_id"] == request_id]
        if found or time.monotonic() > deadline:
            assert found, f"no log line for {request_id}"
            line: dict[str, Any] = found[0]
            return line
        time.sleep(0.01)


def test_a_web_search_a_chat_upstream_cannot_run_is_dropped_with_header_and_log(
    url: str, fake: AgentUpstream
) -> None:
    r = _http(url, "POST", "/v1/messages", json=CLAUDE_CODE_WEB_SEARCH, headers=ANTHROPIC_HEADERS)
    assert r.status_code == 200, r.text
    warning = r.headers["x-streamnorm-warnings"]
    assert "tools[0] (anthropic-messages web_search_20250305)" in warning
    assert "openai-completions has no equivalent; dropped" in warning
    sent = fake.of("POST", "/v1/chat/completions")[-1].body
    assert "tools" not in sent and "tool_choice" not in sent
    assert any(
        "no equivalent; dropped" in w for w in _log_line(r.headers["x-request-id"])["warnings"]
    )


def test_a_streamed_answer_carries_the_warning_header_too(url: str) -> None:
    body = {**CLAUDE_CODE_WEB_SEARCH, "stream": True}
    with (
        httpx.Client(timeout=WAIT) as client,
        client.stream("POST", url + "/v1/messages", json=body, headers=ANTHROPIC_HEADERS) as r,
    ):
        text = r.read().decode()
    assert r.status_code == 200 and "event: message_stop" in text
    assert "web_search_20250305" in r.headers["x-streamnorm-warnings"]


def test_upstream_model_lists_are_asked_again_after_five_minutes(url: str) -> None:
    now = [0.0]
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        return httpx.Response(200, json={"object": "list", "data": [{"id": "gpt-up-2"}]})

    client = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    config = parse_config(_config("http://127.0.0.1:9"), {"UP_KEY": UP_KEY, "GW_KEYS": KEY})
    listing = Listing(config, lambda: client, clock=lambda: now[0])
    first = asyncio.run(listing.names())
    n = len(asked)
    now[0] = TTL - 1
    asyncio.run(listing.names())
    assert len(asked) == n
    now[0] = TTL + 1
    asyncio.run(listing.names())
    assert len(asked) == 2 * n
    assert "gpt-up-2" in first and first.index("chat-fixed") < first.index("gpt-up-2")


def test_a_web_search_reaches_a_responses_upstream_as_its_web_search(
    url: str, fake: AgentUpstream
) -> None:
    body = {**CLAUDE_CODE_WEB_SEARCH, "model": "gpt-5"}
    message = _anthropic(url).messages.create(**body)
    assert [b.type for b in message.content if b.type != "thinking"] == ["text"]
    assert fake.of("POST", "/v1/responses")[-1].body["tools"] == [{"type": "web_search"}]


def test_same_api_server_tools_pass_unchanged_without_a_warning(
    url: str, fake: AgentUpstream
) -> None:
    body = {**CLAUDE_CODE_WEB_SEARCH, "model": "claude-sonnet-4-5"}
    r = _http(url, "POST", "/v1/messages", json=body, headers=ANTHROPIC_HEADERS)
    assert r.status_code == 200 and "x-streamnorm-warnings" not in r.headers
    assert fake.of("POST", "/v1/messages")[-1].body["tools"] == body["tools"]


def test_codex_tools_reach_anthropic_and_the_namespace_is_reported(
    url: str, fake: AgentUpstream
) -> None:
    body = {
        "model": "claude-sonnet-4-5",
        "input": "hi",
        "tools": [
            {"type": "web_search", "external_web_access": False},
            {"type": "namespace", "name": "mcp__docs", "description": "", "tools": []},
        ],
    }
    r = _http(url, "POST", "/v1/responses", json=body, headers={"authorization": f"Bearer {KEY}"})
    assert r.status_code == 200, r.text
    tools = fake.of("POST", "/v1/messages")[-1].body["tools"]
    assert tools == [{"type": "web_search_20250305", "name": "web_search"}]
    assert "tools[1] (openai-responses namespace)" in r.headers["x-streamnorm-warnings"]


def test_server_tools_refuse_is_a_400_in_the_clients_api(fake: AgentUpstream) -> None:
    with ServerThread(fake) as up:
        config = parse_config(
            _config(up.url, server_tools="refuse"), {"UP_KEY": UP_KEY, "GW_KEYS": KEY}
        )
        with ServerThread(create_app(config)) as gw:
            before = len(fake.of("POST", "/v1/chat/completions"))
            with pytest.raises(anthropic.BadRequestError) as exc:
                _anthropic(gw.url).messages.create(**CLAUDE_CODE_WEB_SEARCH)
    assert exc.value.status_code == 400
    assert "web_search_20250305" in exc.value.message and "refuse" in exc.value.message
    assert len(fake.of("POST", "/v1/chat/completions")) == before
