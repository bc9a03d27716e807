"""The gateway's TOML configuration: routes, keys from the environment, mistakes named."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamnorm import Usage, model_info
from streamnorm.gateway import GatewayConfig, create_app, load_config, parse_config
from streamnorm.gateway.telemetry import LOGGER
from streamnorm.hosts.auth import minted_secrets
from streamnorm.models import clear_overrides

from .gateway_support import free_port
from .support import REPO

ENV = {"K": "up-secret", "GW": "a, b ,,"}


def config(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "gateway": {"keys_env": "GW"},
        "upstreams": {
            "one": {"api": "anthropic", "base_url": "http://127.0.0.1:1/", "api_key_env": "K"},
            "two": {"api": "openai-completions", "base_url": "http://127.0.0.1:2", "model": "m"},
        },
        "routes": [
            {"models": ["claude-*", "exact"], "upstreams": ["one", "two"]},
            {"models": "*", "upstreams": "two"},
        ],
    }
    data.update(over)
    return data


def test_routes_match_globs_in_order_and_keep_fallback_order() -> None:
    c = parse_config(config(), ENV)
    route = c.route("claude-sonnet-4-5")
    assert route is not None and [u.name for u in route.upstreams] == ["one", "two"]
    other = c.route("gpt-5")
    assert other is not None and [u.name for u in other.upstreams] == ["two"]
    assert c.listed_models() == ["exact"]
    one = route.upstreams[0]
    assert one.api == "anthropic-messages" and one.base_url == "http://127.0.0.1:1"
    assert one.api_key == "up-secret" and "up-secret" not in repr(c)
    assert c.keys == frozenset({"a", "b"}) and "'a'" not in repr(c)
    minted = minted_secrets()  # the cloud signers' secrets, which other tests made
    assert sorted(s for s in c.secrets() if s not in minted) == ["a", "b", "up-secret"]


def test_no_route_is_an_unknown_model() -> None:
    c = parse_config(config(routes=[{"models": "claude-*", "upstreams": ["one"]}]), ENV)
    assert c.route("gpt-5") is None


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"upstreams": {"one": {"api": "nope", "base_url": "http://h"}}}, "upstreams.one.api"),
        (
            {"upstreams": {"one": {"api": "anthropic", "base_url": "ftp://h"}}},
            "upstreams.one.base_url",
        ),
        (
            {"upstreams": {"one": {"api": "anthropic", "base_url": "http://h/?x=1"}}},
            "upstreams.one.base_url",
        ),
        (
            {"upstreams": {"one": {"api": "anthropic", "base_url": "http://h", "timeout": 0}}},
            "upstreams.one.timeout",
        ),
        (
            {
                "upstreams": {
                    "one": {"api": "anthropic", "base_url": "http://h", "headers": {"a": 1}}
                }
            },
            "upstreams.one.headers.a",
        ),
        (
            {"upstreams": {"one": {"api": "anthropic", "base_url": "http://h", "colour": "red"}}},
            "upstreams.one.colour",
        ),
        ({"routes": []}, "routes"),
        ({"routes": [{"models": [], "upstreams": ["one"]}]}, "routes[0].models"),
        ({"routes": [{"models": "x", "upstreams": ["three"]}]}, "routes[0].upstreams"),
        ({"gateway": {"keys_env": "EMPTY"}}, "gateway.keys_env"),
        ({"gateway": {"max_body_bytes": -1}}, "gateway.max_body_bytes"),
        ({"gateway": {"max_concurrency": True}}, "gateway.max_concurrency"),
        ({"gateway": {"log_content": "yes"}}, "gateway.log_content"),
        ({"gateway": {"max_head_bytes": 0}}, "gateway.max_head_bytes"),
        ({"gateway": {"head_timeout": -1}}, "gateway.head_timeout"),
        ({"gateway": {"body_timeout": "1"}}, "gateway.body_timeout"),
        ({"gateway": {"max_bytes_in_flight": 1.5}}, "gateway.max_bytes_in_flight"),
        ({"gateway": {"max_stream_bytes": 0}}, "gateway.max_stream_bytes"),
        ({"gateway": {"max_stream_bytes": "1 GiB"}}, "gateway.max_stream_bytes"),
        ({"gateway": {"max_stream_seconds": 0}}, "gateway.max_stream_seconds"),
        ({"gateway": {"max_stream_seconds": True}}, "gateway.max_stream_seconds"),
        ({"gateway": {"anthropic_betas": "all"}}, "gateway.anthropic_betas"),
        ({"gateway": {"anthropic_betas": [""]}}, "gateway.anthropic_betas"),
        ({"extra": {}}, "extra"),
    ],
)
def test_mistakes_raise_naming_the_key(change: dict[str, Any], named: str) -> None:
    data = config()
    for key, value in change.items():
        if key == "upstreams":
            data["upstreams"] = {**data["upstreams"], **value}
        else:
            data[key] = value
    with pytest.raises(ValueError) as exc:
        parse_config(data, {**ENV, "EMPTY": " , "})
    assert str(exc.value).startswith(named + ":") or str(exc.value).startswith(named + " "), (
        exc.value
    )


def test_an_unset_upstream_key_marks_the_upstream_not_an_error() -> None:
    c = parse_config(config(), {"GW": "a"})
    route = c.route("claude-x")
    assert route is not None and route.upstreams[0].missing_key
    assert not route.upstreams[1].missing_key  # no api_key_env at all


def test_without_keys_env_the_gateway_asks_for_no_key() -> None:
    assert parse_config(config(gateway={}), ENV).keys == frozenset()


def test_the_stream_limits_default_to_128_mib_and_an_hour() -> None:
    c = parse_config(config(gateway={}), ENV)
    assert (c.max_stream_bytes, c.max_stream_seconds) == (128 * 1024 * 1024, 3600.0)
    c = parse_config(config(gateway={"max_stream_bytes": 1000, "max_stream_seconds": 2}), ENV)
    assert (c.max_stream_bytes, c.max_stream_seconds) == (1000, 2.0)


def test_server_tools_is_warn_refuse_or_a_mistake_naming_the_key() -> None:
    assert parse_config(config(gateway={}), ENV).server_tools == "warn"
    assert parse_config(config(gateway={"server_tools": "refuse"}), ENV).server_tools == "refuse"
    with pytest.raises(ValueError, match=r"gateway\.server_tools: one of 'warn', 'refuse'"):
        parse_config(config(gateway={"server_tools": "ignore"}), ENV)


def test_the_sample_file_loads(tmp_path: Path) -> None:
    env = {
        "STREAMNORM_GATEWAY_KEYS": "k",
        "ANTHROPIC_API_KEY": "a",
        "OPENAI_API_KEY": "o",
        "GEMINI_API_KEY": "g",
    }
    c = load_config(REPO / "gateway.toml", env)
    assert c.server_tools == "warn"
    defaults = GatewayConfig(routes=())
    limits = (
        "max_head_bytes",
        "head_timeout",
        "body_timeout",
        "max_bytes_in_flight",
        "max_stream_bytes",
        "max_stream_seconds",
    )
    for limit in limits:
        assert getattr(c, limit) == getattr(defaults, limit)
    route = c.route("claude-sonnet-4-5")
    assert route is not None and route.upstreams[0].api == "anthropic-messages"
    bad = tmp_path / "bad.toml"
    bad.write_text("[gateway\n")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_config(bad, env)


def test_serve_reports_a_bad_file_in_one_line_with_exit_status_2(tmp_path: Path) -> None:
    bad = tmp_path / "gateway.toml"
    bad.write_text('[upstreams.x]\napi = "nope"\nbase_url = "http://h"\n')
    for path in (bad, tmp_path / "missing.toml"):
        proc = subprocess.run(
            [sys.executable, "-m", "streamnorm", "serve", "--config", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, "PYTHONPATH": str(REPO / "src")},
        )
        assert proc.returncode == 2
        assert proc.stderr.startswith("streamnorm: error: ") and proc.stderr.count("\n") == 1
    assert "upstreams.x.api" in proc.stderr or "missing.toml" in proc.stderr


_FREEZE_PROBE = """
import gc, os, sys, weakref
gc.disable()  # (the cycle waits for app_from_env's own collection)
class Node: pass
cycle = Node(); cycle.self = cycle; dead = weakref.ref(cycle); del cycle
os.environ["STREAMNORM_GATEWAY_CONFIG"] = sys.argv[1]
from streamnorm.gateway.serve import app_from_env
frozen = gc.get_freeze_count()
app = app_from_env()
print(frozen, gc.get_freeze_count(), dead() is None, len(gc.get_objects()))
"""


def test_a_served_workers_start_up_objects_are_frozen_after_its_garbage_is_collected(
    tmp_path: Path,
) -> None:
    """``app_from_env`` (each worker's app) leaves what start-up made to no
    later collection (``gc.freeze``), after collecting what was garbage
    already: a cycle dropped before it is gone, not frozen."""
    path = tmp_path / "gateway.toml"
    path.write_text(
        '[upstreams.chat]\napi = "openai-completions"\nbase_url = "http://127.0.0.1:9"\n'
        '[[routes]]\nmodels = ["*"]\nupstreams = ["chat"]\n'
    )
    proc = subprocess.run(
        [sys.executable, "-c", _FREEZE_PROBE, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    before, after, collected, tracked = proc.stdout.split()
    assert int(before) == 0 and int(after) > 10_000, proc.stdout
    assert collected == "True"
    assert int(tracked) < int(after) // 10  # what collections still walk


def _wakeups(pid: int) -> int:
    """How often the threads of ``pid`` have slept and been woken (Linux)."""
    total = 0
    for status in Path(f"/proc/{pid}/task").glob("*/status"):
        for line in status.read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


def test_an_idle_served_worker_wakes_about_once_a_second(tmp_path: Path) -> None:
    """uvicorn's own server wakes ten times a second to check for its exit;
    ``streamnorm serve`` once (a wakeup costs CPU); SIGTERM still wakes it."""
    port = free_port()
    path = tmp_path / "gateway.toml"
    path.write_text(
        '[upstreams.chat]\napi = "openai-completions"\nbase_url = "http://127.0.0.1:9"\n'
        '[[routes]]\nmodels = ["*"]\nupstreams = ["chat"]\n'
    )
    command = [sys.executable, "-m", "streamnorm", "serve", "--config", str(path)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen([*command, "--port", str(port)], env=env, stdout=log, stderr=log)
    try:
        for _ in range(600):  # started within 60 s
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()
            time.sleep(0.1)
        time.sleep(0.5)
        before = _wakeups(proc.pid)
        time.sleep(3.0)
        assert _wakeups(proc.pid) - before <= 12  # uvicorn's own loop: 30 and more
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()


def test_log_content_adds_the_request_body_to_the_log_line() -> None:
    """Off by default (the other test modules check that no line has content)."""
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler = Collect()
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.INFO)
    try:
        only = [{"models": "claude-*", "upstreams": ["one"]}]
        app = create_app(parse_config(config(gateway={"log_content": True}, routes=only), ENV))
        body = {"model": "unrouted", "messages": [{"role": "user", "content": "the secret plan"}]}
        transport = httpx.ASGITransport(app=app)

        async def send() -> httpx.Response:
            async with httpx.AsyncClient(transport=transport, base_url="http://gw") as client:
                return await client.post("/v1/chat/completions", json=body)

        response = asyncio.run(send())
    finally:
        LOGGER.removeHandler(handler)
    assert response.status_code == 404
    [line] = [json.loads(x) for x in lines]
    assert "the secret plan" in line["content"]["request"]


def test_model_overrides_reach_the_catalog() -> None:
    data = config(
        models={
            "house-model": {
                "max_output_tokens": 8000,
                "prices": {"input": 1.0, "output": 2.0, "as_of": "2026-01-01"},
                "reasoning": {"mode": "effort", "efforts": ["low", "high"]},
            }
        }
    )
    try:
        create_app(parse_config(data, ENV))
        info = model_info("house-model")
        assert info.source == "override" and info.max_output_tokens == 8000
        assert info.reasoning.efforts == ("low", "high")
        cost = Usage.of(500_000, 250_000).cost("house-model")
        assert cost is not None and cost.total == pytest.approx(1.0)
    finally:
        clear_overrides()


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"max_output": 1}, "models.m.max_output"),
        ({"prices": {"inptu": 1.0}}, "models.m.prices.inptu"),
        ({"reasoning": {"levels": []}}, "models.m.reasoning.levels"),
        ({"max_output_tokens": 0}, "models.m.max_output_tokens"),
    ],
)
def test_model_override_mistakes_name_the_key(table: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named.replace(".", r"\.")):
        parse_config(config(models={"m": table}), ENV)
