"""Where each host is and how it is reached, as data (docs/hosts.md).

One :class:`Host` per way of reaching a model: the wire API its bodies are
written in, its base URL (with ``{placeholders}`` filled from the
environment or the caller), the path of each operation (``stream``,
``whole``, ``count``), its auth scheme, the headers and body fields it
requires and the body fields it refuses, and its quirks in words. The
request codec (``encode_request(..., provider=…)``), the :class:`Client`
and the gateway all read this one table.

A host without ``paths`` takes the codec's own path (``/v1/messages``,
``/v1/chat/completions`` …) under its base URL; a host with ``paths``
names the whole path itself, with ``{model}`` (URL-quoted) and its own
placeholders (Azure's ``{api_version}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["AUTH_SCHEMES", "HOSTS", "AuthScheme", "Host", "Operation"]

#: How a host wants to see who is calling: a key in a header (``x-api-key``,
#: ``bearer``, ``x-goog-api-key``, Azure's ``api-key``), a signature or token
#: from a cloud's own credentials (``sigv4``, ``google-oauth``,
#: ``azure-entra``), or nothing (a local server).
AuthScheme = Literal[
    "x-api-key",
    "bearer",
    "x-goog-api-key",
    "api-key",
    "sigv4",
    "google-oauth",
    "azure-entra",
    "none",
]
AUTH_SCHEMES: tuple[AuthScheme, ...] = (
    "x-api-key",
    "bearer",
    "x-goog-api-key",
    "api-key",
    "sigv4",
    "google-oauth",
    "azure-entra",
    "none",
)

#: What a request does: stream an answer, get it whole, or count its tokens.
Operation = Literal["stream", "whole", "count"]


@dataclass(frozen=True, slots=True)
class Host:
    """One host: where it is, what it speaks, how it is reached.

    ``name`` is the table's key; ``provider`` the issuer name recorded on
    messages and used by ``sanitize`` (Vertex's Gemini and Claude are both
    ``vertex``). ``api`` is the API its request bodies are written in;
    ``stream_api`` the API its streams are read as, when another
    (Bedrock Invoke frames Anthropic events). ``params`` gives each
    placeholder of ``base_url`` and ``paths`` the environment variables that
    may hold it, first set wins; ``defaults`` the value when none is set.
    ``body`` fields are set on every body, ``drop`` fields removed;
    ``header_to_body`` moves a header into a body list (Bedrock takes
    ``anthropic-beta`` as ``anthropic_beta``); ``drop_headers`` are not sent.
    ``rewrites`` fix the formatted base URL (Vertex's ``global`` location
    has no regional prefix). ``key_optional`` hosts work without a key.
    """

    name: str
    provider: str
    api: str
    base_url: str
    auth: AuthScheme
    key_env: tuple[str, ...] = ()
    base_url_env: tuple[str, ...] = ()
    params: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    defaults: Mapping[str, str] = field(default_factory=dict)
    paths: Mapping[Operation, str] = field(default_factory=dict)
    count_path: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, Any] = field(default_factory=dict)
    drop: tuple[str, ...] = ()
    header_to_body: Mapping[str, str] = field(default_factory=dict)
    drop_headers: tuple[str, ...] = ()
    rewrites: tuple[tuple[str, str], ...] = ()
    stream_api: str | None = None
    key_optional: bool = False
    quirks: tuple[str, ...] = ()

    @property
    def reads(self) -> str:
        """The API this host's streams are read as."""
        return self.stream_api or self.api


