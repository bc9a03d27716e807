"""One JSON log line per request, and Prometheus metrics.

The log line names the request (id, worker process, client key label,
client API, model, upstream, status, tokens, cost, time to first byte,
duration) and never its content: bodies are added only when the
configuration's ``log_content`` says so. Secrets cannot reach it: the record
holds no header, a client key appears only as a label derived from it
(:func:`key_label`), and the gateway's messages are redacted before they are
stored. What a client chose (path, model, the messages that quote them) is
cut to :data:`MAX_ECHO` characters, so that a 60 KB path is not 120 KB of
log; the client's content, when ``log_content`` asks for it, is kept whole.

The cost is the upstream model's price of the usage, from the model catalog
(docs/models.md): ``cost_usd`` is null — and the request counts as unpriced
— when the price or the usage is unknown.

Metrics live in a registry of their own per app (several apps in one process
do not collide). Under several workers each process counts its own; with
``PROMETHEUS_MULTIPROC_DIR`` set, prometheus_client's multiprocess mode sums
them (docs/gateway.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass, field, fields
from typing import TextIO

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

from .._json import dumps_bytes
from ..messages import AssistantMessage
from .state.ledger import key_label

__all__ = [
    "LOGGER",
    "MAX_ECHO",
    "MAX_MODEL_LABELS",
    "Lines",
    "Metrics",
    "RequestRecord",
    "bounded",
    "key_label",
    "log_info",
]

LOGGER = logging.getLogger("streamnorm.gateway")


class Lines(logging.StreamHandler):  # type: ignore[type-arg]
    """The gateway's own log destination (``streamnorm serve`` installs it):
    each message on a line of its own, as it is."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self._plain = logging.Formatter("%(message)s")
        self.setFormatter(self._plain)

    @property
    def plain(self) -> bool:
        """Whether a record is written as its message (no other formatter set since)."""
        return self.formatter is self._plain

    def write(self, text: str) -> None:
        """``text`` and a line end, as :meth:`emit` writes a record of it."""
        with self.lock or contextlib.nullcontext():
            self.stream.write(text + self.terminator)
            self.flush()


def log_info(text: str) -> None:
    """``LOGGER.info(text)``. Where :class:`Lines` is the logger's one
    destination, with its own formatter, no filter and no propagation, the
    line is written to it directly: the same bytes, without making a ``LogRecord`` and walking
    up the stack for its caller (several times the cost of the write, once
    a request). Anything else that could see the record gets it from
    ``logging`` as before."""
    handlers = LOGGER.handlers
    if (
        len(handlers) == 1
        and type(handlers[0]) is Lines
        and handlers[0].plain
        and not (LOGGER.propagate or LOGGER.filters or handlers[0].filters)
        and handlers[0].level <= logging.INFO
        and LOGGER.isEnabledFor(logging.INFO)
    ):
        try:
            handlers[0].write(text)
            return
        except Exception:  # a failed write is reported the logging module's way, below
            pass
    LOGGER.info(text)


#: Most characters of one client-chosen string a log line or error message repeats.
MAX_ECHO = 512
#: Most warnings a log line lists.
_MAX_LOGGED_WARNINGS = 20

#: Most distinct model names the cost metrics are labelled with, per worker.
MAX_MODEL_LABELS = 1000

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


