"""Gateway upstreams on Vertex AI (Claude and Gemini) and Azure OpenAI
(issue 32): an upstream names its auth scheme and host parameters in the
configuration, and the fake on 127.0.0.1 checks the host's own path, body
and credential header, streaming and not, from a client of the same API and
of another. The fake Vertex refuses a request without the OAuth token, as
Vertex does (401 ``UNAUTHENTICATED``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamnorm import AssistantMessage, decode_response
from streamnorm.gateway import create_app, parse_config
from streamnorm.hosts import auth as hosts_auth

from .client_support import ANTHROPIC_SSE, CHAT_SSE, ScriptedServer, Seen, Step
from .gateway_support import GATEWAY_KEY, ServerThread
from .support import final_done

VERTEX_PATH = (
    "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929"
)
CLAUDE_WHOLE = json.dumps(
    {
        "id": "msg_vrtx_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Hi"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1},
    }
).encode()


class FakeGoogleCredentials:
    """google-auth's credential interface: a token refreshed when invalid."""

    token: str | None = None
    valid = False

    def refresh(self, request: Any) -> None:
        self.token, self.valid = "ya29.gateway-token", True


@pytest.fixture
def google_token(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = hosts_auth.google_oauth
    monkeypatch.setattr(hosts_auth, "google_oauth", lambda: real(FakeGoogleCredentials()))
    hosts_auth.kept_signer.cache_clear()
    yield
    hosts_auth.kept_signer.cache_clear()


def _gateway(upstream: dict[str, Any]) -> Any:
    config = {
        "gateway": {"keys_env": "GW_KEYS"},
        "upstreams": {"up": {"timeout": 5.0, **upstream}},
        "routes": [{"models": "*", "upstreams": ["up"]}],
    }
    env = {"GW_KEYS": GATEWAY_KEY, "AZ_KEY": "azure-secret"}
    return ServerThread(create_app(parse_config(config, env)))


def _vertex(url: str) -> dict[str, Any]:
    return {
        "api": "anthropic-messages",
        "base_url": url + "/v1/projects/p/locations/us-east5",
        "provider": "vertex",
        "auth": "google-oauth",
    }


@pytest.mark.parametrize(("stream", "method"), [(True, "streamRawPredict"), (False, "rawPredict")])
@pytest.mark.usefixtures("google_token")
def test_anthropic_client_through_a_vertex_claude_upstream(stream: bool, method: str) -> None:
    reply = Step(body=ANTHROPIC_SSE if stream else CLAUDE_WHOLE)
    with ScriptedServer([reply]) as fake, _gateway(_vertex(fake.url)) as gw:
        body = {
            "model": "claude-sonnet-4-5@20250929",
            "max_tokens": 16,
            "messages": [{"role": "user", "content": "hello"}],
            "stream": stream,
        }
        answer = httpx.post(
            gw.url + "/v1/messages", json=body, headers={"x-api-key": GATEWAY_KEY}, timeout=10
        )
    assert answer.status_code == 200, answer.text
    assert b"Hi" in answer.content
    (seen,) = fake.seen
    assert seen.path == f"{VERTEX_PATH}:{method}"
    assert seen.headers["authorization"] == "Bearer ya29.gateway-token"
    sent = json.loads(seen.body)
    assert sent["anthropic_version"] == "vertex-2023-10-16" and "model" not in sent
    assert "x-api-key" not in seen.headers


@pytest.mark.usefixtures("google_token")
def test_chat_client_through_a_vertex_claude_upstream() -> None:
    with ScriptedServer([Step()]) as fake, _gateway(_vertex(fake.url)) as gw:
        body = {
            "model": "claude-sonnet-4-5@20250929",
            "messages": [{"role": "user", "content": "hello"}],
            "stream": True,
        }
        answer = httpx.post(
            gw.url + "/v1/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {GATEWAY_KEY}"},
            timeout=10,
        )
    assert answer.status_code == 200 and b"Hi" in answer.content
    assert fake.seen[0].path == f"{VERTEX_PATH}:streamRawPredict"


