"""OpenTelemetry through the gateway (``gateway/otel.py``): a cross-API streaming
request read back from the SDK's in-memory exporter and metric reader, its
attribute and metric names checked against the semantic-conventions package."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.semconv.attributes import error_attributes, http_attributes, server_attributes
from opentelemetry.trace import SpanKind

from streamnorm.gateway import create_app, parse_config
from streamnorm.gateway.otel import Tracing, provider_name

from .gateway_support import (
    GATEWAY_KEY,
    FakeUpstream,
    Reply,
    ServerThread,
    fixture_reply,
    gateway_env,
    gateway_toml,
)
from .support import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
STREAM = "openai-completions.openai-text-include-usage"
QUESTION = "a question that must stay out of the trace"


def _names(module: Any) -> set[str]:
    return {v for k, v in vars(module).items() if k.isupper() and isinstance(v, str)}


#: Every attribute name the conventions define that the gateway may use.
KNOWN = (
    _names(gen_ai_attributes)
    | _names(http_attributes)
    | _names(error_attributes)
    | _names(server_attributes)
)


class Telemetry:
    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.metrics = InMemoryMetricReader()
        self.tracing = Tracing(tracer_provider, MeterProvider(metric_readers=[self.metrics]))

    def finished(self, servers: int = 1) -> list[ReadableSpan]:
        """The spans so far, once ``servers`` request spans have ended (a
        request's span ends just after its answer's last byte)."""
        deadline = time.monotonic() + 10
        while True:
            spans = list(self.spans.get_finished_spans())
            done = sum(s.kind == SpanKind.SERVER for s in spans)
            if done >= servers or time.monotonic() > deadline:
                return spans
            time.sleep(0.01)

    def histograms(self) -> dict[str, list[Any]]:
        data = self.metrics.get_metrics_data()
        assert data is not None
        out: dict[str, list[Any]] = {}
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    out.setdefault(metric.name, []).extend(metric.data.data_points)
        return out


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    yield FakeUpstream()


@pytest.fixture(scope="module")
def gateway(fake: FakeUpstream) -> Iterator[tuple[str, Telemetry]]:
    telemetry = Telemetry()
    with ServerThread(fake) as up:
        app = create_app(parse_config(gateway_toml(up.url, otel=True), gateway_env()))
        app.tracing = telemetry.tracing
        with ServerThread(app) as gw:
            yield gw.url, telemetry


def _stream_as_anthropic_client(url: str, model: str) -> httpx.Response:
    body = {
        "model": model,
        "max_tokens": 64,
        "stream": True,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    headers = {"x-api-key": GATEWAY_KEY, "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
    return httpx.post(url + "/v1/messages", json=body, headers=headers, timeout=30)


def _recorded_usage() -> dict[str, Any]:
    """The usage the recording's last chunk reports, read from its bytes."""
    data = (FIXTURES / "openai-completions/openai-text-include-usage.sse").read_text()
    chunks = [json.loads(line[5:]) for line in data.splitlines() if line.startswith("data: {")]
    return next(c["usage"] for c in reversed(chunks) if c.get("usage"))


def test_a_cross_api_stream_is_one_genai_span_with_a_child_per_attempt(
    gateway: tuple[str, Telemetry], fake: FakeUpstream
) -> None:
    url, telemetry = gateway
    telemetry.spans.clear()
    fake.clear()
    answer = _stream_as_anthropic_client(url, STREAM)
    assert answer.status_code == 200 and b"message_stop" in answer.content
    spans = telemetry.finished()
    server = [s for s in spans if s.kind == SpanKind.SERVER]
    client = [s for s in spans if s.kind == SpanKind.CLIENT]
    assert len(server) == 1 and len(client) == 1
    request, attempt = server[0], client[0]
    assert request.context is not None and attempt.context is not None
    assert format(request.context.trace_id, "032x") == TRACE_ID
    assert request.parent is not None and format(request.parent.span_id, "016x") == PARENT_ID
    assert attempt.parent is not None and attempt.parent.span_id == request.context.span_id
    usage = _recorded_usage()
    attributes: dict[str, Any] = dict(request.attributes or {})
    assert request.name == f"chat {STREAM}"
    assert attributes["gen_ai.operation.name"] == "chat"
    assert attributes["gen_ai.provider.name"] == "openai"
    assert attributes["gen_ai.request.model"] == STREAM
    assert attributes["gen_ai.response.model"] == STREAM
    assert attributes["gen_ai.request.stream"] is True
    assert attributes["gen_ai.usage.input_tokens"] == usage["prompt_tokens"]
    assert attributes["gen_ai.usage.output_tokens"] == usage["completion_tokens"]
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    first_chunk = attributes["gen_ai.response.time_to_first_chunk"]
    assert isinstance(first_chunk, float) and 0 < first_chunk < 10
    assert attributes["http.response.status_code"] == 200
    assert set(attributes) <= KNOWN, set(attributes) - KNOWN
    attempt_attributes = dict(attempt.attributes or {})
    assert attempt_attributes["server.address"] == "127.0.0.1"
    assert attempt_attributes["http.response.status_code"] == 200
    assert set(attempt_attributes) - {"streamnorm.upstream"} <= KNOWN
    sent = fake.requests_for(STREAM)[-1].headers["traceparent"]
    assert sent == f"00-{TRACE_ID}-{format(attempt.context.span_id, '016x')}-01"
    assert QUESTION not in json.dumps([dict(s.attributes or {}) for s in spans])


