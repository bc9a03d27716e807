"""Gateway upstreams on Vertex AI (Claude) and Azure OpenAI (issue 32): an
upstream names its auth scheme and host parameters in the configuration,
and the fake on 127.0.0.1 checks the host's own path, body and credential
header, streaming and not, from a client of the same API and of another."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from streamnorm.gateway import create_app, parse_config
from streamnorm.hosts import auth as hosts_auth

from .client_support import ANTHROPIC_SSE, CHAT_SSE, ScriptedServer, Step
from .gateway_support import GATEWAY_KEY, ServerThread

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
