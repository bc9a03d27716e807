"""The sample streams shipped in ``streamnorm.samples``.

They are written for the package (not copied from the recordings), one per
wire API, all four recording the same turn. Checked here: the accessor, that
every sample normalizes cleanly and identically under any chunking, that the
four line up, that each is a valid stream of its API as the official SDK reads
it, and that none reuses a line of a recorded fixture.
"""

from __future__ import annotations

import importlib
import json
import random
import re
from typing import Any

import pytest

from streamnorm import (
    Done,
    NormalizationError,
    StopReason,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    Usage,
    samples,
)
from streamnorm.apis import APIS

from .support import FIXTURES, dicts, fixture_paths, needs_fixtures, random_split, run, run_bytes

THINKING = (
    "The user wants the current weather in Paris. I don't know it, so I should call "
    "get_weather with the city and a unit."
)
TEXT = "Let me check the current weather in Paris for you."
ARGUMENTS = {"city": "Paris", "unit": "celsius"}
USAGE = Usage.of(input_tokens=100, output_tokens=64, cache_read_tokens=20, reasoning_tokens=28)


def final(api: str) -> Done:
    events = run_bytes(samples.read(api), api)
    done = events[-1]
    assert isinstance(done, Done), done
    return done


def test_names_are_the_four_apis() -> None:
    assert samples.names() == APIS


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("anthropic", "anthropic-messages"),
        ("gemini", "google-generative-ai"),
        ("google", "google-generative-ai"),
        ("chat", "openai-completions"),
        ("completions", "openai-completions"),
        ("responses", "openai-responses"),
        (" OpenAI-Responses ", "openai-responses"),
    ],
)
def test_aliases(alias: str, name: str) -> None:
    assert samples.resolve(alias) == name
    assert samples.read(alias) == samples.read(name)


def test_unknown_sample_lists_the_names() -> None:
    with pytest.raises(ValueError, match="valid names: anthropic-messages"):
        samples.read("bedrock")


@pytest.mark.parametrize("api", APIS)
def test_sample_normalizes_cleanly(api: str) -> None:
    for requested in (api, "auto"):
        events = run_bytes(samples.read(api), requested)
        assert not [e for e in events if isinstance(e, NormalizationError)]
        done = events[-1]
        assert isinstance(done, Done)
        assert done.message.api == api


@pytest.mark.parametrize("api", APIS)
def test_sample_content_lines_up(api: str) -> None:
    message = final(api).message
    thinking, text, call = message.content
    assert isinstance(thinking, ThinkingBlock) and thinking.thinking == THINKING
    assert isinstance(text, TextBlock) and text.text == TEXT
    assert isinstance(call, ToolCallBlock)
    assert (call.name, dict(call.arguments), call.error) == ("get_weather", ARGUMENTS, None)
    assert call.raw_arguments == '{"city":"Paris","unit":"celsius"}'
    assert message.stop_reason is StopReason.TOOL_USE
    assert message.usage == USAGE


@pytest.mark.parametrize("api", APIS)
def test_sample_is_chunk_invariant(api: str) -> None:
    data = samples.read(api)
    reference = dicts(run_bytes(data, api))
    assert dicts(run([data[i : i + 1] for i in range(len(data))], api)) == reference
    rng = random.Random(api)
    for max_size in (3, 17, 200):
        assert dicts(run(random_split(data, rng, max_size), api)) == reference


def test_sample_wire_features() -> None:
    anthropic = samples.read("anthropic-messages").decode()
    assert '"signature_delta"' in anthropic and '"tool_use"' in anthropic
    responses = samples.read("openai-responses").decode()
    assert '"type":"reasoning"' in responses and '"type":"function_call"' in responses
    completions = samples.read("openai-completions")
    assert b'"reasoning_content"' in completions and b'"tool_calls"' in completions
    assert b'"choices":[]' in completions and completions.endswith(b"data: [DONE]\n\n")
    gemini = samples.read("google-generative-ai")
    assert b'"thought": true' in gemini and b'"functionCall"' in gemini
    assert gemini.count(b"\r\n\r\n") == gemini.count(b"data: ") and b"\n\n" not in gemini


def test_signatures_survive() -> None:
    anthropic = final("anthropic-messages").message.content
    assert isinstance(anthropic[0], ThinkingBlock) and anthropic[0].signature
    responses = final("openai-responses").message.content
    assert isinstance(responses[0], ThinkingBlock)
    assert "encrypted_content" in json.loads(responses[0].signature or "{}")
    gemini = final("google-generative-ai").message.content
    assert isinstance(gemini[2], ToolCallBlock) and gemini[2].signature


