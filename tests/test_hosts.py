"""Hosts as data (issue 32 item 1): ``encode_request(..., provider=…)`` writes
each host's own path and body, judged by the official SDKs' own clients for
that host (``AnthropicVertex``, ``AnthropicBedrock``, ``AzureOpenAI``), whose
requests are caught by an httpx mock transport, and by botocore's service
model for Bedrock's paths."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote

import anthropic
import botocore.session
import httpx
import httpx2
import openai
import pytest

from streamnorm import Request, TextBlock, UserMessage, encode_request
from streamnorm.hosts import HOSTS, base_url, host_for, operation_path, url
from streamnorm.integrations.hosts import provider_for_url

HELLO = (UserMessage((TextBlock("hello"),)),)


class Caught(Exception):
    """Raised by the mock transport once the SDK's request is caught."""


def _catch(sent: list[Any], http: Any) -> Any:
    """An ``http.Client`` (httpx, or httpx2 for the Anthropic SDK) whose
    transport records the request and sends nothing."""

    def handler(request: Any) -> Any:
        sent.append(request)
        raise Caught

    return http.Client(transport=http.MockTransport(handler))


def _sdk_request(call: Any, http: Any = httpx2) -> tuple[str, dict[str, Any]]:
    """The URL and JSON body of the one request an SDK call sends."""
    sent: list[Any] = []
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the transport's error
        call(_catch(sent, http))
    assert sent, "the SDK sent nothing"
    return str(sent[0].url), json.loads(sent[0].content)


def _ours(api: str, provider: str, model: str, stream: bool, **params: str) -> tuple[str, Any]:
    request = Request(model=model, messages=HELLO, max_tokens=16, stream=stream)
    wire = encode_request(request, api, provider=provider, host_params=params or None)
    host = host_for(provider, api)
    assert host is not None
    return url(base_url(host, params, env={}), wire.path), wire.body


@pytest.mark.parametrize("stream", [False, True])
def test_claude_on_vertex_as_the_anthropic_vertex_client_sends_it(stream: bool) -> None:
    model = "claude-sonnet-4-5@20250929"

    def call(http: Any) -> None:
        client = anthropic.AnthropicVertex(
            region="us-east5",
            project_id="proj-1",
            access_token="t",
            http_client=http,
            max_retries=0,
        )
        client.messages.create(
            model=model,
            max_tokens=16,
            messages=[{"role": "user", "content": "hello"}],
            stream=stream,
        )

    sdk_url, sdk_body = _sdk_request(call)
    our_url, our_body = _ours(
        "anthropic-messages", "vertex", model, stream, project="proj-1", location="us-east5"
    )
    assert our_url == sdk_url
    assert "model" not in our_body
    # The body names its version; Google's and Anthropic's docs give this one.
    assert "anthropic_version" in sdk_body and "model" not in sdk_body
    assert our_body["anthropic_version"] == "vertex-2023-10-16"
    assert our_body["messages"][0]["content"][0]["text"] == "hello"


@pytest.mark.parametrize("stream", [False, True])
def test_claude_on_bedrock_invoke_as_the_anthropic_bedrock_client_sends_it(stream: bool) -> None:
    model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"

    def call(http: Any) -> None:
        client = anthropic.AnthropicBedrock(
            aws_region="us-west-2",
            aws_access_key="AKIDEXAMPLE",
            aws_secret_key="s",
            http_client=http,
            max_retries=0,
        )
        client.messages.create(
            model=model,
            max_tokens=16,
            messages=[{"role": "user", "content": "hello"}],
            stream=stream,
        )

    sdk_url, sdk_body = _sdk_request(call)
    our_url, our_body = _ours("anthropic-messages", "bedrock", model, stream, region="us-west-2")
    # The Anthropic SDK keeps ``:`` in the model id; botocore quotes it, as here.
    assert unquote(our_url) == unquote(sdk_url)
    assert set(our_body) - {"messages"} == set(sdk_body) - {"messages"}
    assert our_body["anthropic_version"] == "bedrock-2023-05-31"


@pytest.mark.parametrize("stream", [False, True])
def test_azure_chat_completions_as_the_azure_openai_client_sends_it(stream: bool) -> None:
    def call(http: Any) -> None:
        client = openai.AzureOpenAI(
            azure_endpoint="https://res-1.openai.azure.com",
            api_version="2024-10-21",
            api_key="k",
            http_client=http,
            max_retries=0,
        )
        client.chat.completions.create(
            model="my-deployment",
            messages=[{"role": "user", "content": "hello"}],
            stream=stream,
        )

    sdk_url, _ = _sdk_request(call, httpx)
    our_url, our_body = _ours(
        "openai-completions", "azure", "my-deployment", stream, resource="res-1"
    )
    assert our_url == sdk_url
    assert our_body["model"] == "my-deployment"


