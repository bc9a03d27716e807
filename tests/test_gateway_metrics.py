"""The gateway's Prometheus metrics: what bounds their series."""

from __future__ import annotations

import re

from streamnorm.gateway.telemetry import MAX_MODEL_LABELS, Metrics, RequestRecord


def answered(model: str) -> RequestRecord:
    record = RequestRecord("req_1", "POST", "/v1/chat/completions")
    record.client_api, record.upstream, record.model = "openai-completions", "chat", model
    record.status = 404
    return record


def test_client_chosen_model_names_label_a_bounded_number_of_series() -> None:
    """On a route of every model the name is the client's: past
    MAX_MODEL_LABELS names, the rest are counted under "other", so a client
    cannot grow a worker's memory a series at a time."""
    metrics = Metrics()
    for n in range(MAX_MODEL_LABELS + 50):
        metrics.observe(answered(f"made-up-{n}"))
    metrics.observe(answered("made-up-0"))  # one seen before keeps its own series
    text = metrics.render()[0].decode()
    unpriced = r"^streamnorm_gateway_unpriced_requests_total\{.*model=\"([^\"]*)\".*\} (\S+)$"
    line = re.compile(unpriced, re.M)
    models = {model: float(count) for model, count in line.findall(text)}
    assert len(models) == MAX_MODEL_LABELS + 1
    assert models["other"] == 50 and models["made-up-0"] == 2


def test_requests_are_counted_by_route_and_status() -> None:
    """The request counter's series, kept per route once made, count each
    status of each route apart."""
    metrics = Metrics()
    for status, upstream in ((200, "chat"), (200, "chat"), (404, "chat"), (200, "other")):
        record = answered("m")
        record.status, record.upstream = status, upstream
        metrics.observe(record)
    text = metrics.render()[0].decode()
    series = re.compile(r"^streamnorm_gateway_requests_total\{(.*)\} (\S+)$", re.M)
    counts = {labels: float(n) for labels, n in series.findall(text)}
    assert counts == {
        'client_api="openai-completions",status="200",upstream="chat"': 2.0,
        'client_api="openai-completions",status="404",upstream="chat"': 1.0,
        'client_api="openai-completions",status="200",upstream="other"': 1.0,
    }
