"""Bedrock as a gateway upstream (issue 32): Converse and Invoke (Claude),
streaming and not, from a client of each front-door API.

The fake Bedrock (``bedrock_support.FakeBedrock``) checks each request as
Bedrock does, with botocore: the SigV4 signature, the operation's path, the
Converse body against botocore's service model, the Invoke body against the
rules Bedrock's Claude applies. It answers with AWS event streams or whole
JSON bodies; the client must get the same answer in its own API, and
Bedrock's errors (HTTP, and exceptions inside a stream) as its API's errors.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamnorm import AssistantMessage, Done, Error, ThinkingBlock, decode_response
from streamnorm.gateway import create_app, parse_config
from streamnorm.hosts import auth as hosts_auth

from .bedrock_support import (
    CONVERSE_WHOLE,
    EVENT_STREAM,
    INVOKE_WHOLE,
    KEY_ID,
    SECRET,
    TEXT,
    FakeBedrock,
    bedrock_error,
    converse_stream,
    invoke_stream,
)
from .client_support import Step
from .gateway_support import GATEWAY_KEY, ServerThread
from .support import EXTRA_FIXTURES, aws_frame, final_done, needs_fixtures, run_bytes, terminal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the gateway extra installs tomli on 3.10
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

DOCS = Path(__file__).resolve().parent.parent / "docs"
BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
QUOTED = "us.anthropic.claude-sonnet-4-5-20250929-v1%3A0"
CLIENT_MODEL = "claude-on-bedrock"
CLIENT_APIS = (
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
)
UPSTREAMS = ("bedrock-converse-stream", "bedrock-invoke-stream")
OPERATIONS = {
    ("bedrock-converse-stream", True): "converse-stream",
    ("bedrock-converse-stream", False): "converse",
    ("bedrock-invoke-stream", True): "invoke-with-response-stream",
    ("bedrock-invoke-stream", False): "invoke",
}


def answer_of(upstream: str, stream: bool) -> Step:
    """Bedrock's successful answer for the operation."""
    if stream:
        body = converse_stream() if upstream == "bedrock-converse-stream" else invoke_stream()
        return Step(body=body, headers=EVENT_STREAM)
    body = CONVERSE_WHOLE if upstream == "bedrock-converse-stream" else INVOKE_WHOLE
    return Step(body=body, headers={"content-type": "application/json"})


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[None]:
    """The standard chain finds these keys in the environment (and no file)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    hosts_auth.kept_signer.cache_clear()
    yield
    hosts_auth.kept_signer.cache_clear()


def gateway(url: str, api: str, **upstream: Any) -> ServerThread:
    """A gateway serving every model from one Bedrock upstream at ``url``."""
    config = {
        "gateway": {"keys_env": "GW_KEYS"},
        "upstreams": {
            "bedrock": {
                "api": api,
                "base_url": url,
                "model": BEDROCK_MODEL,
                "host_params": {"region": "us-west-2"},
                "timeout": 5.0,
                **upstream,
            }
        },
        "routes": [{"models": "*", "upstreams": ["bedrock"]}],
    }
    return ServerThread(create_app(parse_config(config, {"GW_KEYS": GATEWAY_KEY})))


def ask(url: str, api: str, stream: bool, **extra: Any) -> httpx.Response:
    """One turn from a client of ``api``: "hello", with ``extra`` body fields."""
    if api == "google-generative-ai":
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        body: dict[str, Any] = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}
        path = f"/v1beta/models/{CLIENT_MODEL}:{method}"
        headers = {"x-goog-api-key": GATEWAY_KEY}
    elif api == "anthropic-messages":
        body = {"model": CLIENT_MODEL, "max_tokens": 64, "stream": stream}
        body["messages"] = [{"role": "user", "content": "hello"}]
        path, headers = "/v1/messages", {"x-api-key": GATEWAY_KEY}
    elif api == "openai-responses":
        body = {"model": CLIENT_MODEL, "input": "hello", "stream": stream}
        path, headers = "/v1/responses", {"authorization": f"Bearer {GATEWAY_KEY}"}
    else:
        body = {"model": CLIENT_MODEL, "stream": stream}
        body["messages"] = [{"role": "user", "content": "hello"}]
        path, headers = "/v1/chat/completions", {"authorization": f"Bearer {GATEWAY_KEY}"}
    return httpx.post(url + path, json={**body, **extra}, headers=headers, timeout=10)


def through(
    upstream: str, step: Step, client: str, stream: bool, secret: str = SECRET, **extra: Any
) -> tuple[FakeBedrock, httpx.Response]:
    """One turn from a client of ``client`` through a gateway to a fake
    Bedrock of ``upstream``'s API that answers ``step``."""
    with FakeBedrock([step], secret) as fake, gateway(fake.url, upstream) as gw:
        return fake, ask(gw.url, client, stream, **extra)