def test_the_genai_metrics_are_recorded(gateway: tuple[str, Telemetry]) -> None:
    url, telemetry = gateway
    telemetry.spans.clear()
    assert _stream_as_anthropic_client(url, STREAM).status_code == 200
    telemetry.finished()  # the metrics are recorded as the span ends
    histograms = telemetry.histograms()
    assert gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE in histograms
    assert gen_ai_metrics.GEN_AI_SERVER_TIME_TO_FIRST_TOKEN in histograms
    usage = _recorded_usage()
    by_type: dict[str, list[float]] = {}
    for point in histograms[gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE]:
        assert set(point.attributes) <= KNOWN
        if point.attributes["gen_ai.request.model"] == STREAM:
            by_type.setdefault(point.attributes["gen_ai.token.type"], []).append(point.sum)
    assert by_type["input"][0] % usage["prompt_tokens"] == 0
    assert by_type["output"][0] % usage["completion_tokens"] == 0
    ttft = histograms[gen_ai_metrics.GEN_AI_SERVER_TIME_TO_FIRST_TOKEN]
    assert all(p.count >= 1 and p.sum > 0 for p in ttft)


def test_fallbacks_are_one_child_span_each(
    gateway: tuple[str, Telemetry], fake: FakeUpstream
) -> None:
    url, telemetry = gateway
    telemetry.spans.clear()
    body = {"model": "fallback.ok", "messages": [{"role": "user", "content": "hi"}]}
    fake.script("busy-503", Reply(503, [b'{"error":{"message":"busy"}}'], "application/json"))
    fake.script("fallback.ok", fixture_reply("openai-completions", "c01_text_basic", stream=False))
    headers = {"authorization": f"Bearer {GATEWAY_KEY}"}
    assert httpx.post(url + "/v1/chat/completions", json=body, headers=headers).status_code == 200
    attempts = [s for s in telemetry.finished() if s.kind == SpanKind.CLIENT]
    statuses = [dict(s.attributes or {})["http.response.status_code"] for s in attempts]
    assert [dict(s.attributes or {})["streamnorm.upstream"] for s in attempts] == [
        "dead",
        "busy",
        "chat",
    ]
    assert statuses == [502, 503, 200]
    assert [dict(s.attributes or {}).get("error.type") for s in attempts] == ["502", "503", None]


def test_a_failed_request_is_an_error_span(gateway: tuple[str, Telemetry]) -> None:
    url, telemetry = gateway
    telemetry.spans.clear()
    headers = {"authorization": f"Bearer {GATEWAY_KEY}"}
    body = {"model": "nobody.serves-this", "messages": [{"role": "user", "content": "hi"}]}
    assert httpx.post(url + "/v1/chat/completions", json=body, headers=headers).status_code == 404
    (span,) = telemetry.finished()
    assert dict(span.attributes or {})["error.type"] == "404"
    assert not span.status.is_ok


def test_provider_names_are_the_conventions_values() -> None:
    known = {v.value for v in gen_ai_attributes.GenAiProviderNameValues}
    cases = [
        ("anthropic", "anthropic-messages"),
        ("google", "google-generative-ai"),
        ("deepseek", "openai-completions"),
        ("127.0.0.1", "google-generative-ai"),
        (None, "anthropic-messages"),
        ("some-host.example", "openai-responses"),
    ]
    names = [provider_name(p, a) for p, a in cases]
    assert names == ["anthropic", "gcp.gemini", "deepseek", "gcp.gemini", "anthropic", "openai"]
    assert set(names) <= known


def test_without_otel_there_is_no_tracing(fake: FakeUpstream) -> None:
    app = create_app(parse_config(gateway_toml("http://127.0.0.1:9"), gateway_env()))
    assert app.tracing is None


def _recorded_text() -> str:
    data = (FIXTURES / "openai-completions/openai-text-include-usage.sse").read_text()
    chunks = [json.loads(line[5:]) for line in data.splitlines() if line.startswith("data: {")]
    return "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices")
    )


def test_content_goes_on_the_span_only_with_log_content(fake: FakeUpstream) -> None:
    telemetry = Telemetry()
    with ServerThread(fake) as up:
        config = gateway_toml(up.url, otel=True, log_content=True)
        app = create_app(parse_config(config, gateway_env()))
        app.tracing = telemetry.tracing
        with ServerThread(app) as gw:
            body = {
                "model": STREAM,
                "max_tokens": 64,
                "stream": True,
                "system": "be brief",
                "messages": [{"role": "user", "content": QUESTION}],
            }
            headers = {"x-api-key": GATEWAY_KEY}
            answer = httpx.post(gw.url + "/v1/messages", json=body, headers=headers, timeout=30)
            assert answer.status_code == 200
            (span,) = [s for s in telemetry.finished() if s.kind == SpanKind.SERVER]
    attributes = dict(span.attributes or {})
    for name in ("gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.output.messages"):
        assert name in KNOWN
    assert json.loads(str(attributes["gen_ai.input.messages"])) == [
        {"role": "user", "parts": [{"type": "text", "content": QUESTION}]}
    ]
    assert json.loads(str(attributes["gen_ai.system_instructions"])) == [
        {"type": "text", "content": "be brief"}
    ]
    (output,) = json.loads(str(attributes["gen_ai.output.messages"]))
    assert output["role"] == "assistant" and output["finish_reason"] == "stop"
    assert "".join(p["content"] for p in output["parts"] if p["type"] == "text") == _recorded_text()
