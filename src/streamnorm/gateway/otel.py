"""OpenTelemetry traces and metrics of the gateway (the ``otel`` extra; docs/gateway.md,
"OpenTelemetry").

With ``otel = true`` every front-door request (not the token count doors)
is a span following the GenAI semantic conventions, child of the client's
``traceparent`` when it sent one: kind SERVER, named ``chat <model>``
(``generate_content`` for Gemini clients), with ``gen_ai.operation.name``,
``gen_ai.provider.name`` (the upstream's host, as the conventions spell
it), ``gen_ai.request.model`` (the client's), ``gen_ai.response.model`` (the
upstream's), ``gen_ai.request.stream``, ``gen_ai.usage.*`` tokens,
``gen_ai.response.finish_reasons``, ``gen_ai.response.time_to_first_chunk``
(seconds), ``http.response.status_code`` and, on failure, ``error.type``.
Each upstream attempt (retries and fallbacks each count) is a CLIENT child
span, whose context goes upstream in a ``traceparent`` header. The metrics
``gen_ai.client.token.usage`` (by ``gen_ai.token.type``) and
``gen_ai.server.time_to_first_token`` are recorded per request. Message
content goes on the request's span only with ``log_content``:
``gen_ai.system_instructions``, ``gen_ai.input.messages`` (the client's
request, decoded) and ``gen_ai.output.messages``, as the conventions'
JSON (role, parts).

Only the OpenTelemetry API is used, with the global tracer and meter
providers unless others are given: exporters are configured the
OpenTelemetry way (``opentelemetry-instrument`` and the ``OTEL_*``
variables, e.g. ``OTEL_EXPORTER_OTLP_ENDPOINT``). The request's
:class:`Tracing` travels in a context variable, so the attempt hook in
``upstream.py`` needs no argument.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from .._json import dumps_compact
from ..apis import resolve_api
from ..codec import decode_request
from ..messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultMessage,
)
from ..request import Request
from .config import Upstream
from .telemetry import RequestRecord

__all__ = ["Attempt", "Tracing", "attempt", "provider_name"]

#: The conventions' provider names of hosts and APIs whose names differ from ours.
_PROVIDERS = {
    "google": "gcp.gemini",
    "google-vertex": "gcp.vertex_ai",
    "vertex": "gcp.vertex_ai",
    "bedrock": "aws.bedrock",
    "amazon-bedrock": "aws.bedrock",
    "azure": "azure.ai.openai",
    "mistral": "mistral_ai",
    "xai": "x_ai",
}
_API_PROVIDERS = {
    "anthropic-messages": "anthropic",
    "openai-responses": "openai",
    "openai-completions": "openai",
    "google-generative-ai": "gcp.gemini",
}
#: The span attributes the metrics carry too.
_METRIC_KEYS = frozenset(
    {
        "gen_ai.operation.name",
        "gen_ai.provider.name",
        "gen_ai.request.model",
        "gen_ai.response.model",
    }
)
_CURRENT: contextvars.ContextVar[Tracing | None] = contextvars.ContextVar(
    "streamnorm_tracing", default=None
)


#: The conventions' well-known ``gen_ai.provider.name`` values.
_WELL_KNOWN = frozenset(
    {
        "openai",
        "gcp.gen_ai",
        "gcp.vertex_ai",
        "gcp.gemini",
        "anthropic",
        "cohere",
        "azure.ai.inference",
        "azure.ai.openai",
        "ibm.watsonx.ai",
        "aws.bedrock",
        "perplexity",
        "x_ai",
        "deepseek",
        "groq",
        "mistral_ai",
    }
)


def provider_name(provider: str | None, api: str | None) -> str:
    """``gen_ai.provider.name``: the host's provider when the conventions
    name it, else the owner of the API it speaks (a local server speaking
    the OpenAI API is ``openai``)."""
    named = _PROVIDERS.get(provider or "", provider)
    if named in _WELL_KNOWN:
        return named
    return _API_PROVIDERS.get(api or "", "openai")


def operation_name(client_api: str | None) -> str:
    return "generate_content" if client_api == "google-generative-ai" else "chat"


class Tracing:
    """The gateway's tracer and GenAI metrics (one per app)."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        from opentelemetry import metrics, trace

        self.tracer = trace.get_tracer("streamnorm.gateway", tracer_provider=tracer_provider)
        meter = metrics.get_meter("streamnorm.gateway", meter_provider=meter_provider)
        self.token_usage = meter.create_histogram(
            "gen_ai.client.token.usage", unit="{token}", description="Tokens used per request"
        )
        self.time_to_first_token = meter.create_histogram(
            "gen_ai.server.time_to_first_token",
            unit="s",
            description="Time from the request to the first answer byte",
        )

    @contextlib.contextmanager
    def request(self, headers: Mapping[str, str], record: RequestRecord) -> Iterator[None]:
        """The request's span around the block, its parent the client's
        ``traceparent``; its attributes set from ``record`` at the end."""
        from opentelemetry import propagate, trace

        parent = propagate.extract(dict(headers))
        span = self.tracer.start_span("chat", context=parent, kind=trace.SpanKind.SERVER)
        token = _CURRENT.set(self)
        try:
            with trace.use_span(span, end_on_exit=False):
                yield
        finally:
            _CURRENT.reset(token)
            self._finish(span, record)

    def _finish(self, span: Any, record: RequestRecord) -> None:
        attributes = _request_attributes(record)
        span.set_attributes(_content_attributes(record))
        span.update_name(f"{attributes['gen_ai.operation.name']} {record.model or ''}".strip())
        span.set_attributes(attributes)
        if record.status >= 400 or record.error:
            from opentelemetry.trace import Status, StatusCode

            span.set_attribute("error.type", str(record.status or record.error))
            span.set_status(Status(StatusCode.ERROR, record.error))
        span.end()
        self._measure(record, attributes)

    def _measure(self, record: RequestRecord, attributes: Mapping[str, Any]) -> None:
        common = {k: v for k, v in attributes.items() if k in _METRIC_KEYS}
        if record.usage_reported:
            inputs = attributes["gen_ai.usage.input_tokens"]
            self.token_usage.record(inputs, {**common, "gen_ai.token.type": "input"})
            self.token_usage.record(record.output_tokens, {**common, "gen_ai.token.type": "output"})
        if record.ttfb_ms is not None and record.status < 400:
            self.time_to_first_token.record(record.ttfb_ms / 1000, common)