def read_answer(answer: httpx.Response, api: str, stream: bool) -> AssistantMessage | Error:
    """What the client's own API makes of the answer: its message, or the
    error its stream ended with."""
    if not stream:
        return decode_response(answer.content, api)
    end = terminal(run_bytes(answer.content, api))
    return end.message if isinstance(end, Done) else end


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("client", CLIENT_APIS)
def test_a_client_of_each_api_through_bedrock(client: str, upstream: str, stream: bool) -> None:
    fake, answer = through(upstream, answer_of(upstream, stream), client, stream)
    assert fake.exceptions == []
    assert answer.status_code == 200, answer.text
    message = read_answer(answer, client, stream)
    assert isinstance(message, AssistantMessage), message
    assert message.text == "".join(TEXT) and message.stop_reason == "stop"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 3)
    (seen,) = fake.seen
    assert seen.path == f"/model/{QUOTED}/{OPERATIONS[upstream, stream]}"
    assert f"Credential={KEY_ID}/" in seen.headers["authorization"]
    assert "/us-west-2/bedrock/aws4_request" in seen.headers["authorization"]
    assert GATEWAY_KEY not in json.dumps(seen.headers)
    sent = json.loads(seen.body)
    (turn,) = sent["messages"]
    assert turn["role"] == "user" and "hello" in json.dumps(turn["content"])
    if upstream == "bedrock-invoke-stream":
        assert sent["anthropic_version"] == "bedrock-2023-05-31"


# -- what Bedrock refuses, and its errors ------------------------------------------------


def error_of(answer: httpx.Response, api: str) -> str:
    """The message of an error body in the client's API (all four put it at
    ``error.message``)."""
    body = answer.json()
    message = body["error"]["message"]
    assert isinstance(message, str)
    if api == "anthropic-messages":
        assert body["type"] == "error"
    return message


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("client", CLIENT_APIS)
def test_a_signature_bedrock_cannot_verify_is_the_gateways_502(client: str, upstream: str) -> None:
    fake, answer = through(upstream, answer_of(upstream, True), client, True, "not-" + SECRET)
    assert fake.exceptions == ["InvalidSignatureException"]
    assert answer.status_code == 502
    message = error_of(answer, client)
    assert "refused the gateway's credentials (HTTP 403, InvalidSignatureException)" in message
    assert SECRET not in answer.text


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_the_fake_refuses_what_bedrock_refuses(upstream: str) -> None:
    """The fake's checks are real: an unknown field, or Invoke's ``model``
    and ``stream``, are refused as Bedrock refuses them."""
    signer = hosts_auth.kept_signer("sigv4", "us-west-2")
    assert signer is not None
    operation = OPERATIONS[upstream, False]
    bodies = (
        [{"messages": [], "temperature": 0.5}, {"messages": [{"role": "user", "content": "x"}]}]
        if upstream == "bedrock-converse-stream"
        else [
            {
                "anthropic_version": "bedrock-2023-05-31",
                "max_tokens": 8,
                "messages": [],
                "model": "m",
            },
            {"max_tokens": 8, "messages": []},
        ]
    )
    with FakeBedrock([answer_of(upstream, False)]) as fake:
        for body in bodies:
            data = json.dumps(body).encode()
            url = f"{fake.url}/model/{QUOTED}/{operation}"
            headers = {"content-type": "application/json"}
            headers.update(signer("POST", url, headers, data))
            refused = httpx.post(url, content=data, headers=headers, timeout=10)
            assert refused.status_code == 400, body
            assert refused.headers["x-amzn-errortype"].startswith("ValidationException:")
            assert refused.json()["message"]
    assert fake.exceptions == ["ValidationException"] * len(bodies)