@needs_fixtures
def test_samples_are_not_taken_from_the_recordings() -> None:
    """Written for the package: only short structural lines (an empty block
    start, a block stop, ``[DONE]``) may coincide with a line of some recording."""
    recorded: set[bytes] = set()
    for path in fixture_paths():
        recorded.update(line.strip() for line in path.read_bytes().splitlines())
    assert FIXTURES.is_dir()
    for api in APIS:
        lines = [line.strip() for line in samples.read(api).splitlines()]
        data = [line for line in lines if line.startswith(b"data:")]
        shared = [line for line in data if line in recorded]
        assert len(shared) * 3 <= len(data), (api, shared)
        for line in shared:
            assert len(line) < 120, line
            assert not re.search(rb"Paris|weather|SN|sample", line, re.IGNORECASE), line


# --------------------------------------------------------------------------
# What the official SDKs make of the samples


def _http_client(sdk: Any, data: bytes) -> Any:
    """A client of the HTTP library ``sdk`` itself uses (httpx, or httpx2 in
    newer anthropic releases) that answers every request with ``data``."""
    base = importlib.import_module(f"{sdk.__name__}._base_client")
    lib = getattr(base, "httpx2", None) or base.httpx

    def respond(request: Any) -> Any:
        return lib.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    return lib.Client(transport=lib.MockTransport(respond))


def test_anthropic_sdk_reads_the_sample() -> None:
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(
        api_key="x",
        max_retries=0,
        http_client=_http_client(anthropic, samples.read("anthropic")),
    )
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=256, messages=[{"role": "user", "content": "?"}]
    ) as stream:
        message = stream.get_final_message()
    thinking, text, call = message.content
    assert thinking.type == "thinking" and thinking.thinking == THINKING and thinking.signature
    assert text.type == "text" and text.text == TEXT
    assert call.type == "tool_use" and call.name == "get_weather" and call.input == ARGUMENTS
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.output_tokens) == (100, 64)
    assert message.usage.cache_read_input_tokens == 20


def test_openai_sdk_reads_the_chat_completions_sample() -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(
        api_key="x",
        base_url="http://sdk.test/v1",
        max_retries=0,
        http_client=_http_client(openai, samples.read("chat")),
    )
    with client.chat.completions.stream(
        model="deepseek-reasoner", messages=[{"role": "user", "content": "?"}]
    ) as stream:
        completion = stream.get_final_completion()
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == TEXT
    assert choice.message.model_extra.get("reasoning_content") == THINKING
    (call,) = choice.message.tool_calls
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == ARGUMENTS
    usage = completion.usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (120, 64, 184)
    assert usage.prompt_tokens_details.cached_tokens == 20


def test_openai_sdk_reads_the_responses_sample() -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(
        api_key="x",
        base_url="http://sdk.test/v1",
        max_retries=0,
        http_client=_http_client(openai, samples.read("responses")),
    )
    with client.responses.stream(model="gpt-5", input="?") as stream:
        for _ in stream:
            pass
        response = stream.get_final_response()
    reasoning, message, call = response.output
    assert reasoning.type == "reasoning" and reasoning.summary[0].text == THINKING
    assert message.type == "message" and response.output_text == TEXT
    assert call.type == "function_call" and json.loads(call.arguments) == ARGUMENTS
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (120, 64, 184)
    assert usage.output_tokens_details.reasoning_tokens == 28


def test_google_genai_sdk_reads_the_sample() -> None:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    httpx = pytest.importorskip("httpx")

    def respond(request: Any) -> Any:
        data = samples.read("gemini")
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=data)

    options = types.HttpOptions(client_args={"transport": httpx.MockTransport(respond)})
    client = genai.Client(api_key="key", http_options=options)
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="?"))
    parts = [p for c in chunks for p in c.candidates[0].content.parts]
    assert "".join(p.text for p in parts if p.thought) == THINKING
    assert "".join(p.text for p in parts if p.text and not p.thought) == TEXT
    (call,) = [p for p in parts if p.function_call]
    assert call.function_call.name == "get_weather" and call.function_call.args == ARGUMENTS
    assert call.thought_signature
    assert chunks[-1].candidates[0].finish_reason == "STOP"
    meta = chunks[-1].usage_metadata
    assert (meta.prompt_token_count, meta.cached_content_token_count) == (120, 20)
    assert (meta.candidates_token_count, meta.thoughts_token_count) == (36, 28)
    assert meta.total_token_count == 184