def test_anthropic_client_through_an_azure_upstream() -> None:
    upstream = {
        "api": "openai-completions",
        "base_url": "",
        "provider": "azure",
        "auth": "api-key",
        "api_key_env": "AZ_KEY",
        "host_params": {"api_version": "2025-04-01"},
    }
    with ScriptedServer([Step(body=CHAT_SSE)]) as fake:
        upstream["base_url"] = fake.url
        with _gateway(upstream) as gw:
            body = {
                "model": "my-deployment",
                "max_tokens": 16,
                "messages": [{"role": "user", "content": "hello"}],
                "stream": True,
            }
            answer = httpx.post(
                gw.url + "/v1/messages", json=body, headers={"x-api-key": GATEWAY_KEY}, timeout=10
            )
    assert answer.status_code == 200 and b"ok" in answer.content
    (seen,) = fake.seen
    assert seen.path == "/openai/deployments/my-deployment/chat/completions?api-version=2025-04-01"
    assert seen.headers["api-key"] == "azure-secret" and "authorization" not in seen.headers


def test_an_unknown_auth_scheme_is_refused() -> None:
    config = {
        "upstreams": {"up": {"api": "openai-completions", "base_url": "http://x", "auth": "magic"}},
        "routes": [{"models": "*", "upstreams": ["up"]}],
    }
    with pytest.raises(ValueError, match=r"upstreams\.up\.auth"):
        parse_config(config, {})


# -- Gemini on Vertex ---------------------------------------------------------------------

TOKEN = "ya29.gateway-token"
GEMINI_MODEL = "gemini-2.5-flash"
GEMINI_PATH = f"/v1/projects/p/locations/us-central1/publishers/google/models/{GEMINI_MODEL}"
CLIENT_APIS = (
    "anthropic-messages",
    "openai-responses",
    "openai-completions",
    "google-generative-ai",
)


def _gemini_chunk(text: str, output: int, finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}}
    if finish:
        candidate["finishReason"] = finish
    usage = {"promptTokenCount": 7, "candidatesTokenCount": output, "totalTokenCount": 7 + output}
    return {"candidates": [candidate], "usageMetadata": usage, "modelVersion": GEMINI_MODEL}


GEMINI_SSE = b"".join(
    b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n"
    for chunk in (_gemini_chunk("Hello from ", 1), _gemini_chunk("Vertex", 3, "STOP"))
)
GEMINI_WHOLE = json.dumps(_gemini_chunk("Hello from Vertex", 3, "STOP")).encode()


class FakeVertex(ScriptedServer):
    """Vertex AI: a request without the project's OAuth token is refused."""

    def refusal(self, seen: Seen) -> Step | None:
        if seen.headers.get("authorization") == f"Bearer {TOKEN}":
            return None
        error = {"code": 401, "message": "Request had invalid authentication credentials."}
        body = json.dumps({"error": {**error, "status": "UNAUTHENTICATED"}}).encode()
        return Step(status=401, body=body, headers={"content-type": "application/json"})


def _vertex_gemini(url: str) -> dict[str, Any]:
    return {
        "api": "google-generative-ai",
        "base_url": url + "/v1/projects/p/locations/us-central1",
        "provider": "vertex",
        "auth": "google-oauth",
        "model": GEMINI_MODEL,
    }


def _ask(url: str, api: str, stream: bool) -> httpx.Response:
    """One turn from a client of ``api`` for the model ``any-model``."""
    user = [{"role": "user", "content": "hello"}]
    if api == "google-generative-ai":
        method = "streamGenerateContent?alt=sse" if stream else "generateContent"
        contents = [{"role": "user", "parts": [{"text": "hello"}]}]
        headers, path = {"x-goog-api-key": GATEWAY_KEY}, f"/v1beta/models/any-model:{method}"
        return httpx.post(url + path, json={"contents": contents}, headers=headers, timeout=10)
    bearer = {"authorization": f"Bearer {GATEWAY_KEY}"}
    body: dict[str, Any] = {"model": "any-model", "stream": stream}
    if api == "anthropic-messages":
        body.update(max_tokens=64, messages=user)
        path, headers = "/v1/messages", {"x-api-key": GATEWAY_KEY}
    elif api == "openai-responses":
        body.update(input="hello")
        path, headers = "/v1/responses", bearer
    else:
        body.update(messages=user)
        path, headers = "/v1/chat/completions", bearer
    return httpx.post(url + path, json=body, headers=headers, timeout=10)


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
@pytest.mark.parametrize("client", CLIENT_APIS)
@pytest.mark.usefixtures("google_token")
def test_a_client_of_each_api_through_a_vertex_gemini_upstream(client: str, stream: bool) -> None:
    reply = Step(body=GEMINI_SSE if stream else GEMINI_WHOLE)
    with FakeVertex([reply]) as fake, _gateway(_vertex_gemini(fake.url)) as gw:
        answer = _ask(gw.url, client, stream)
    assert fake.refused == []
    assert answer.status_code == 200, answer.text
    read = final_done(answer.content, client).message if stream else None
    message = read or decode_response(answer.content, client)
    assert isinstance(message, AssistantMessage)
    assert message.text == "Hello from Vertex" and message.stop_reason == "stop"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (7, 3)
    (seen,) = fake.seen
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    assert seen.path == f"{GEMINI_PATH}:{method}"
    assert "x-goog-api-key" not in seen.headers and GATEWAY_KEY not in json.dumps(seen.headers)
    sent = json.loads(seen.body)
    assert sent["contents"] == [{"role": "user", "parts": [{"text": "hello"}]}]