def _request_attributes(record: RequestRecord) -> dict[str, Any]:
    """The GenAI attributes of a finished request (None-valued ones left out)."""
    inputs = record.input_tokens + record.cache_read_tokens + record.cache_write_tokens
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": operation_name(record.client_api),
        "gen_ai.provider.name": provider_name(record.provider, record.upstream_api),
        "gen_ai.request.model": record.model,
        "gen_ai.response.model": record.upstream_model,
        "gen_ai.request.stream": record.stream,
        "http.response.status_code": record.status,
        "gen_ai.response.finish_reasons": (record.finish_reason,) if record.finish_reason else None,
        "gen_ai.response.time_to_first_chunk": (
            record.ttfb_ms / 1000 if record.ttfb_ms is not None else None
        ),
    }
    if record.usage_reported:
        attributes |= {
            "gen_ai.usage.input_tokens": inputs,
            "gen_ai.usage.output_tokens": record.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": record.cache_read_tokens,
            "gen_ai.usage.cache_creation.input_tokens": record.cache_write_tokens,
            "gen_ai.usage.reasoning.output_tokens": record.reasoning_tokens,
        }
    return {k: v for k, v in attributes.items() if v is not None}


def _content_attributes(record: RequestRecord) -> dict[str, str]:
    """The conversation as the conventions' JSON, when content is logged."""
    if record.content is None:
        return {}
    out: dict[str, str] = {}
    request = _decoded(record)
    if request is not None:
        inputs = [_message(m) for m in request.messages if not isinstance(m, SystemMessage)]
        out["gen_ai.input.messages"] = dumps_compact(inputs)
        if request.system:
            out["gen_ai.system_instructions"] = dumps_compact(_parts(request.system))
    if record.output is not None:
        output = {**_message(record.output), "finish_reason": record.finish_reason}
        out["gen_ai.output.messages"] = dumps_compact([output])
    return out


def _decoded(record: RequestRecord) -> Request | None:
    raw = (record.content or {}).get("request")
    if not raw or record.client_api is None:
        return None
    try:
        return decode_request(raw, resolve_api(record.client_api), path=record.path)
    except ValueError:
        return None


def _message(message: Message) -> dict[str, Any]:
    """One message as ``{"role", "parts"}``; a tool result as a ``tool`` message."""
    if isinstance(message, ToolResultMessage):
        response = message.content if isinstance(message.content, str) else _parts(message.content)
        part = {"type": "tool_call_response", "id": message.tool_call_id, "response": response}
        return {"role": "tool", "parts": [part]}
    role = "assistant" if isinstance(message, AssistantMessage) else "user"
    return {
        "role": "system" if isinstance(message, SystemMessage) else role,
        "parts": _parts(message.content),
    }


def _parts(content: str | Sequence[Any]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}]
    return [_part(block) for block in content]


def _part(block: Any) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "content": block.text}
    if isinstance(block, ThinkingBlock):
        return {"type": "reasoning", "content": block.thinking}
    if isinstance(block, ToolCallBlock):
        arguments = dict(block.arguments)
        return {"type": "tool_call", "id": block.id, "name": block.name, "arguments": arguments}
    return {"type": type(block).__name__.removesuffix("Block").lower()}


class Attempt:
    """One upstream attempt's span (a no-op one when the request is not traced)."""

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def outgoing(self, out: Any) -> Any:
        """``out`` (an ``upstream.Outgoing``) with this span's ``traceparent`` added."""
        if self._span is None:
            return out
        from opentelemetry import propagate

        headers = dict(out.headers)
        propagate.inject(headers)
        return dataclasses.replace(out, headers=headers)

    def status(self, status: int) -> None:
        """The upstream's HTTP status (or the gateway's for an unreachable one)."""
        if self._span is not None:
            self._span.set_attribute("http.response.status_code", status)
            if status >= 400:
                self._span.set_attribute("error.type", str(status))


@contextlib.contextmanager
def attempt(upstream: Upstream, model: str | None = None) -> Iterator[Attempt]:
    """A CLIENT span for one attempt at ``upstream``, child of the request's."""
    tracing = _CURRENT.get()
    if tracing is None:
        yield Attempt()
        return
    from opentelemetry import trace

    name = f"chat {upstream.model or model or upstream.name}"
    attributes: dict[str, str] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider_name(upstream.provider, upstream.api),
        "server.address": urlsplit(upstream.base_url).hostname or "",
        "streamnorm.upstream": upstream.name,
    }
    requested = upstream.model or model
    if requested:
        attributes["gen_ai.request.model"] = requested
    with tracing.tracer.start_as_current_span(
        name, kind=trace.SpanKind.CLIENT, attributes=attributes
    ) as span:
        yield Attempt(span)