#: A turn with a system prompt, a tool, sampling settings and stop
#: sequences, per client API: each must reach Bedrock in a body it takes.
RICH: dict[str, dict[str, Any]] = {
    "anthropic-messages": {
        "system": "Be brief.",
        "temperature": 0.2,
        "stop_sequences": ["END"],
        "tools": [
            {
                "name": "weather",
                "description": "Weather",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ],
        "tool_choice": {"type": "auto"},
    },
    "openai-responses": {
        "instructions": "Be brief.",
        "temperature": 0.2,
        "max_output_tokens": 64,
        "tools": [
            {
                "type": "function",
                "name": "weather",
                "description": "Weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            }
        ],
    },
    "openai-completions": {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "hello"},
        ],
        "temperature": 0.2,
        "stop": ["END"],
        "max_tokens": 64,
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "Weather",
                    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                },
            }
        ],
    },
    "google-generative-ai": {
        "systemInstruction": {"parts": [{"text": "Be brief."}]},
        "generationConfig": {"temperature": 0.2, "stopSequences": ["END"], "maxOutputTokens": 64},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": "weather",
                        "description": "Weather",
                        "parameters": {
                            "type": "object",
                            "properties": {"city": {"type": "string"}},
                        },
                    }
                ]
            }
        ],
    },
}


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("client", CLIENT_APIS)
def test_a_rich_request_reaches_bedrock_in_a_body_it_takes(client: str, upstream: str) -> None:
    fake, answer = through(upstream, answer_of(upstream, False), client, False, **RICH[client])
    assert fake.exceptions == [], fake.seen[0].body
    assert answer.status_code == 200, answer.text
    sent = json.loads(fake.seen[0].body)
    if upstream == "bedrock-converse-stream":
        assert sent["system"] == [{"text": "Be brief."}]
        assert sent["inferenceConfig"]["temperature"] == 0.2
        assert sent["toolConfig"]["tools"][0]["toolSpec"]["name"] == "weather"
    else:
        assert sent["system"] in ("Be brief.", [{"type": "text", "text": "Be brief."}])
        assert sent["temperature"] == 0.2 and sent["tools"][0]["name"] == "weather"


@pytest.mark.parametrize(
    ("status", "kind", "message"),
    [
        (400, "ValidationException", "The provided model identifier is invalid."),
        (429, "ThrottlingException", "Too many requests, please wait before trying again."),
        (424, "ModelErrorException", "The model returned an error."),
        (503, "ServiceUnavailableException", "Bedrock is unable to process your request."),
    ],
)
@pytest.mark.parametrize("client", CLIENT_APIS)
def test_a_bedrock_error_is_an_error_in_the_clients_api(
    client: str, status: int, kind: str, message: str
) -> None:
    refusal = bedrock_error(status, kind, message)
    _, answer = through("bedrock-converse-stream", refusal, client, True)
    assert answer.status_code == status
    assert error_of(answer, client) == f"{kind}: {message}"


def _exception(name: str, message: str) -> bytes:
    headers = {
        ":message-type": "exception",
        ":exception-type": name,
        ":content-type": "application/json",
    }
    return aws_frame(headers, json.dumps({"message": message}).encode())