def test_azure_api_version_comes_from_the_caller() -> None:
    request = Request(model="dep", messages=HELLO)
    wire = encode_request(
        request, "openai-completions", provider="azure", host_params={"api_version": "2025-04-01"}
    )
    assert wire.path == "/openai/deployments/dep/chat/completions?api-version=2025-04-01"


@pytest.mark.parametrize("stream", [False, True])
def test_gemini_on_vertex_path(stream: bool) -> None:
    our_url, body = _ours(
        "google-generative-ai",
        "vertex",
        "gemini-2.5-flash",
        stream,
        project="p",
        location="us-central1",
    )
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    assert our_url == (
        "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1"
        f"/publishers/google/models/gemini-2.5-flash:{method}"
    )
    assert "contents" in body


def test_vertex_global_location_has_no_regional_prefix() -> None:
    host = HOSTS["vertex"]
    assert base_url(host, {"project": "p"}, env={}) == (
        "https://aiplatform.googleapis.com/v1/projects/p/locations/global"
    )


def test_bedrock_paths_are_botocore_s_own() -> None:
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    uris = {op: model.operation_model(op).http["requestUri"] for op in model.operation_names}
    pairs = [
        ("bedrock", "stream", "ConverseStream"),
        ("bedrock", "whole", "Converse"),
        ("bedrock-invoke", "stream", "InvokeModelWithResponseStream"),
        ("bedrock-invoke", "whole", "InvokeModel"),
        ("bedrock", "count", "CountTokens"),
    ]
    for name, operation, botocore_name in pairs:
        path = operation_path(HOSTS[name], operation, "m")  # type: ignore[arg-type]
        assert path == uris[botocore_name].replace("{modelId}", "m")


def test_bedrock_model_ids_and_arns_are_quoted_in_the_path() -> None:
    arn = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-v1:0"
    path = operation_path(HOSTS["bedrock"], "stream", arn)
    assert path == "/model/" + arn.replace(":", "%3A").replace("/", "%2F") + "/converse-stream"


def test_bedrock_invoke_moves_beta_flags_into_the_body() -> None:
    request = Request(
        model="anthropic.claude-v1",
        messages=HELLO,
        max_tokens=8,
        headers={"anthropic-messages": {"anthropic-beta": "a-1, b-2"}},
    )
    wire = encode_request(request, "anthropic-messages", provider="bedrock")
    assert wire.body["anthropic_beta"] == ["a-1", "b-2"]
    assert "anthropic-beta" not in wire.headers and "anthropic-version" not in wire.headers


@pytest.mark.parametrize(
    ("provider", "expected"),
    [
        ("groq", "https://api.groq.com/openai/v1/chat/completions"),
        ("openrouter", "https://openrouter.ai/api/v1/chat/completions"),
        ("deepseek", "https://api.deepseek.com/v1/chat/completions"),
        ("xai", "https://api.x.ai/v1/chat/completions"),
        ("mistral", "https://api.mistral.ai/v1/chat/completions"),
        ("together", "https://api.together.xyz/v1/chat/completions"),
        ("ollama", "http://localhost:11434/v1/chat/completions"),
    ],
)
def test_compatible_hosts_urls(provider: str, expected: str) -> None:
    our_url, _ = _ours("openai-completions", provider, "m", True)
    assert our_url == expected


def test_base_url_from_the_environment_is_not_doubled() -> None:
    host = HOSTS["openai"]
    base = base_url(host, env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1/"})
    assert url(base, "/v1/responses") == "http://127.0.0.1:9/v1/responses"


def test_a_missing_placeholder_names_its_variables() -> None:
    with pytest.raises(ValueError, match="GOOGLE_CLOUD_PROJECT"):
        base_url(HOSTS["vertex-anthropic"], env={})


def test_an_unknown_provider_keeps_the_codec_path() -> None:
    wire = encode_request(
        Request(model="m", messages=HELLO), "openai-completions", provider="h.example"
    )
    assert wire.path == "/v1/chat/completions"


def test_every_host_names_a_known_auth_scheme_and_provider_of_its_urls() -> None:
    for host in HOSTS.values():
        assert host.auth in (
            "x-api-key",
            "bearer",
            "x-goog-api-key",
            "api-key",
            "sigv4",
            "google-oauth",
        )
    assert provider_for_url("https://us-east5-aiplatform.googleapis.com/v1") == "vertex"
