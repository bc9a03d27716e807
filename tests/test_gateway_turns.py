"""Conversations across APIs keep their reasoning state, turn after turn.

Turn 1 replays a recorded answer whose opaque reasoning state is issued by
the upstream (Responses encrypted reasoning, Anthropic signed thinking, a
Gemini 3 thought signature). The client, in another API, gets it wrapped in
a field of its own (encoding.md §9) and sends its history back as its SDK
gives it. On turn 2 the request the *upstream* receives must carry that
state exactly as the upstream issued it.

The last test runs the gateway as two worker processes (``streamnorm
serve --workers 2``) and sends the turns of one conversation until both
workers have served one: no state lives in a worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamnorm import ThinkingBlock

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    SHORT,
    WAIT,
    FakeUpstream,
    Reply,
    ServerThread,
    free_port,
    gateway_env,
    gateway_toml,
    running_gateway,
    sse_events,
)
from .support import FIXTURES, REPO, final_done, needs_fixtures

pytestmark = needs_fixtures

ENCRYPTED = "reasoning-encrypted-function-call"
#: A text answer recorded from each API, for turn 2.
TEXT = {
    "anthropic-messages": "text-basic",
    "openai-responses": "text-basic",
    "openai-completions": "openai-text-include-usage",
    "google-generative-ai": "text-basic",
}
TOOL_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": True}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    yield FakeUpstream()


@pytest.fixture(scope="module")
def url(fake: FakeUpstream) -> Iterator[str]:
    with ServerThread(fake) as up, running_gateway(up.url) as (_, gw):
        yield gw.url


def _reply_with(fake: FakeUpstream, api: str, stem: str) -> str:
    """From now on ``api``'s upstream model ``NAMED_MODELS[api]`` answers with
    that recording; returns the upstream model."""
    model = NAMED_MODELS[api]
    fake.script(model, Reply(200, sse_events((FIXTURES / api / f"{stem}.sse").read_bytes())))
    return model


def _issued_reasoning(stem: str) -> list[dict[str, Any]]:
    """The reasoning items a Responses recording issued, as streamnorm reads them
    (the canonical thinking signature holds the item's JSON)."""
    message = final_done((FIXTURES / "openai-responses" / f"{stem}.sse").read_bytes()).message
    return [json.loads(b.signature or "") for b in message.content if isinstance(b, ThinkingBlock)]


def _anthropic_turns(
    url: str, fake: FakeUpstream, api: str, first_stem: str
) -> tuple[Any, list[str]]:
    """Two Anthropic turns through ``api``'s upstream, the first answered by
    the recording ``first_stem`` (a tool call), the second (its result) by a
    text recording. Each turn comes from a new client on a new connection.
    Returns the upstream's turn-2 body and the two request ids."""
    model = f"named.{SHORT[api]}"
    upstream_model = _reply_with(fake, api, first_stem)
    tools: Any = [
        {"name": n, "description": "a tool", "input_schema": TOOL_SCHEMA}
        for n in ("final_result", "get_country", "fixed_version")
    ]
    history: list[Any] = [{"role": "user", "content": "go"}]
    ids: list[str] = []
    client = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
    with client.messages.stream(model=model, max_tokens=1024, messages=history, tools=tools) as s:
        first = s.get_final_message()
        ids.append(s.response.headers["x-request-id"])
    call = next(b for b in first.content if b.type == "tool_use")
    history += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok"}],
        },
    ]
    _reply_with(fake, api, TEXT[api])
    client = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
    with client.messages.stream(model=model, max_tokens=1024, messages=history, tools=tools) as s:
        s.get_final_message()
        ids.append(s.response.headers["x-request-id"])
    return fake.requests_for(upstream_model)[-1].body, ids


def test_anthropic_client_responses_upstream_gets_its_encrypted_reasoning_back(
    url: str, fake: FakeUpstream
) -> None:
    body, _ = _anthropic_turns(url, fake, "openai-responses", ENCRYPTED)
    issued = _issued_reasoning(ENCRYPTED)
    sent = [i for i in body["input"] if i.get("type") == "reasoning"]
    assert [i["encrypted_content"] for i in sent] == [i["encrypted_content"] for i in issued]
    assert [i["id"] for i in sent] == [i["id"] for i in issued]
    calls = [i for i in body["input"] if i.get("type") == "function_call"]
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert [c["name"] for c in calls] == ["final_result"]
    assert outputs and outputs[0]["call_id"] == calls[0]["call_id"]
    assert body["input"].index(sent[0]) + 1 == body["input"].index(calls[0])


def test_anthropic_client_gemini3_upstream_gets_its_thought_signature_back(
    url: str, fake: FakeUpstream
) -> None:
    body, _ = _anthropic_turns(url, fake, "google-generative-ai", "function-call-thought-signature")
    issued = [
        part["thoughtSignature"]
        for line in (FIXTURES / "google-generative-ai" / "function-call-thought-signature.sse")
        .read_text()
        .splitlines()
        if line.startswith("data:")
        for cand in json.loads(line[5:]).get("candidates", [])
        for part in cand.get("content", {}).get("parts", [])
        if "thoughtSignature" in part
    ]
    model_turn = next(c for c in body["contents"] if c.get("role") == "model")
    call_parts = [p for p in model_turn["parts"] if "functionCall" in p]
    assert [p["functionCall"]["name"] for p in call_parts] == ["get_country"]
    assert call_parts[0]["thoughtSignature"] == "".join(issued)