@pytest.mark.parametrize("upstream", UPSTREAMS)
@pytest.mark.parametrize("client", CLIENT_APIS)
def test_an_exception_inside_a_bedrock_stream_is_the_clients_stream_error(
    client: str, upstream: str
) -> None:
    frame = _exception("modelStreamErrorException", "The model stopped unexpectedly")
    tail = converse_stream(frame) if upstream == "bedrock-converse-stream" else invoke_stream(frame)
    _, answer = through(upstream, Step(body=tail, headers=EVENT_STREAM), client, True)
    assert answer.status_code == 200
    end = read_answer(answer, client, True)
    assert isinstance(end, Error), end
    assert "The model stopped unexpectedly" in end.reason
    assert end.message.text == TEXT[0]  # what came before the exception


@needs_fixtures
@pytest.mark.parametrize(
    ("upstream", "stem", "client"),
    [
        ("bedrock-converse-stream", "text-then-tool-use-claude-3-sonnet", "openai-completions"),
        (
            "bedrock-converse-stream",
            "reasoning-text-signature-claude-sonnet-4",
            "anthropic-messages",
        ),
        ("bedrock-invoke-stream", "tool-use-claude-sonnet-4-5", "openai-responses"),
        ("bedrock-invoke-stream", "text-claude-haiku-4-5", "google-generative-ai"),
    ],
)
def test_a_recorded_bedrock_stream_reaches_the_client_whole(
    upstream: str, stem: str, client: str
) -> None:
    recorded = (EXTRA_FIXTURES / upstream / f"{stem}.bin").read_bytes()
    expected = final_done(recorded, upstream).message
    _, answer = through(upstream, Step(body=recorded, headers=EVENT_STREAM), client, True)
    assert answer.status_code == 200, answer.text
    got = read_answer(answer, client, True)
    assert isinstance(got, AssistantMessage), got
    assert got.text == expected.text and got.stop_reason == expected.stop_reason
    calls = [(c.name, c.arguments) for c in got.tool_calls]
    assert calls == [(c.name, c.arguments) for c in expected.tool_calls]
    thinking = [b.thinking for b in expected.content if isinstance(b, ThinkingBlock)]
    assert [b.thinking for b in got.content if isinstance(b, ThinkingBlock)] == thinking


# -- configuration, counts and lists -----------------------------------------------------


def _upstream(table: dict[str, Any], env: dict[str, str] | None = None) -> Any:
    config = {"upstreams": {"b": table}, "routes": [{"models": "*", "upstreams": ["b"]}]}
    return parse_config(config, env or {}).routes[0].upstreams[0]


def test_a_bedrock_upstream_signs_with_sigv4_and_is_bedrock_by_default() -> None:
    up = _upstream(
        {"api": "bedrock", "base_url": "https://vpce-1.example"}, {"AWS_REGION": "eu-west-3"}
    )
    assert (up.api, up.auth, up.provider) == ("bedrock-converse-stream", "sigv4", "bedrock")
    assert dict(up.host_params) == {"region": "eu-west-3"}
    keyed = _upstream(
        {"api": "bedrock-invoke-stream", "base_url": "https://x", "api_key_env": "K"}, {"K": "key"}
    )
    assert (keyed.auth, keyed.provider) == (None, "bedrock")  # a Bedrock API key, as Bearer


def test_a_sigv4_upstream_without_a_region_is_refused_at_load() -> None:
    with pytest.raises(ValueError, match=r"upstreams\.b\.host_params\.region"):
        _upstream({"api": "bedrock-converse-stream", "base_url": "https://x"})


def test_a_read_only_api_is_no_upstream_api() -> None:
    with pytest.raises(
        ValueError, match=r"upstreams\.b\.api: 'ollama-chat' is not one of .*bedrock"
    ):
        _upstream({"api": "ollama-chat", "base_url": "https://x"})