def test_vertex_refuses_a_request_without_its_token() -> None:
    """Without the OAuth token (a Gemini API key instead) the fake answers
    401, which the gateway reports as its upstream credentials refused."""
    upstream = {**_vertex_gemini(""), "auth": "x-goog-api-key", "api_key_env": "AZ_KEY"}
    with FakeVertex([Step(body=GEMINI_SSE)]) as fake:
        upstream["base_url"] = fake.url + upstream["base_url"]
        with _gateway(upstream) as gw:
            answer = _ask(gw.url, "openai-completions", True)
    assert [step.status for step in fake.refused] == [401]
    assert answer.status_code == 502 and "refused the gateway's credentials" in answer.text


# -- tokens the signers minted never reach the client -------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["in-stream", "error-body"])
@pytest.mark.parametrize("client", CLIENT_APIS)
@pytest.mark.usefixtures("google_token")
def test_an_echoed_oauth_token_never_reaches_the_client(client: str, stream: bool) -> None:
    echo = {"error": {"code": 400, "message": f"bad token {TOKEN}", "status": "INVALID_ARGUMENT"}}
    if stream:
        step = Step(
            body=GEMINI_SSE.split(b"\r\n\r\n")[0]
            + b"\r\n\r\ndata: "
            + json.dumps(echo).encode()
            + b"\r\n\r\n"
        )
    else:
        step = Step(
            status=400, body=json.dumps(echo).encode(), headers={"content-type": "application/json"}
        )
    with FakeVertex([step]) as fake, _gateway(_vertex_gemini(fake.url)) as gw:
        answer = _ask(gw.url, client, stream)
    assert fake.refused == []
    assert answer.status_code == (200 if stream else 400)
    assert TOKEN not in answer.text and "bad token ***" in answer.text


class FakeEntraCredential:
    """azure-identity's ``TokenCredential`` interface."""

    def get_token(self, *scopes: str) -> Any:
        return type("AccessToken", (), {"token": "eyJ0eXAiOiJKV1Qi.entra-gateway-token"})()


@pytest.mark.parametrize("client", CLIENT_APIS)
def test_an_echoed_entra_token_never_reaches_the_client(
    monkeypatch: pytest.MonkeyPatch, client: str
) -> None:
    real = hosts_auth.azure_entra
    monkeypatch.setattr(hosts_auth, "azure_entra", lambda: real(FakeEntraCredential()))
    hosts_auth.kept_signer.cache_clear()
    token = "eyJ0eXAiOiJKV1Qi.entra-gateway-token"
    error = {"error": {"message": f"token {token} expired", "type": "invalid_request_error"}}
    echo = CHAT_SSE.split(b"data: [DONE]")[0].replace(
        b'"finish_reason":"stop"', b'"finish_reason":null'
    )
    upstream = {
        "api": "openai-completions",
        "provider": "azure",
        "auth": "azure-entra",
        "host_params": {"api_version": "2025-04-01"},
    }
    body = echo + b"data: " + json.dumps(error).encode() + b"\n\n"
    try:
        with (
            ScriptedServer([Step(body=body)]) as fake,
            _gateway({**upstream, "base_url": fake.url}) as gw,
        ):
            answer = _ask(gw.url, client, True)
    finally:
        hosts_auth.kept_signer.cache_clear()
    assert fake.seen[0].headers["authorization"] == f"Bearer {token}"
    assert answer.status_code == 200
    assert token not in answer.text and "token *** expired" in answer.text
