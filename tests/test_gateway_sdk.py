"""Every client API in front of every upstream API, read by the official SDKs.

The fake upstream replays a recorded answer of the upstream's API; the
client's SDK (anthropic, openai chat and responses, google-genai) talks to
the gateway over a real socket, streaming and not. What the SDK ends up with
(text, reasoning text, tool calls, stop reason, usage) must equal the
canonical message of the recording: for a stream, streamnorm's normalizer
over the recorded bytes; for a whole answer, ``decode_response`` of the
recorded body.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types as genai_types

from streamnorm import decode_response

from .gateway_support import (
    GATEWAY_KEY,
    SHORT,
    FakeUpstream,
    ServerThread,
    View,
    anthropic_view,
    canonical_view,
    chat_view,
    gemini_view,
    responses_view,
    running_gateway,
)
from .support import APIS, FIXTURES, final_done, needs_fixtures

pytestmark = needs_fixtures

#: Recorded streams per upstream API: text, tool calls, reasoning.
STREAMS = {
    "anthropic-messages": ["text-basic", "tool-use-parallel", "thinking-signature"],
    "openai-responses": ["text-basic", "function-call-parallel", "reasoning-summary-text"],
    "openai-completions": [
        "openai-text-include-usage",
        "openai-tool-calls-parallel",
        "deepseek-reasoning-content",
    ],
    "google-generative-ai": ["text-basic", "function-calls-parallel", "thought-parts-gemini-3"],
}

#: Recorded whole answers (``responses/<api>/``) per upstream API, the same three kinds.
WHOLE = {
    "anthropic-messages": [
        "a01_text_simple",
        "a03_tool_use_parallel",
        "a04_thinking_signature_tool_use",
    ],
    "openai-responses": [
        "r01_text_basic",
        "r02_function_call_parallel",
        "r04_reasoning_summary_message",
    ],
    "openai-completions": [
        "c01_text_basic",
        "c02_tool_call_single",
        "c14_deepseek_reasoning_content",
    ],
    "google-generative-ai": [
        "g01_text_basic",
        "g02_function_call_single",
        "g04_thought_parts_function_call",
    ],
}

PROMPT = "hi"


@pytest.fixture(scope="module")
def gateway_url() -> Iterator[str]:
    with ServerThread(FakeUpstream()) as up, running_gateway(up.url) as (_, gw):
        yield gw.url


def _anthropic(url: str, model: str, stream: bool) -> View:
    client = anthropic.Anthropic(api_key=GATEWAY_KEY, base_url=url, max_retries=0)
    messages: Any = [{"role": "user", "content": PROMPT}]
    if not stream:
        return anthropic_view(
            client.messages.create(model=model, max_tokens=256, messages=messages)
        )
    with client.messages.stream(model=model, max_tokens=256, messages=messages) as s:
        return anthropic_view(s.get_final_message())


def _chat(url: str, model: str, stream: bool) -> View:
    client = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    messages: Any = [{"role": "user", "content": PROMPT}]
    if not stream:
        return chat_view(client.chat.completions.create(model=model, messages=messages))
    with client.chat.completions.stream(
        model=model, messages=messages, stream_options={"include_usage": True}
    ) as s:
        return chat_view(s.get_final_completion())


def _responses(url: str, model: str, stream: bool) -> View:
    client = openai.OpenAI(api_key=GATEWAY_KEY, base_url=url + "/v1", max_retries=0)
    if not stream:
        return responses_view(client.responses.create(model=model, input=PROMPT))
    with client.responses.stream(model=model, input=PROMPT) as s:
        return responses_view(s.get_final_response())


def _gemini(url: str, model: str, stream: bool) -> View:
    options = genai_types.HttpOptions(base_url=url, api_version="v1beta", timeout=10_000)
    client = genai.Client(api_key=GATEWAY_KEY, http_options=options)
    if not stream:
        return gemini_view([client.models.generate_content(model=model, contents=PROMPT)])
    return gemini_view(list(client.models.generate_content_stream(model=model, contents=PROMPT)))


CLIENTS: dict[str, Callable[[str, str, bool], View]] = {
    "anthropic-messages": _anthropic,
    "openai-responses": _responses,
    "openai-completions": _chat,
    "google-generative-ai": _gemini,
}


def _pairs(stems: dict[str, list[str]]) -> list[Any]:
    return [
        pytest.param(client, up, stem, id=f"{SHORT[client]}<-{SHORT[up]}/{stem}")
        for client in APIS
        for up in APIS
        for stem in stems[up]
    ]


@pytest.mark.parametrize(("client", "upstream", "stem"), _pairs(STREAMS))
def test_streaming_pair(gateway_url: str, client: str, upstream: str, stem: str) -> None:
    data = (FIXTURES / upstream / f"{stem}.sse").read_bytes()
    expected = canonical_view(final_done(data, upstream).message)
    assert CLIENTS[client](gateway_url, f"{upstream}.{stem}", True) == expected


@pytest.mark.parametrize(("client", "upstream", "stem"), _pairs(WHOLE))
def test_whole_answer_pair(gateway_url: str, client: str, upstream: str, stem: str) -> None:
    body = (FIXTURES / "responses" / upstream / f"{stem}.json").read_bytes()
    expected = canonical_view(decode_response(body, upstream))
    assert CLIENTS[client](gateway_url, f"{upstream}.{stem}", False) == expected
