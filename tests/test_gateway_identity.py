"""The gateway names the upstream as the issuer of a whole (non-streamed)
answer as it does for a stream (issue 27 finding 7), says what a translated
request lost (``x-streamnorm-warnings``), and takes the ``foreign_thinking``
setting (issue 27 finding 8)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from streamnorm.gateway import parse_config
from streamnorm.gateway.exchange import warnings_header
from streamnorm.sanitize import SanitizeWarning

from .gateway_support import (
    GATEWAY_KEY,
    NAMED_MODELS,
    FakeUpstream,
    Reply,
    ServerThread,
    gateway_toml,
    running_gateway,
)
from .support import FIXTURES, needs_fixtures

pytestmark = needs_fixtures

TOOL_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": True}
THINKING_ANSWER = (
    FIXTURES / "responses" / "anthropic-messages" / "a04_thinking_signature_tool_use.json"
)
TEXT_ANSWER = FIXTURES / "responses" / "anthropic-messages" / "a01_text_simple.json"
CLAUDE = NAMED_MODELS["anthropic-messages"]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    yield FakeUpstream()


@pytest.fixture(scope="module")
def url(fake: FakeUpstream) -> Iterator[str]:
    with ServerThread(fake) as up, running_gateway(up.url) as (_, gw):
        yield gw.url


def _answer(fake: FakeUpstream, path: Any) -> None:
    """The upstream answers with that recording, as the model it was asked for."""
    body = {**json.loads(path.read_text()), "model": CLAUDE + "-20251001"}
    fake.script(CLAUDE, Reply(200, [json.dumps(body).encode()], "application/json"))


def test_non_streamed_cross_api_turn_keeps_the_upstreams_reasoning(
    url: str, fake: FakeUpstream
) -> None:
    """A Responses client, not streaming, served by an Anthropic upstream:
    turn 2 gives the upstream its signed thinking back byte-identical."""
    _answer(fake, THINKING_ANSWER)
    client = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    tools: Any = [
        {"type": "function", "name": "weather", "description": "a tool", "parameters": TOOL_SCHEMA}
    ]
    options: Any = {"store": False, "include": ["reasoning.encrypted_content"], "tools": tools}
    first = client.responses.create(model="named.anthropic", input="go", **options)
    call = next(i for i in first.output if i.type == "function_call")
    items: list[Any] = [{"role": "user", "content": "go"}]
    items += [i.model_dump(exclude_none=True) for i in first.output]
    items.append({"type": "function_call_output", "call_id": call.call_id, "output": "ok"})
    _answer(fake, TEXT_ANSWER)
    raw = client.responses.with_raw_response.create(model="named.anthropic", input=items, **options)
    assert "x-streamnorm-warnings" not in raw.headers
    body = fake.requests_for(CLAUDE)[-1].body
    issued = json.loads(THINKING_ANSWER.read_text())["content"][0]
    assistant = next(m for m in body["messages"] if m["role"] == "assistant")
    assert assistant["content"][0] == {
        "type": "thinking",
        "thinking": issued["thinking"],
        "signature": issued["signature"],
    }


def _chat_history_with_foreign_reasoning() -> dict[str, Any]:
    """A Chat client's history whose assistant turn carries reasoning from
    another host (``reasoning_content``, as DeepSeek writes it)."""
    return {
        "model": "named.anthropic",
        "messages": [
            {"role": "user", "content": "Is it safe?"},
            {
                "role": "assistant",
                "content": "Here's how.",
                "reasoning_content": "I should answer safely.",
            },
            {"role": "user", "content": "Thanks, and then?"},
        ],
    }


def test_foreign_reasoning_is_tagged_and_reported(url: str, fake: FakeUpstream) -> None:
    _answer(fake, TEXT_ANSWER)
    response = httpx.post(
        url + "/v1/chat/completions",
        json=_chat_history_with_foreign_reasoning(),
        headers={"authorization": f"Bearer {GATEWAY_KEY}"},
        timeout=10,
    )
    assert response.status_code == 200
    warning = response.headers["x-streamnorm-warnings"]
    assert warning.startswith("messages[1].content[0]: thinking_tagged:")
    sent = fake.requests_for(CLAUDE)[-1].body["messages"][1]["content"]
    assert [b["text"] for b in sent] == [
        "<thinking>\nI should answer safely.\n</thinking>\n\n",
        "Here's how.",
    ]


def test_route_setting_drops_foreign_reasoning(fake: FakeUpstream) -> None:
    with ServerThread(fake) as up, running_gateway(up.url, foreign_thinking="drop") as (_, gw):
        _answer(fake, TEXT_ANSWER)
        response = httpx.post(
            gw.url + "/v1/chat/completions",
            json=_chat_history_with_foreign_reasoning(),
            headers={"authorization": f"Bearer {GATEWAY_KEY}"},
            timeout=10,
        )
    assert response.status_code == 200
    assert "thinking_dropped" in response.headers["x-streamnorm-warnings"]
    sent = fake.requests_for(CLAUDE)[-1].body["messages"][1]["content"]
    assert sent in ("Here's how.", [{"type": "text", "text": "Here's how."}])


def test_foreign_thinking_config_global_route_and_errors() -> None:
    data = gateway_toml("http://127.0.0.1:9", foreign_thinking="text")
    data["routes"][0]["foreign_thinking"] = "drop"
    env = {"GW_KEYS": "k"}
    config = parse_config(data, env)
    assert config.foreign_thinking == "text"
    assert [r.foreign_thinking for r in config.routes[:2]] == ["drop", "text"]
    assert parse_config(gateway_toml("http://127.0.0.1:9"), env).routes[0].foreign_thinking == (
        "tagged"
    )
    data["routes"][1]["foreign_thinking"] = "hide"
    with pytest.raises(
        ValueError, match=r"routes\[1\]\.foreign_thinking: one of text, tagged, drop"
    ):
        parse_config(data, env)


def test_warning_header_is_one_printable_line_of_at_most_twenty() -> None:
    """A block kind comes from upstream data; it never breaks the header."""
    bad = SanitizeWarning(1, 2, "provider_block_dropped", "x dropped: kind\r\nSet-Cookie: é")
    value = warnings_header([str(bad)] * 25)
    assert all(" " <= c <= "~" for c in value)
    assert value.count("provider_block_dropped") == 20 and value.endswith("; 5 more")
