"""Conversations across APIs keep their reasoning state, turn after turn.

Turn 1 replays a recorded answer whose opaque reasoning state is issued by
the upstream (Responses encrypted reasoning, Anthropic signed thinking, a
Gemini 3 thought signature). The client, in another API, gets it wrapped in
a field of its own (encoding.md §9) and sends its history back as its SDK
gives it. On turn 2 the request the *upstream* receives must carry that
state exactly as the upstream issued it.

The last test runs the gateway as two worker processes (``streamnorm
serve --workers 2``) and sends turn 1 of a conversation to one worker and
turn 2 to the other: no state lives in a worker.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from streamnorm import ThinkingBlock

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    SHORT,
    FakeUpstream,
    Reply,
    ServerThread,
    gateway_toml,
    running_gateway,
    sse_events,
)
from .stored_support import serve_workers, worker_clients, worker_of
from .support import FIXTURES, final_done, needs_fixtures

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


def _anthropic(url: str, http_client: httpx2.Client | None) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key=GATEWAY_KEY, base_url=url, max_retries=0, http_client=http_client
    )


def _anthropic_turns(
    url: str,
    fake: FakeUpstream,
    api: str,
    first_stem: str,
    connections: tuple[httpx2.Client | None, httpx2.Client | None] = (None, None),
) -> tuple[Any, list[str]]:
    """Two Anthropic turns through ``api``'s upstream, the first answered by
    the recording ``first_stem`` (a tool call), the second (its result) by a
    text recording. Each turn comes from a new client, on a new connection or
    on the one of ``connections`` given for it. Returns the upstream's turn-2
    body and the two request ids."""
    model = f"named.{SHORT[api]}"
    upstream_model = _reply_with(fake, api, first_stem)
    tools: Any = [
        {"name": n, "description": "a tool", "input_schema": TOOL_SCHEMA}
        for n in ("final_result", "get_country", "fixed_version")
    ]
    history: list[Any] = [{"role": "user", "content": "go"}]
    ids: list[str] = []
    client = _anthropic(url, connections[0])
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
    client = _anthropic(url, connections[1])
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
) -> Iterator[tuple[str, list[httpx2.Client], Path]]:
    """``streamnorm serve --workers 2`` in a subprocess, a client kept on a
    connection to each of its workers, and the file its log lines go to."""
    folder = tmp_path_factory.mktemp("gw")
    with (
        ServerThread(fake) as up,
        serve_workers(gateway_toml(up.url), folder) as (url, log),
        worker_clients(url, log) as on,
    ):
        yield url, on, log


def test_two_workers_serve_the_turns_of_one_conversation(
    two_workers: tuple[str, list[httpx2.Client], Path], fake: FakeUpstream
) -> None:
    url, on, log = two_workers
    issued = _issued_reasoning(ENCRYPTED)
    # Turn 1 on a connection one worker holds, turn 2 on the other's.
    body, ids = _anthropic_turns(url, fake, "openai-responses", ENCRYPTED, (on[0], on[1]))
    sent = [i for i in body["input"] if i.get("type") == "reasoning"]
    assert [i["encrypted_content"] for i in sent] == [i["encrypted_content"] for i in issued]
    first, second = (worker_of(i, log) for i in ids)
    assert first != second
