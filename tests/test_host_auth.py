"""Auth per host (issue 32 item 3) through ``streamnorm.Client`` against
fakes on 127.0.0.1: Bedrock's SigV4 signature recomputed and checked with
botocore in the fake, the recorded Bedrock stream read back; Vertex's OAuth
bearer token and path; Azure's Entra token. No secret in an error."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.credentials import Credentials

from streamnorm import Client, Done, Request, RetryPolicy, UserMessage
from streamnorm.hosts.auth import azure_entra, google_oauth, minted_secrets, sigv4

from .bedrock_support import KEY_ID, SECRET, verify_sigv4
from .client_support import ANTHROPIC_SSE, CHAT_SSE, ScriptedServer, Step
from .support import EXTRA_FIXTURES, needs_fixtures

FAST = RetryPolicy(max_retries=0)
MODEL = "us.amazon.nova-micro-v1:0"


@needs_fixtures
def test_bedrock_converse_stream_signed_with_sigv4() -> None:
    recorded = (EXTRA_FIXTURES / "bedrock-converse-stream" / "text-nova-micro.bin").read_bytes()
    answer = Step(body=recorded, headers={"content-type": "application/vnd.amazon.eventstream"})
    with ScriptedServer([answer]) as server:
        signer = sigv4("us-east-1", credentials=Credentials(KEY_ID, SECRET))
        client = Client(base_urls={"bedrock": server.url}, signers={"bedrock": signer}, retry=FAST)
        request = Request(model=MODEL, messages=(UserMessage("hi"),), max_tokens=64)
        events = list(client.stream(request, host="bedrock"))
    (seen,) = server.seen
    assert verify_sigv4(seen, server.url) == ("us-east-1", "bedrock")
    assert seen.path == "/model/us.amazon.nova-micro-v1%3A0/converse-stream"
    last = events[-1]
    assert isinstance(last, Done) and last.message.provider == "bedrock"
    assert last.message.content


def test_a_tampered_body_does_not_verify() -> None:
    with ScriptedServer([Step()]) as server:
        signer = sigv4("us-east-1", credentials=Credentials(KEY_ID, SECRET))
        client = Client(base_urls={"bedrock": server.url}, signers={"bedrock": signer}, retry=FAST)
        list(client.stream(Request(model=MODEL, messages=(UserMessage("hi"),)), host="bedrock"))
    (seen,) = server.seen
    seen.body = seen.body.replace(b"hi", b"ho")
    with pytest.raises(AssertionError, match="does not verify"):
        verify_sigv4(seen, server.url)


def test_sigv4_takes_credentials_from_the_standard_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    with ScriptedServer([Step(body=ANTHROPIC_SSE)]) as server:
        monkeypatch.setenv("BEDROCK_BASE_URL", server.url)
        request = Request(model="anthropic.claude-v1", messages=(UserMessage("hi"),), max_tokens=8)
        list(Client(retry=FAST).stream(request, host="bedrock-invoke"))
    (seen,) = server.seen
    assert verify_sigv4(seen, server.url) == ("eu-west-1", "bedrock")
    assert seen.path == "/model/anthropic.claude-v1/invoke-with-response-stream"


class FakeGoogleCredentials:
    """google-auth's credential interface: a token refreshed when invalid."""

    def __init__(self) -> None:
        self.token: str | None = None
        self.valid = False

    def refresh(self, request: Any) -> None:
        self.token, self.valid = "ya29.fake-token", True


def test_vertex_claude_with_a_google_oauth_token() -> None:
    with ScriptedServer([Step()]) as server:
        client = Client(
            env={"VERTEX_BASE_URL": server.url + "/v1/projects/p/locations/us-east5"},
            signers={"vertex-anthropic": google_oauth(FakeGoogleCredentials())},
            retry=FAST,
        )
        request = Request(model="claude-sonnet-4-5@20250929", messages=(UserMessage("hi"),))
        message = client.complete(request, host="vertex-anthropic")
    (seen,) = server.seen
    assert seen.headers["authorization"] == "Bearer ya29.fake-token"
    assert seen.path == (
        "/v1/projects/p/locations/us-east5/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929:streamRawPredict"
    )
    assert message.provider == "vertex"


class FakeAzureCredential:
    """azure-identity's ``TokenCredential`` interface."""

    def __init__(self) -> None:
        self.scopes: list[str] = []

    def get_token(self, *scopes: str) -> Any:
        self.scopes.extend(scopes)
        return type("AccessToken", (), {"token": "entra-token"})()


def test_azure_with_an_entra_token() -> None:
    credential = FakeAzureCredential()
    with ScriptedServer([Step(body=CHAT_SSE)]) as server:
        client = Client(
            env={"AZURE_OPENAI_ENDPOINT": server.url},
            signers={"azure": azure_entra(credential)},
            retry=FAST,
        )
        client.complete(Request(model="dep", messages=(UserMessage("hi"),)), host="azure")
    (seen,) = server.seen
    assert seen.headers["authorization"] == "Bearer entra-token" and "api-key" not in seen.headers
    assert credential.scopes == ["https://cognitiveservices.azure.com/.default"]


def test_no_aws_credentials_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(ValueError, match="no AWS credentials"):
        sigv4("us-east-1")


def test_the_secrets_each_signer_uses_are_listed_for_redaction() -> None:
    token = "FwoGZXIvYXdzEJr-session-token"
    sign_aws = sigv4("us-east-1", credentials=Credentials(KEY_ID, SECRET, token))
    headers = sign_aws("POST", "https://bedrock-runtime.us-east-1.amazonaws.com/x", {}, b"{}")
    assert headers["X-Amz-Security-Token"] == token
    google_oauth(FakeGoogleCredentials())("POST", "https://x", {}, b"")
    azure_entra(FakeAzureCredential())("POST", "https://x", {}, b"")
    minted = minted_secrets()
    assert {SECRET, token, "ya29.fake-token", "entra-token"} <= set(minted)
    assert KEY_ID not in minted  # an access key id is no secret: it is in every signature


class RotatingCredentials(FakeGoogleCredentials):
    """A token that is new at every refresh, and expires at once."""

    def __init__(self) -> None:
        super().__init__()
        self.refreshes = 0

    def refresh(self, request: Any) -> None:
        self.refreshes += 1
        self.token, self.valid = f"ya29.rotated-{self.refreshes}", True


def test_the_minted_secrets_kept_are_bounded_newest_last() -> None:
    credential = RotatingCredentials()
    sign = google_oauth(credential)
    for _ in range(100):
        credential.valid = False
        sign("POST", "https://x", {}, b"")
    minted = minted_secrets()
    assert minted[-1] == "ya29.rotated-100" and "ya29.rotated-1" not in minted
    assert len(minted) == 64