_VERTEX_BASE = (
    "https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}"
)
_VERTEX_PARAMS: Mapping[str, tuple[str, ...]] = {
    "project": ("GOOGLE_CLOUD_PROJECT", "ANTHROPIC_VERTEX_PROJECT_ID"),
    "location": ("GOOGLE_CLOUD_LOCATION", "CLOUD_ML_REGION"),
}
_VERTEX_GLOBAL = (("https://global-aiplatform.", "https://aiplatform."),)
_BEDROCK_BASE = "https://bedrock-runtime.{region}.amazonaws.com"
_BEDROCK_PARAMS: Mapping[str, tuple[str, ...]] = {"region": ("AWS_REGION", "AWS_DEFAULT_REGION")}
_AZURE_PARAMS: Mapping[str, tuple[str, ...]] = {
    "resource": ("AZURE_OPENAI_RESOURCE",),
    "api_version": ("AZURE_OPENAI_API_VERSION", "OPENAI_API_VERSION"),
}


def _compatible(
    name: str, base_url: str, key_env: str, *quirks: str, optional: bool = False
) -> Host:
    """An OpenAI-compatible Chat Completions host under ``base_url``."""
    return Host(
        name,
        name,
        "openai-completions",
        base_url,
        "bearer",
        (key_env,),
        (f"{key_env.removesuffix('_API_KEY')}_BASE_URL",),
        key_optional=optional,
        quirks=quirks,
    )