def test_responses_client_anthropic_upstream_gets_its_signed_thinking_back(
    url: str, fake: FakeUpstream
) -> None:
    model = "named.anthropic"
    upstream_model = _reply_with(fake, "anthropic-messages", "thinking-then-tool-use")
    client = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    tools: Any = [
        {
            "type": "function",
            "name": "fixed_version",
            "description": "a tool",
            "parameters": TOOL_SCHEMA,
        }
    ]
    options: Any = {"store": False, "include": ["reasoning.encrypted_content"], "tools": tools}
    with client.responses.stream(model=model, input="go", **options) as s:
        first = s.get_final_response()
    call = next(i for i in first.output if i.type == "function_call")
    items: list[Any] = [{"role": "user", "content": "go"}]
    items += [i.model_dump(exclude_none=True) for i in first.output]
    items.append({"type": "function_call_output", "call_id": call.call_id, "output": "ok"})
    _reply_with(fake, "anthropic-messages", "text-basic")
    with client.responses.stream(model=model, input=items, **options) as s:
        s.get_final_response()
    body = fake.requests_for(upstream_model)[-1].body
    expected = ""
    for line in (
        (FIXTURES / "anthropic-messages" / "thinking-then-tool-use.sse").read_text().splitlines()
    ):
        if line.startswith("data:") and "signature_delta" in line:
            expected += json.loads(line[5:])["delta"]["signature"]
    assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert assistant["content"][0]["type"] == "thinking"
    assert assistant["content"][0]["signature"] == expected
    assert [b["type"] for b in assistant["content"]][-1] == "tool_use"
    results = body["messages"][-1]["content"]
    assert (
        results[0]["type"] == "tool_result"
        and results[0]["tool_use_id"] == assistant["content"][-1]["id"]
    )


# -- two workers, one conversation ------------------------------------------


@pytest.fixture(scope="module")
def two_workers(
    fake: FakeUpstream, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, list[str]]]:
    """``streamnorm serve --workers 2`` in a subprocess, and its log lines as they come."""
    with ServerThread(fake) as up:
        path = tmp_path_factory.mktemp("gw") / "gateway.toml"
        path.write_text(_toml(gateway_toml(up.url)))
        port = free_port()
        env = {**os.environ, **gateway_env(), "PYTHONPATH": str(REPO / "src")}
        command = [
            sys.executable,
            "-m",
            "streamnorm",
            "serve",
            "--config",
            str(path),
            "--port",
            str(port),
            "--workers",
            "2",
            "--log-level",
            "warning",
        ]
        proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
        lines: list[str] = []
        assert proc.stderr is not None
        reader = threading.Thread(target=lambda: lines.extend(proc.stderr or ()), daemon=True)
        reader.start()
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, proc, lines)
            yield url, lines
        finally:
            proc.terminate()
            try:
                proc.wait(WAIT)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(WAIT)
            reader.join(WAIT)


def _toml(data: dict[str, Any]) -> str:
    """Just enough TOML for the test configuration (tables, arrays of tables, scalars, lists)."""
    lines = ["[gateway]", *(f"{k} = {json.dumps(v)}" for k, v in data["gateway"].items())]
    for name, table in data["upstreams"].items():
        lines.append(f"[upstreams.{name}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    for route in data["routes"]:
        lines += ["[[routes]]", *(f"{k} = {json.dumps(v)}" for k, v in route.items())]
    return "\n".join(lines) + "\n"


def _wait_healthy(url: str, proc: subprocess.Popen[str], lines: list[str]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the gateway exited: " + "".join(lines))
        try:
            if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the gateway did not become healthy")


def _worker_of(request_id: str, lines: list[str]) -> int:
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for line in list(lines):
            if request_id in line:
                return int(json.loads(line)["worker"])
        time.sleep(0.02)
    raise AssertionError(f"no log line for {request_id}")


def test_two_workers_serve_the_turns_of_one_conversation(
    two_workers: tuple[str, list[str]], fake: FakeUpstream
) -> None:
    url, lines = two_workers
    issued = _issued_reasoning(ENCRYPTED)
    # Each turn comes from a new client on a new connection, which the kernel
    # hands to either worker; bounded: at most 30 conversations.
    for _ in range(30):
        body, ids = _anthropic_turns(url, fake, "openai-responses", ENCRYPTED)
        sent = [i for i in body["input"] if i.get("type") == "reasoning"]
        assert [i["encrypted_content"] for i in sent] == [i["encrypted_content"] for i in issued]
        first, second = (_worker_of(i, lines) for i in ids)
        if first != second:
            return
    pytest.fail("30 conversations: never were the two turns served by different workers")