def bounded(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to ``limit`` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…({len(text) - limit} more characters)"


@dataclass(slots=True)
class RequestRecord:
    """What one request did, filled in as it goes; logged once at its end."""

    request_id: str
    method: str
    path: str
    worker: int = field(default_factory=os.getpid)
    client_key: str | None = None
    client_api: str | None = None
    model: str | None = None
    stream: bool | None = None
    upstream: str | None = None
    upstream_api: str | None = None
    upstream_model: str | None = None
    provider: str | None = None
    attempts: list[str] = field(default_factory=list)
    status: int = 0
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    usage_reported: bool = False
    finish_reason: str | None = None
    cost_usd: float | None = None
    ttfb_ms: float | None = None
    duration_ms: float = 0.0
    disconnected: bool = False
    warnings: list[str] = field(default_factory=list)
    content: dict[str, str] | None = None
    #: The final message, kept only when ``content`` is (``log_content``), for the trace.
    output: AssistantMessage | None = field(default=None, repr=False)
    started: float = field(default_factory=time.perf_counter, repr=False)

    def count(self, message: AssistantMessage) -> None:
        """The answer's usage and its cost on ``upstream_model``, and why it
        ended; the message itself when content is logged."""
        usage = message.usage
        self.finish_reason = message.stop_reason.value
        if self.content is not None:
            self.output = message
        self.input_tokens = usage.input_tokens
        self.output_tokens = usage.output_tokens
        self.cache_read_tokens = usage.cache_read_tokens
        self.cache_write_tokens = usage.cache_write_tokens
        self.reasoning_tokens = usage.reasoning_tokens
        self.usage_reported = usage.reported
        cost = usage.cost(self.upstream_model or self.model, self.provider)
        self.cost_usd = round(cost.total, 9) if cost is not None else None

    def first_byte(self) -> None:
        if self.ttfb_ms is None:
            self.ttfb_ms = round((time.perf_counter() - self.started) * 1000, 3)

    def finish(self) -> None:
        self.duration_ms = round((time.perf_counter() - self.started) * 1000, 3)

    def line(self) -> str:
        """The log line: the logged fields in their order, strings bounded
        (read field by field: ``dataclasses.asdict`` deep-copies every value,
        a large share of a short request's own CPU)."""
        data: dict[str, object] = {}
        for name in _LOGGED:
            value = getattr(self, name)
            data[name] = bounded(value) if isinstance(value, str) else value
        warnings = [bounded(w) for w in self.warnings[:_MAX_LOGGED_WARNINGS]]
        if len(self.warnings) > _MAX_LOGGED_WARNINGS:
            warnings.append(f"{len(self.warnings) - _MAX_LOGGED_WARNINGS} more")
        data["warnings"] = warnings
        if self.content is not None:
            data["content"] = self.content
        return dumps_bytes(data).decode()


#: The fields a log line holds, in order (``content`` only when kept, no
#: message object, no clock reading).
_LOGGED = tuple(
    f.name for f in fields(RequestRecord) if f.name not in ("content", "output", "started")
)


@dataclass(frozen=True, slots=True)
class _RouteMetrics:
    """The series of one route (client API, upstream) that every request updates."""

    tokens_in: Counter
    tokens_out: Counter
    duration: Histogram
    ttfb: Histogram
    #: The request counter's series of this route, by status, as they come.
    requests: dict[int, Counter] = field(default_factory=dict)


class Metrics:
    """Request, token and latency metrics by route (client API → upstream)."""

    def __init__(self) -> None:
        self._routes: dict[tuple[str, str], _RouteMetrics] = {}
        #: The cost and unpriced series by (priced?, their labels), as they come.
        self._priced: dict[tuple[bool, tuple[str, ...]], Counter] = {}
        self._models: set[str] = set()
        self.registry = CollectorRegistry()
        labels = ("client_api", "upstream", "status")
        self.requests = Counter(
            "streamnorm_gateway_requests", "Requests answered", labels, registry=self.registry
        )
        self.tokens = Counter(
            "streamnorm_gateway_tokens",
            "Tokens billed by upstreams",
            ("client_api", "upstream", "direction"),
            registry=self.registry,
        )
        priced = ("client_key", "client_api", "upstream", "model")
        self.cost = Counter(
            "streamnorm_gateway_cost_usd",
            "What upstream calls cost, in USD, at the model catalog's prices",
            priced,
            registry=self.registry,
        )
        self.unpriced = Counter(
            "streamnorm_gateway_unpriced_requests",
            "Answered requests whose cost is unknown (no price, or no usage reported)",
            priced,
            registry=self.registry,
        )
        route = ("client_api", "upstream")
        self.duration = Histogram(
            "streamnorm_gateway_request_duration_seconds",
            "Time from request to the end of the response",
            route,
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.ttfb = Histogram(
            "streamnorm_gateway_time_to_first_byte_seconds",
            "Time from request to the first response body byte",
            route,
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )

    def observe(self, record: RequestRecord) -> None:
        api = record.client_api or "none"
        upstream = record.upstream or "none"
        route = self._routes.get((api, upstream)) or self._route(api, upstream)
        requests = route.requests.get(record.status)
        if requests is None:
            requests = route.requests[record.status] = self.requests.labels(
                api, upstream, str(record.status)
            )
        requests.inc()
        route.tokens_in.inc(record.input_tokens)
        route.tokens_out.inc(record.output_tokens)
        if record.upstream is not None:
            self._price(record, api, upstream)
        route.duration.observe(record.duration_ms / 1000)
        if record.ttfb_ms is not None:
            route.ttfb.observe(record.ttfb_ms / 1000)

    def _route(self, api: str, upstream: str) -> _RouteMetrics:
        """The series of one route, looked up once (a label lookup takes a
        lock and a dozen calls; a worker has a few routes)."""
        route = _RouteMetrics(
            self.tokens.labels(api, upstream, "input"),
            self.tokens.labels(api, upstream, "output"),
            self.duration.labels(api, upstream),
            self.ttfb.labels(api, upstream),
        )
        self._routes[(api, upstream)] = route
        return route

    def _price(self, record: RequestRecord, api: str, upstream: str) -> None:
        """The request's cost, or one more unpriced request, in the series of
        its labels (each looked up once: see :meth:`_route`). They are as
        many as prometheus_client's own children: the model label is bounded."""
        model = self._model_label(record.upstream_model or record.model or "none")
        cost = record.cost_usd
        labels = (record.client_key or "none", api, upstream, model)
        key = (cost is not None, labels)
        series = self._priced.get(key)
        if series is None:
            series = (self.unpriced if cost is None else self.cost).labels(*labels)
            self._priced[key] = series
        series.inc(1 if cost is None else cost)

    def _model_label(self, model: str) -> str:
        """``model``, or ``"other"`` once :data:`MAX_MODEL_LABELS` models have
        been seen: on a route of every model (``"*"``) the name is the
        client's, and each new series is memory the worker keeps."""
        if model in self._models:
            return model
        if len(self._models) < MAX_MODEL_LABELS:
            self._models.add(model)
            return model
        return "other"

    def render(self) -> tuple[bytes, str]:
        """The exposition text and its content type."""
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            registry = CollectorRegistry()
            multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
            return generate_latest(registry), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