def test_a_bedrock_route_counts_by_estimate_and_lists_its_route_names() -> None:
    body = {"model": CLIENT_MODEL, "messages": [{"role": "user", "content": "hello"}]}
    headers = {"x-api-key": GATEWAY_KEY, "anthropic-version": "2023-06-01"}
    step = answer_of("bedrock-converse-stream", False)
    with FakeBedrock([step]) as fake, gateway(fake.url, "bedrock-converse-stream") as gw:
        count = httpx.post(gw.url + "/v1/messages/count_tokens", json=body, headers=headers)
        listed = httpx.get(gw.url + "/v1/models", headers=headers)
    assert count.status_code == 200 and count.headers["x-streamnorm-token-count"] == "estimate"
    assert count.json()["input_tokens"] > 0
    assert listed.status_code == 200
    assert fake.seen == []  # Bedrock Runtime has neither a count nor a list to ask


# -- secrets the signer used never reach the client ----------------------------------------

SESSION_TOKEN = "IQoJb3JpZ2luX2VjEHQaCXVzLWVhc3QtMSJHMEUCIQ-session"


@pytest.mark.parametrize("stream", [True, False], ids=["in-stream", "error-body"])
@pytest.mark.parametrize("client", CLIENT_APIS)
def test_an_echoed_aws_secret_or_session_token_never_reaches_the_client(
    monkeypatch: pytest.MonkeyPatch, client: str, stream: bool
) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    echo = f"signed with {SECRET} and token {SESSION_TOKEN}"
    if stream:
        frame = _exception("validationException", echo)
        step = Step(body=converse_stream(frame), headers=EVENT_STREAM)
    else:
        step = bedrock_error(400, "ValidationException", echo)
    fake, answer = through("bedrock-converse-stream", step, client, True)
    assert fake.exceptions == []  # signed with the session token, and verified
    assert fake.seen[0].headers["x-amz-security-token"] == SESSION_TOKEN
    assert answer.status_code == (200 if stream else 400)
    assert SECRET not in answer.text and SESSION_TOKEN not in answer.text
    assert "signed with *** and token ***" in answer.text


@pytest.mark.parametrize("doc", ["hosts.md", "gateway.md"])
def test_the_upstream_samples_of_the_docs_load(doc: str) -> None:
    text = (DOCS / doc).read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    upstreams = {
        name: table
        for block in blocks
        for name, table in tomllib.loads(block).get("upstreams", {}).items()
    }
    assert any(str(t["api"]).startswith("bedrock") for t in upstreams.values())
    routes = [{"models": "*", "upstreams": list(upstreams)}]
    config = parse_config({"upstreams": upstreams, "routes": routes}, {})
    ups = {u.name: u for u in config.routes[0].upstreams}
    bedrock = [u for u in ups.values() if u.api.startswith("bedrock")]
    assert all(u.auth == "sigv4" and u.provider == "bedrock" for u in bedrock)
    assert all(dict(u.host_params)["region"] == "us-east-1" for u in bedrock)


@pytest.mark.parametrize("upstream", UPSTREAMS)
def test_a_gemini_client_streaming_without_sse_gets_one_json_array(upstream: str) -> None:
    with FakeBedrock([answer_of(upstream, True)]) as fake, gateway(fake.url, upstream) as gw:
        contents = [{"role": "user", "parts": [{"text": "hello"}]}]
        path = f"/v1beta/models/{CLIENT_MODEL}:streamGenerateContent"
        headers = {"x-goog-api-key": GATEWAY_KEY}
        answer = httpx.post(gw.url + path, json={"contents": contents}, headers=headers)
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    chunks = answer.json()
    text = "".join(p["text"] for c in chunks for p in c["candidates"][0]["content"]["parts"])
    assert text == "".join(TEXT)
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert fake.seen[0].path.endswith(OPERATIONS[upstream, True])