_TABLE: tuple[Host, ...] = (
    Host(
        "anthropic",
        "anthropic",
        "anthropic-messages",
        "https://api.anthropic.com",
        "x-api-key",
        ("ANTHROPIC_API_KEY",),
        ("ANTHROPIC_BASE_URL",),
        count_path="/v1/messages/count_tokens",
        quirks=("anthropic-version header on every request (the codec writes it)",),
    ),
    Host(
        "openai",
        "openai",
        "openai-responses",
        "https://api.openai.com",
        "bearer",
        ("OPENAI_API_KEY",),
        ("OPENAI_BASE_URL",),
        count_path="/v1/responses/input_tokens",
        quirks=("OPENAI_BASE_URL conventionally ends in /v1; it is not doubled",),
    ),
    Host(
        "openai-completions",
        "openai",
        "openai-completions",
        "https://api.openai.com",
        "bearer",
        ("OPENAI_API_KEY",),
        ("OPENAI_BASE_URL",),
    ),
    Host(
        "google",
        "google",
        "google-generative-ai",
        "https://generativelanguage.googleapis.com",
        "x-goog-api-key",
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        ("GOOGLE_GEMINI_BASE_URL",),
        count_path="/v1beta/models/{model}:countTokens",
        quirks=("the model and the streaming method are in the path",),
    ),
    Host(
        "vertex",
        "vertex",
        "google-generative-ai",
        _VERTEX_BASE,
        "google-oauth",
        base_url_env=("VERTEX_BASE_URL",),
        params=_VERTEX_PARAMS,
        defaults={"location": "global"},
        paths={
            "stream": "/publishers/google/models/{model}:streamGenerateContent?alt=sse",
            "whole": "/publishers/google/models/{model}:generateContent",
        },
        count_path="/publishers/google/models/{model}:countTokens",
        rewrites=_VERTEX_GLOBAL,
        quirks=("OAuth access token of the project's credentials (ADC), not an API key",),
    ),
    Host(
        "vertex-anthropic",
        "vertex",
        "anthropic-messages",
        _VERTEX_BASE,
        "google-oauth",
        base_url_env=("VERTEX_BASE_URL",),
        params=_VERTEX_PARAMS,
        defaults={"location": "global"},
        paths={
            "stream": "/publishers/anthropic/models/{model}:streamRawPredict",
            "whole": "/publishers/anthropic/models/{model}:rawPredict",
        },
        count_path="/publishers/anthropic/models/count-tokens:rawPredict",
        body={"anthropic_version": "vertex-2023-10-16"},
        drop=("model",),
        drop_headers=("anthropic-version",),
        rewrites=_VERTEX_GLOBAL,
        quirks=(
            "model in the path, not the body; anthropic_version in the body",
            "model names carry an @ snapshot (claude-sonnet-4-5@20250929)",
        ),
    ),
    Host(
        "bedrock",
        "bedrock",
        "bedrock-converse-stream",
        _BEDROCK_BASE,
        "sigv4",
        base_url_env=("BEDROCK_BASE_URL",),
        params=_BEDROCK_PARAMS,
        paths={
            "stream": "/model/{model}/converse-stream",
            "whole": "/model/{model}/converse",
        },
        count_path="/model/{model}/count-tokens",
        quirks=(
            "SigV4 with service name bedrock; the model id (or an ARN) is URL-quoted in the path",
            "streams are AWS event-stream frames, not SSE",
        ),
    ),
    Host(
        "bedrock-invoke",
        "bedrock",
        "anthropic-messages",
        _BEDROCK_BASE,
        "sigv4",
        base_url_env=("BEDROCK_BASE_URL",),
        params=_BEDROCK_PARAMS,
        paths={
            "stream": "/model/{model}/invoke-with-response-stream",
            "whole": "/model/{model}/invoke",
        },
        count_path="/model/{model}/count-tokens",
        body={"anthropic_version": "bedrock-2023-05-31"},
        drop=("model", "stream"),
        header_to_body={"anthropic-beta": "anthropic_beta"},
        drop_headers=("anthropic-version", "anthropic-beta"),
        stream_api="bedrock-invoke-stream",
        quirks=(
            "the Anthropic Messages body without model and stream, anthropic_version in it",
            "beta flags as the body's anthropic_beta list, not a header",
        ),
    ),
    Host(
        "azure",
        "azure",
        "openai-completions",
        "https://{resource}.openai.azure.com",
        "api-key",
        ("AZURE_OPENAI_API_KEY",),
        ("AZURE_OPENAI_ENDPOINT",),
        params=_AZURE_PARAMS,
        defaults={"api_version": "2024-10-21"},
        paths={
            "stream": "/openai/deployments/{model}/chat/completions?api-version={api_version}",
            "whole": "/openai/deployments/{model}/chat/completions?api-version={api_version}",
        },
        quirks=(
            "the model is the deployment name, in the path; api-version is required",
            "Entra ID tokens (azure-entra) instead of the key when none is set",
        ),
    ),
    Host(
        "azure-responses",
        "azure",
        "openai-responses",
        "https://{resource}.openai.azure.com",
        "api-key",
        ("AZURE_OPENAI_API_KEY",),
        ("AZURE_OPENAI_ENDPOINT",),
        params=_AZURE_PARAMS,
        paths={"stream": "/openai/v1/responses", "whole": "/openai/v1/responses"},
        quirks=("the v1 API: no api-version, the deployment name as model",),
    ),
    Host(
        "azure-foundry",
        "azure",
        "openai-completions",
        "https://{resource}.services.ai.azure.com",
        "api-key",
        ("AZURE_OPENAI_API_KEY",),
        ("AZURE_AI_ENDPOINT",),
        params=_AZURE_PARAMS,
        paths={
            "stream": "/openai/v1/chat/completions",
            "whole": "/openai/v1/chat/completions",
        },
        quirks=("an AI Foundry resource's v1 OpenAI API: the deployment name as model",),
    ),
    _compatible("deepseek", "https://api.deepseek.com", "DEEPSEEK_API_KEY"),
    _compatible(
        "groq", "https://api.groq.com/openai", "GROQ_API_KEY", "the API sits under /openai"
    ),
    _compatible("xai", "https://api.x.ai", "XAI_API_KEY"),
    _compatible("openrouter", "https://openrouter.ai/api", "OPENROUTER_API_KEY"),
    _compatible("mistral", "https://api.mistral.ai", "MISTRAL_API_KEY"),
    _compatible("together", "https://api.together.xyz", "TOGETHER_API_KEY"),
    _compatible("ollama", "http://localhost:11434", "OLLAMA_API_KEY", optional=True),
    _compatible("llama.cpp", "http://localhost:8080", "LLAMA_API_KEY", optional=True),
    _compatible("vllm", "http://localhost:8000", "VLLM_API_KEY", optional=True),
)

#: Every host by name.
HOSTS: Mapping[str, Host] = {host.name: host for host in _TABLE}
